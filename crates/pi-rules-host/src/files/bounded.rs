//! Reading a file that someone else controls: bounded in size, without blocking, without a race
//! between checking and reading.
//!
//! [`read`] opens first (`O_NONBLOCK | O_NOCTTY | O_CLOEXEC`, so a FIFO or a terminal cannot block
//! or capture us) and then asks the open descriptor what it is (`fstat`): a path swapped for a
//! FIFO between a check and the open cannot hang the command, because there is no separate check.
//! A regular file or device is read through a window of `limit + 1` bytes, so a device that
//! reports size 0 but never ends (`/dev/zero`) is found too large by reading. Only when the open
//! itself fails is the path `stat`ed, to say why (a socket, or a file too large to matter).
//!
//! [`read_entry`] reads an entry of a directory held open ([`Directory`]) by its name, the way
//! the layers are read: see there for why, and what happens when the entry is a link.
//!
//! The limits: rule files [`crate::loader::READ_LIMIT`], settings files and schemas
//! [`MAX_SETTINGS_BYTES`], prompt files [`MAX_PROMPT_BYTES`].

use std::cell::OnceCell;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read as _};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{Dir, Mode, OFlags};

/// The largest settings file, and `--keys` schema, that is read (1 MiB). A larger one is ignored
/// whole.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// The largest agent prompt `render` reads from a file or stdin (16 MiB).
pub const MAX_PROMPT_BYTES: u64 = 16 << 20;

/// A kind of file that is never read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialKind {
    /// A named pipe: reading it blocks until a writer comes.
    Fifo,
    /// A Unix domain socket.
    Socket,
}

impl SpecialKind {
    /// `FIFO` or `socket`.
    pub fn as_str(self) -> &'static str {
        match self {
            SpecialKind::Fifo => "FIFO",
            SpecialKind::Socket => "socket",
        }
    }
}

/// What a bounded read of one file gave: its bytes, or why there are none.
#[derive(Debug)]
pub enum FileRead {
    /// The whole content, at most `limit` bytes. `metadata` is the open descriptor's.
    Bytes { bytes: Vec<u8>, metadata: Metadata },
    /// Larger than the limit: `size` from `fstat` (or `stat`), or `limit + 1` when a read found
    /// more (`by_read`).
    TooLarge { size: u64, by_read: bool },
    /// A directory.
    Directory,
    /// A FIFO or socket, never read.
    Special(SpecialKind),
    /// The path does not resolve: missing, a dangling link, a link loop.
    Missing(io::Error),
    /// It exists but could not be opened (permissions, a device that refuses).
    Open(io::Error),
    /// Reading failed after the open.
    Read(io::Error),
    /// The inspection of the open file refused it (see [`read_inspected`]); nothing was read.
    Refused,
}

/// Reads `path` (following links), at most `limit` bytes. Nothing inspects the open file, so its
/// real path is not asked for (a lookup under `/proc`: the costliest call of reading a settings
/// file).
pub fn read(path: &Path, limit: u64) -> FileRead {
    match open(path) {
        Ok(file) => read_opened(&file, None, limit, &mut |_, _| true),
        Err(err) => after_failed_open(path, limit, err),
    }
}

/// Like [`read`], but first shows `inspect` what was opened: its real path (from
/// `/proc/self/fd`, so a link swapped after any earlier check cannot deceive it; `None` where
/// `/proc` is not mounted) and its metadata. When `inspect` says no, nothing is read.
pub fn read_inspected(
    path: &Path,
    limit: u64,
    inspect: &mut dyn FnMut(Option<&Path>, &Metadata) -> bool,
) -> FileRead {
    let file = match open(path) {
        Ok(file) => file,
        Err(err) => return after_failed_open(path, limit, err),
    };
    let real = real_path(&file);
    read_opened(&file, real.as_deref(), limit, inspect)
}

