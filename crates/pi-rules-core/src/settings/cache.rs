//! The settings cache for long-running hosts, as the reference keeps it (SPEC §4 "Cache").
//!
//! One entry: the working directory, both checked files, both files' modification times and the
//! time of the last check. Another working directory reloads at once. The same directory within
//! [`RECHECK_INTERVAL`] of the last check is served from the entry without touching any file;
//! after that both paths are resolved again and stat'ed, and the files are reloaded only if a
//! modification time changed. Environment variables are read on every lookup.
//!
//! As in the reference, keys with per-key resolution (`acpx_agents`, `cli_agents`) bypass the
//! entry and read both files as they are now.
//!
//! File access goes through [`SettingsFs`] and the time is a parameter, so the cache does no I/O
//! of its own and tests need no sleeping.

use super::file::{settings_file_in, SettingsFile};
use super::resolve::{
    resolve_from, resolve_spec, EnvLookup, Resolved, ResolvedValue, SettingsPair, Source,
};
use super::schema::Schema;
use crate::value::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How long a cache entry is trusted before the files are stat'ed again.
pub const RECHECK_INTERVAL: Duration = Duration::from_secs(30);

/// The file access the cache needs; the binary implements it with `std::fs` and git.
pub trait SettingsFs {
    /// The project settings directory for `cwd`: `<repo root>/.pi`, or `<cwd>/.pi` outside a
    /// repository.
    fn project_dir(&self, cwd: &Path) -> PathBuf;
    /// The global settings directory, `$HOME/.pi`; `None` when there is no home directory.
    fn global_dir(&self) -> Option<PathBuf>;
    /// Whether `path` exists (following links).
    fn exists(&self, path: &Path) -> bool;
    /// The modification time of `path`, or `None` when it cannot be stat'ed.
    fn mtime(&self, path: &Path) -> Option<SystemTime>;
    /// The text of `path` (invalid UTF-8 replaced, a BOM kept), or `None` when it cannot be read.
    fn read(&self, path: &Path) -> Option<String>;
}

/// The settings file paths for `cwd`, resolved afresh.
fn paths(fs: &dyn SettingsFs, cwd: &Path) -> (PathBuf, Option<PathBuf>) {
    let exists = |p: &Path| fs.exists(p);
    let project = settings_file_in(&fs.project_dir(cwd), exists);
    let global = fs.global_dir().map(|dir| settings_file_in(&dir, exists));
    (project, global)
}

/// `path`'s modification time; `None` when it does not exist or cannot be stat'ed.
fn mtime(fs: &dyn SettingsFs, path: Option<&Path>) -> Option<SystemTime> {
    path.filter(|p| fs.exists(p)).and_then(|p| fs.mtime(p))
}

/// Reads and checks the file at `path`.
fn load(fs: &dyn SettingsFs, schema: &Schema, path: Option<&Path>) -> SettingsFile {
    let Some(path) = path.filter(|p| fs.exists(p)) else {
        return SettingsFile::missing();
    };
    match fs.read(path) {
        Some(text) => SettingsFile::parse(schema, &text),
        None => SettingsFile::unreadable(format!("`{}` could not be read", path.display())),
    }
}

#[derive(Debug)]
struct Entry {
    cwd: PathBuf,
    project: SettingsFile,
    global: SettingsFile,
    project_mtime: Option<SystemTime>,
    global_mtime: Option<SystemTime>,
    checked_at: Instant,
}

/// The cache: at most one entry.
#[derive(Debug)]
pub struct SettingsCache {
    entry: Option<Entry>,
    /// How long an entry is trusted before the files are stat'ed again.
    interval: Duration,
}

impl Default for SettingsCache {
    fn default() -> Self {
        SettingsCache::with_interval(RECHECK_INTERVAL)
    }
}

impl SettingsCache {
    /// A cache that re-checks the files at most every [`RECHECK_INTERVAL`], as the reference.
    pub fn new() -> SettingsCache {
        SettingsCache::default()
    }

    /// A cache that re-checks the files at most every `interval` (zero: on every lookup).
    pub fn with_interval(interval: Duration) -> SettingsCache {
        SettingsCache {
            entry: None,
            interval,
        }
    }

    /// Forgets the entry; the next lookup reloads.
    pub fn clear(&mut self) {
        self.entry = None;
    }

