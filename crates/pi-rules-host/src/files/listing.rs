//! Listing one layer directory: the one listing of the host. [`list_dir`] gives every entry
//! with its type (and the editor buffers that stand in for files there); the loader keeps the
//! rule files ([`list_layer`]), and `check` reports on the rest too.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType};
use rustix::io::Errno;

use super::bounded::Directory;
use super::Overlay;
use pi_rules_core::layer::Layer;

/// One kept directory entry: a regular file or a symbolic link (to anything) named `*.md`.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) is_symlink: bool,
    /// The editor buffer that stands in for the file (see [`Overlay`](super::Overlay)).
    pub(crate) overlay: Option<Arc<str>>,
}

pub use pi_rules_core::lint::is_rule_name;

/// One entry of a directory, as [`list_dir`] gives it.
#[derive(Debug)]
pub struct Listed {
    /// Its name; for a name that is not UTF-8 (`invalid_name`), the name with U+FFFD in place
    /// of the invalid bytes.
    pub name: String,
    /// The name on disk is not UTF-8 (such an entry is listed only when its name ends in `.md`).
    pub invalid_name: bool,
    /// The directory's path joined with the name (as it is on disk).
    pub path: PathBuf,
    /// Its type, links not followed: the one the directory entry gives, else (a filesystem
    /// that does not say) the one `lstat` gives; or why it could not be told. An editor buffer
    /// is a regular file.
    pub file_type: Result<FileType, Errno>,
    /// The editor buffer that stands in for the file at `path` (see [`Overlay`](super::Overlay)).
    pub overlay: Option<Arc<str>>,
}

impl Listed {
    /// The entry of an editor buffer named `name` at `path`: a regular file with its text.
    pub(crate) fn buffer(path: &Path, name: &str, text: &Arc<str>) -> Listed {
        Listed {
            name: name.to_owned(),
            invalid_name: false,
            path: path.to_path_buf(),
            file_type: Ok(FileType::RegularFile),
            overlay: Some(Arc::clone(text)),
        }
    }
}

/// What listing a directory gave.
#[derive(Debug)]
pub struct Listing {
    /// The entries, `.` and `..` left out, in the order the directory gives them, then the
    /// editor buffers that are not on disk, in byte order of their names; an error where an
    /// entry could not be read (the directory's stream ends after it).
    pub entries: Vec<Result<Listed, Errno>>,
    /// The directory, held open for reading its entries by name (see
    /// [`super::bounded::read_entry`]); or why it could not be opened (`NOENT`: it does not
    /// exist).
    pub dir: Result<Directory, Errno>,
}

