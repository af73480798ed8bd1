//! A workspace folder: the session it stands for, which documents it serves, and its check.

use pi_rules_core::lint::Diagnostic;
use pi_rules_core::settings::SETTINGS_FILE_NAMES;
use pi_rules_host::check::{nested_dir, CheckOptions, IncrementalCheck};
use pi_rules_host::config;
use pi_rules_host::env::Env;
use pi_rules_host::files::{FileTable, Overlay};
use pi_rules_host::ide::package_cache_dir;
use pi_rules_host::loader::{Layer, PackageSource};
use pi_rules_host::session::{Location, Session};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The command behind "Override in the project" and "Override in the user layer". The server's
/// commands are named `pi-rules.server.*`: a client registers every command a server advertises,
/// and an editor extension's own commands are `pi-rules.*`, so the two must not meet.
pub const OVERRIDE_COMMAND: &str = "pi-rules.server.override";

/// `initializationOptions`, each as the CLI flag of the same name.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--package-dir`.
    pub package_dir: Option<PathBuf>,
    /// `--coms-active`.
    pub coms_active: Option<bool>,
    /// `--confine`.
    pub confine: bool,
    /// `--strict`: warnings are errors.
    pub strict: bool,
    /// Options that were given with the wrong type, said once after `initialize`.
    pub warnings: Vec<String>,
}

impl Options {
    pub fn from_json(value: Option<&serde_json::Value>) -> Options {
        let mut options = Options::default();
        let Some(object) = value.and_then(serde_json::Value::as_object) else {
            if value.is_some_and(|v| !v.is_null()) {
                options
                    .warnings
                    .push("pi-rules: initializationOptions is not an object; ignored".to_owned());
            }
            return options;
        };
        let mut flag = |name: &str| -> Option<bool> {
            match object.get(name)? {
                serde_json::Value::Bool(b) => Some(*b),
                serde_json::Value::Null => None,
                _ => {
                    options.warnings.push(format!(
                        "pi-rules: initializationOptions.{name} is not a boolean; ignored"
                    ));
                    None
                }
            }
        };
        let coms_active = flag("comsActive");
        let confine = flag("confine").unwrap_or(false);
        let strict = flag("strict").unwrap_or(false);
        options.coms_active = coms_active;
        options.confine = confine;
        options.strict = strict;
        match object.get("packageDir") {
            Some(serde_json::Value::String(dir)) if !dir.is_empty() => {
                options.package_dir = Some(PathBuf::from(dir));
            }
            None | Some(serde_json::Value::Null) => {}
            Some(_) => options.warnings.push(
                "pi-rules: initializationOptions.packageDir is not a path; ignored".to_owned(),
            ),
        }
        options
    }
}

/// One workspace folder, as the working directory of a session.
#[derive(Debug)]
pub struct Workspace {
    folder: PathBuf,
    home: Option<PathBuf>,
    /// The layer directories: project, user, and the package directory when there is one.
    layers: Vec<(Layer, PathBuf)>,
    /// The directories of the two settings files.
    settings_dirs: Vec<PathBuf>,
    /// pi-rules' configuration files: the project's, and the user's when there is a `$HOME`.
    config_files: Vec<PathBuf>,
    /// What discovery found, reused by every check.
    location: Location,
    /// Where the embedded package rules have copies an editor opens, when they are the package.
    embedded_copies: Option<PathBuf>,
    /// The check, kept up to date as files change; `None` until the first check, and after one
    /// failed.
    checker: Option<IncrementalCheck>,
    /// The ids of the files the check reads, one table for every run, so that the findings it
    /// keeps from one run and those of the next name files alike.
    file_ids: Arc<FileTable>,
}

impl Workspace {
    pub fn new(env: &Env, folder: PathBuf, options: &Options) -> Workspace {
        let session = Session::in_env(
            env.with_cwd(folder.clone()),
            folder.clone(),
            env.home(),
            std::borrow::Cow::Borrowed(pi_rules_core::settings::Schema::embedded()),
        );
        let dirs = session.layer_dirs(options.package_dir.as_deref());
        let mut layers = vec![(Layer::Project, dirs.project.clone())];
        layers.extend(dirs.user.clone().map(|dir| (Layer::User, dir)));
        let package = match &dirs.package {
            PackageSource::Dir(dir) => Some(super::uri::normal(&folder.join(dir))),
            PackageSource::Embedded(_) => package_cache_dir(env),
        };
        let embedded_copies = match &dirs.package {
            PackageSource::Dir(_) => None,
            PackageSource::Embedded(_) => package.clone(),
        };
        layers.extend(package.map(|dir| (Layer::Package, dir)));
        let mut settings_dirs = vec![session.project_settings_dir()];
        settings_dirs.extend(session.global_settings_dir());
        let mut config_files = vec![config::project_config_path(&session)];
        config_files.extend(config::user_config_path(&session));
        Workspace {
            location: session.location(),
            home: session.home.clone(),
            folder,
            layers,
            settings_dirs,
            config_files,
            embedded_copies,
            checker: None,
            file_ids: Arc::default(),
        }
    }

    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The layer of a rule file this workspace sees, if `path` is one.
    pub fn layer_of(&self, path: &Path) -> Option<Layer> {
        if path.extension().is_none_or(|e| e != "md") {
            return None;
        }
        let parent = path.parent()?;
        self.layers
            .iter()
            .find(|(_, dir)| dir == parent)
            .map(|(layer, _)| *layer)
    }