    /// The checked project and global files for `cwd` at time `now`, from the entry when it is
    /// still good.
    pub fn files(
        &mut self,
        schema: &Schema,
        fs: &dyn SettingsFs,
        cwd: &Path,
        now: Instant,
    ) -> (&SettingsFile, &SettingsFile) {
        let entry = self.refresh(schema, fs, cwd, now);
        (&entry.project, &entry.global)
    }

    /// Every key resolved for `cwd` at time `now`.
    pub fn resolve(
        &mut self,
        schema: &Schema,
        fs: &dyn SettingsFs,
        env: &dyn EnvLookup,
        cwd: &Path,
        now: Instant,
    ) -> Resolved {
        let entry = self.refresh(schema, fs, cwd, now);
        let merged = SettingsPair {
            project: &entry.project,
            global: &entry.global,
        };
        if !schema.keys().any(|spec| spec.per_key_resolution) {
            return resolve_from(schema, merged, merged, env);
        }
        let (project, global) = fresh_files(schema, fs, cwd);
        let per_key = SettingsPair {
            project: &project,
            global: &global,
        };
        resolve_from(schema, merged, per_key, env)
    }

    /// One key resolved for `cwd` at time `now`; an unknown key is `false`.
    pub fn get(
        &mut self,
        schema: &Schema,
        fs: &dyn SettingsFs,
        env: &dyn EnvLookup,
        cwd: &Path,
        key: &str,
        now: Instant,
    ) -> ResolvedValue {
        let entry = self.refresh(schema, fs, cwd, now);
        let Some(spec) = schema.get(key) else {
            return ResolvedValue {
                value: Value::Bool(false),
                source: Source::Fallback,
            };
        };
        let merged = SettingsPair {
            project: &entry.project,
            global: &entry.global,
        };
        if !spec.per_key_resolution {
            return resolve_spec(spec, merged, merged, env);
        }
        let (project, global) = fresh_files(schema, fs, cwd);
        let per_key = SettingsPair {
            project: &project,
            global: &global,
        };
        resolve_spec(spec, merged, per_key, env)
    }

    /// The entry for `cwd`, reloaded when the directory changed or, after the interval, when a
    /// file's modification time changed.
    fn refresh(
        &mut self,
        schema: &Schema,
        fs: &dyn SettingsFs,
        cwd: &Path,
        now: Instant,
    ) -> &Entry {
        let reuse = match &mut self.entry {
            Some(entry) if entry.cwd == cwd => {
                if now.saturating_duration_since(entry.checked_at) < self.interval {
                    true
                } else {
                    entry.checked_at = now;
                    let (project, global) = paths(fs, cwd);
                    mtime(fs, Some(&project)) == entry.project_mtime
                        && mtime(fs, global.as_deref()) == entry.global_mtime
                }
            }
            _ => false,
        };
        if !reuse {
            self.entry = None;
        }
        self.entry
            .get_or_insert_with(|| load_entry(schema, fs, cwd, now))
    }
}

/// A fresh entry. The times are taken before the reads, so that a change made during the read
/// is seen at the next check.
fn load_entry(schema: &Schema, fs: &dyn SettingsFs, cwd: &Path, now: Instant) -> Entry {
    let (project_path, global_path) = paths(fs, cwd);
    let project_mtime = mtime(fs, Some(&project_path));
    let global_mtime = mtime(fs, global_path.as_deref());
    Entry {
        cwd: cwd.to_path_buf(),
        project: load(fs, schema, Some(&project_path)),
        global: load(fs, schema, global_path.as_deref()),
        project_mtime,
        global_mtime,
        checked_at: now,
    }
}

