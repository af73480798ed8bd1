//! Where a rule candidate really is, and whether it escapes: a project rule that resolves outside
//! the project (a cloned project can link `~/.ssh/id_ed25519` into the prompt), or a rule in any
//! layer that is a special file (`/proc/self/environ` puts the whole environment, API keys
//! included, into the prompt).
//!
//! Without `--confine` such a candidate is still read, so that the block stays what the
//! reference makes, and the commands name it on stderr. With `--confine` it is treated as
//! unreadable: the next lower copy is used. `/dev/null` is neither: a link to it is how a user
//! masks a rule.

use std::fs::Metadata;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::Layer;
use crate::files::Files;

/// What the loader enforces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// The project root (canonical): project rules must resolve inside it. `None`: not checked.
    pub project_root: Option<PathBuf>,
    /// Treat an escaping candidate as unreadable instead of reading it.
    pub confine: bool,
}

/// How a candidate escapes: the core's one type, which the linter reports too.
pub use pi_rules_core::layer::Escape;

const DEV_NULL: &str = "/dev/null";

/// Whether `real` names a special file by where it is.
fn special_place(real: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|top| real.starts_with(top))
}

/// Whether `metadata` is a device other than `/dev/null` (character device 1:3).
fn special_device(metadata: &Metadata) -> bool {
    let file_type = metadata.file_type();
    let device = file_type.is_char_device() || file_type.is_block_device();
    device && !(file_type.is_char_device() && metadata.rdev() == rustix::fs::makedev(1, 3))
}

impl Policy {
    /// How a candidate of `layer` whose real path is `real` escapes, if it does. `metadata` is
    /// the opened file's, when it is open.
    pub fn escape(&self, layer: Layer, real: &Path, metadata: Option<&Metadata>) -> Option<Escape> {
        if real == Path::new(DEV_NULL) {
            return None;
        }
        if special_place(real) || metadata.is_some_and(special_device) {
            return Some(Escape::SpecialFile {
                real: real.to_path_buf(),
            });
        }
        match &self.project_root {
            Some(root) if layer == Layer::Project && !real.starts_with(root) => {
                Some(Escape::OutsideProject {
                    real: real.to_path_buf(),
                    root: root.clone(),
                })
            }
            _ => None,
        }
    }

    /// Checks a candidate before it is opened, under `--confine`: by its canonical path, so that
    /// a device is refused without being opened. `None` when it may be opened.
    pub fn refuse_before_open(&self, layer: Layer, path: &Path, files: &Files) -> Option<Escape> {
        if !self.confine {
            return None;
        }
        // When it does not resolve, opening it fails the same way, and nothing is read.
        let real = files.canonical(path)?;
        self.escape(layer, &real, None)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn escape_table() {
        let policy = Policy {
            project_root: Some(PathBuf::from("/work/app")),
            confine: true,
        };
        let cases: &[(Layer, &str, bool)] = &[
            (Layer::Project, "/work/app/.pi/rules/90-x.md", false),
            (Layer::Project, "/work/app/docs/shared.md", false),
            (Layer::Project, "/work/other/90-x.md", true),
            (Layer::Project, "/work/app-evil/90-x.md", true),
            (Layer::Project, "/home/me/.ssh/id_ed25519", true),
            (Layer::Project, "/dev/null", false),
            (Layer::User, "/home/me/notes/rule.md", false),
            (Layer::User, "/proc/self/environ", true),
            (Layer::Package, "/sys/class/net/eth0/address", true),
            (Layer::Package, "/dev/zero", true),
            (Layer::User, "/dev/null", false),
        ];
        for (layer, real, escapes) in cases {
            assert_eq!(
                policy.escape(*layer, Path::new(real), None).is_some(),
                *escapes,
                "{layer:?} {real}"
            );
        }
    }

    #[test]
    fn devices_are_special_wherever_they_are() {
        let zero = std::fs::metadata("/dev/zero").unwrap();
        let null = std::fs::metadata("/dev/null").unwrap();
        assert!(special_device(&zero));
        assert!(!special_device(&null));
        let policy = Policy::default();
        assert!(policy
            .escape(Layer::User, Path::new("/tmp/renamed-zero"), Some(&zero))
            .is_some());
    }
}
