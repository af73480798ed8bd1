//! Where a command's resolved settings come from: read afresh ([`FreshSettings`]), with keys
//! overridden as if a settings file above all others held them ([`SettingsOverrides`]), or
//! through the settings and location caches of a long-running front end ([`CachedSettings`]).

use crate::error::UsageError;
use crate::files::FileStamp;
use crate::repo;
use crate::session::{FoundSettingsFile, LocationCache, Session, SettingsFileState, SettingsRead};
use pi_rules_core::lint::suggest;
use pi_rules_core::settings::{self, Resolved, Schema, SettingsCache, SettingsFile, SettingsFs};
use pi_rules_core::value::Object;
use pi_rules_core::Value;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where a command's resolved settings come from.
pub trait SettingsSource {
    /// The settings for `session`'s working directory, what became of each settings file, and
    /// why a file or value is ignored ([`SettingsRead::notes`]).
    fn read(&mut self, session: &Session) -> SettingsRead;

    /// Just the resolved settings.
    fn resolve(&mut self, session: &Session) -> Resolved {
        self.read(session).resolved
    }
}

/// Settings read afresh from the files and the environment: one-shot commands.
#[derive(Debug, Default, Clone, Copy)]
pub struct FreshSettings;

impl SettingsSource for FreshSettings {
    fn read(&mut self, session: &Session) -> SettingsRead {
        session.resolve_noting()
    }
}

/// Settings with some keys set as if a settings file above all others held them: `diff --set`.
///
/// The values are checked exactly as a settings file's are (they are parsed as one, see
/// [`SettingsOverrides::parse`]), and resolution runs on the project file with the overridden
/// keys put into it, so every key rule (agent lists, ports, cycle counts) applies unchanged. The
/// overridden keys resolve with the project file as their source.
#[derive(Debug, Clone, Default)]
pub struct SettingsOverrides {
    /// Key and raw value, in the order given; a later one for the same key wins.
    values: Vec<(String, Value)>,
}

impl SettingsOverrides {
    /// Reads `KEY=VALUE` pairs against `schema`. VALUE is JSON when it parses as JSON, else a
    /// string (`--set commit_trailer=Assisted-by`). An unknown key, or a value its key's check
    /// rejects, is a [`UsageError`] naming it.
    pub fn parse(schema: &Schema, pairs: &[String]) -> Result<SettingsOverrides, UsageError> {
        let mut values: Vec<(String, Value)> = Vec::with_capacity(pairs.len());
        for pair in pairs {
            let Some((key, text)) = pair.split_once('=') else {
                return Err(UsageError(format!(
                    "`--set {}` needs the form KEY=VALUE, e.g. `--set dco=true`",
                    pair
                )));
            };
            let key = key.trim();
            if !schema.contains(key) {
                let hint = match suggest::closest(key, schema.names()) {
                    Some(near) => format!("; did you mean `{near}`?"),
                    None => "; `pi-rules schema` lists the keys".to_owned(),
                };
                return Err(UsageError(format!(
                    "unknown settings key `{}` in `--set`{hint}",
                    key
                )));
            }
            let raw: serde_json::Value = serde_json::from_str(text)
                .unwrap_or_else(|_| serde_json::Value::String(text.to_owned()));
            let mut one = Object::new();
            one.insert(key, Value::from(raw));
            let file = SettingsFile::parse(schema, &object_json(&one));
            if let Some(rejected) = file.rejected().first() {
                return Err(UsageError(format!(
                    "`--set {}`: the value is rejected: {}",
                    pair, rejected.reason
                )));
            }
            values.retain(|(k, _)| k != key);
            values.extend(one.iter().map(|(k, v)| (k.to_owned(), v.clone())));
        }
        Ok(SettingsOverrides { values })
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The overrides as `key=value` (value as JSON), for labels.
    pub fn describe(&self) -> Vec<String> {
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={}", v.to_json().unwrap_or_default()))
            .collect()
    }

    /// The project file with the overridden keys put in it (all of the file ignored when it is
    /// not an object, as resolution would ignore it).
    pub(crate) fn project_file(&self, schema: &Schema, project: &SettingsFile) -> SettingsFile {
        let mut merged = match project.raw() {
            Value::Object(raw) if project.problem().is_none() => raw.clone(),
            _ => Object::new(),
        };
        for (key, value) in &self.values {
            merged.insert(key.as_str(), value.clone());
        }
        SettingsFile::parse(schema, &object_json(&merged))
    }
}

/// An object as JSON text.
fn object_json(object: &Object) -> String {
    Value::Object(object.clone())
        .to_json()
        .unwrap_or_else(|| "{}".to_owned())
}

impl SettingsSource for SettingsOverrides {
    fn read(&mut self, session: &Session) -> SettingsRead {
        let mut read = session.resolve_noting();
        let (project, global) = session.settings_files();
        let project = FoundSettingsFile {
            file: self.project_file(&session.schema, &project.file),
            ..project
        };
        read.resolved = session.resolve_files(&project, global.as_ref());
        read
    }
}

/// Settings through the settings cache, and the repository root through the location cache:
/// the same working directory within the TTL costs no file access for either (but the keys that
/// the reference resolves per key, which read both files as they are).
pub struct CachedSettings {
    cache: SettingsCache,
    locations: LocationCache,
    /// The settings files' texts, for the keys resolved per key (see [`SettingsTexts`]).
    texts: RefCell<SettingsTexts>,
    /// The note on project rules at the repository root that the last request's working
    /// directory does not read, for results whose command printed it to stderr only.
    unread_root_rules: Option<String>,
    /// Whether the settings files are looked at on every read ([`CachedSettings::fresh`]).
    fresh: bool,
}

impl CachedSettings {
    /// Caches that re-check file modification times, and look for the repository root again, at
    /// most every `ttl`.
    pub fn new(ttl: Duration) -> CachedSettings {
        CachedSettings {
            cache: SettingsCache::with_interval(ttl),
            locations: LocationCache::new(ttl),
            texts: RefCell::new(SettingsTexts::default()),
            unread_root_rules: None,
            fresh: false,
        }
    }