/// Both files as they are now, bypassing the entry.
fn fresh_files(schema: &Schema, fs: &dyn SettingsFs, cwd: &Path) -> (SettingsFile, SettingsFile) {
    let (project, global) = paths(fs, cwd);
    (
        load(fs, schema, Some(&project)),
        load(fs, schema, global.as_deref()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;

    /// SettingsPair in memory: path → (text, mtime in seconds), with a count of every access.
    #[derive(Default)]
    struct FakeFs {
        files: RefCell<HashMap<PathBuf, (String, u64)>>,
        touches: Cell<usize>,
        reads: Cell<usize>,
    }

    impl FakeFs {
        fn write(&self, path: &str, text: &str, mtime: u64) {
            self.files
                .borrow_mut()
                .insert(PathBuf::from(path), (text.to_owned(), mtime));
        }

        fn touch(&self) {
            self.touches.set(self.touches.get() + 1);
        }
    }

    impl SettingsFs for FakeFs {
        fn project_dir(&self, cwd: &Path) -> PathBuf {
            cwd.join(".pi")
        }

        fn global_dir(&self) -> Option<PathBuf> {
            Some(PathBuf::from("/home/.pi"))
        }

        fn exists(&self, path: &Path) -> bool {
            self.touch();
            self.files.borrow().contains_key(path)
        }

        fn mtime(&self, path: &Path) -> Option<SystemTime> {
            self.touch();
            let secs = self.files.borrow().get(path)?.1;
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        }

        fn read(&self, path: &Path) -> Option<String> {
            self.touch();
            self.reads.set(self.reads.get() + 1);
            self.files.borrow().get(path).map(|(text, _)| text.clone())
        }
    }

    const PROJECT: &str = "/p/.pi/pi-config-settings.json";
    const GLOBAL: &str = "/home/.pi/pi-config-settings.jsonc";

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn dco(cache: &mut SettingsCache, fs: &FakeFs, cwd: &str, now: Instant) -> Value {
        cache
            .get(Schema::embedded(), fs, &no_env, Path::new(cwd), "dco", now)
            .value
    }

    #[test]
    fn within_the_interval_no_file_is_touched() {
        let fs = FakeFs::default();
        fs.write(PROJECT, r#"{"dco": true}"#, 1);
        let mut cache = SettingsCache::new();
        let t0 = Instant::now();
        assert_eq!(dco(&mut cache, &fs, "/p", t0), Value::Bool(true));
        let touched = fs.touches.get();
        fs.write(PROJECT, r#"{"dco": false}"#, 2);
        let steps = [0, 1, 15, 29];
        for secs in steps {
            let now = t0 + Duration::from_secs(secs);
            assert_eq!(
                dco(&mut cache, &fs, "/p", now),
                Value::Bool(true),
                "{secs}s"
            );
        }
        assert_eq!(fs.touches.get(), touched, "files were touched within 30 s");
        // At 30 s the files are stat'ed, the changed mtime is seen and the file reloaded.
        let later = t0 + Duration::from_secs(30);
        assert_eq!(dco(&mut cache, &fs, "/p", later), Value::Bool(false));
    }

    #[test]
    fn after_the_interval_only_a_changed_mtime_reloads() {
        let fs = FakeFs::default();
        fs.write(PROJECT, r#"{"dco": true}"#, 1);
        fs.write(GLOBAL, r#"{"use_worktrees": true}"#, 1);
        let mut cache = SettingsCache::new();
        let t0 = Instant::now();
        dco(&mut cache, &fs, "/p", t0);
        let reads = fs.reads.get();

        // Same mtime, new content: the stat finds no change, so the old content stays.
        fs.write(PROJECT, r#"{"dco": false}"#, 1);
        let t1 = t0 + Duration::from_secs(31);
        assert_eq!(dco(&mut cache, &fs, "/p", t1), Value::Bool(true));
        assert_eq!(fs.reads.get(), reads, "no read without an mtime change");

        // The check restarted the interval: a change now is not seen before another 30 s.
        fs.write(GLOBAL, r#"{"use_worktrees": false}"#, 2);
        let t2 = t1 + Duration::from_secs(10);
        let (_, global) = cache.files(Schema::embedded(), &fs, Path::new("/p"), t2);
        assert_eq!(global.get("use_worktrees"), Some(&Value::Bool(true)));

        // The global file's mtime changed: both files are reloaded.
        let t3 = t1 + Duration::from_secs(30);
        let (project, global) = cache.files(Schema::embedded(), &fs, Path::new("/p"), t3);
        assert_eq!(project.get("dco"), Some(&Value::Bool(false)));
        assert_eq!(global.get("use_worktrees"), Some(&Value::Bool(false)));
    }

    #[test]
    fn a_file_appearing_or_vanishing_counts_as_a_change() {
        let fs = FakeFs::default();
        let mut cache = SettingsCache::new();
        let t0 = Instant::now();
        assert_eq!(dco(&mut cache, &fs, "/p", t0), Value::Bool(false));
        fs.write("/p/.pi/pi-config-settings.jsonc", r#"{"dco": true}"#, 5);
        let t1 = t0 + Duration::from_secs(45);
        assert_eq!(dco(&mut cache, &fs, "/p", t1), Value::Bool(true));
        fs.files.borrow_mut().clear();
        let t2 = t1 + Duration::from_secs(45);
        assert_eq!(dco(&mut cache, &fs, "/p", t2), Value::Bool(false));
    }

    #[test]
    fn another_cwd_reloads_at_once_and_clear_forgets() {
        let fs = FakeFs::default();
        fs.write(PROJECT, r#"{"dco": true}"#, 1);
        fs.write("/q/.pi/pi-config-settings.json", r#"{"dco": false}"#, 1);
        let mut cache = SettingsCache::new();
        let t0 = Instant::now();
        assert_eq!(dco(&mut cache, &fs, "/p", t0), Value::Bool(true));
        assert_eq!(dco(&mut cache, &fs, "/q", t0), Value::Bool(false));
        assert_eq!(dco(&mut cache, &fs, "/p", t0), Value::Bool(true));

        fs.write(PROJECT, r#"{"dco": false}"#, 1);
        assert_eq!(dco(&mut cache, &fs, "/p", t0), Value::Bool(true));
        cache.clear();
        assert_eq!(dco(&mut cache, &fs, "/p", t0), Value::Bool(false));
    }

    #[test]
    fn agent_lists_read_the_files_as_they_are_now() {
        let fs = FakeFs::default();
        fs.write(PROJECT, r#"{"acpx_agents": "a", "dco": true}"#, 1);
        let mut cache = SettingsCache::new();
        let schema = Schema::embedded();
        let cwd = Path::new("/p");
        let t0 = Instant::now();
        let first = cache.resolve(schema, &fs, &no_env, cwd, t0);
        assert_eq!(
            first.resolve_key("acpx_agents").to_json().as_deref(),
            Some(r#"["a"]"#)
        );

        fs.write(PROJECT, r#"{"acpx_agents": "b", "dco": false}"#, 1);
        let t1 = t0 + Duration::from_secs(1);
        let second = cache.resolve(schema, &fs, &no_env, cwd, t1);
        assert_eq!(
            second.resolve_key("acpx_agents").to_json().as_deref(),
            Some(r#"["b"]"#)
        );
        assert_eq!(second.resolve_key("dco"), &Value::Bool(true), "cached");
        let one = cache.get(schema, &fs, &no_env, cwd, "acpx_agents", t1);
        assert_eq!(one.value.to_json().as_deref(), Some(r#"["b"]"#));
        assert_eq!(one.source, Source::ProjectFile);
    }

    #[test]
    fn env_is_read_on_every_lookup() {
        let fs = FakeFs::default();
        let mut cache = SettingsCache::new();
        let schema = Schema::embedded();
        let cwd = Path::new("/p");
        let t0 = Instant::now();
        let on = |name: &str| (name == "PI_DCO").then(|| "1".to_owned());
        assert_eq!(
            cache.get(schema, &fs, &no_env, cwd, "dco", t0).value,
            Value::Bool(false)
        );
        let with_env = cache.get(schema, &fs, &on, cwd, "dco", t0);
        assert_eq!(with_env.value, Value::Bool(true));
        assert_eq!(with_env.source, Source::Env("PI_DCO".into()));
        assert_eq!(
            cache.get(schema, &fs, &no_env, cwd, "nope", t0),
            ResolvedValue {
                value: Value::Bool(false),
                source: Source::Fallback
            }
        );
    }

    #[test]
    fn unreadable_file_contributes_nothing() {
        struct Broken;
        impl SettingsFs for Broken {
            fn project_dir(&self, cwd: &Path) -> PathBuf {
                cwd.join(".pi")
            }
            fn global_dir(&self) -> Option<PathBuf> {
                None
            }
            fn exists(&self, _: &Path) -> bool {
                true
            }
            fn mtime(&self, _: &Path) -> Option<SystemTime> {
                None
            }
            fn read(&self, _: &Path) -> Option<String> {
                None
            }
        }
        let mut cache = SettingsCache::new();
        let (project, global) =
            cache.files(Schema::embedded(), &Broken, Path::new("/p"), Instant::now());
        assert!(project.is_present() && project.problem().is_some());
        assert!(!global.is_present());
    }
}
