//! What one command invocation sees of the machine, through its [`Env`] and its [`Files`]: the
//! working directory, `$HOME`, the settings schema, the repository and project roots
//! (`location.rs`), and the two settings files (`settings.rs`). Everything the core needs is
//! gathered here and handed over as data.

mod location;
mod settings;

pub use location::{unread_root_rules_note, Location, LocationCache};
pub use settings::{
    features, review_loop_max_cycles, FoundSettingsFile, SettingsFileState, SettingsRead,
};

use crate::embedded;
use crate::env::{Env, PACKAGE_DIR_ENV, SUBAGENT_ENV};
use crate::error::{NotADirectory, Result};
use crate::files::bounded::MAX_SETTINGS_BYTES;
use crate::files::{FileTable, Files, Overlay};
use crate::loader::{LayerDirs, PackageSource, Policy};
use crate::repo;
use anyhow::Context;
use pi_rules_core::settings::Schema;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The block used when no rule file could be taken.
pub const FALLBACK_BLOCK: &str =
    "\n\n[ORCHESTRATOR RULES] You are a MANAGER. Delegate work to subagents.\n";

/// The machine as one command sees it.
pub struct Session {
    /// What the front end gave of the process: variables, `$HOME`, its working directory.
    pub env: Env,
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub schema: Cow<'static, Schema>,
    /// The files it reads: every read of a rule or settings file goes through them.
    files: Arc<Files>,
    /// The physical path of `cwd` (links resolved), found once when first needed.
    physical_cwd: OnceCell<Option<PathBuf>>,
    /// The repository root of `cwd`, found once when first needed.
    repo_root: OnceCell<Option<PathBuf>>,
    /// The project root, found once when first needed.
    project_root: OnceCell<PathBuf>,
    /// The two settings file paths (project, global), found once when first needed.
    settings_paths: OnceCell<(PathBuf, Option<PathBuf>)>,
}

impl Session {
    /// Takes the working directory (`--cwd` as given, else `env`'s) and `$HOME` from `env`,
    /// and reads the schema (`--keys FILE`, else the embedded one).
    pub fn new(env: &Env, cwd: Option<PathBuf>, keys: Option<&Path>) -> Result<Session> {
        let files = Files::new();
        let cwd = match cwd {
            Some(dir) if files.is_dir(&dir) => dir,
            Some(dir) => return Err(NotADirectory { path: dir }.into()),
            None => match env.cwd() {
                Ok(cwd) => cwd.to_path_buf(),
                Err(err) => crate::bail!("cannot read the current directory: {err}"),
            },
        };
        let home = env.home();
        let schema = match keys {
            None => Cow::Borrowed(Schema::embedded()),
            Some(path) => {
                let shown = path.display();
                let text = match files.read_text(path, MAX_SETTINGS_BYTES) {
                    Ok(Some(text)) => text,
                    Ok(None) => {
                        crate::bail!("cannot read the settings schema `{shown}`: no such file")
                    }
                    Err(reason) => {
                        crate::bail!("cannot read the settings schema `{shown}`: {reason}")
                    }
                };
                Cow::Owned(Schema::parse(&text).with_context(|| {
                    format!(
                        "`{shown}` is not a valid settings schema; see settings-keys.json for the format"
                    )
                })?)
            }
        };
        Ok(Session::reading(
            env.clone(),
            cwd,
            home,
            schema,
            Arc::new(files),
        ))
    }

    /// A session on given parts, with no environment variables and no process directory: for
    /// tests.
    pub fn from_parts(
        cwd: PathBuf,
        home: Option<PathBuf>,
        schema: Cow<'static, Schema>,
    ) -> Session {
        let env = Env::new(Err(std::io::Error::other("none given")), |_| None);
        Session::in_env(env, cwd, home, schema)
    }

    /// A session on given parts, with the variables of `env`.
    pub fn in_env(
        env: Env,
        cwd: PathBuf,
        home: Option<PathBuf>,
        schema: Cow<'static, Schema>,
    ) -> Session {
        Session::reading(env, cwd, home, schema, Arc::default())
    }

    /// A session on given parts that reads through `files`.
    fn reading(
        env: Env,
        cwd: PathBuf,
        home: Option<PathBuf>,
        schema: Cow<'static, Schema>,
        files: Arc<Files>,
    ) -> Session {
        Session {
            env,
            cwd,
            home,
            schema,
            files,
            physical_cwd: OnceCell::new(),
            repo_root: OnceCell::new(),
            project_root: OnceCell::new(),
            settings_paths: OnceCell::new(),
        }
    }

    /// The same session reading `overlay`'s texts in place of the files at their paths: an
    /// editor's unsaved buffers (see [`crate::files::Overlay`]).
    pub fn with_overlay(mut self, overlay: Arc<Overlay>) -> Session {
        let ids = Arc::clone(self.files.ids());
        self.files = Arc::new(Files::with_overlay(overlay).with_ids(ids));
        self
    }

    /// The same session numbering files with `ids`: a front end that keeps findings across
    /// runs gives every run's session its one table, so an id means one file throughout.
    pub fn with_file_ids(mut self, ids: Arc<FileTable>) -> Session {
        let overlay = Arc::clone(self.files.shared_overlay());
        self.files = Arc::new(Files::with_overlay(overlay).with_ids(ids));
        self
    }

