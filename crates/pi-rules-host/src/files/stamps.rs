//! [`ReadStamps`]: what a run read, as stamps, so that a long-lived front end can tell at the next
//! request, one `lstat` a path, whether anything the run read has changed since.
//!
//! A run's [`Files`] notes every path it reads, lists or asks about ([`Files::record_reads`]).
//! After the run each of them is stamped: what is at the path itself (`lstat`: a link, a file,
//! a directory, or nothing) and, for a link, what it leads to (`stat`). A regular file's stamp
//! is its device, inode, mode, size, and modification and change times to the nanosecond
//! ([`FileStamp`]); a directory that was listed is stamped the same way (an entry made, removed
//! or renamed changes its times); a directory that was only asked about (does it exist, is it a
//! directory) by its identity alone, so that files made beside the rules (in the project's root,
//! say) do not count as a change.
//!
//! The stamps are taken after the run, not before it, so a change made while the run read, or
//! after it read and before the stamps were taken, would be stamped as if the run had seen it.
//! That is why the stamps are only trusted when everything stamped last changed well before the
//! run started ([`ReadStamps::MARGIN`]): a change made at or after the start has a change time
//! no earlier than the start (less the kernel's clock tick, a few milliseconds), and so makes
//! the stamps unsettled. Unsettled stamps never hold: the next request runs again. This also
//! covers the kernel's coarse file times (git's "racily clean" case): two writes of the same
//! size within one tick of the clock leave every stamp as it was, but only within the margin.
//!
//! The change time cannot be set by a user (`touch -d` moves the modification time and sets the
//! change time to now), so a file put back with its old modification time still shows.

// The one module besides `mod.rs` that asks the file system about paths: it stamps what the
// view read (`clippy.toml`).
#![allow(clippy::disallowed_methods)]

use super::{FileStamp, Files};
use std::fs::{self, Metadata};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What was at one path when it was stamped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathStamp {
    /// The path itself, a link not followed; `None` when nothing is there (or it cannot be
    /// asked).
    own: Option<FileStamp>,
    /// For a link, what it leads to; `None` for a dangling link and for anything else.
    target: Option<FileStamp>,
}

impl PathStamp {
    /// The stamp of `path` now; `listed` keeps a directory's times (its entries were read).
    pub fn of(path: &Path, listed: bool) -> PathStamp {
        let stamp = |m: &Metadata| {
            let stamp = FileStamp::of(m);
            if m.is_dir() && !listed {
                stamp.identity()
            } else {
                stamp
            }
        };
        let own = fs::symlink_metadata(path).ok();
        let target = own
            .as_ref()
            .filter(|m| m.file_type().is_symlink())
            .and_then(|_| fs::metadata(path).ok());
        PathStamp {
            own: own.as_ref().map(stamp),
            target: target.as_ref().map(stamp),
        }
    }

    /// Whether everything in the stamp last changed at least `margin` before `at`.
    fn settled_before(&self, at: SystemTime, margin: Duration) -> bool {
        [self.own, self.target]
            .iter()
            .flatten()
            .all(|stamp| stamp.is_identity() || stamp.settled_before(at, margin))
    }
}

/// The stamps of every path a run read (see the module's documentation).
#[derive(Debug, Clone, Default)]
pub struct ReadStamps {
    entries: Vec<(PathBuf, bool, PathStamp)>,
    /// Whether every stamp had settled when the run started.
    settled: bool,
}

impl ReadStamps {
    /// How long before a run started everything it read must have last changed for its stamps
    /// to be trusted: far more than any kernel's clock tick, as git's index and the settings
    /// texts of `serve` (`SettingsTexts::SETTLED`) take it.
    pub const MARGIN: Duration = Duration::from_secs(2);

    /// Stamps every path `files` noted since [`Files::record_reads`], for a run that started at
    /// `started`, with the margin [`ReadStamps::MARGIN`].
    pub fn take(files: &Files, started: SystemTime) -> ReadStamps {
        ReadStamps::take_with_margin(files, started, ReadStamps::MARGIN)
    }

    /// [`ReadStamps::take`] with another margin (for tests that cannot wait two seconds a step).
    pub fn take_with_margin(files: &Files, started: SystemTime, margin: Duration) -> ReadStamps {
        let mut settled = true;
        let entries = files
            .touched()
            .into_iter()
            .map(|(path, listed)| {
                let stamp = PathStamp::of(&path, listed);
                settled &= stamp.settled_before(started, margin);
                (path, listed, stamp)
            })
            .collect();
        ReadStamps { entries, settled }
    }

    /// Whether the stamps can be trusted: everything stamped had settled when the run started.
    pub fn settled(&self) -> bool {
        self.settled
    }

