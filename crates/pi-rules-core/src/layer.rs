//! The three rule layers, named once for the loader, the linter and the commands, and how a file
//! of a layer can be somewhere it must not be ([`Escape`]).

use std::fmt;
use std::path::PathBuf;

/// A rule layer, lowest precedence first (so `Ord` is precedence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// The rules shipped with the tool (embedded, or a package directory).
    Package,
    /// `$HOME/.pi/agent/rules`.
    User,
    /// `<cwd>/.pi/rules`.
    Project,
}

impl Layer {
    /// `package`, `user` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Package => "package",
            Layer::User => "user",
            Layer::Project => "project",
        }
    }

    /// The conventional prefix range of new names in this layer (SPEC §8), inclusive.
    pub fn prefix_range(self) -> (u64, u64) {
        match self {
            Layer::Package => (0, 69),
            Layer::User => (70, 89),
            Layer::Project => (90, 99),
        }
    }
}

/// How a rule file (or the project settings file) escapes: where it really is, when that is a
/// problem. The host decides it, since it can resolve paths; the loader names it on stderr or
/// refuses the file under `--confine`, and the linter reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Escape {
    /// A project rule or settings file whose real path is outside the project root.
    OutsideProject { real: PathBuf, root: PathBuf },
    /// A rule that is, or links to, a special file: under `/proc`, `/sys` or `/dev` (other than
    /// `/dev/null`), or a device.
    SpecialFile { real: PathBuf },
    /// With `--confine`, a candidate whose real path could not be established.
    Unverifiable,
}

impl fmt::Display for Escape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Escape::OutsideProject { real, root } => write!(
                f,
                "it resolves to `{}`, outside the project `{}`",
                real.display(),
                root.display()
            ),
            Escape::SpecialFile { real } => {
                write!(f, "it resolves to `{}`, a special file", real.display())
            }
            Escape::Unverifiable => f.write_str("its real path cannot be established"),
        }
    }
}
