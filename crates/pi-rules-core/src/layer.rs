//! The three rule layers, named once for the loader, the linter and the commands.

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
