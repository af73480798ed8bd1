//! Writing rule files: only inside the layer they belong to, and so that no reader ever sees
//! half of one. Every writer (`new`, `override`, `check --fix`) goes through here.
//!
//! **Staying in the layer.** A layer directory is named by a path (`<cwd>/.pi/rules`,
//! `$HOME/.pi/agent/rules`), and any directory on that path can be a link: a cloned project can
//! hold `.pi -> /somewhere` or `.pi/rules -> ~/.pi/agent/rules`. [`Place`] knows the layer's
//! bound (the project root, or `$HOME`) and the components below it; [`Place::resolve`] follows
//! them one by one and refuses when any of them leads outside the bound (a link inside it is
//! followed). [`Place::open`] then opens the resolved directory from the bound down, one
//! component at a time with `O_NOFOLLOW | O_DIRECTORY`, creating the missing ones with `mkdirat`
//! relative to their parent, so that a component swapped for a link after the check makes the
//! open fail instead of leading elsewhere. Everything after that (the temporary file, the sync,
//! the rename, the clean-up) is done relative to that one descriptor ([`LayerDir`]): the path is
//! never resolved again.
//!
//! **Atomic writes.** The bytes go to a temporary file in the layer directory, which is synced
//! and then renamed onto the destination. A rename within one directory is atomic, so the
//! assembly (or an editor, or `watch`) reads either the old file or the whole new one. Without
//! `replace`, the rename refuses to overwrite (`renameat2` with `RENAME_NOREPLACE`; where the
//! file system lacks it, a hard link, which refuses too): a file that appears between a check
//! and the write is never clobbered.

// Writing resolves and checks the directories it writes into itself (ARCHITECTURE.md,
// invariant 12), not through the read-side `files::Files`.
#![allow(clippy::disallowed_methods)]

use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

/// Why a write did not happen.
#[derive(Debug)]
pub enum WriteError {
    /// The destination exists (a file, a link, anything) and replacing was not allowed.
    Exists,
    /// The layer directory, or a directory above it, leads outside the project (or `$HOME`):
    /// the reason, with the paths, ready to print.
    Refused(String),
    /// Any other failure, with what was being done.
    Io { doing: String, err: io::Error },
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Exists => f.write_str("it already exists"),
            WriteError::Refused(reason) => f.write_str(reason),
            WriteError::Io { doing, err } => write!(f, "cannot {doing}: {err}"),
        }
    }
}

impl std::error::Error for WriteError {}

/// A write that did not happen is an input error: what was to be written cannot be.
impl From<WriteError> for crate::error::Error {
    fn from(err: WriteError) -> crate::error::Error {
        crate::error::Error::input(err.to_string())
    }
}

impl WriteError {
    /// The error as an `io::Error` carrying this message, for callers that collect those.
    pub fn into_io(self) -> io::Error {
        io::Error::other(self.to_string())
    }
}

fn io(doing: impl Into<String>) -> impl FnOnce(io::Error) -> WriteError {
    move |err| WriteError::Io {
        doing: doing.into(),
        err,
    }
}

fn errno(doing: impl Into<String>) -> impl FnOnce(Errno) -> WriteError {
    move |e| WriteError::Io {
        doing: doing.into(),
        err: io::Error::from_raw_os_error(e.raw_os_error()),
    }
}

/// A path as messages name it, raw (the front ends escape messages).
fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// What a layer directory must stay inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The project root (the repository root of the working directory, or the directory itself).
    Project,
    /// The home directory, `$HOME`.
    Home,
}

impl Bound {
    fn describe(self, root: &Path) -> String {
        match self {
            Bound::Project => format!("the project `{}`", shown(root)),
            Bound::Home => format!("the home directory `{}`", shown(root)),
        }
    }
}

/// A layer directory to write to: its bound (canonical) and the components below it.
#[derive(Debug, Clone)]
pub struct Place {
    bound: Bound,
    root: PathBuf,
    below: Vec<OsString>,
}

