//! What the host tells a user beside its results: a package directory that is not a directory,
//! a rule that escapes the project, an ignored settings file or value, the project rules a
//! working directory does not read. They come back as data ([`Note`]) in the result; each front
//! end decides how to show them (the command line as `pi-rules: warning: ...` lines on stderr,
//! escaped for the terminal; `serve` as plain JSON strings).

use std::fmt;

/// How much a note matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something was ignored or left out that the user probably meant to count.
    Warning,
    /// Something worth knowing.
    Note,
}

impl Level {
    /// The word the command line prints for it: `warning`, `note`.
    pub fn label(self) -> &'static str {
        match self {
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// One thing a user should hear. The message is raw: the front end escapes it for a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub level: Level,
    pub message: String,
}

impl Note {
    /// A [`Level::Warning`].
    pub fn warning(message: impl Into<String>) -> Note {
        Note {
            level: Level::Warning,
            message: message.into(),
        }
    }

    /// A [`Level::Note`].
    pub fn info(message: impl Into<String>) -> Note {
        Note {
            level: Level::Note,
            message: message.into(),
        }
    }
}

impl fmt::Display for Note {
    /// `warning: MESSAGE`, raw.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.level.label(), self.message)
    }
}