    /// Whether `path` is one of the two settings files.
    pub fn is_settings(&self, path: &Path) -> bool {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        self.settings_dirs.iter().any(|dir| dir == parent)
            && SETTINGS_FILE_NAMES.iter().any(|n| name == *n)
    }

    /// Whether `path` is a rule file of a nested rule directory, `D/.pi/rules/NAME.md` for a
    /// directory `D` below the folder (the project directory).
    pub fn is_nested_rule(&self, path: &Path) -> bool {
        path.extension().is_some_and(|e| e == "md")
            && path
                .parent()
                .and_then(|dir| nested_dir(&self.folder, dir))
                .is_some()
    }

    /// Whether `path` is one of pi-rules' configuration files.
    pub fn is_config(&self, path: &Path) -> bool {
        self.config_files.iter().any(|file| file == path)
    }

    /// Whether the server keeps and checks `path` for this workspace.
    pub fn serves(&self, path: &Path) -> bool {
        self.layer_of(path).is_some()
            || self.is_settings(path)
            || self.is_nested_rule(path)
            || self.is_config(path)
    }

    /// Glob patterns of every file a check here reads: each layer's rule files, the settings
    /// files, pi-rules' configuration files, and the rule files of nested rule directories
    /// below the folder.
    pub fn watched(&self) -> Vec<String> {
        let glob = |dir: &Path, name: &str| {
            let mut pattern = dir.display().to_string();
            // Glob syntax in a directory's name is matched literally.
            pattern = pattern
                .replace('[', "[[]")
                .replace('*', "[*]")
                .replace('?', "[?]");
            pattern = pattern.replace('{', "[{]");
            format!("{pattern}/{name}")
        };
        let mut patterns: Vec<String> = self
            .layers
            .iter()
            .map(|(_, dir)| glob(dir, "*.md"))
            .collect();
        for dir in &self.settings_dirs {
            patterns.push(glob(dir, "pi-config-settings.json*"));
        }
        for file in &self.config_files {
            if let (Some(dir), Some(name)) = (file.parent(), file.file_name()) {
                patterns.push(glob(dir, &name.to_string_lossy()));
            }
        }
        patterns.push(glob(&self.folder, "**/.pi/rules/*.md"));
        patterns
    }

    /// A session on this folder that reads the open documents' texts.
    pub fn session(&self, env: &Env, overlay: &Arc<Overlay>) -> Session {
        let session = Session::in_env(
            env.with_cwd(self.folder.clone()),
            self.folder.clone(),
            self.home.clone(),
            std::borrow::Cow::Borrowed(pi_rules_core::settings::Schema::embedded()),
        )
        .with_overlay(Arc::clone(overlay))
        .with_file_ids(Arc::clone(&self.file_ids));
        session.locate_from(&self.location);
        session
    }

    /// Brings the check on this folder up to date with the open documents' texts (`overlay`)
    /// and the files at `changed` (edited, opened, closed, or changed on disk): the first time,
    /// and after a failure or [`Workspace::forget`], a whole check, which takes in the nested
    /// rule directories of the documents in `open`.
    pub fn refresh(
        &mut self,
        env: &Env,
        overlay: &Arc<Overlay>,
        options: &Options,
        changed: &[PathBuf],
        open: &[PathBuf],
    ) -> Result<(), String> {
        let session = self.session(env, overlay);
        let package = session.layer_dirs(options.package_dir.as_deref()).package;
        let opts = CheckOptions {
            session: &session,
            package,
            strict: options.strict,
        };
        let message = |err: pi_rules_host::error::Error| err.message().to_owned();
        let result = match self.checker.take() {
            None => IncrementalCheck::new(&opts).and_then(|checker| {
                let mut checker = checker.with_embedded_copies(self.embedded_copies.clone());
                // The whole check walks nothing: the nested directories come from their
                // documents.
                for path in open.iter().filter(|path| self.is_nested_rule(path)) {
                    checker.update(&opts, path)?;
                }
                Ok(checker)
            }),
            Some(mut checker) => changed
                .iter()
                .try_for_each(|path| {
                    // A nested rule directory is taken in for an open document of it only.
                    let skip = self.is_nested_rule(path)
                        && !open.contains(path)
                        && !path.parent().is_some_and(|dir| checker.has_nested(dir));
                    match skip {
                        true => Ok(()),
                        false => checker.update(&opts, path).map(drop),
                    }
                })
                .map(|()| checker),
        };
        self.checker = Some(result.map_err(message)?);
        Ok(())
    }