/// A layer directory as [`Place::resolve`] found it: the real path of the part that exists (at
/// or below the bound, free of links) and the components still to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPlace {
    pub existing: PathBuf,
    pub missing: Vec<OsString>,
}

impl ResolvedPlace {
    /// The real path the layer directory has, or will have once created.
    pub fn path(&self) -> PathBuf {
        let mut path = self.existing.clone();
        path.extend(&self.missing);
        path
    }
}

impl Place {
    /// A layer directory `below` the canonical directory `root`.
    pub fn new(bound: Bound, root: PathBuf, below: Vec<OsString>) -> Place {
        Place { bound, root, below }
    }

    /// The bound's directory (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The components below the bound, `/`-separated (lossy), for a caller that decides by
    /// name.
    pub fn below(&self) -> String {
        let parts: Vec<_> = self.below.iter().map(|c| c.to_string_lossy()).collect();
        parts.join("/")
    }

    /// The project layer, `<cwd>/.pi/rules`, bound by the project `root` (a session's
    /// `project_root`). The working directory itself is the user's choice and is taken as it
    /// resolves; when it is not inside the project root (it can only be reached through a link
    /// then), it is its own bound.
    pub fn project(cwd: &Path, root: PathBuf) -> Result<Place, WriteError> {
        Place::nested(cwd, root, &[])
    }

    /// A nested rule directory, `<cwd>/<dir>/.pi/rules`, where `dir` is the plain components
    /// of a directory below the working directory: bound by the project `root` as the project
    /// layer is ([`Place::project`] is this with no `dir`).
    pub fn nested(cwd: &Path, root: PathBuf, dir: &[OsString]) -> Result<Place, WriteError> {
        let cwd = fs::canonicalize(cwd).map_err(io(format!(
            "resolve the project directory `{}`",
            shown(cwd)
        )))?;
        let (root, rest) = match cwd.strip_prefix(&root) {
            Ok(rest) => (root.clone(), rest.to_path_buf()),
            Err(_) => (cwd.clone(), PathBuf::new()),
        };
        let mut below: Vec<OsString> = rest
            .components()
            .map(|c| c.as_os_str().to_owned())
            .collect();
        below.extend(dir.iter().cloned());
        below.extend([".pi".into(), "rules".into()]);
        Ok(Place::new(Bound::Project, root, below))
    }

    /// The user layer, `$HOME/.pi/agent/rules`, bound by `$HOME` (`None`: not set).
    pub fn user(home: Option<&Path>) -> Result<Place, WriteError> {
        let Some(home) = home else {
            return Err(WriteError::Refused(
                "there is no user layer: `HOME` is not set; set it, or use --project".to_owned(),
            ));
        };
        let root = fs::canonicalize(home)
            .map_err(io(format!("resolve the home directory `{}`", shown(home))))?;
        Ok(Place::new(
            Bound::Home,
            root,
            vec![".pi".into(), "agent".into(), "rules".into()],
        ))
    }

