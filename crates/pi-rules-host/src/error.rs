//! The host's errors: typed, with the [`ErrorKind`] that a front end maps to what it reports (the
//! command line to an exit code, `serve` to a JSON-RPC error's `data.kind`), so that nothing
//! sorts messages or looks inside an error to decide.

use crate::session::NotADirectory;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What kind of failure an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A usage error found after argument parsing (an unknown key in `--set`, no such rule):
    /// exit 2.
    Usage,
    /// An input could not be read or used: exit 3.
    Input,
    /// The output could not be written: exit 4.
    Output,
}

impl ErrorKind {
    /// Its name in `serve`'s `data.kind`: `usage`, `input`, `output`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Usage => "usage",
            ErrorKind::Input => "input",
            ErrorKind::Output => "output",
        }
    }
}

/// A failed operation: its kind and its whole message, raw where it quotes a name or a path (the
/// command line escapes the message when it prints it).
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    /// The reader of the output went away (`EPIPE`): the command line then exits quietly.
    broken_pipe: bool,
    /// The working directory given was not a directory: the front end names it as it was given
    /// (`--cwd`, `params.cwd`).
    not_a_directory: Option<PathBuf>,
}

/// A result with the host's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    fn new(kind: ErrorKind, message: String) -> Error {
        Error {
            kind,
            message,
            broken_pipe: false,
            not_a_directory: None,
        }
    }

    /// A [`ErrorKind::Usage`] error.
    pub fn usage(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Usage, message.into())
    }

    /// An [`ErrorKind::Input`] error.
    pub fn input(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Input, message.into())
    }

    /// A failed write of the output: [`ErrorKind::Output`].
    pub fn output(err: io::Error) -> Error {
        let mut error = Error::new(ErrorKind::Output, format!("cannot write the output: {err}"));
        error.broken_pipe = err.kind() == io::ErrorKind::BrokenPipe;
        error
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The whole message, as the command line prints it after `pi-rules: error: `.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether this is a failed write to a reader that went away.
    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }

    /// The working directory that was not a directory, when that is the error.
    pub fn not_a_directory(&self) -> Option<NotADirectory> {
        self.not_a_directory.as_deref().map(|path| NotADirectory {
            path: Path::to_path_buf(path),
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// An error with its causes, as one message (`{:#}`): an input error.
impl From<anyhow::Error> for Error {
    fn from(err: anyhow::Error) -> Error {
        Error::input(format!("{err:#}"))
    }
}

impl From<NotADirectory> for Error {
    fn from(err: NotADirectory) -> Error {
        let mut error = Error::input(err.to_string());
        error.not_a_directory = Some(err.path);
        error
    }
}

/// Builds an [`Error`] of [`ErrorKind::Input`] from a format string and returns it.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::input(format!($($arg)*)).into())
    };
}

/// A usage error's message: `Err(UsageError(message).into())` is an [`ErrorKind::Usage`]
/// [`Error`].
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

impl From<UsageError> for Error {
    fn from(err: UsageError) -> Error {
        Error::usage(err.0)
    }
}

impl From<crate::writing::WriteError> for Error {
    fn from(err: crate::writing::WriteError) -> Error {
        Error::input(err.to_string())
    }
}

impl From<crate::export::ExportError> for Error {
    fn from(err: crate::export::ExportError) -> Error {
        Error::input(err.to_string())
    }
}
