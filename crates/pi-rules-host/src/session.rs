//! What one command invocation reads from the machine: the working directory, `$HOME`, the
//! environment, the settings schema and the two settings files. Everything the core needs is
//! gathered here and handed over as data.

use crate::bounded::{self, MAX_SETTINGS_BYTES};
use crate::embedded;
use crate::env::Env;
use crate::error::Result;
use crate::escape::escape;
use crate::loader::{LayerDirs, PackageSource, Policy};
use crate::notes::Note;
use crate::repo;
use anyhow::Context;
use pi_rules_core::settings::{self, Resolved, Schema, SettingsFile, Source};
use pi_rules_core::{Features, Settings};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The environment variable that replaces the embedded package rules with a directory.
pub const PACKAGE_DIR_ENV: &str = "PI_RULES_PACKAGE_DIR";

/// The environment variable that turns confinement on (`--confine`), when it is `1`.
pub const CONFINE_ENV: &str = "PI_RULES_CONFINE";

/// The environment variable that marks a subagent, which gets no rules block.
pub const SUBAGENT_ENV: &str = "PI_SUBAGENT_CHILD";

/// The block used when no rule file could be taken.
pub const FALLBACK_BLOCK: &str =
    "\n\n[ORCHESTRATOR RULES] You are a MANAGER. Delegate work to subagents.\n";

/// One settings file as found: where it is (the `.jsonc` when it exists, else the `.json`), what
/// it held, and whether a `.json` beside a `.jsonc` was ignored.
#[derive(Debug)]
pub struct FoundSettingsFile {
    pub path: PathBuf,
    pub file: SettingsFile,
    /// The text, for diagnostics with line and column; `None` when missing or unreadable.
    pub text: Option<String>,
    pub ignored_json: Option<PathBuf>,
}

/// Resolved settings, what became of each settings file, and why a file or value is ignored.
pub struct SettingsRead {
    pub resolved: Resolved,
    pub files: Vec<SettingsFileState>,
    /// Why a settings file or value is ignored, in order.
    pub notes: Vec<Note>,
}

/// The working directory given to a command is not a directory.
///
/// The front end says what the directory was called: the command line's `--cwd` (this error's
/// `Display`), or a request's `cwd` parameter ([`NotADirectory::for_param`]).
#[derive(Debug)]
pub struct NotADirectory {
    pub path: PathBuf,
}

impl NotADirectory {
    /// The message for the request parameter `name` (`params.cwd`), raw.
    pub fn for_param(&self, name: &str) -> String {
        format!(
            "{name}: `{}` is not a directory; pass the project directory (the one holding .pi/)",
            self.path.display()
        )
    }
}

impl std::fmt::Display for NotADirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`--cwd {}` is not a directory; pass the project directory (the one holding .pi/)",
            self.path.display()
        )
    }
}

impl std::error::Error for NotADirectory {}

/// What discovery found for one working directory: its physical path, its repository root and
/// the project root (see [`Session::project_root`]). `serve` keeps it per working directory
/// ([`LocationCache`]) so that a warm request does not look for the repository again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    physical_cwd: Option<PathBuf>,
    repo_root: Option<PathBuf>,
    project_root: PathBuf,
    /// The `$HOME` the project root was decided against.
    home: Option<PathBuf>,
}

