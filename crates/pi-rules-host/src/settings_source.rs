//! Where a command's resolved settings come from: read afresh ([`FreshSettings`]), with keys
//! overridden as if a settings file above all others held them ([`SettingsOverrides`]), or
//! through the settings and location caches of a long-running front end ([`CachedSettings`]).

use crate::error::UsageError;
use crate::session::{
    DiskSettings, FoundSettingsFile, LocationCache, Session, SettingsFileState, SettingsRead,
    SettingsTexts,
};
use pi_rules_core::lint::suggest;
use pi_rules_core::settings::{Resolved, Schema, SettingsCache, SettingsFile, SettingsFs};
use pi_rules_core::value::Object;
use pi_rules_core::Value;
use std::cell::RefCell;
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
        }
    }

    /// Gives `session` its repository root from the location cache (see [`LocationCache`]).
    pub fn locate(&mut self, session: &Session, now: Instant) {
        self.locations.locate(session, now);
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
    let overlay = session.env.overlay();
    !overlay.is_empty()
        && overlay.paths().any(|path| {
            path.file_name().is_some_and(|name| {
                pi_rules_core::settings::SETTINGS_FILE_NAMES
                    .iter()
                    .any(|known| name == *known)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_rules_core::settings::Source;
    use std::borrow::Cow;

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
}