/// A directory held open, so that its entries can be listed and then read by name: see
/// [`read_entry`]. Its real path (from `/proc/self/fd`, `None` where `/proc` is not mounted) is
/// asked for once, when the first entry is read: an empty directory costs what listing it costs.
#[derive(Debug)]
pub struct Directory {
    stream: Dir,
    real: OnceCell<Option<PathBuf>>,
}

impl Directory {
    /// Opens the directory `dir` (following links), without blocking, as `opendir` does.
    pub fn open(dir: &Path) -> rustix::io::Result<Directory> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::DIRECTORY;
        let fd = rustix::fs::open(dir, flags, Mode::empty())?;
        Ok(Directory {
            stream: Dir::new(fd)?,
            real: OnceCell::new(),
        })
    }

    /// The stream of its entries, for listing it.
    pub fn stream(&mut self) -> &mut Dir {
        &mut self.stream
    }

    /// Its real path, asked for once (`None` where `/proc` is not mounted).
    pub fn real(&self) -> Option<&Path> {
        self.real
            .get_or_init(|| real_path(&self.stream.fd().ok()?))
            .as_deref()
    }
}

/// Like [`read_inspected`], for the entry of `dir` at `path` (`dir`'s path joined with the
/// entry's name). The entry is opened in the open directory without following a link: what is
/// opened is then the entry itself, so its real path is the directory's joined with its name,
/// and the kernel need not be asked for it (a lookup under `/proc` and a path walk from the root
/// per file: about a seventh of the system time of reading a large layer). An entry that is a link
/// (now, whatever its listing said) is read through `path`, links followed, as
/// [`read_inspected`] reads it.
pub fn read_entry(
    dir: &Directory,
    path: &Path,
    limit: u64,
    inspect: &mut dyn FnMut(Option<&Path>, &Metadata) -> bool,
) -> FileRead {
    let Some(name) = path.file_name() else {
        return read_inspected(path, limit, inspect);
    };
    let flags =
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(dir_fd) = dir.stream.fd() else {
        return read_inspected(path, limit, inspect);
    };
    match rustix::fs::openat(dir_fd, name, flags, Mode::empty()) {
        Ok(fd) => {
            let real = dir.real().map(|real| real.join(name));
            read_opened(&File::from(fd), real.as_deref(), limit, inspect)
        }
        // `O_NOFOLLOW` refuses a link this way.
        Err(rustix::io::Errno::LOOP) => read_inspected(path, limit, inspect),
        Err(errno) => after_failed_open(path, limit, errno.into()),
    }
}

/// The rest of a read once `file` is open; `real` is where it really is.
fn read_opened(
    file: &File,
    real: Option<&Path>,
    limit: u64,
    inspect: &mut dyn FnMut(Option<&Path>, &Metadata) -> bool,
) -> FileRead {
    let metadata = match file.metadata() {
        Ok(metadata) => metadata,
        Err(err) => return FileRead::Read(err),
    };
    if !inspect(real, &metadata) {
        return FileRead::Refused;
    }
    // The size test comes first, whatever the file type, as the reference's `statSync` does.
    if metadata.len() > limit {
        return FileRead::TooLarge {
            size: metadata.len(),
            by_read: false,
        };
    }
    let file_type = metadata.file_type();
    if let Some(kind) = special_kind(&file_type) {
        return FileRead::Special(kind);
    }
    if file_type.is_dir() {
        return FileRead::Directory;
    }
    // `len` is at most `limit` here; one spare byte lets the final zero-length read land
    // without growing the buffer.
    let capacity = usize::try_from(metadata.len()).map_or(0, |len| len + 1);
    let mut bytes = Vec::with_capacity(capacity);
    if metadata.is_file() {
        // A regular file is read whole by one `read` that asks for one byte more than its size.
        // When it gives exactly the size `fstat` gave, that was all there was (a file that had
        // grown would have given the extra byte), and the read that would only confirm the end
        // is saved: one system call in five per rule file. Anything else goes on below.
        bytes.resize(capacity, 0);
        let mut reader = file;
        let filled = loop {
            match reader.read(&mut bytes) {
                Ok(filled) => break filled,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return FileRead::Read(err),
            }
        };
        bytes.truncate(filled);
        if filled as u64 == metadata.len() {
            return FileRead::Bytes { bytes, metadata };
        }
    }
    let read_so_far = bytes.len() as u64;
    if let Err(err) = file
        .take((limit + 1).saturating_sub(read_so_far))
        .read_to_end(&mut bytes)
    {
        return FileRead::Read(err);
    }
    if bytes.len() as u64 > limit {
        return FileRead::TooLarge {
            size: limit + 1,
            by_read: true,
        };
    }
    FileRead::Bytes { bytes, metadata }
}