    /// Follows the components below the bound, one at a time, and refuses when one of them is a
    /// link that leads outside the bound or does not resolve. A link that stays inside is
    /// followed. Components from the first one that does not exist are `missing`.
    pub fn resolve(&self) -> Result<ResolvedPlace, WriteError> {
        let mut existing = self.root.clone();
        let mut given = self.root.clone();
        let mut rest = self.below.iter();
        while let Some(name) = rest.next() {
            given.push(name);
            let next = existing.join(name);
            let metadata = match fs::symlink_metadata(&next) {
                Ok(metadata) => metadata,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    let mut missing = vec![name.clone()];
                    missing.extend(rest.cloned());
                    return Ok(ResolvedPlace { existing, missing });
                }
                Err(err) => return Err(io(format!("examine `{}`", shown(&next)))(err)),
            };
            if metadata.is_dir() {
                existing = next;
                continue;
            }
            if !metadata.file_type().is_symlink() {
                return Err(WriteError::Io {
                    doing: format!("use `{}` as a directory", shown(&next)),
                    err: io::Error::from_raw_os_error(Errno::NOTDIR.raw_os_error()),
                });
            }
            let real = match fs::canonicalize(&next) {
                Ok(real) => real,
                Err(_) => {
                    let to = fs::read_link(&next).unwrap_or_default();
                    return Err(WriteError::Refused(format!(
                        "refusing to write through `{}`: it is a link to `{}`, which does not \
                         resolve, and a directory made there could be outside {}",
                        shown(&given),
                        shown(&to),
                        self.bound.describe(&self.root)
                    )));
                }
            };
            if !real.starts_with(&self.root) {
                return Err(WriteError::Refused(format!(
                    "refusing to write through `{}`: it resolves to `{}`, outside {}",
                    shown(&given),
                    shown(&real),
                    self.bound.describe(&self.root)
                )));
            }
            if !real.is_dir() {
                return Err(WriteError::Io {
                    doing: format!("use `{}` as a directory", shown(&given)),
                    err: io::Error::from_raw_os_error(Errno::NOTDIR.raw_os_error()),
                });
            }
            existing = real;
        }
        Ok(ResolvedPlace {
            existing,
            missing: Vec::new(),
        })
    }

    /// Resolves the layer directory ([`Place::resolve`]) and opens it from the bound down, with
    /// no link followed at any step; with `create`, the missing directories are made.
    pub fn open(&self, create: bool) -> Result<LayerDir, WriteError> {
        let resolved = self.resolve()?;
        if !create && !resolved.missing.is_empty() {
            return Err(WriteError::Io {
                doing: format!("open `{}`", shown(&resolved.path())),
                err: io::Error::from(io::ErrorKind::NotFound),
            });
        }
        let mut fd = rustix::fs::open(
            &self.root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno(format!("open `{}`", shown(&self.root))))?;
        let mut at = self.root.clone();
        let inside = resolved
            .existing
            .strip_prefix(&self.root)
            .unwrap_or(Path::new(""));
        let existing = inside.components().filter_map(|c| match c {
            Component::Normal(name) => Some((name.to_owned(), false)),
            _ => None,
        });
        let missing = resolved.missing.iter().map(|name| (name.clone(), true));
        for (name, make) in existing.chain(missing) {
            at.push(&name);
            if make {
                match rustix::fs::mkdirat(&fd, name.as_os_str(), Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(errno(format!("create `{}`", shown(&at)))(e)),
                }
            }
            fd = match rustix::fs::openat(
                &fd,
                name.as_os_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(next) => next,
                // It was a directory a moment ago, or was just made: something replaced it.
                Err(Errno::LOOP | Errno::NOTDIR) => {
                    let now = fs::canonicalize(&at).map_or_else(
                        |_| "somewhere that does not resolve".to_owned(),
                        |p| format!("`{}`", shown(&p)),
                    );
                    return Err(WriteError::Refused(format!(
                        "refusing to write through `{}`: it changed while it was opened, and is \
                         now a link to {now}",
                        shown(&at)
                    )));
                }
                Err(e) => return Err(errno(format!("open `{}`", shown(&at)))(e)),
            };
        }
        Ok(LayerDir {
            fd,
            real: resolved.path(),
        })
    }
}

/// An open layer directory: every read and write of [`LayerDir::read`] and [`LayerDir::write`]
/// is relative to it.
#[derive(Debug)]
pub struct LayerDir {
    fd: OwnedFd,
    real: PathBuf,
}