    /// Lets the check go: the next [`Workspace::refresh`] checks everything. The file ids go
    /// with it (only its findings hold them), so that a long session that opens many files in
    /// turn does not keep a path for each.
    pub fn forget(&mut self) {
        self.checker = None;
        self.file_ids = Arc::default();
    }

    /// The findings of the last check on the file at `path`, as `pi-rules check` reports them;
    /// `None` before a check.
    pub fn findings_of(&self, path: &Path) -> Option<Vec<Diagnostic>> {
        Some(self.checker.as_ref()?.findings_of(path))
    }
}

/// The workspace a document is checked in: the innermost folder that serves it.
pub fn owner(workspaces: &[Workspace], path: &Path) -> Option<usize> {
    workspaces
        .iter()
        .enumerate()
        .filter(|(_, w)| w.serves(path))
        .max_by_key(|(_, w)| {
            if path.starts_with(w.folder()) {
                w.folder().as_os_str().len()
            } else {
                0
            }
        })
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_as_the_flags_say() {
        let o = Options::from_json(Some(&json!({
            "packageDir": "/pkg", "comsActive": true, "confine": true, "strict": true
        })));
        assert_eq!(o.package_dir.as_deref(), Some(Path::new("/pkg")));
        assert_eq!(
            (o.coms_active, o.confine, o.strict),
            (Some(true), true, true)
        );
        assert!(o.warnings.is_empty());
        let o = Options::from_json(Some(&json!({"strict": "yes", "packageDir": 3})));
        assert!(!o.strict);
        assert_eq!(o.warnings.len(), 2, "{:?}", o.warnings);
        let o = Options::from_json(None);
        assert!(!o.strict && o.warnings.is_empty());
    }

    #[test]
    fn serves_rule_files_and_settings_files() {
        let env = Env::from_vars(PathBuf::from("/w"), [("HOME", "/home/u")]);
        let w = Workspace::new(&env, PathBuf::from("/w"), &Options::default());
        assert_eq!(
            w.layer_of(Path::new("/w/.pi/rules/10-a.md")),
            Some(Layer::Project)
        );
        assert_eq!(
            w.layer_of(Path::new("/home/u/.pi/agent/rules/10-a.md")),
            Some(Layer::User)
        );
        assert!(w.is_settings(Path::new("/home/u/.pi/pi-config-settings.json")));
        assert!(!w.serves(Path::new("/w/.pi/rules/a.txt")));
        assert!(!w.serves(Path::new("/w/README.md")));
        assert!(!w.serves(Path::new("/w/.pi/rules/sub/a.md")));
        // A nested rule directory's files, below the folder only.
        assert!(w.serves(Path::new("/w/packages/api/.pi/rules/10-a.md")));
        assert!(w.is_nested_rule(Path::new("/w/a/b/.pi/rules/x.md")));
        assert!(!w.serves(Path::new("/w/packages/api/.pi/rules/a.txt")));
        assert!(!w.serves(Path::new("/elsewhere/.pi/rules/10-a.md")));
        assert!(!w.serves(Path::new("/w/packages/.pi/rules/sub/a.md")));
        assert!(w.watched().contains(&"/w/**/.pi/rules/*.md".to_owned()));
        // pi-rules' configuration files, the project's and the user's.
        assert!(w.serves(Path::new("/w/.pi/pi-rules.toml")));
        assert!(w.serves(Path::new("/home/u/.pi/agent/pi-rules.toml")));
        assert!(!w.serves(Path::new("/w/pi-rules.toml")));
        assert!(!w.serves(Path::new("/home/u/.pi/pi-rules.toml")));
        let watched = w.watched();
        assert!(
            watched.contains(&"/w/.pi/pi-rules.toml".to_owned()),
            "{watched:?}"
        );
        assert!(watched.contains(&"/home/u/.pi/agent/pi-rules.toml".to_owned()));
    }
}