    /// Settings looked at on every read, so that an edit shows at once as a rule's does: each
    /// settings file costs one `stat` while it is the file that was read (its text is kept by
    /// its stamp, [`SettingsTexts`]), and is read again when it changed. Only the repository
    /// root is kept, for `location_ttl` (see [`LocationCache`]).
    pub fn fresh(location_ttl: Duration) -> CachedSettings {
        CachedSettings {
            fresh: true,
            ..CachedSettings::new(location_ttl)
        }
    }

    /// Gives `session` its repository root from the location cache (see [`LocationCache`]).
    pub fn locate(&mut self, session: &Session, now: Instant) {
        self.locations.locate(session, now);
    }

    /// Until when the repository root kept for `cwd` is trusted (see
    /// [`LocationCache::trusted_until`]).
    pub fn located_until(&self, cwd: &Path) -> Option<Instant> {
        self.locations.trusted_until(cwd)
    }

    /// Forgets the note of the last request (see [`CachedSettings::take_unread_root_rules`]).
    pub fn forget_unread_root_rules(&mut self) {
        self.unread_root_rules = None;
    }

    /// The note on project rules at the repository root that the last read's working directory
    /// does not read, taken.
    pub fn take_unread_root_rules(&mut self) -> Option<String> {
        self.unread_root_rules.take()
    }
}

impl SettingsSource for CachedSettings {
    fn read(&mut self, session: &Session) -> SettingsRead {
        let now = Instant::now();
        self.locate(session, now);
        self.unread_root_rules = session.unread_root_rules_note();
        if overlays_settings(session) {
            // An editor buffer changes without the file's time changing: read afresh.
            return session.resolve_noting();
        }
        if self.fresh {
            self.cache.clear();
        }
        let disk = DiskSettings::with_texts(session, &self.texts);
        let env = |name: &str| session.env.var(name);
        let resolved = self
            .cache
            .resolve(&session.schema, &disk, &env, &session.cwd, now);
        let (project, global) = self.cache.files(&session.schema, &disk, &session.cwd, now);
        let (project_path, global_path) = session.settings_paths_with(&|path| disk.exists(path));
        let mut files = vec![SettingsFileState::of(
            "project",
            project_path,
            project,
            None,
        )];
        if let Some(path) = global_path {
            files.push(SettingsFileState::of("global", path, global, None));
        }
        SettingsRead {
            resolved,
            files,
            notes: Vec::new(),
        }
    }
}

/// Whether an editor buffer in `session`'s overlay stands in for a settings file (any file
/// named as one, wherever it is: the cache also reads other directories' files).
fn overlays_settings(session: &Session) -> bool {
    let overlay = session.files().overlay();
    !overlay.is_empty()
        && overlay.paths().any(|path| {
            path.file_name().is_some_and(|name| {
                pi_rules_core::settings::SETTINGS_FILE_NAMES
                    .iter()
                    .any(|known| name == *known)
            })
        })
}

/// The settings files on disk, as the settings cache of `serve` reads them for one session.
///
/// Each path is `stat`ed once per request, by the session's [`Files`](crate::files::Files): the
/// cache asks whether the same two or three paths exist up to three times each (to find the
/// paths, to take their times, to read them). A file the keys resolved per key read "as it is
/// now" is taken from [`SettingsTexts`] when it is still the file that was read (see there).
pub struct DiskSettings<'a> {
    session: &'a Session,
    texts: Option<&'a RefCell<SettingsTexts>>,
}

impl<'a> DiskSettings<'a> {
    /// The settings files of `session`: under its `$HOME` (the global file) and its repository
    /// root, which the session finds once (or has from [`Session::locate_from`]).
    pub fn new(session: &'a Session) -> DiskSettings<'a> {
        DiskSettings {
            session,
            texts: None,
        }
    }

    /// The same, reading through `texts`, which outlives the request.
    pub fn with_texts(session: &'a Session, texts: &'a RefCell<SettingsTexts>) -> DiskSettings<'a> {
        DiskSettings {
            texts: Some(texts),
            ..DiskSettings::new(session)
        }
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
        self.session.files().exists(path)
    }

