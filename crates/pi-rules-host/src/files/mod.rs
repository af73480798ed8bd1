//! [`Files`]: the host's one view of the files it reads. A [`Session`](crate::session::Session)
//! owns one, and every read of a rule file, a layer listing or a settings file goes through it:
//! - the editor's open documents are a layer of it ([`Overlay`]): a path in the overlay reads as
//!   the document's text, wherever the read comes from, so no reader can forget unsaved text;
//! - it asks the file system about each path once (its kind through a link or not, where a link
//!   points, where the path really is) and keeps the answer for the life of the view;
//! - it numbers the files it is asked about ([`Files::id`]): reports carry the [`FileId`], and
//!   each front end maps the id back to a path ([`Files::path`]) to show it its own way;
//! - its reads are bounded and never hang ([`bounded`]): a file is opened first and judged by
//!   its open descriptor.
//!
//! No other module of the host reads the file system for rule or settings files (the host's
//! `clippy.toml` forbids the `std::fs` readers outside this module); the code that writes
//! (`writing`, `export`, `fix`) and repository discovery (`repo`) keep their own calls.
//!
//! Rule texts are never kept: each read of a rule file reads it afresh (ARCHITECTURE.md,
//! invariant 7). What is kept are the answers to "what is at this path", which a command asks
//! several times of the same few paths; a front end that lives long makes a new view for each
//! run (as `serve` and the language server do), or [`Files::forget`]s what changed.

// The one module that asks the file system about rule and settings files (`clippy.toml`).
#![allow(clippy::disallowed_methods)]

pub mod bounded;
mod listing;
mod overlay;
mod stamps;

pub(crate) use listing::list_layer;
pub use listing::{is_rule_name, list_dir, Listed, Listing};
pub use overlay::Overlay;
pub use pi_rules_core::FileId;
pub use stamps::{PathStamp, ReadStamps};

use indexmap::{IndexMap, IndexSet};
use std::collections::HashMap;
use std::fs::{self, Metadata};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// The files one session reads: the editor's buffers over the disk, and what is known of each
/// path. Shared between a session and its layer directories through an `Arc`.
#[derive(Debug, Default)]
pub struct Files {
    overlay: Arc<Overlay>,
    /// The file system's answers per path.
    known: Mutex<HashMap<PathBuf, Facts, foldhash::fast::RandomState>>,
    ids: Arc<FileTable>,
    /// Whether the paths read are noted in `touched` (see [`Files::record_reads`]).
    recording: AtomicBool,
    /// The paths read, listed or asked about since recording began, each with whether it was
    /// listed (a listing depends on the directory's entries, a question only on what it is).
    touched: Mutex<Vec<(PathBuf, bool)>>,
}

/// The numbers given to paths: a [`FileId`] per path, the same for every view that shares the
/// table, so a front end that lives long (the language server) keeps one table while each run
/// has a fresh view of the disk.
#[derive(Debug, Default)]
pub struct FileTable {
    paths: Mutex<IndexSet<Arc<Path>, foldhash::fast::RandomState>>,
}