impl Location {
    /// The project rules directory at the repository root, `<root>/.pi/rules`, when `cwd` (the
    /// working directory this was found for) does not read it: `cwd` is below the root, and
    /// `<root>/.pi/rules` is a directory other than `<cwd>/.pi/rules`. Project rules are read
    /// from `<cwd>/.pi/rules`, as the reference reads them, while settings come from the root.
    ///
    /// Uses what discovery found: nothing is looked up when `cwd` is the root (or the project is
    /// `cwd` itself, as under a dotfiles repository at `$HOME`), and two `stat`s otherwise.
    pub fn unread_root_rules(&self, cwd: &Path) -> Option<PathBuf> {
        let root = self.repo_root.as_deref()?;
        // The project root is the repository root's real path, or the real `cwd` when the
        // repository is not the project (a dotfiles repository at or above `$HOME`).
        if Some(self.project_root.as_path()) == self.physical_cwd.as_deref()
            || self.project_root.as_path() == cwd
        {
            return None;
        }
        let rules = root.join(".pi").join("rules");
        let theirs = fs::metadata(&rules).ok().filter(fs::Metadata::is_dir)?;
        if let Ok(ours) = fs::metadata(cwd.join(".pi").join("rules")) {
            use std::os::unix::fs::MetadataExt;
            if (ours.dev(), ours.ino()) == (theirs.dev(), theirs.ino()) {
                return None;
            }
        }
        Some(rules)
    }
}

/// The note for [`Location::unread_root_rules`], plain (for JSON): the directory not read, and
/// the one that is.
pub fn unread_root_rules_note(rules: &Path, cwd: &Path) -> String {
    let root = rules.parent().and_then(Path::parent).unwrap_or(rules);
    format!(
        "the project rules at the repository root, `{}`, are not read from this directory: \
         project rules come from the working directory's `.pi/rules` (`{}`); run from `{}` to \
         use them",
        rules.display(),
        cwd.join(".pi").join("rules").display(),
        root.display()
    )
}

/// The machine as one command sees it.
pub struct Session {
    /// What the front end gave of the process: variables, `$HOME`, its working directory.
    pub env: Env,
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub schema: Cow<'static, Schema>,
    /// The physical path of `cwd` (`fs::canonicalize`), found once when first needed.
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
        let cwd = match cwd {
            Some(dir) if dir.is_dir() => dir,
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
                let text = match bounded::read_text(path, MAX_SETTINGS_BYTES) {
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
        Ok(Session::in_env(env.clone(), cwd, home, schema))
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
        Session {
            env,
            cwd,
            home,
            schema,
            physical_cwd: OnceCell::new(),
            repo_root: OnceCell::new(),
            project_root: OnceCell::new(),
            settings_paths: OnceCell::new(),
        }
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
        let rules = self.location().unread_root_rules(&self.cwd)?;
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
            .with_overlay(std::sync::Arc::clone(self.env.shared_overlay()))
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
            .get_or_init(|| fs::canonicalize(&self.cwd).ok())
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
        let canonical = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
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

    /// The directory of the global settings file, `$HOME/.pi`.
    pub fn global_settings_dir(&self) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(".pi"))
    }

    /// The paths of the two settings files (project, global): each the `.jsonc` when it exists,
    /// else the `.json`.
    pub fn settings_paths(&self) -> (&Path, Option<&Path>) {
        self.settings_paths_with(&|p: &Path| self.env.overlay().exists(p))
    }

    /// [`Session::settings_paths`], asking `exists` whether a `.jsonc` exists (when they are not
    /// known yet).
    pub fn settings_paths_with(&self, exists: &dyn Fn(&Path) -> bool) -> (&Path, Option<&Path>) {
        let (project, global) = self.settings_paths.get_or_init(|| {
            (
                settings::settings_file_in(&self.project_settings_dir(), exists),
                self.global_settings_dir()
                    .map(|dir| settings::settings_file_in(&dir, exists)),
            )
        });
        (project, global.as_deref())
    }

    /// Where a resolved value came from, for people: the settings file's path, `env NAME`, or
    /// `default`. Escaped for the terminal.
    pub fn source_label(&self, source: &Source) -> String {
        let (project, global) = self.settings_paths();
        match source {
            Source::ProjectFile => escape(&project.display().to_string()).into_owned(),
            Source::GlobalFile => global.map_or_else(
                || "global file".to_owned(),
                |path| escape(&path.display().to_string()).into_owned(),
            ),
            Source::Env(name) => format!("env {}", escape(name)),
            Source::Default => "default".to_owned(),
            Source::Fallback => "no rule".to_owned(),
        }
    }