impl LayerDir {
    /// The real path of the directory, as it was when opened.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// Opens the entry `name` of this directory for reading, without following a link and
    /// without blocking; anything but a regular file is refused.
    fn open_regular(&self, name: &str) -> io::Result<(File, std::fs::Metadata)> {
        check_name(name)?;
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let file = File::from(fd);
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Err(io::Error::other("it is not a regular file"));
        }
        Ok((file, metadata))
    }

    /// Up to `limit` bytes of the regular file `name` in this directory; a link is not followed.
    pub fn read(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
        let (file, metadata) = self.open_regular(name)?;
        // Room for the whole file and the read that finds its end, so that the buffer is not
        // grown (and copied) on the way.
        let capacity = metadata.len().min(limit).saturating_add(1);
        let mut bytes = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
        file.take(limit).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Whether this directory is marked read-only: no write bit in its mode. Judged by the mode
    /// bits alone, so that a process that may write anyway (root) still leaves it alone.
    pub fn is_read_only(&self) -> io::Result<bool> {
        let stat = rustix::fs::fstat(&self.fd)?;
        Ok(stat.st_mode & 0o222 == 0)
    }

    /// The permission bits of the entry `name` (a link itself, not followed); `None` when there
    /// is none.
    pub fn mode_of(&self, name: &str) -> io::Result<Option<u32>> {
        check_name(name)?;
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat.st_mode & 0o7777)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Makes the regular file `name` of this directory read-only for everyone (mode 0444); a
    /// link is not followed, and anything but a regular file is refused.
    pub fn make_read_only(&self, name: &str) -> io::Result<()> {
        let (file, metadata) = self.open_regular(name)?;
        use std::os::unix::fs::PermissionsExt;
        if metadata.permissions().mode() & 0o7777 != 0o444 {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(0o444))?;
        }
        Ok(())
    }

    /// Writes new files (`import`'s rules) into this directory, each atomically and durably as
    /// [`LayerDir::write`] without `replace` writes one, in a few syncs' time: every temporary
    /// file is written, all are synced at once from several threads, each is renamed into place
    /// unless its name exists ([`WriteError::Exists`]), then the directory is synced once. The
    /// results are in the order of `files`; a file whose result is an error is not in place.
    pub fn write_new_all(&self, files: &[(&str, &[u8])]) -> Vec<Result<(), WriteError>> {
        // In rounds, so that the open temporary files stay well under the descriptor limit.
        let mut results = Vec::with_capacity(files.len());
        for round in files.chunks(256) {
            results.extend(self.write_new_round(round));
        }
        // Make the renames durable; best-effort, as not every file system allows it.
        let _ = rustix::fs::fsync(&self.fd);
        results
    }

    /// One round of [`LayerDir::write_new_all`], the directory not synced.
    fn write_new_round(&self, files: &[(&str, &[u8])]) -> Vec<Result<(), WriteError>> {
        struct Temp {
            name: String,
            file: File,
            failed: Option<WriteError>,
        }
        let mut temps: Vec<Result<Temp, WriteError>> = files
            .iter()
            .map(|&(name, bytes)| {
                check_name(name).map_err(io("name the file"))?;
                if rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
                    return Err(WriteError::Exists);
                }
                let (temp_name, temp) = self.create_temp(name)?;
                let mut file = File::from(temp);
                let failed = file
                    .write_all(bytes)
                    .err()
                    .map(|e| io("write the temporary file")(e));
                Ok(Temp {
                    name: temp_name,
                    file,
                    failed,
                })
            })
            .collect();
        // An fsync waits for the disk, not the processor: many at once share its flushes.
        let threads = temps.len().clamp(1, 32);
        let per = temps.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            for part in temps.chunks_mut(per) {
                scope.spawn(move || {
                    for temp in part.iter_mut().flatten() {
                        if temp.failed.is_none() {
                            temp.failed = temp
                                .file
                                .sync_all()
                                .err()
                                .map(|e| io("sync the temporary file")(e));
                        }
                    }
                });
            }
        });
        temps
            .into_iter()
            .zip(files)
            .map(|(temp, &(name, _))| {
                let temp = temp?;
                drop(temp.file);
                let placed = match temp.failed {
                    Some(err) => Err(err),
                    None => self.rename_no_replace(&temp.name, name),
                };
                // After a rename the temporary name is gone; otherwise it is taken away.
                let _ = rustix::fs::unlinkat(&self.fd, temp.name.as_str(), AtFlags::empty());
                placed
            })
            .collect()
    }

    /// Writes `bytes` to the file `name` of this directory atomically. With `replace`, an
    /// existing entry is replaced (a regular file keeps its permission bits; a link is replaced
    /// itself, its target untouched); without it, an existing entry is left untouched and the
    /// result is [`WriteError::Exists`].
    pub fn write(&self, name: &str, bytes: &[u8], replace: bool) -> Result<(), WriteError> {
        check_name(name).map_err(io("name the file"))?;
        let old = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW);
        if !replace && old.is_ok() {
            return Err(WriteError::Exists);
        }
        let (temp_name, temp) = self.create_temp(name)?;
        let written = (|| {
            let mut file = File::from(temp);
            file.write_all(bytes)
                .map_err(io("write the temporary file"))?;
            if replace {
                keep_mode(&file, &old)?;
            }
            file.sync_all().map_err(io("sync the temporary file"))?;
            drop(file);
            if replace {
                rustix::fs::renameat(&self.fd, temp_name.as_str(), &self.fd, name)
                    .map_err(errno("rename the temporary file into place"))
            } else {
                self.rename_no_replace(&temp_name, name)
            }
        })();
        // After a successful rename the temporary name is gone; after a hard link or a failure
        // it is still there.
        let _ = rustix::fs::unlinkat(&self.fd, temp_name.as_str(), AtFlags::empty());
        written?;
        // Make the rename itself durable; best-effort, as not every file system allows it.
        let _ = rustix::fs::fsync(&self.fd);
        Ok(())
    }

    /// The first step of a batched atomic write of `name` (replacing what is there, a regular
    /// file keeping its permission bits): its bytes in a new temporary file, not yet synced.
    /// Then [`Staged::sync`] (from several threads at once, if need be), [`LayerDir::commit`],
    /// and once for the directory [`LayerDir::sync`]: many files written durably for a few
    /// syncs' time, where [`LayerDir::write`] syncs each file and its directory in turn.
    pub fn stage(&self, name: &str, bytes: &[u8]) -> Result<Staged, WriteError> {
        check_name(name).map_err(io("name the file"))?;
        let old = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW);
        let (temp_name, temp) = self.create_temp(name)?;
        let mut file = File::from(temp);
        let written = (|| {
            file.write_all(bytes)
                .map_err(io("write the temporary file"))?;
            keep_mode(&file, &old)
        })();
        if let Err(err) = written {
            let _ = rustix::fs::unlinkat(&self.fd, temp_name.as_str(), AtFlags::empty());
            return Err(err);
        }
        Ok(Staged {
            temp_name,
            name: name.to_owned(),
            file,
        })
    }

    /// Renames a staged file into place (see [`LayerDir::stage`]).
    pub fn commit(&self, staged: Staged) -> Result<(), WriteError> {
        let Staged {
            temp_name, name, ..
        } = staged;
        let renamed = rustix::fs::renameat(&self.fd, temp_name.as_str(), &self.fd, name.as_str())
            .map_err(errno("rename the temporary file into place"));
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, temp_name.as_str(), AtFlags::empty());
        }
        renamed
    }

    /// Renames a staged file into place unless its name exists ([`WriteError::Exists`]): a
    /// file that appeared since it was found missing is never replaced.
    pub fn commit_new(&self, staged: Staged) -> Result<(), WriteError> {
        let Staged {
            temp_name, name, ..
        } = staged;
        let renamed = self.rename_no_replace(&temp_name, &name);
        // After a rename the temporary name is gone; after a hard link or a failure it is not.
        let _ = rustix::fs::unlinkat(&self.fd, temp_name.as_str(), AtFlags::empty());
        renamed
    }

    /// Takes a staged file away unwritten.
    pub fn discard(&self, staged: Staged) {
        let _ = rustix::fs::unlinkat(&self.fd, staged.temp_name.as_str(), AtFlags::empty());
    }

    /// Removes the entry `name` of this directory (a link itself, never what it leads to).
    pub fn remove(&self, name: &str) -> Result<(), WriteError> {
        check_name(name).map_err(io("name the file"))?;
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(errno("remove the file"))
    }

    /// Makes the renames and removals in this directory durable; best-effort, as not every
    /// file system allows it.
    pub fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
    }

    /// Creates a new, empty temporary file for `name`, hidden and not a rule name (it does not
    /// end in `.md`), so that a concurrent assembly never takes it.
    fn create_temp(&self, name: &str) -> Result<(String, OwnedFd), WriteError> {
        let mut end = name.len().min(180);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        let stem = &name[..end];
        let pid = std::process::id();
        let mut last = Errno::EXIST;
        for attempt in 0..100u32 {
            let candidate = format!(".{stem}.{pid}.{attempt}.tmp");
            match rustix::fs::openat(
                &self.fd,
                candidate.as_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => return Ok((candidate, fd)),
                Err(Errno::EXIST) => last = Errno::EXIST,
                Err(e) => return Err(errno("create a temporary file")(e)),
            }
        }
        Err(errno("create a temporary file")(last))
    }

    /// Renames `from` onto `to` (both in this directory) unless `to` exists.
    fn rename_no_replace(&self, from: &str, to: &str) -> Result<(), WriteError> {
        match rustix::fs::renameat_with(&self.fd, from, &self.fd, to, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => Err(WriteError::Exists),
            // No RENAME_NOREPLACE here: a hard link also fails when the name exists.
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                match rustix::fs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty()) {
                    Ok(()) => Ok(()),
                    Err(Errno::EXIST) => Err(WriteError::Exists),
                    Err(e) => Err(errno("link the temporary file into place")(e)),
                }
            }
            Err(e) => Err(errno("rename the temporary file into place")(e)),
        }
    }
}

