//! Listing one layer directory: the entries that can provide a rule file.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, Dir, FileType};

use crate::bounded::Directory;
use crate::source::Overlay;

use super::Layer;

/// One kept directory entry: a regular file or a symbolic link (to anything) named `*.md`.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) name: String,
    pub(super) path: PathBuf,
    pub(super) is_symlink: bool,
    /// The editor buffer that stands in for the file (see [`crate::source`]).
    pub(super) overlay: Option<Arc<str>>,
}

pub use pi_rules_core::lint::is_rule_name;

/// Lists `dir` (not recursively), keeping rule entries in byte order of their names, as Node's
/// `readdirSync` returns them. A missing directory gives nothing, silently; any other error
/// gives nothing (or what was listed before it) and a note.
///
/// The directory is read with rustix's stream rather than `std::fs::read_dir`: glibc's
/// `opendir` allocates a 32 KiB buffer, which in a short command takes fresh pages (and a `brk`
/// to get them and one to give them back) even for an empty directory. Rustix starts with a small
/// buffer and grows it for a large directory. What is kept and noted is the same.
///
/// The directory stays open in the returned [`Directory`] (when it could be listed), for reading
/// its entries by name.
///
/// A rule name in `overlay` whose parent is `dir` is listed as a regular file with the overlay's
/// text, in place of what is on disk under that name (if anything), even when `dir` cannot be
/// listed.
pub(super) fn list_layer(
    layer: Layer,
    dir: &Path,
    overlay: &Overlay,
    notes: &mut Vec<String>,
) -> (Vec<Entry>, Option<Directory>) {
    let overlaid: Vec<Entry> = overlay
        .in_dir(dir)
        .filter(|(_, name, _)| is_rule_name(name))
        .map(|(path, name, text)| Entry {
            name: name.to_owned(),
            path: path.to_path_buf(),
            is_symlink: false,
            overlay: Some(Arc::clone(text)),
        })
        .collect();
    let (mut entries, open) = list_disk(layer, dir, &overlaid, notes);
    if !overlaid.is_empty() {
        entries.extend(overlaid);
        entries.sort_by(|a, b| a.name.cmp(&b.name));
    }
    (entries, open)
}

/// [`list_layer`] on disk, leaving out the names in `overlaid`.
fn list_disk(
    layer: Layer,
    dir: &Path,
    overlaid: &[Entry],
    notes: &mut Vec<String>,
) -> (Vec<Entry>, Option<Directory>) {
    let layer = layer.as_str();
    let mut open = match Directory::open(dir) {
        Ok(open) => open,
        Err(rustix::io::Errno::NOENT) => return (Vec::new(), None),
        Err(errno) => {
            notes.push(format!(
                "cannot list the {layer} layer `{}`: {}; it contributes nothing",
                dir.display(),
                io::Error::from(errno)
            ));
            return (Vec::new(), None);
        }
    };
    let mut entries = Vec::new();
    for item in stream_entries(open.stream()) {
        let (item, file_type) = match item {
            Ok(item) => item,
            Err(errno) => {
                notes.push(format!(
                    "cannot read an entry of the {layer} layer `{}`: {}",
                    dir.display(),
                    io::Error::from(errno)
                ));
                continue;
            }
        };
        let raw = item.file_name().to_bytes();
        let path = || dir.join(OsStr::from_bytes(raw));
        let name = match std::str::from_utf8(raw) {
            Ok(name) => name,
            Err(_) => {
                if raw.ends_with(b".md") {
                    notes.push(format!(
                        "skipped `{}` in the {layer} layer: its name is not valid UTF-8",
                        path().display()
                    ));
                }
                continue;
            }
        };
        if !is_rule_name(name) || overlaid.iter().any(|entry| entry.name == name) {
            continue;
        }
        // The type comes from the directory entry itself (no extra syscall on most
        // filesystems); links are not followed here.
        let file_type = match file_type {
            Ok(file_type) => file_type,
            Err(errno) => {
                notes.push(format!(
                    "cannot tell the type of `{}` in the {layer} layer: {}",
                    path().display(),
                    io::Error::from(errno)
                ));
                continue;
            }
        };
        if !matches!(file_type, FileType::RegularFile | FileType::Symlink) {
            notes.push(format!(
                "skipped `{}` in the {layer} layer: it is a {}, not a file",
                path().display(),
                crate::bounded::raw_kind_name(file_type)
            ));
            continue;
        }
        entries.push(Entry {
            path: path(),
            name: name.to_owned(),
            is_symlink: file_type == FileType::Symlink,
            overlay: None,
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    (entries, Some(open))
}

/// The entries of `stream` other than `.` and `..`, each with its type: the one the directory
/// entry gives, else (a filesystem that does not say) the one `lstat` gives, as `std::fs`'s
/// `DirEntry::file_type` does. The stream ends after an error.
fn stream_entries(
    stream: &mut Dir,
) -> impl Iterator<Item = rustix::io::Result<(rustix::fs::DirEntry, rustix::io::Result<FileType>)>> + '_
{
    std::iter::from_fn(move || loop {
        let item = match stream.read()? {
            Ok(item) => item,
            Err(errno) => return Some(Err(errno)),
        };
        let name = item.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let file_type = match item.file_type() {
            FileType::Unknown => stream.fd().and_then(|fd| {
                rustix::fs::statat(fd, item.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    .map(|stat| FileType::from_raw_mode(stat.st_mode))
            }),
            known => Ok(known),
        };
        return Some(Ok((item, file_type)));
    })
}
