//! Where a session's working directory is: its physical path, its repository root and the
//! project root ([`Location`]), kept per directory by a long-running host ([`LocationCache`]).

use super::Session;
use crate::files::Files;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What discovery found for one working directory: its physical path, its repository root and
/// the project root (see [`Session::project_root`]). `serve` keeps it per working directory
/// ([`LocationCache`]) so that a warm request does not look for the repository again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub(super) physical_cwd: Option<PathBuf>,
    pub(super) repo_root: Option<PathBuf>,
    pub(super) project_root: PathBuf,
    /// The `$HOME` the project root was decided against.
    pub(super) home: Option<PathBuf>,
}

impl Location {
    /// The project rules directory at the repository root, `<root>/.pi/rules`, when `cwd` (the
    /// working directory this was found for) does not read it: `cwd` is below the root, and
    /// `<root>/.pi/rules` is a directory other than `<cwd>/.pi/rules`. Project rules are read
    /// from `<cwd>/.pi/rules`, as the reference reads them, while settings come from the root.
    ///
    /// Uses what discovery found: nothing is looked up when `cwd` is the root (or the project is
    /// `cwd` itself, as under a dotfiles repository at `$HOME`), and two `stat`s otherwise.
    pub fn unread_root_rules(&self, cwd: &Path, files: &Files) -> Option<PathBuf> {
        let root = self.repo_root.as_deref()?;
        // The project root is the repository root's real path, or the real `cwd` when the
        // repository is not the project (a dotfiles repository at or above `$HOME`).
        if Some(self.project_root.as_path()) == self.physical_cwd.as_deref()
            || self.project_root.as_path() == cwd
        {
            return None;
        }
        let rules = root.join(".pi").join("rules");
        if !files.is_dir(&rules) || files.same_file(&rules, &cwd.join(".pi").join("rules")) {
            return None;
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

    /// Until when what was found for `cwd` is trusted; `None` when nothing is kept for it (or
    /// the TTL is zero).
    pub fn trusted_until(&self, cwd: &Path) -> Option<Instant> {
        let (_, found_at) = self.entries.get(cwd)?;
        Some(*found_at + self.ttl)
    }

    /// How many working directories are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_rules_core::settings::Schema;
    use std::borrow::Cow;
    use std::fs;

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
}