/// An exclusive advisory lock (`flock`) on a directory, held until dropped. Writers of pi-rules
/// that take it on their bound (the project root, `$HOME`) do not interleave: a second `export`
/// waits for the first to finish, then re-reads what it planned from. The lock is on the
/// directory itself, so that no lock file is left in the project; people and other tools do
/// not take it, which is why a writer still re-reads each file before replacing it.
#[derive(Debug)]
pub struct DirLock {
    _fd: OwnedFd,
}

impl DirLock {
    /// Locks the directory `dir`, waiting at most `wait` for another holder to let go; `None`
    /// when it is still held then.
    pub fn acquire(dir: &Path, wait: std::time::Duration) -> Result<Option<DirLock>, WriteError> {
        let fd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno(format!("open `{}`", shown(dir))))?;
        let started = std::time::Instant::now();
        loop {
            match rustix::fs::flock(&fd, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Some(DirLock { _fd: fd })),
                Err(Errno::WOULDBLOCK | Errno::INTR) if started.elapsed() < wait => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(Errno::WOULDBLOCK | Errno::INTR) => return Ok(None),
                // A file system without locks: the re-read before each rename still holds.
                Err(Errno::NOLCK | Errno::NOSYS | Errno::OPNOTSUPP) => {
                    return Ok(Some(DirLock { _fd: fd }))
                }
                Err(e) => return Err(errno(format!("lock `{}`", shown(dir)))(e)),
            }
        }
    }
}