    fn mtime(&self, path: &Path) -> Option<std::time::SystemTime> {
        self.session
            .files()
            .metadata(path)
            .and_then(|m| m.modified().ok())
    }

    fn read(&self, path: &Path) -> Option<String> {
        let files = self.session.files();
        let Some(texts) = self.texts.filter(|_| !files.overlay().contains(path)) else {
            return self.session.read_settings_text(path).ok().flatten();
        };
        let stamp = files.stamp(path);
        if let Some(stamp) = &stamp {
            if let Some(text) = texts.borrow().get(path, stamp) {
                return Some(text.to_owned());
            }
        }
        let read_at = std::time::SystemTime::now();
        let text = self.session.read_settings_text(path).ok().flatten()?;
        match stamp {
            Some(stamp) if stamp.settled_before(read_at, SettingsTexts::SETTLED) => {
                texts.borrow_mut().keep(path, stamp, &text)
            }
            _ => texts.borrow_mut().entries.retain(|(p, _, _)| p != path),
        }
        Some(text)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use pi_rules_core::settings::Source;
    use std::borrow::Cow;
    use std::fs;

    /// A session on a temporary project (not a repository) with `settings` as its project file.
    fn session_with(settings: Option<&str>) -> (tempfile::TempDir, Session) {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        if let Some(text) = settings {
            std::fs::write(project.join(".pi/pi-config-settings.jsonc"), text).unwrap();
        }
        let session = Session::from_parts(project, None, Cow::Borrowed(Schema::embedded()));
        (root, session)
    }

    fn pairs(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn overrides_sit_above_the_project_file_and_keep_the_rest_of_it() {
        let (_root, session) = session_with(Some(
            r#"{"dco": true, "use_worktrees": true, "pidash_port": "bad"}"#,
        ));
        let mut overrides = SettingsOverrides::parse(
            &session.schema,
            &pairs(&["use_worktrees=false", "review_loop_max_cycles=\"5\""]),
        )
        .unwrap();
        let resolved = overrides.resolve(&session);
        let value = |key: &str| resolved.resolve_key(key).to_json().unwrap();
        assert_eq!(value("dco"), "true");
        assert_eq!(value("use_worktrees"), "false");
        assert_eq!(value("review_loop_max_cycles"), "5");
        // The rejected project value is still rejected: the default stands.
        assert_eq!(
            resolved.get("pidash_port").unwrap().source,
            &Source::Default
        );
        assert_eq!(
            overrides.describe(),
            ["use_worktrees=false", "review_loop_max_cycles=\"5\""]
        );
    }

    #[test]
    fn a_project_file_that_is_ignored_stays_ignored() {
        for text in ["[1, 2]", "{\"dco\": true,}"] {
            let (_root, session) = session_with(Some(text));
            let mut overrides =
                SettingsOverrides::parse(&session.schema, &pairs(&["use_worktrees=true"])).unwrap();
            let resolved = overrides.resolve(&session);
            assert_eq!(
                resolved.resolve_key("use_worktrees").to_json().unwrap(),
                "true"
            );
            assert_eq!(
                resolved.get("dco").unwrap().source,
                &Source::Default,
                "{text}"
            );
        }
    }

    #[test]
    fn values_are_json_or_strings_and_checked_per_key() {
        let schema = Schema::embedded();
        let ok = |pair: &str| SettingsOverrides::parse(schema, &pairs(&[pair])).is_ok();
        let err = |pair: &str| {
            SettingsOverrides::parse(schema, &pairs(&[pair]))
                .unwrap_err()
                .to_string()
        };
        assert!(ok("commit_trailer=Assisted-by"));
        assert!(ok("commit_trailer=false"));
        assert!(ok("acpx_agents=codex, claude"));
        assert!(ok("acpx_agents=[\"codex\"]"));
        assert!(ok("review_loop_max_cycles=10"));
        assert!(err("review_loop_max_cycles=0").contains("out of range"));
        assert!(err("dco=1").contains("expected a boolean, found a number"));
        assert!(err("pidash_port=70000").contains("out of range"));
        assert!(err("nope=1").contains("unknown settings key `nope`"));
        assert!(err("=1").contains("unknown settings key ``"));
        assert!(err("dco").contains("needs the form KEY=VALUE"));
        // The last value for a key wins.
        let overrides =
            SettingsOverrides::parse(schema, &pairs(&["dco=true", "dco=false"])).unwrap();
        assert_eq!(overrides.describe(), ["dco=false"]);
    }

    #[test]
    fn a_settings_text_is_kept_only_for_the_file_it_was_read_from() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.json");
        fs::write(&path, "{}").unwrap();
        let stamp = FileStamp::of(&fs::metadata(&path).unwrap());
        let mut texts = SettingsTexts::default();
        texts.keep(&path, stamp, "{}");
        assert_eq!(texts.get(&path, &stamp), Some("{}"));
        // Another stamp (a write changes the change time at least) or another path: nothing.
        let changed = stamp.changed_by(1);
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
}