/// Why an open failed, and whether the path is too large anyway (a file over the limit that we
/// may not read still counts as too large, as the reference's size test comes before its read).
fn after_failed_open(path: &Path, limit: u64, err: io::Error) -> FileRead {
    // A path that does not resolve (missing, a dangling link, a link loop) cannot be stat'ed
    // either: no need to ask.
    let unresolved = [
        rustix::io::Errno::NOENT,
        rustix::io::Errno::LOOP,
        rustix::io::Errno::NOTDIR,
    ]
    .iter()
    .any(|errno| err.raw_os_error() == Some(errno.raw_os_error()));
    if unresolved {
        return FileRead::Missing(err);
    }
    match fs::metadata(path) {
        Ok(metadata) if metadata.len() > limit => FileRead::TooLarge {
            size: metadata.len(),
            by_read: false,
        },
        Ok(metadata) => match special_kind(&metadata.file_type()) {
            Some(kind) => FileRead::Special(kind),
            None => FileRead::Open(err),
        },
        Err(_) => FileRead::Missing(err),
    }
}

/// The path an open file was reached by, resolved by the kernel.
pub fn real_path(file: &impl AsRawFd) -> Option<PathBuf> {
    fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .ok()
        .filter(|path| path.is_absolute())
}

/// Opens `path` for reading without blocking on a FIFO and without acquiring a terminal.
fn open(path: &Path) -> io::Result<File> {
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    // Invariant: open(2) flag bits are small positive values, so the cast cannot wrap.
    OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
}

/// The kind of special file that must never be read, if it is one.
pub fn special_kind(file_type: &fs::FileType) -> Option<SpecialKind> {
    if file_type.is_fifo() {
        Some(SpecialKind::Fifo)
    } else if file_type.is_socket() {
        Some(SpecialKind::Socket)
    } else {
        None
    }
}