    /// A new session on the same directory, environment, schema and [`Files`] (shared), which
    /// has not looked for anything yet.
    pub fn sharing_files(&self) -> Session {
        Session::reading(
            self.env.clone(),
            self.cwd.clone(),
            self.home.clone(),
            self.schema.clone(),
            Arc::clone(&self.files),
        )
    }

    /// The files this session reads.
    pub fn files(&self) -> &Files {
        &self.files
    }

    /// What discovery found for this session's working directory (running it if it has not
    /// run yet), for [`Session::locate_from`] in a later session on the same directory.
    pub fn location(&self) -> Location {
        Location {
            physical_cwd: self.physical_cwd().map(Path::to_path_buf),
            repo_root: self.repo_root().map(Path::to_path_buf),
            project_root: self.project_root(),
            home: self.home.clone(),
        }
    }

    /// The note for project rules at the repository root that this working directory does not
    /// read ([`Location::unread_root_rules`]), plain; `None` when there are none.
    pub fn unread_root_rules_note(&self) -> Option<String> {
        let rules = self.location().unread_root_rules(&self.cwd, &self.files)?;
        Some(unread_root_rules_note(&rules, &self.cwd))
    }

    /// Takes what discovery found for this working directory from `location` instead of
    /// looking again. Returns false, and takes nothing, when the session has looked already or
    /// `location` was decided against another `$HOME`.
    pub fn locate_from(&self, location: &Location) -> bool {
        if location.home != self.home
            || self.physical_cwd.get().is_some()
            || self.repo_root.get().is_some()
            || self.project_root.get().is_some()
        {
            return false;
        }
        let _ = self.physical_cwd.set(location.physical_cwd.clone());
        let _ = self.repo_root.set(location.repo_root.clone());
        let _ = self.project_root.set(location.project_root.clone());
        true
    }

    /// Whether this process is a subagent (`PI_SUBAGENT_CHILD=1`), which gets no rules block.
    pub fn is_subagent(&self) -> bool {
        self.env.is_on(SUBAGENT_ENV)
    }

    /// The three layer directories: `--package-dir`, else `PI_RULES_PACKAGE_DIR`, else the
    /// embedded rules; `$HOME/.pi/agent/rules`; `<cwd>/.pi/rules`.
    pub fn layer_dirs(&self, package_dir: Option<&Path>) -> LayerDirs {
        let package = match package_dir.map(Path::to_path_buf).or_else(|| {
            self.env
                .var_os(PACKAGE_DIR_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        }) {
            Some(dir) => PackageSource::Dir(dir),
            None => PackageSource::Embedded(embedded::PACKAGE_RULES),
        };
        LayerDirs::standard(package, self.home.as_deref(), &self.cwd)
            .with_files(Arc::clone(&self.files))
    }

    /// The repository root of `cwd` (SPEC §4), or `None` outside a repository.
    pub fn repo_root(&self) -> Option<&Path> {
        self.repo_root
            .get_or_init(|| {
                repo::repo_root_of(&self.env, &self.cwd, || {
                    self.physical_cwd().map(Path::to_path_buf)
                })
            })
            .as_deref()
    }

    /// The physical path of `cwd`, or `None` when it cannot be resolved.
    fn physical_cwd(&self) -> Option<&Path> {
        self.physical_cwd
            .get_or_init(|| self.files.canonical(&self.cwd))
            .as_deref()
    }

    /// The directory of the project settings file: `<repo root>/.pi`, or `<cwd>/.pi` outside a
    /// repository.
    pub fn project_settings_dir(&self) -> PathBuf {
        self.repo_root().unwrap_or(&self.cwd).join(".pi")
    }

    /// The directory that project rules and the project settings file must stay in, canonical:
    /// the repository root of `cwd`, or `cwd` itself outside a repository and when the
    /// repository's root is `$HOME` or above it (a dotfiles repository would otherwise make all of
    /// `$HOME` "the project").
    pub fn project_root(&self) -> PathBuf {
        self.project_root
            .get_or_init(|| self.find_project_root())
            .clone()
    }

    fn find_project_root(&self) -> PathBuf {
        let canonical = |p: &Path| self.files.canonical_or_same(p);
        let cwd = self.physical_cwd().unwrap_or(&self.cwd).to_path_buf();
        let Some(root) = self.repo_root().map(canonical) else {
            return cwd;
        };
        let home = self.home.as_deref().map(canonical);
        if home.is_some_and(|home| home.starts_with(&root)) {
            cwd
        } else {
            root
        }
    }

    /// The loader's policy: the project root, and whether to confine.
    pub fn policy(&self, confine: bool) -> Policy {
        Policy {
            project_root: Some(self.project_root()),
            confine,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cwd_that_is_not_a_directory_is_named_by_the_front_end() {
        let env = Env::from_vars(PathBuf::from("/"), std::iter::empty::<(String, String)>());
        let Err(err) = Session::new(&env, Some(PathBuf::from("/no/such\x1bdir")), None) else {
            panic!("a missing directory is refused");
        };
        let typed = err.not_a_directory().unwrap();
        // Raw: the front ends escape it (the command line's error line, `serve`'s error).
        assert!(err.to_string().starts_with("`--cwd /no/such\x1bdir`"));
        let param = typed.for_param("params.cwd");
        assert!(
            param.starts_with("params.cwd: `/no/such\x1bdir`"),
            "{param}"
        );
        assert!(!param.contains("--cwd"), "{param}");
    }
}
