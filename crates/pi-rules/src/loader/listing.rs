//! Listing one layer directory: the entries that can provide a rule file.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::Layer;

/// One kept directory entry: a regular file or a symbolic link (to anything) named `*.md`.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) name: String,
    pub(super) path: PathBuf,
    pub(super) is_symlink: bool,
}

pub use pi_rules_core::lint::is_rule_name;

/// Lists `dir` (not recursively), keeping rule entries in byte order of their names, as Node's
/// `readdirSync` returns them. A missing directory gives nothing, silently; any other error
/// gives nothing (or what was listed before it) and a note.
pub(super) fn list_layer(layer: Layer, dir: &Path, notes: &mut Vec<String>) -> Vec<Entry> {
    let read_dir = match fs::read_dir(dir) {
        Ok(read_dir) => read_dir,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(err) => {
            notes.push(format!(
                "cannot list the {layer} layer `{}`: {err}; it contributes nothing",
                dir.display()
            ));
            return Vec::new();
        }
    };
    let mut entries = Vec::new();
    for item in read_dir {
        let item = match item {
            Ok(item) => item,
            Err(err) => {
                notes.push(format!(
                    "cannot read an entry of the {layer} layer `{}`: {err}",
                    dir.display()
                ));
                continue;
            }
        };
        let file_name = item.file_name();
        let name = match file_name.into_string() {
            Ok(name) => name,
            Err(raw) => {
                if raw.as_encoded_bytes().ends_with(b".md") {
                    notes.push(format!(
                        "skipped `{}` in the {layer} layer: its name is not valid UTF-8",
                        item.path().display()
                    ));
                }
                continue;
            }
        };
        if !is_rule_name(&name) {
            continue;
        }
        // The type comes from the directory entry itself (no extra syscall on most
        // filesystems); links are not followed here.
        let file_type = match item.file_type() {
            Ok(file_type) => file_type,
            Err(err) => {
                notes.push(format!(
                    "cannot tell the type of `{}` in the {layer} layer: {err}",
                    item.path().display()
                ));
                continue;
            }
        };
        if !(file_type.is_file() || file_type.is_symlink()) {
            notes.push(format!(
                "skipped `{}` in the {layer} layer: it is a {}, not a file",
                item.path().display(),
                crate::bounded::kind_name(&file_type)
            ));
            continue;
        }
        entries.push(Entry {
            path: item.path(),
            name,
            is_symlink: file_type.is_symlink(),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    entries
}