    /// Reads both settings files: (project, global).
    pub fn settings_files(&self) -> (FoundSettingsFile, Option<FoundSettingsFile>) {
        let (project, global) = self.settings_paths();
        (
            self.read_settings_file(project),
            global.map(|path| self.read_settings_file(path)),
        )
    }

    /// Reads the settings file at `path` (one of [`Session::settings_paths`]).
    fn read_settings_file(&self, path: &Path) -> FoundSettingsFile {
        let path = path.to_path_buf();
        let ignored_json = path
            .extension()
            .is_some_and(|e| e == "jsonc")
            .then(|| path.with_extension("json"))
            .filter(|json| self.env.overlay().exists(json));
        let (file, text) = match self.read_settings_text(&path) {
            Ok(None) => (SettingsFile::missing(), None),
            Ok(Some(text)) => (SettingsFile::parse(&self.schema, &text), Some(text)),
            Err(message) => (SettingsFile::unreadable(message), None),
        };
        FoundSettingsFile {
            path,
            file,
            text,
            ignored_json,
        }
    }

    /// Reads a settings file, at most [`MAX_SETTINGS_BYTES`]: `Ok(None)` when there is none, `Err`
    /// with a reason when it cannot be used (too large, not a regular file, unreadable). An
    /// editor buffer in the `Env`'s overlay stands in for the file; else the file is opened
    /// before it is examined, so a FIFO put in its place cannot hang us.
    pub fn read_settings_text(&self, path: &Path) -> Result<Option<String>, String> {
        self.env.overlay().read_text(path, MAX_SETTINGS_BYTES)
    }

    /// Resolves every key of the schema from the two files and the environment.
    pub fn resolve(&self) -> Resolved {
        let (project, global) = self.settings_files();
        self.resolve_files(&project, global.as_ref())
    }

    /// Like [`Session::resolve`], saying why a settings file or value is ignored (as notes) and
    /// what became of each file.
    pub fn resolve_noting(&self) -> SettingsRead {
        let (project, global) = self.settings_files();
        let mut files = Vec::new();
        let mut notes = Vec::new();
        for (scope, found) in [("project", Some(&project)), ("global", global.as_ref())] {
            let Some(found) = found else { continue };
            notes.extend(found.notices().into_iter().map(Note::warning));
            files.push(SettingsFileState::of(
                scope,
                &found.path,
                &found.file,
                found.ignored_json.as_deref(),
            ));
        }
        SettingsRead {
            resolved: self.resolve_files(&project, global.as_ref()),
            files,
            notes,
        }
    }

    /// Resolves from files already read.
    pub fn resolve_files(
        &self,
        project: &FoundSettingsFile,
        global: Option<&FoundSettingsFile>,
    ) -> Resolved {
        let missing = SettingsFile::missing();
        let global = global.map_or(&missing, |g| &g.file);
        let env = |name: &str| self.env.var(name);
        settings::resolve(&self.schema, &project.file, global, &env)
    }
}

/// The settings files on disk, as the settings cache of `serve` reads them for one session.
///
/// Each path is `stat`ed once per request: the cache asks whether the same two or three paths
/// exist up to three times each (to find the paths, to take their times, to read them). A file
/// the keys resolved per key read "as it is now" is taken from [`SettingsTexts`] when it is
/// still the file that was read (see there).
pub struct DiskSettings<'a> {
    session: &'a Session,
    stats: std::cell::RefCell<Vec<(PathBuf, Option<fs::Metadata>)>>,
    texts: Option<&'a std::cell::RefCell<SettingsTexts>>,
}