/// What kind of file `file_type` is, in words: `file`, `directory`, `symbolic link`, `FIFO`,
/// `socket`, `character device`, `block device`, or `special file`.
pub fn kind_name(file_type: &fs::FileType) -> &'static str {
    if file_type.is_file() {
        "file"
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_symlink() {
        "symbolic link"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_block_device() {
        "block device"
    } else {
        "special file"
    }
}

/// [`kind_name`] of a type as rustix gives it (a directory entry's, or `lstat`'s).
pub fn raw_kind_name(file_type: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType;
    match file_type {
        FileType::RegularFile => "file",
        FileType::Directory => "directory",
        FileType::Symlink => "symbolic link",
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Unknown => "special file",
    }
}

/// Reads a whole small file as text (invalid UTF-8 replaced): `Ok(None)` when it does not
/// exist, `Err` with the reason when it cannot be used (too large, not a regular file,
/// unreadable).
pub fn read_text(path: &Path, limit: u64) -> Result<Option<String>, String> {
    // Most often there is no such file (the settings files are optional): one `lstat` says so,
    // where the open below would fail and be followed by the `lstat` for a dangling link.
    if fs::symlink_metadata(path).is_err_and(|err| err.kind() == io::ErrorKind::NotFound) {
        return Ok(None);
    }
    match read(path, limit) {
        FileRead::Bytes { bytes, metadata } if metadata.is_file() => {
            Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
        }
        FileRead::Bytes { .. } | FileRead::Directory | FileRead::Special(_) => {
            Err("not a regular file".to_owned())
        }
        FileRead::TooLarge { size, by_read } => Err(if by_read {
            format!("larger than the {limit}-byte limit")
        } else {
            format!("{size} bytes, over the {limit}-byte limit")
        }),
        FileRead::Missing(err) if err.kind() == io::ErrorKind::NotFound => {
            // A dangling link is not "no file": the name exists.
            match fs::symlink_metadata(path) {
                Ok(_) => Err("a link that leads nowhere".to_owned()),
                Err(_) => Ok(None),
            }
        }
        FileRead::Missing(err) | FileRead::Open(err) | FileRead::Read(err) => Err(err.to_string()),
        FileRead::Refused => Err("refused".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::time::{Duration, Instant};

    #[test]
    fn regular_files_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, "12345").unwrap();
        assert!(matches!(read(&path, 5), FileRead::Bytes { bytes, .. } if bytes == b"12345"));
        assert!(matches!(
            read(&path, 4),
            FileRead::TooLarge {
                size: 5,
                by_read: false
            }
        ));
        assert_eq!(read_text(&path, 5), Ok(Some("12345".to_owned())));
        assert!(read_text(&path, 4)
            .unwrap_err()
            .contains("over the 4-byte limit"));
    }

    #[test]
    fn a_regular_file_longer_than_its_size_is_read_to_its_end() {
        // `/proc` files are regular files of size 0 that hold text: the first read gives more
        // than the size, and the rest is read to the end.
        let path = Path::new("/proc/self/cmdline");
        let whole = fs::read(path).unwrap();
        assert!(!whole.is_empty() && fs::metadata(path).unwrap().len() == 0);
        assert!(matches!(read(path, 1 << 20), FileRead::Bytes { bytes, .. } if bytes == whole));
        assert!(matches!(
            read(path, 1),
            FileRead::TooLarge {
                size: 2,
                by_read: true
            }
        ));
    }

    #[test]
    fn missing_dangling_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        assert!(matches!(read(&missing, 10), FileRead::Missing(_)));
        assert_eq!(read_text(&missing, 10), Ok(None));
        let dangling = dir.path().join("dangling");
        symlink(&missing, &dangling).unwrap();
        assert!(read_text(&dangling, 10)
            .unwrap_err()
            .contains("leads nowhere"));
        assert!(matches!(read(dir.path(), 1 << 20), FileRead::Directory));
        let looped = dir.path().join("loop");
        symlink(&looped, &looped).unwrap();
        assert!(matches!(read(&looped, 10), FileRead::Missing(_)));
    }

    #[test]
    fn endless_devices_are_too_large_by_reading() {
        let started = Instant::now();
        assert!(matches!(
            read(Path::new("/dev/zero"), 1000),
            FileRead::TooLarge {
                size: 1001,
                by_read: true
            }
        ));
        assert!(
            matches!(read(Path::new("/dev/null"), 10), FileRead::Bytes { bytes, .. } if bytes.is_empty())
        );
        assert!(read_text(Path::new("/dev/null"), 10).is_err());
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// Makes a FIFO at `path`, with the system's `mkfifo`.
    fn make_fifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    }

    #[test]
    fn a_fifo_is_never_read_and_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        make_fifo(&fifo);
        let started = Instant::now();
        assert!(matches!(
            read(&fifo, 10),
            FileRead::Special(SpecialKind::Fifo)
        ));
        assert_eq!(read_text(&fifo, 10), Err("not a regular file".to_owned()));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// The outcome of `read` in short (its text, or its kind) and the real path it showed
    /// `inspect`.
    fn seen(
        read: impl FnOnce(&mut dyn FnMut(Option<&Path>, &Metadata) -> bool) -> FileRead,
    ) -> (String, Option<PathBuf>) {
        let mut real = None;
        let outcome = read(&mut |seen, _| {
            real = seen.map(Path::to_path_buf);
            true
        });
        let summary = match outcome {
            FileRead::Bytes { bytes, .. } => String::from_utf8(bytes).unwrap(),
            other => format!("{other:?}")
                .split([' ', '('])
                .next()
                .unwrap()
                .to_owned(),
        };
        (summary, real)
    }

    /// What `read_entry` and `read_inspected` each give for `name` in the directory at
    /// `through`.
    fn both_ways(through: &Path, name: &str) -> [(String, Option<PathBuf>); 2] {
        let path = through.join(name);
        let open = Directory::open(through).unwrap();
        [
            seen(|inspect| read_entry(&open, &path, 1 << 20, inspect)),
            seen(|inspect| read_inspected(&path, 1 << 20, inspect)),
        ]
    }

    #[test]
    fn an_entry_read_in_its_open_directory_is_what_its_path_reads() {
        let root = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(root.path()).unwrap();
        let rules = root.join("rules");
        let elsewhere = root.join("elsewhere");
        fs::create_dir_all(&rules).unwrap();
        fs::create_dir_all(&elsewhere).unwrap();
        fs::write(rules.join("a.md"), "text").unwrap();
        fs::write(elsewhere.join("secret"), "key").unwrap();
        symlink(elsewhere.join("secret"), rules.join("link.md")).unwrap();
        symlink(root.join("nowhere"), rules.join("dangling.md")).unwrap();
        fs::create_dir(rules.join("dir.md")).unwrap();
        make_fifo(&rules.join("fifo.md"));
        // The directory reached through a link: real paths are where it really is.
        let through = root.join("linked");
        symlink(&rules, &through).unwrap();
        let started = Instant::now();
        let cases = [
            ("a.md", "text", Some(rules.join("a.md"))),
            // A link is followed and judged by where it leads, not by the directory it is in.
            ("link.md", "key", Some(elsewhere.join("secret"))),
            ("dangling.md", "Missing", None),
            ("missing.md", "Missing", None),
            ("dir.md", "Directory", Some(rules.join("dir.md"))),
            ("fifo.md", "Special", Some(rules.join("fifo.md"))),
        ];
        for (name, outcome, real) in cases {
            let expected = (outcome.to_owned(), real);
            assert_eq!(
                both_ways(&through, name),
                [expected.clone(), expected],
                "{name}"
            );
        }
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn an_entry_that_became_a_link_after_the_listing_is_followed() {
        let root = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(root.path()).unwrap();
        fs::write(root.join("outside"), "secret").unwrap();
        let rules = root.join("rules");
        fs::create_dir(&rules).unwrap();
        fs::write(rules.join("a.md"), "text").unwrap();
        let open = Directory::open(&rules).unwrap();
        // Swapped for a link once the directory is open (and listed).
        fs::remove_file(rules.join("a.md")).unwrap();
        symlink(root.join("outside"), rules.join("a.md")).unwrap();
        let path = rules.join("a.md");
        assert_eq!(
            seen(|inspect| read_entry(&open, &path, 100, inspect)),
            ("secret".to_owned(), Some(root.join("outside")))
        );
    }

    #[test]
    fn kind_names_agree_for_std_and_rustix_types() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, "x").unwrap();
        let link = dir.path().join("link");
        symlink(&file, &link).unwrap();
        let fifo = dir.path().join("fifo");
        make_fifo(&fifo);
        for (path, expected) in [
            (dir.path(), "directory"),
            (file.as_path(), "file"),
            (link.as_path(), "symbolic link"),
            (fifo.as_path(), "FIFO"),
            (Path::new("/dev/null"), "character device"),
        ] {
            let std_type = fs::symlink_metadata(path).unwrap().file_type();
            let mode = rustix::fs::lstat(path).unwrap().st_mode;
            let raw_type = rustix::fs::FileType::from_raw_mode(mode);
            assert_eq!(kind_name(&std_type), expected);
            assert_eq!(raw_kind_name(raw_type), expected);
        }
    }
}