/// Lists `dir` (not recursively): the entries whose UTF-8 names `keep` accepts, and those
/// whose names are not UTF-8 and end in `.md`. A rule name (`*.md`) of `overlay` whose parent
/// is `dir` is listed as a regular file with the overlay's text, in place of what is on disk
/// under that name (if anything), even when `dir` cannot be listed. The type of an entry that
/// `keep` refuses is never looked up.
///
/// The directory is read with rustix's stream rather than `std::fs::read_dir`: glibc's
/// `opendir` allocates a 32 KiB buffer, which in a short command takes fresh pages (and a `brk`
/// to get them and one to give them back) even for an empty directory. Rustix starts with a small
/// buffer and grows it for a large directory.
pub fn list_dir(dir: &Path, overlay: &Overlay, keep: impl Fn(&str) -> bool) -> Listing {
    let overlaid: Vec<Listed> = overlay
        .in_dir(dir)
        .filter(|(_, name, _)| is_rule_name(name) && keep(name))
        .map(|(path, name, text)| Listed::buffer(path, name, text))
        .collect();
    let mut entries = Vec::new();
    let mut open = Directory::open(dir);
    if let Ok(open) = &mut open {
        let stream = open.stream();
        loop {
            let item = match stream.read() {
                None => break,
                Some(Ok(item)) => item,
                Some(Err(errno)) => {
                    entries.push(Err(errno));
                    continue;
                }
            };
            let raw = item.file_name().to_bytes();
            if raw == b"." || raw == b".." {
                continue;
            }
            let (name, invalid_name) = match std::str::from_utf8(raw) {
                Ok(name) if keep(name) && !overlaid.iter().any(|o| o.name == name) => {
                    (name.to_owned(), false)
                }
                Ok(_) => continue,
                Err(_) if raw.ends_with(b".md") => {
                    (String::from_utf8_lossy(raw).into_owned(), true)
                }
                Err(_) => continue,
            };
            let file_type = match item.file_type() {
                FileType::Unknown => stream.fd().and_then(|fd| {
                    rustix::fs::statat(fd, item.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        .map(|stat| FileType::from_raw_mode(stat.st_mode))
                }),
                known => Ok(known),
            };
            entries.push(Ok(Listed {
                name,
                invalid_name,
                path: dir.join(OsStr::from_bytes(raw)),
                file_type,
                overlay: None,
            }));
        }
    }
    entries.extend(overlaid.into_iter().map(Ok));
    Listing { entries, dir: open }
}

/// Lists `dir` (not recursively), keeping rule entries in byte order of their names, as Node's
/// `readdirSync` returns them. A missing directory gives nothing, silently; any other error
/// gives nothing (or what was listed before it) and a note; so does an entry that is not a
/// regular file or a link, or whose name is not UTF-8. Editor buffers are listed as
/// [`list_dir`] lists them.
///
/// The directory stays open in the returned [`Directory`] (when it could be listed), for reading
/// its entries by name.
pub(crate) fn list_layer(
    layer: Layer,
    dir: &Path,
    overlay: &Overlay,
    notes: &mut Vec<String>,
) -> (Vec<Entry>, Option<Directory>) {
    let layer = layer.as_str();
    let listing = list_dir(dir, overlay, is_rule_name);
    let open = match listing.dir {
        Ok(open) => Some(open),
        Err(Errno::NOENT) => None,
        Err(errno) => {
            notes.push(format!(
                "cannot list the {layer} layer `{}`: {}; it contributes nothing",
                dir.display(),
                io::Error::from(errno)
            ));
            None
        }
    };
    let mut entries = Vec::new();
    for item in listing.entries {
        let listed = match item {
            Ok(listed) => listed,
            Err(errno) => {
                notes.push(format!(
                    "cannot read an entry of the {layer} layer `{}`: {}",
                    dir.display(),
                    io::Error::from(errno)
                ));
                continue;
            }
        };
        if listed.invalid_name {
            notes.push(format!(
                "skipped `{}` in the {layer} layer: its name is not valid UTF-8",
                listed.path.display()
            ));
            continue;
        }
        let file_type = match listed.file_type {
            Ok(file_type) => file_type,
            Err(errno) => {
                notes.push(format!(
                    "cannot tell the type of `{}` in the {layer} layer: {}",
                    listed.path.display(),
                    io::Error::from(errno)
                ));
                continue;
            }
        };
        if !matches!(file_type, FileType::RegularFile | FileType::Symlink) {
            notes.push(format!(
                "skipped `{}` in the {layer} layer: it is a {}, not a file",
                listed.path.display(),
                super::bounded::raw_kind_name(file_type)
            ));
            continue;
        }
        entries.push(Entry {
            path: listed.path,
            name: listed.name,
            is_symlink: file_type == FileType::Symlink,
            overlay: listed.overlay,
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    (entries, open)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    /// (name, invalid name, type, overlaid) of each listed entry, sorted.
    fn summary(listing: &Listing) -> Vec<(String, bool, FileType, bool)> {
        let mut out: Vec<_> = (listing.entries.iter())
            .map(|item| {
                let listed = item.as_ref().unwrap();
                let file_type = listed.file_type.unwrap();
                (
                    listed.name.clone(),
                    listed.invalid_name,
                    file_type,
                    listed.overlay.is_some(),
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[test]
    fn one_listing_for_the_loader_and_check() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("10-a.md"), "a").unwrap();
        std::fs::write(dir.join("notes.txt"), "n").unwrap();
        std::fs::create_dir(dir.join("20-dir.md")).unwrap();
        std::os::unix::fs::symlink("nowhere", dir.join("30-link.md")).unwrap();
        std::fs::write(dir.join(OsStr::from_bytes(b"40-\xff.md")), "x").unwrap();
        std::fs::write(dir.join(OsStr::from_bytes(b"50-\xff.txt")), "x").unwrap();
        let mut overlay = Overlay::new();
        overlay.insert(dir.join("30-link.md"), "buffer over a link");
        overlay.insert(dir.join("60-new.md"), "only in the buffer");
        overlay.insert(dir.join("70-new.txt"), "not a rule name");
        overlay.insert(dir.join("sub/80-deeper.md"), "not in this directory");

        let every = list_dir(dir, &overlay, |_| true);
        assert!(every.dir.is_ok());
        let regular = FileType::RegularFile;
        assert_eq!(
            summary(&every),
            [
                ("10-a.md".to_owned(), false, regular, false),
                ("20-dir.md".to_owned(), false, FileType::Directory, false),
                ("30-link.md".to_owned(), false, regular, true),
                ("40-\u{fffd}.md".to_owned(), true, regular, false),
                ("60-new.md".to_owned(), false, regular, true),
                ("notes.txt".to_owned(), false, regular, false),
            ]
        );
        // The buffers come after the directory's entries.
        let last = every.entries.last().unwrap().as_ref().unwrap();
        assert_eq!(last.name, "60-new.md");

        let rules = list_dir(dir, &overlay, is_rule_name);
        let names: Vec<String> = summary(&rules).into_iter().map(|e| e.0).collect();
        assert_eq!(
            names,
            [
                "10-a.md",
                "20-dir.md",
                "30-link.md",
                "40-\u{fffd}.md",
                "60-new.md"
            ]
        );

        // A directory that is not there: its buffers all the same, and why.
        let missing = list_dir(&dir.join("sub"), &overlay, |_| true);
        assert_eq!(missing.dir.as_ref().err(), Some(&Errno::NOENT));
        let names: Vec<String> = summary(&missing).into_iter().map(|e| e.0).collect();
        assert_eq!(names, ["80-deeper.md"]);
    }
}