    /// Whether nothing the run read has changed: the stamps are settled and every path's stamp
    /// now is the one taken. One `lstat` a path (and a `stat` for a link); stops at the first
    /// difference.
    pub fn still_hold(&self) -> bool {
        self.settled
            && self
                .entries
                .iter()
                .all(|(path, listed, stamp)| PathStamp::of(path, *listed) == *stamp)
    }

    /// The paths stamped.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.entries.iter().map(|(path, _, _)| path.as_path())
    }

    /// The directories whose events say that something stamped may have changed: each listed
    /// directory, and the directory of everything else but a directory only asked about (files
    /// made beside it do not matter), each once.
    pub fn watch_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for (path, listed, stamp) in &self.entries {
            let identity = stamp.own.is_some_and(|own| own.is_identity())
                || stamp.target.is_some_and(|target| target.is_identity());
            let dir = match (listed, identity) {
                (true, _) => Some(path.as_path()),
                (false, true) => None,
                (false, false) => path.parent(),
            };
            if let Some(dir) = dir.filter(|dir| !dirs.iter().any(|d| d == dir)) {
                dirs.push(dir.to_path_buf());
            }
        }
        dirs
    }

    /// How many paths are stamped.
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

    fn recorded(paths: &[(&Path, bool)]) -> Files {
        let files = Files::new();
        files.record_reads();
        for (path, listed) in paths {
            files.note(path, *listed);
        }
        files
    }

    #[test]
    fn nothing_is_noted_unless_recording() {
        let files = Files::new();
        files.note(Path::new("/x"), false);
        assert!(files.touched().is_empty());
        files.record_reads();
        files.note(Path::new("/x"), false);
        files.note(Path::new("/x"), true);
        files.note(Path::new("/y"), false);
        assert_eq!(
            files.touched(),
            [(PathBuf::from("/x"), true), (PathBuf::from("/y"), false)]
        );
    }

    #[test]
    fn a_change_an_absence_and_a_link_retargeted_are_seen() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let file = dir.join("a.md");
        let missing = dir.join("b.md");
        let link = dir.join("l.md");
        fs::write(&file, "one").unwrap();
        fs::write(dir.join("other.md"), "two").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let files = recorded(&[
            (&file, false),
            (&missing, false),
            (&link, false),
            (dir, true),
        ]);
        // Taken as if the run started long after everything was written.
        let later = SystemTime::now() + Duration::from_secs(60);
        let stamps = ReadStamps::take(&files, later);
        assert!(stamps.settled());
        assert!(stamps.still_hold());
        assert_eq!(stamps.len(), 4);

        fs::write(&missing, "new").unwrap();
        assert!(!stamps.still_hold(), "a file made where none was");
        fs::remove_file(&missing).unwrap();

        fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(dir.join("other.md"), &link).unwrap();
        assert!(!stamps.still_hold(), "a link that leads elsewhere");
    }

    #[test]
    fn a_write_of_the_same_size_with_the_old_time_put_back_is_seen() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a.md");
        fs::write(&file, "one").unwrap();
        let before = fs::metadata(&file).unwrap().modified().unwrap();
        let files = recorded(&[(&file, false)]);
        let stamps = ReadStamps::take(&files, SystemTime::now() + Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(20));
        fs::write(&file, "two").unwrap();
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(before)
            .unwrap();
        assert_eq!(fs::metadata(&file).unwrap().modified().unwrap(), before);
        assert!(!stamps.still_hold(), "the change time moved");
    }

    #[test]
    fn stamps_of_files_changed_just_before_the_run_are_not_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a.md");
        fs::write(&file, "one").unwrap();
        let files = recorded(&[(&file, false)]);
        // The run starts now: the file changed within the margin, so a write of the same size in
        // the same tick of the clock could go unseen.
        let stamps = ReadStamps::take(&files, SystemTime::now());
        assert!(!stamps.settled());
        assert!(!stamps.still_hold());
    }

    #[test]
    fn a_directory_only_asked_about_ignores_new_entries_and_a_listed_one_does_not() {
        let tmp = tempfile::tempdir().unwrap();
        let asked = tmp.path().join("asked");
        let listed = tmp.path().join("listed");
        fs::create_dir(&asked).unwrap();
        fs::create_dir(&listed).unwrap();
        let later = SystemTime::now() + Duration::from_secs(60);
        let only_asked = ReadStamps::take(&recorded(&[(&asked, false)]), later);
        let listing = ReadStamps::take(&recorded(&[(&listed, true)]), later);
        std::thread::sleep(Duration::from_millis(20));
        fs::write(asked.join("x"), "").unwrap();
        fs::write(listed.join("x"), "").unwrap();
        assert!(only_asked.still_hold());
        assert!(!listing.still_hold());
        fs::remove_dir_all(&asked).unwrap();
        assert!(!only_asked.still_hold(), "gone");
    }
}