impl<'a> DiskSettings<'a> {
    /// The settings files of `session`: under its `$HOME` (the global file) and its repository
    /// root, which the session finds once (or has from [`Session::locate_from`]).
    pub fn new(session: &'a Session) -> DiskSettings<'a> {
        DiskSettings {
            session,
            stats: std::cell::RefCell::new(Vec::new()),
            texts: None,
        }
    }

    /// The same, reading through `texts`, which outlives the request.
    pub fn with_texts(
        session: &'a Session,
        texts: &'a std::cell::RefCell<SettingsTexts>,
    ) -> DiskSettings<'a> {
        DiskSettings {
            texts: Some(texts),
            ..DiskSettings::new(session)
        }
    }

    /// `path`'s metadata (following links), taken once per request.
    fn metadata(&self, path: &Path) -> Option<fs::Metadata> {
        if let Some((_, known)) = self.stats.borrow().iter().find(|(p, _)| p == path) {
            return known.clone();
        }
        let metadata = fs::metadata(path).ok();
        self.stats
            .borrow_mut()
            .push((path.to_path_buf(), metadata.clone()));
        metadata
    }
}

/// What identifies the contents of a file without reading it: device, inode, size, and the
/// modification and change times to the nanosecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStamp {
    fn of(metadata: &fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.size(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// Whether the file's last change was at least [`SettingsTexts::SETTLED`] before `at`.
    fn settled_before(&self, at: std::time::SystemTime) -> bool {
        let Ok(at) = at.duration_since(std::time::UNIX_EPOCH) else {
            return false;
        };
        let changed = self.mtime.max(self.ctime);
        let Ok(secs) = u64::try_from(changed.0) else {
            return false;
        };
        let nanos = u32::try_from(changed.1).unwrap_or(0);
        Duration::new(secs, nanos) + SettingsTexts::SETTLED <= at
    }
}

/// The texts of settings files as `serve` last read them, for the keys the reference resolves
/// per key (`acpx_agents`, `cli_agents`), which read both files as they are on every request.
///
/// A text is given again only while the file has the same device, inode, size and modification
/// and change times as when it was read (a write, a rename over it, a `touch` change one of
/// them), so it is the file as it is now. A file changed less than [`SettingsTexts::SETTLED`]
/// before it was read is not kept: the kernel's file times move in ticks of a few milliseconds,
/// and a write of the same size in the same tick would keep every stamp (git's "racily clean"
/// case). Only regular files that were read whole are kept, up to [`SettingsTexts::MAX_BYTES`]
/// each and [`SettingsTexts::MAX_FILES`] files.
#[derive(Debug, Default)]
pub struct SettingsTexts {
    entries: Vec<(PathBuf, FileStamp, String)>,
}

impl SettingsTexts {
    /// How long before its read a file must have last changed for its text to be kept.
    pub const SETTLED: Duration = Duration::from_secs(2);
    /// The largest text kept.
    pub const MAX_BYTES: usize = 64 << 10;
    /// The most files kept; past that, the oldest goes.
    pub const MAX_FILES: usize = 16;

    fn get(&self, path: &Path, stamp: &FileStamp) -> Option<&str> {
        self.entries
            .iter()
            .find(|(p, s, _)| p == path && s == stamp)
            .map(|(_, _, text)| text.as_str())
    }

    fn keep(&mut self, path: &Path, stamp: FileStamp, text: &str) {
        self.entries.retain(|(p, _, _)| p != path);
        if text.len() > Self::MAX_BYTES {
            return;
        }
        if self.entries.len() >= Self::MAX_FILES {
            self.entries.remove(0);
        }
        self.entries
            .push((path.to_path_buf(), stamp, text.to_owned()));
    }

    /// How many texts are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl settings::SettingsFs for DiskSettings<'_> {
    fn project_dir(&self, cwd: &Path) -> PathBuf {
        if cwd == self.session.cwd {
            return self.session.project_settings_dir();
        }
        repo::repo_root(&self.session.env, cwd)
            .unwrap_or_else(|| cwd.to_path_buf())
            .join(".pi")
    }

    fn global_dir(&self) -> Option<PathBuf> {
        self.session.global_settings_dir()
    }

    fn exists(&self, path: &Path) -> bool {
        self.session.env.overlay().contains(path) || self.metadata(path).is_some()
    }

    fn mtime(&self, path: &Path) -> Option<std::time::SystemTime> {
        self.metadata(path).and_then(|m| m.modified().ok())
    }

    fn read(&self, path: &Path) -> Option<String> {
        let Some(texts) = self
            .texts
            .filter(|_| !self.session.env.overlay().contains(path))
        else {
            return self.session.read_settings_text(path).ok().flatten();
        };
        let stamp = self
            .metadata(path)
            .filter(fs::Metadata::is_file)
            .map(|m| FileStamp::of(&m));
        if let Some(stamp) = &stamp {
            if let Some(text) = texts.borrow().get(path, stamp) {
                return Some(text.to_owned());
            }
        }
        let read_at = std::time::SystemTime::now();
        let text = self.session.read_settings_text(path).ok().flatten()?;
        match stamp {
            Some(stamp) if stamp.settled_before(read_at) => {
                texts.borrow_mut().keep(path, stamp, &text)
            }
            _ => texts.borrow_mut().entries.retain(|(p, _, _)| p != path),
        }
        Some(text)
    }
}

/// What discovery found, per working directory, for a long-running host: an entry is trusted for
/// the TTL from when it was found, then found again, so a `.git` created or removed (or a
/// directory moved) shows within the TTL. The time is a parameter, as for the settings cache.
#[derive(Debug)]
pub struct LocationCache {
    entries: HashMap<PathBuf, (Location, Instant)>,
    ttl: Duration,
}

impl LocationCache {
    /// The most working directories kept; past that, expired entries are dropped, and if none
    /// has expired, all of them.
    pub const MAX_ENTRIES: usize = 64;

    /// A cache whose entries are trusted for `ttl` (zero: never).
    pub fn new(ttl: Duration) -> LocationCache {
        LocationCache {
            entries: HashMap::new(),
            ttl,
        }
    }

    /// Gives `session` what was found for its working directory when that is younger than the
    /// TTL at `now`; otherwise lets the session look (once) and keeps what it found.
    pub fn locate(&mut self, session: &Session, now: Instant) {
        if let Some((location, found_at)) = self.entries.get(&session.cwd) {
            if now.saturating_duration_since(*found_at) < self.ttl && session.locate_from(location)
            {
                return;
            }
        }
        if self.ttl.is_zero() {
            return;
        }
        let location = session.location();
        if self.entries.len() >= Self::MAX_ENTRIES && !self.entries.contains_key(&session.cwd) {
            let ttl = self.ttl;
            self.entries
                .retain(|_, (_, found_at)| now.saturating_duration_since(*found_at) < ttl);
            if self.entries.len() >= Self::MAX_ENTRIES {
                self.entries.clear();
            }
        }
        self.entries.insert(session.cwd.clone(), (location, now));
    }

    /// How many working directories are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A settings file as a report shows it: which one, where, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SettingsFileState {
    /// `project` or `global`.
    pub scope: &'static str,
    pub path: String,
    /// `missing`, `read`, `read; N values ignored`, or `ignored: REASON`.
    pub state: String,
}

impl SettingsFileState {
    /// The state of `file`, found at `path`.
    pub fn of(
        scope: &'static str,
        path: &Path,
        file: &SettingsFile,
        ignored_json: Option<&Path>,
    ) -> Self {
        let mut state = if !file.is_present() {
            "missing".to_owned()
        } else if let Some(problem) = file.problem() {
            format!("ignored: {problem}")
        } else {
            match file.rejected().len() {
                0 => "read".to_owned(),
                1 => "read; 1 value ignored".to_owned(),
                n => format!("read; {n} values ignored"),
            }
        };
        if let Some(json) = ignored_json {
            state.push_str(&format!("; `{}` beside it is ignored", json.display()));
        }
        SettingsFileState {
            scope,
            path: path.display().to_string(),
            state,
        }
    }
}

impl FoundSettingsFile {
    /// Why this file, or part of it, is ignored: one line per reason, naming the file (raw).
    pub fn notices(&self) -> Vec<String> {
        let mut notices = Vec::new();
        if self.ignored_json.is_none()
            && self.file.problem().is_none()
            && self.file.rejected().is_empty()
        {
            return notices;
        }
        let path = self.path.display().to_string();
        if let Some(json) = &self.ignored_json {
            notices.push(format!(
                "`{}` is ignored because `{path}` exists beside it",
                json.display()
            ));
        }
        if let Some(problem) = self.file.problem() {
            notices.push(format!("settings file `{path}` is ignored: {problem}"));
        }
        for rejected in self.file.rejected() {
            notices.push(format!(
                "`{}` in `{path}` is ignored: {}",
                rejected.key, rejected.reason
            ));
        }
        notices
    }
}

/// The feature predicates: `coms_active` from the host, `external_ai_agents` from the settings.
pub fn features(coms_active: bool, resolved: &Resolved) -> Features {
    let listed = |key: &str| match resolved.resolve_key(key) {
        pi_rules_core::Value::Array(items) => !items.is_empty(),
        _ => false,
    };
    let mut features = Features::new();
    features.set("coms_active", coms_active);
    features.set(
        "external_ai_agents",
        listed("acpx_agents") || listed("cli_agents"),
    );
    features
}

/// What `{{REVIEW_LOOP_MAX_CYCLES}}` becomes: JavaScript `String(value)` of the setting.
pub fn review_loop_max_cycles(settings: &Settings) -> String {
    settings
        .get("review_loop_max_cycles")
        .map_or_else(|| "undefined".to_owned(), |v| v.to_js_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal git directory that native discovery accepts.
    fn make_git_dir(worktree: &Path) {
        let git = worktree.join(".git");
        fs::create_dir_all(git.join("objects")).unwrap();
        fs::create_dir_all(git.join("refs")).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(
            git.join("config"),
            "[core]\n\trepositoryformatversion = 0\n",
        )
        .unwrap();
    }

    fn session(cwd: &Path, home: &Path) -> Session {
        Session::from_parts(
            cwd.to_path_buf(),
            Some(home.to_path_buf()),
            Cow::Borrowed(Schema::embedded()),
        )
    }

    #[test]
    fn a_location_is_kept_for_the_ttl_then_found_again() {
        let tmp = tempfile::tempdir().unwrap();
        let outer = tmp.path().join("outer");
        let app = outer.join("app");
        let home = tmp.path().join("home");
        fs::create_dir_all(&app).unwrap();
        fs::create_dir_all(&home).unwrap();
        let ttl = Duration::from_secs(30);
        let mut cache = LocationCache::new(ttl);
        let start = Instant::now();

        let first = session(&app, &home);
        cache.locate(&first, start);
        assert_eq!(first.repo_root(), None);
        assert_eq!(cache.len(), 1);

        // A repository made within the TTL is not seen: the entry is trusted.
        make_git_dir(&outer);
        let within = session(&app, &home);
        cache.locate(&within, start + ttl / 2);
        assert_eq!(within.repo_root(), None);
        // A session that has not been given the entry looks, and finds it.
        assert_eq!(session(&app, &home).repo_root(), Some(outer.as_path()));

        // At the TTL, discovery runs again and the new entry is kept.
        let after = session(&app, &home);
        cache.locate(&after, start + ttl);
        assert_eq!(after.repo_root(), Some(outer.as_path()));
        let project_root = after.project_root();
        fs::remove_dir_all(outer.join(".git")).unwrap();
        let kept = session(&app, &home);
        cache.locate(&kept, start + ttl + ttl / 2);
        assert_eq!(kept.repo_root(), Some(outer.as_path()));
        assert_eq!(kept.project_root(), project_root);
        // A removed repository is seen once the TTL has passed again.
        let gone = session(&app, &home);
        cache.locate(&gone, start + ttl * 2);
        assert_eq!(gone.repo_root(), None);
    }

    #[test]
    fn another_home_or_a_zero_ttl_looks_again() {
        let tmp = tempfile::tempdir().unwrap();
        let app = tmp.path().join("app");
        fs::create_dir_all(&app).unwrap();
        let start = Instant::now();
        let mut cache = LocationCache::new(Duration::from_secs(30));
        cache.locate(&session(&app, tmp.path()), start);
        make_git_dir(&app);
        // The project root depends on $HOME, so an entry is only given to the same $HOME.
        let other_home = session(&app, &tmp.path().join("elsewhere"));
        cache.locate(&other_home, start);
        assert_eq!(other_home.repo_root(), Some(app.as_path()));

        let mut never = LocationCache::new(Duration::ZERO);
        let first = session(&app, tmp.path());
        never.locate(&first, start);
        assert!(never.is_empty());
        fs::remove_dir_all(app.join(".git")).unwrap();
        let second = session(&app, tmp.path());
        never.locate(&second, start);
        assert_eq!(second.repo_root(), None);
    }

    #[test]
    fn the_cache_holds_at_most_max_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let start = Instant::now();
        let mut cache = LocationCache::new(Duration::from_secs(30));
        let locate = |cache: &mut LocationCache, name: String, at: Instant| {
            let dir = tmp.path().join(name);
            fs::create_dir_all(&dir).unwrap();
            cache.locate(&session(&dir, tmp.path()), at);
        };
        let half = LocationCache::MAX_ENTRIES / 2;
        for i in 0..half {
            locate(&mut cache, format!("old{i}"), start);
        }
        for i in 0..half {
            locate(
                &mut cache,
                format!("new{i}"),
                start + Duration::from_secs(20),
            );
        }
        assert_eq!(cache.len(), LocationCache::MAX_ENTRIES);
        // Full: the expired entries go, the fresh ones stay.
        locate(
            &mut cache,
            "one".to_owned(),
            start + Duration::from_secs(40),
        );
        assert_eq!(cache.len(), half + 1);
        // Full of fresh entries: all go.
        for i in 0..LocationCache::MAX_ENTRIES {
            locate(
                &mut cache,
                format!("more{i}"),
                start + Duration::from_secs(40),
            );
            assert!(cache.len() <= LocationCache::MAX_ENTRIES, "{i}");
        }
    }

    #[test]
    fn a_settings_text_is_kept_only_for_the_file_it_was_read_from() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.json");
        fs::write(&path, "{}").unwrap();
        let stamp = FileStamp::of(&fs::metadata(&path).unwrap());
        // Just written: not settled now, settled once the margin has passed.
        let now = std::time::SystemTime::now();
        assert!(!stamp.settled_before(now));
        assert!(stamp.settled_before(now + SettingsTexts::SETTLED + Duration::from_millis(50)));
        let mut texts = SettingsTexts::default();
        texts.keep(&path, stamp, "{}");
        assert_eq!(texts.get(&path, &stamp), Some("{}"));
        // Another stamp (a write changes the change time at least) or another path: nothing.
        let changed = FileStamp {
            ctime: (stamp.ctime.0, stamp.ctime.1 + 1),
            ..stamp
        };
        assert_eq!(texts.get(&path, &changed), None);
        assert_eq!(texts.get(&tmp.path().join("other"), &stamp), None);
        // Bounded: large texts are not kept, and at most MAX_FILES files.
        texts.keep(&path, stamp, &"x".repeat(SettingsTexts::MAX_BYTES + 1));
        assert!(texts.is_empty());
        for i in 0..SettingsTexts::MAX_FILES + 5 {
            texts.keep(&tmp.path().join(format!("f{i}")), stamp, "{}");
        }
        assert_eq!(texts.len(), SettingsTexts::MAX_FILES);
        assert_eq!(texts.get(&tmp.path().join("f0"), &stamp), None);
    }

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