impl FileTable {
    /// The id of `path`, the same for every call with the same path.
    pub fn id(&self, path: &Path) -> FileId {
        let mut paths = lock(&self.paths);
        let index = match paths.get_index_of(path) {
            Some(index) => index,
            None => paths.insert_full(Arc::from(path)).0,
        };
        FileId::new(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// The path `id` was given for; `None` for an id this table did not give.
    pub fn path(&self, id: FileId) -> Option<Arc<Path>> {
        lock(&self.paths).get_index(id.index()).cloned()
    }
}

/// `mutex`, locked: a panic while it was held left nothing half-written worth refusing.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The file system's answers about one path, each asked when first needed.
#[derive(Debug, Default, Clone)]
struct Facts {
    /// `stat`, links followed, or the error it gave (its OS error number).
    stat: Option<Result<Metadata, i32>>,
    /// `lstat`, the path itself.
    lstat: Option<Option<Metadata>>,
    /// Where a link points, as written in it.
    link: Option<Option<PathBuf>>,
    /// The path with every link resolved.
    real: Option<Option<PathBuf>>,
}

impl Files {
    /// A view of the disk alone.
    pub fn new() -> Files {
        Files::default()
    }

    /// A view in which `overlay`'s texts stand in for the files at their paths.
    pub fn with_overlay(overlay: Arc<Overlay>) -> Files {
        Files {
            overlay,
            ..Files::default()
        }
    }

    /// The same view numbering files with `ids` (shared with other views).
    pub fn with_ids(self, ids: Arc<FileTable>) -> Files {
        Files { ids, ..self }
    }

    /// The table this view numbers files with.
    pub fn ids(&self) -> &Arc<FileTable> {
        &self.ids
    }

    /// The editor's buffers (empty unless given).
    pub fn overlay(&self) -> &Overlay {
        &self.overlay
    }

    /// The editor's buffers, shared.
    pub fn shared_overlay(&self) -> &Arc<Overlay> {
        &self.overlay
    }

    /// The id of the file at `path`, the same for every call with the same path (see
    /// [`FileTable`]).
    pub fn id(&self, path: &Path) -> FileId {
        self.ids.id(path)
    }

    /// The path `id` was given for; `None` for an id this view's table did not give.
    pub fn path(&self, id: FileId) -> Option<Arc<Path>> {
        self.ids.path(id)
    }

    /// Lets go of what is known of `path`: the next question about it asks the file system.
    pub fn forget(&self, path: &Path) {
        lock(&self.known).remove(path);
    }

    /// Lets go of everything known of every path (the ids stay).
    pub fn forget_all(&self) {
        lock(&self.known).clear();
    }

    /// The answer `get` gives of `facts`, asking `ask` when it is not known yet.
    fn fact<T: Clone>(
        &self,
        path: &Path,
        get: fn(&mut Facts) -> &mut Option<T>,
        ask: impl FnOnce() -> T,
    ) -> T {
        if let Some(facts) = lock(&self.known).get_mut(path) {
            if let Some(known) = get(facts) {
                return known.clone();
            }
        }
        self.note(path, false);
        // Asked without the lock held: the question may be slow (a network file system).
        let answer = ask();
        let mut known = lock(&self.known);
        *get(known.entry(path.to_path_buf()).or_default()) = Some(answer.clone());
        answer
    }

    /// `path`'s metadata, links followed; `None` when it cannot be had. Asked once.
    pub fn metadata(&self, path: &Path) -> Option<Metadata> {
        self.stat(path).ok()
    }

    /// `path`'s metadata, links followed, or why it cannot be had. Asked once.
    pub fn stat(&self, path: &Path) -> std::io::Result<Metadata> {
        let answer = self.fact(
            path,
            |f| &mut f.stat,
            || fs::metadata(path).map_err(|err| err.raw_os_error().unwrap_or(0)),
        );
        answer.map_err(std::io::Error::from_raw_os_error)
    }

    /// `path`'s own metadata, a link not followed. Asked once.
    pub fn symlink_metadata(&self, path: &Path) -> Option<Metadata> {
        self.fact(path, |f| &mut f.lstat, || fs::symlink_metadata(path).ok())
    }

    /// Where the link at `path` points, as written in it; `None` when it is not a link. Asked
    /// once.
    pub fn read_link(&self, path: &Path) -> Option<PathBuf> {
        self.fact(path, |f| &mut f.link, || fs::read_link(path).ok())
    }

    /// `path` with every link resolved; `None` when it does not resolve. Asked once.
    pub fn canonical(&self, path: &Path) -> Option<PathBuf> {
        self.fact(path, |f| &mut f.real, || fs::canonicalize(path).ok())
    }

    /// `path` resolved, or `path` itself when it does not resolve.
    pub fn canonical_or_same(&self, path: &Path) -> PathBuf {
        self.canonical(path).unwrap_or_else(|| path.to_path_buf())
    }

    /// Whether a file is at `path` (links followed): an editor buffer, or one on disk.
    pub fn exists(&self, path: &Path) -> bool {
        self.overlay.contains(path) || self.metadata(path).is_some()
    }

    /// Whether `path` is a directory (links followed).
    pub fn is_dir(&self, path: &Path) -> bool {
        self.metadata(path).is_some_and(|m| m.is_dir())
    }

    /// Whether `a` and `b` are the same file on disk (device and inode, links followed), both
    /// existing.
    pub fn same_file(&self, a: &Path, b: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (self.metadata(a), self.metadata(b)) {
            (Some(a), Some(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }

    /// Where the file at `path` really is: for an editor buffer, its directory's real path
    /// joined with its name (the buffer has no file of its own to resolve); else the path
    /// resolved, `None` when it cannot be.
    pub fn real_path(&self, path: &Path) -> Option<PathBuf> {
        if self.overlay.contains(path) {
            Some(self.buffer_real_path(path))
        } else {
            self.canonical(path)
        }
    }

    /// Where a buffer at `path` would really be: its directory's real path joined with its
    /// name; `path` itself (lexically normal) when the directory does not resolve.
    pub fn buffer_real_path(&self, path: &Path) -> PathBuf {
        let resolved = path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .zip(path.file_name())
            .and_then(|(dir, name)| Some(self.canonical(dir)?.join(name)));
        resolved.unwrap_or_else(|| overlay::normal(path).into_owned())
    }

    /// Reads the text file at `path`, at most `limit` bytes (a settings file, a schema): the
    /// editor's buffer when there is one (over `limit`, refused as a file on disk would be),
    /// else the file, opened before it is examined ([`bounded::read_text`]). `Ok(None)` when
    /// there is none; `Err` with a reason when it cannot be used.
    pub fn read_text(&self, path: &Path, limit: u64) -> Result<Option<String>, String> {
        self.note(path, false);
        match self.overlay.get(path) {
            Some(text) if text.len() as u64 > limit => {
                Err(format!("{} bytes, over the {limit}-byte limit", text.len()))
            }
            Some(text) => Ok(Some(text.to_string())),
            None => bounded::read_text(path, limit),
        }
    }

    /// The entry at `path` as a listing of its directory gives it (see [`list_dir`]), for a
    /// caller that follows one file rather than listing again: an editor's buffer with a rule
    /// name is a regular file; `None` when nothing is at `path` or its name is not UTF-8.
    pub fn list_entry(&self, path: &Path) -> Option<Listed> {
        use std::os::unix::fs::MetadataExt as _;
        let name = path.file_name()?.to_str()?;
        if let Some(text) = self.overlay.get(path).filter(|_| is_rule_name(name)) {
            return Some(Listed::buffer(path, name, text));
        }
        let mode = self.symlink_metadata(path)?.mode();
        Some(Listed {
            name: name.to_owned(),
            invalid_name: false,
            path: path.to_path_buf(),
            file_type: Ok(rustix::fs::FileType::from_raw_mode(mode)),
            overlay: None,
        })
    }

    /// Lists `dir` with the editor's buffers in it (see [`list_dir`]).
    pub fn list_dir(&self, dir: &Path, keep: impl Fn(&str) -> bool) -> Listing {
        self.note(dir, true);
        list_dir(dir, &self.overlay, keep)
    }

    /// From now on, notes every path this view reads, lists or asks about (see
    /// [`Files::touched`]): `serve` takes their stamps after a run, to tell at the next request
    /// whether anything the run read has changed ([`ReadStamps`]).
    pub fn record_reads(&self) {
        self.recording.store(true, Ordering::Relaxed);
    }

    /// Notes that `path` is read (a file's text, or a directory's entries when `listed`), when
    /// recording (see [`Files::record_reads`]).
    pub fn note(&self, path: &Path, listed: bool) {
        if self.recording.load(Ordering::Relaxed) {
            lock(&self.touched).push((path.to_path_buf(), listed));
        }
    }

    /// The paths noted since [`Files::record_reads`], each once, in the order first noted, with
    /// whether it was listed.
    pub fn touched(&self) -> Vec<(PathBuf, bool)> {
        let mut seen: IndexMap<PathBuf, bool, foldhash::fast::RandomState> = IndexMap::default();
        for (path, listed) in lock(&self.touched).iter() {
            *seen.entry(path.clone()).or_default() |= *listed;
        }
        seen.into_iter().collect()
    }

    /// The stamp of the regular file at `path` (links followed): what identifies its contents
    /// without reading them. `None` for anything else, and for an editor buffer.
    pub fn stamp(&self, path: &Path) -> Option<FileStamp> {
        if self.overlay.contains(path) {
            return None;
        }
        self.metadata(path)
            .filter(Metadata::is_file)
            .map(|m| FileStamp::of(&m))
    }
}

/// What identifies a file and its contents without reading it: device, inode, kind and mode,
/// size, and the modification and change times to the nanosecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    mode: u32,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStamp {
    /// The stamp of the file `metadata` describes.
    pub fn of(metadata: &Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            dev: metadata.dev(),
            mode: metadata.mode(),
            ino: metadata.ino(),
            size: metadata.size(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// Whether the file's last change was at least `margin` before `at`: the kernel's file times
    /// move in ticks of a few milliseconds, so a write of the same size in the same tick keeps
    /// every stamp (git's "racily clean" case); a stamp older than the margin is safe to trust.
    pub fn settled_before(&self, at: SystemTime, margin: Duration) -> bool {
        let Ok(at) = at.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let changed = self.mtime.max(self.ctime);
        let Ok(secs) = u64::try_from(changed.0) else {
            return false;
        };
        let nanos = u32::try_from(changed.1).unwrap_or(0);
        Duration::new(secs, nanos) + margin <= at
    }

    /// The stamp with only what identifies the file (device, inode, kind and mode): its size and
    /// times left out, for a directory whose entries were not read.
    pub fn identity(self) -> FileStamp {
        FileStamp {
            size: 0,
            mtime: (i64::MIN, 0),
            ctime: (i64::MIN, 0),
            ..self
        }
    }

    /// Whether this is a stamp of identity alone ([`FileStamp::identity`]).
    pub fn is_identity(&self) -> bool {
        self.mtime.0 == i64::MIN && self.ctime.0 == i64::MIN
    }

    /// The same stamp with the change time `nanos` later (for tests of a changed file).
    #[cfg(test)]
    pub(crate) fn changed_by(self, nanos: i64) -> FileStamp {
        FileStamp {
            ctime: (self.ctime.0, self.ctime.1 + nanos),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_has_one_id() {
        let files = Files::new();
        let a = files.id(Path::new("/p/.pi/rules/10-a.md"));
        let b = files.id(Path::new("/p/.pi/rules/20-b.md"));
        assert_ne!(a, b);
        assert_eq!(files.id(Path::new("/p/.pi/rules/10-a.md")), a);
        assert_eq!(
            files.path(b).as_deref(),
            Some(Path::new("/p/.pi/rules/20-b.md"))
        );
        assert_eq!(Files::new().path(b), None, "an id is only its own table's");
        let shared = Files::new().with_ids(Arc::clone(files.ids()));
        assert_eq!(
            shared.path(b).as_deref(),
            Some(Path::new("/p/.pi/rules/20-b.md"))
        );
        assert_eq!(shared.id(Path::new("/p/.pi/rules/10-a.md")), a);
    }

    #[test]
    fn the_file_system_is_asked_once_until_forgotten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.md");
        let files = Files::new();
        assert!(!files.exists(&path));
        fs::write(&path, "x").unwrap();
        assert!(!files.exists(&path), "the first answer is kept");
        files.forget(&path);
        assert!(files.exists(&path));
        assert!(files.stamp(&path).is_some());
        fs::remove_file(&path).unwrap();
        files.forget_all();
        assert!(files.stamp(&path).is_none());
    }

    #[test]
    fn a_buffer_is_a_file_and_reads_as_its_text() {
        let tmp = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir(real.join("d")).unwrap();
        std::os::unix::fs::symlink(real.join("d"), real.join("l")).unwrap();
        let mut overlay = Overlay::new();
        overlay.insert(real.join("l/s.json"), "{\"dco\": true}");
        let files = Files::with_overlay(Arc::new(overlay));
        let path = real.join("l/s.json");
        assert!(files.exists(&path));
        assert_eq!(files.stamp(&path), None);
        assert_eq!(files.real_path(&path), Some(real.join("d/s.json")));
        assert_eq!(
            files.read_text(&path, 64).unwrap().as_deref(),
            Some("{\"dco\": true}")
        );
        let err = files.read_text(&path, 4).unwrap_err();
        assert!(err.contains("over the 4-byte limit"), "{err}");
        assert_eq!(files.read_text(&real.join("l/none.json"), 64), Ok(None));
        assert_eq!(
            files.buffer_real_path(Path::new("/no/such/dir/x.md")),
            Path::new("/no/such/dir/x.md")
        );
    }

    #[test]
    fn a_stamp_settles_after_the_margin() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.json");
        fs::write(&path, "{}").unwrap();
        let stamp = FileStamp::of(&fs::metadata(&path).unwrap());
        let margin = Duration::from_secs(2);
        let now = SystemTime::now();
        assert!(!stamp.settled_before(now, margin));
        assert!(stamp.settled_before(now + margin + Duration::from_millis(50), margin));
        assert_ne!(stamp.changed_by(1), stamp);
    }
}