/// A file's bytes in its temporary file, waiting to be renamed into place
/// ([`LayerDir::stage`]).
#[derive(Debug)]
pub struct Staged {
    temp_name: String,
    name: String,
    file: File,
}

impl Staged {
    /// Syncs the temporary file's bytes to the disk.
    pub fn sync(&self) -> Result<(), WriteError> {
        self.file.sync_all().map_err(io("sync the temporary file"))
    }
}

/// A file name written in a layer directory is one plain component.
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a plain file name",
        ));
    }
    Ok(())
}

/// An editor keeps the mode of the file it saves over; so does a write: the permission bits of
/// `old`, when it is a regular file, given to the temporary `file` that replaces it.
fn keep_mode(file: &File, old: &rustix::io::Result<rustix::fs::Stat>) -> Result<(), WriteError> {
    if let Ok(old) = old {
        let kind = rustix::fs::FileType::from_raw_mode(old.st_mode);
        if kind == rustix::fs::FileType::RegularFile {
            let mode = Mode::from_raw_mode(old.st_mode & 0o7777);
            rustix::fs::fchmod(file, mode).map_err(errno("keep the file's permissions"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn leftovers(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A project root (canonical) and its `.pi/rules` place.
    fn project() -> (tempfile::TempDir, PathBuf, Place) {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap().join("proj");
        fs::create_dir(&root).unwrap();
        let place = Place::new(
            Bound::Project,
            root.clone(),
            vec![".pi".into(), "rules".into()],
        );
        (tmp, root, place)
    }

    #[test]
    fn creates_directories_and_writes_the_bytes() {
        let (_tmp, root, place) = project();
        let dir = place.open(true).unwrap();
        assert_eq!(dir.real(), root.join(".pi/rules"));
        dir.write("70-x.md", b"one\r\ntwo", false).unwrap();
        assert_eq!(
            fs::read(root.join(".pi/rules/70-x.md")).unwrap(),
            b"one\r\ntwo"
        );
        assert_eq!(leftovers(&root.join(".pi/rules")), ["70-x.md"]);
        assert_eq!(dir.read("70-x.md", 100).unwrap(), b"one\r\ntwo");
        assert_eq!(dir.read("70-x.md", 3).unwrap(), b"one");
    }

    #[test]
    fn a_nested_place_is_below_the_working_directory_and_bound_by_the_root() {
        let (tmp, root, _) = project();
        let cwd = root.join("sub");
        fs::create_dir_all(cwd.join("packages/api")).unwrap();
        let place = Place::nested(&cwd, root.clone(), &["packages".into(), "api".into()]).unwrap();
        let dir = place.open(true).unwrap();
        assert_eq!(dir.real(), cwd.join("packages/api/.pi/rules"));
        // A link inside the project is followed; one out of it is refused.
        let outside = fs::canonicalize(tmp.path()).unwrap().join("outside");
        fs::create_dir_all(&outside).unwrap();
        symlink(&outside, cwd.join("packages/out")).unwrap();
        let place = Place::nested(&cwd, root.clone(), &["packages".into(), "out".into()]).unwrap();
        assert!(matches!(place.open(true), Err(WriteError::Refused(_))));
        assert_eq!(leftovers(&outside), Vec::<String>::new());
        // A missing directory is missing with its `.pi/rules`.
        let place = Place::nested(&cwd, root, &["nope".into()]).unwrap();
        assert_eq!(place.resolve().unwrap().missing, ["nope", ".pi", "rules"]);
    }

    #[test]
    fn without_create_a_missing_layer_is_an_error() {
        let (_tmp, root, place) = project();
        assert!(matches!(place.open(false), Err(WriteError::Io { .. })));
        assert!(!root.join(".pi").exists());
    }

    #[test]
    fn links_that_leave_the_bound_are_refused_and_links_inside_followed() {
        let (tmp, root, place) = project();
        let outside = fs::canonicalize(tmp.path()).unwrap().join("outside");
        fs::create_dir_all(outside.join("rules")).unwrap();
        // `.pi` itself out.
        symlink(&outside, root.join(".pi")).unwrap();
        let err = place.open(true).unwrap_err();
        let WriteError::Refused(reason) = err else {
            panic!("{err:?}")
        };
        assert!(
            reason.contains(&format!("`{}`", outside.display())) && reason.contains("outside"),
            "{reason}"
        );
        fs::remove_file(root.join(".pi")).unwrap();
        // `.pi/rules` out, and dangling.
        fs::create_dir(root.join(".pi")).unwrap();
        symlink(outside.join("rules"), root.join(".pi/rules")).unwrap();
        assert!(matches!(place.open(true), Err(WriteError::Refused(_))));
        fs::remove_file(root.join(".pi/rules")).unwrap();
        symlink(outside.join("nowhere"), root.join(".pi/rules")).unwrap();
        assert!(matches!(place.open(true), Err(WriteError::Refused(_))));
        assert!(!outside.join("nowhere").exists());
        fs::remove_file(root.join(".pi/rules")).unwrap();
        // Inside: followed, and written where it leads.
        fs::create_dir(root.join("shared")).unwrap();
        symlink("../shared", root.join(".pi/rules")).unwrap();
        let dir = place.open(true).unwrap();
        assert_eq!(dir.real(), root.join("shared"));
        dir.write("90-x.md", b"x", false).unwrap();
        assert_eq!(leftovers(&root.join("shared")), ["90-x.md"]);
        assert_eq!(leftovers(&outside.join("rules")), Vec::<String>::new());
    }

    #[test]
    fn refuses_to_replace_anything_without_replace() {
        let (_tmp, root, place) = project();
        let dir = place.open(true).unwrap();
        let layer = root.join(".pi/rules");
        fs::write(layer.join("70-x.md"), "mine").unwrap();
        assert!(matches!(
            dir.write("70-x.md", b"theirs", false),
            Err(WriteError::Exists)
        ));
        assert_eq!(fs::read_to_string(layer.join("70-x.md")).unwrap(), "mine");
        // A dangling link is an entry too.
        symlink(root.join("nowhere"), layer.join("71-y.md")).unwrap();
        assert!(matches!(
            dir.write("71-y.md", b"x", false),
            Err(WriteError::Exists)
        ));
        assert_eq!(leftovers(&layer), ["70-x.md", "71-y.md"]);
    }

    #[test]
    fn the_no_replace_rename_itself_refuses() {
        let (_tmp, root, place) = project();
        let dir = place.open(true).unwrap();
        let layer = root.join(".pi/rules");
        fs::write(layer.join("from"), "new").unwrap();
        fs::write(layer.join("to"), "old").unwrap();
        assert!(matches!(
            dir.rename_no_replace("from", "to"),
            Err(WriteError::Exists)
        ));
        assert_eq!(fs::read_to_string(layer.join("to")).unwrap(), "old");
    }

    #[test]
    fn replaces_keeping_the_mode_and_replaces_a_link_itself() {
        let (_tmp, root, place) = project();
        let dir = place.open(true).unwrap();
        let layer = root.join(".pi/rules");
        let path = layer.join("70-x.md");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        dir.write("70-x.md", b"new", true).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let target = layer.join("target.txt");
        fs::write(&target, "target").unwrap();
        symlink(&target, layer.join("71-y.md")).unwrap();
        dir.write("71-y.md", b"copy", true).unwrap();
        assert!(!fs::symlink_metadata(layer.join("71-y.md"))
            .unwrap()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "target");
        assert_eq!(leftovers(&layer), ["70-x.md", "71-y.md", "target.txt"]);
        // Reading does not follow a link either.
        symlink(&target, layer.join("72-z.md")).unwrap();
        assert!(dir.read("72-z.md", 100).is_err());
    }

    #[test]
    fn names_must_be_plain() {
        let (_tmp, _root, place) = project();
        let dir = place.open(true).unwrap();
        for name in ["", ".", "..", "../x.md", "a/b.md"] {
            assert!(dir.write(name, b"x", true).is_err(), "{name:?}");
        }
    }

    #[test]
    fn writes_new_files_together_and_never_one_that_exists() {
        let (_tmp, root, place) = project();
        let dir = place.open(true).unwrap();
        dir.write("b.md", b"mine", false).unwrap();
        // More than one round of temporary files.
        let names: Vec<String> = (0..300).map(|i| format!("r{i:03}.md")).collect();
        let mut files: Vec<(&str, &[u8])> =
            names.iter().map(|n| (n.as_str(), &b"new"[..])).collect();
        files.insert(1, ("b.md", b"new"));
        files.push(("../x.md", b"new"));
        let results = dir.write_new_all(&files);
        assert_eq!(results.len(), 302);
        assert!(matches!(results[1], Err(WriteError::Exists)));
        assert!(results[301].is_err());
        assert!(results
            .iter()
            .enumerate()
            .all(|(i, r)| r.is_ok() != (i == 1 || i == 301)));
        let rules = root.join(".pi/rules");
        assert_eq!(fs::read(rules.join("b.md")).unwrap(), b"mine");
        assert_eq!(fs::read(rules.join("r299.md")).unwrap(), b"new");
        // No temporary file is left behind.
        let left = fs::read_dir(&rules).unwrap().count();
        assert_eq!(left, 301);
    }
}
