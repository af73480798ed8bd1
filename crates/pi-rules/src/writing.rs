//! Writing a rule file so that no reader ever sees half of it: the bytes go to a temporary file
//! in the same directory, which is synced and then renamed onto the destination. A rename within
//! one directory is atomic, so the assembly (or an editor, or `watch`) reads either the old file
//! or the whole new one.
//!
//! Without `replace`, the rename refuses to overwrite (`renameat2` with `RENAME_NOREPLACE`; where
//! the file system lacks it, a hard link, which refuses too): a file that appears between a check
//! and the write is never clobbered.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Why a write did not happen.
#[derive(Debug)]
pub enum WriteError {
    /// The destination exists (a file, a link, anything) and replacing was not allowed.
    Exists,
    /// Any other failure, with what was being done.
    Io { doing: &'static str, err: io::Error },
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Exists => f.write_str("it already exists"),
            WriteError::Io { doing, err } => write!(f, "cannot {doing}: {err}"),
        }
    }
}

impl std::error::Error for WriteError {}

fn io(doing: &'static str) -> impl FnOnce(io::Error) -> WriteError {
    move |err| WriteError::Io { doing, err }
}

/// Writes `bytes` to `path` atomically, creating the parent directory if needed. With `replace`,
/// an existing file is replaced (keeping its permission bits); without it, an existing entry is
/// left untouched and the result is [`WriteError::Exists`].
pub fn write_atomic(path: &Path, bytes: &[u8], replace: bool) -> Result<(), WriteError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(io("create the directory"))?;
    if !replace && fs::symlink_metadata(path).is_ok() {
        return Err(WriteError::Exists);
    }
    let (temp_path, mut temp) = create_temp(dir, path)?;
    let written = (|| {
        temp.write_all(bytes)
            .map_err(io("write the temporary file"))?;
        if replace {
            // An editor keeps the mode of the file it saves over; so do we.
            if let Ok(old) = fs::metadata(path) {
                if old.is_file() {
                    let mode = old.permissions().mode() & 0o7777;
                    let _ = temp.set_permissions(fs::Permissions::from_mode(mode));
                }
            }
        }
        temp.sync_all().map_err(io("sync the temporary file"))?;
        drop(temp);
        if replace {
            fs::rename(&temp_path, path).map_err(io("rename the temporary file into place"))
        } else {
            rename_no_replace(&temp_path, path)
        }
    })();
    // After a successful rename the temporary name is gone; after a hard link or a failure it is
    // still there.
    let _ = fs::remove_file(&temp_path);
    written?;
    // Make the rename itself durable; best-effort, as not every file system allows it.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Creates a new, empty temporary file beside `path`, named after it and hidden, and not a rule
/// name (it does not end in `.md`), so that a concurrent assembly never takes it.
fn create_temp(dir: &Path, path: &Path) -> Result<(PathBuf, File), WriteError> {
    let stem = path
        .file_name()
        .map_or_else(|| "rule".into(), |n| n.to_string_lossy().into_owned());
    let pid = std::process::id();
    let mut last = None;
    for attempt in 0..100u32 {
        let candidate = dir.join(format!(".{stem}.{pid}.{attempt}.tmp"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = Some(err),
            Err(err) => return Err(io("create a temporary file")(err)),
        }
    }
    Err(io("create a temporary file")(last.unwrap_or_else(|| {
        io::Error::from(io::ErrorKind::AlreadyExists)
    })))
}

/// Renames `from` onto `to` unless `to` exists.
fn rename_no_replace(from: &Path, to: &Path) -> Result<(), WriteError> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::EXIST) => Err(WriteError::Exists),
        // No RENAME_NOREPLACE here: a hard link also fails when the name exists.
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::OPNOTSUPP) => {
            match fs::hard_link(from, to) {
                Ok(()) => Ok(()),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Err(WriteError::Exists),
                Err(err) => Err(io("link the temporary file into place")(err)),
            }
        }
        Err(errno) => Err(io("rename the temporary file into place")(
            io::Error::from_raw_os_error(errno.raw_os_error()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn creates_directories_and_writes_the_bytes() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("a/b/70-x.md");
        write_atomic(&path, b"one\r\ntwo", false).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one\r\ntwo");
        assert_eq!(leftovers(&root.path().join("a/b")), ["70-x.md"]);
    }

    #[test]
    fn refuses_to_replace_anything_without_replace() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("70-x.md");
        fs::write(&path, "mine").unwrap();
        assert!(matches!(
            write_atomic(&path, b"theirs", false),
            Err(WriteError::Exists)
        ));
        assert_eq!(fs::read_to_string(&path).unwrap(), "mine");
        // A dangling link is an entry too.
        let link = root.path().join("71-y.md");
        std::os::unix::fs::symlink(root.path().join("nowhere"), &link).unwrap();
        assert!(matches!(
            write_atomic(&link, b"x", false),
            Err(WriteError::Exists)
        ));
        assert_eq!(leftovers(root.path()), ["70-x.md", "71-y.md"]);
    }

    #[test]
    fn the_no_replace_rename_itself_refuses() {
        let root = tempfile::tempdir().unwrap();
        let from = root.path().join("from");
        let to = root.path().join("to");
        fs::write(&from, "new").unwrap();
        fs::write(&to, "old").unwrap();
        assert!(matches!(
            rename_no_replace(&from, &to),
            Err(WriteError::Exists)
        ));
        assert_eq!(fs::read_to_string(&to).unwrap(), "old");
    }

    #[test]
    fn replaces_keeping_the_mode_and_replaces_a_link_itself() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("70-x.md");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"new", true).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let target = root.path().join("target.txt");
        fs::write(&target, "target").unwrap();
        let link = root.path().join("71-y.md");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"copy", true).unwrap();
        assert!(!fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "target");
        assert_eq!(leftovers(root.path()), ["70-x.md", "71-y.md", "target.txt"]);
    }
}
