//! The host's errors: typed, with the [`ErrorKind`] that a front end maps to what it reports (the
//! command line to an exit code, `serve` to a JSON-RPC error's `data.kind`), and, where a front
//! end says or does more than print the message, the [`Detail`] of the case with its fields, so
//! that nothing sorts messages or looks inside one to decide.
//!
//! An error type belongs to the module that fails (`ExportError` to `export`, `WriteError` to
//! `writing`), which also says how it becomes an [`Error`]: this module imports none of them.

use std::fmt;
use std::io;
use std::path::PathBuf;

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
/// command line escapes the message when it prints it), and the typed case when a front end
/// needs more than the message.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    detail: Option<Detail>,
}

/// The cases of [`Error`] that a front end tells apart, each with what it needs of it. The
/// message says the same in words, byte for byte as without the detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail {
    /// The working directory given was not a directory: the front end names it as it was given
    /// (`--cwd` on the command line, `params.cwd` in `serve`).
    NotADirectory { path: PathBuf },
    /// The output could not be written, with the kind of the write's failure: when the reader
    /// went away ([`io::ErrorKind::BrokenPipe`]), the command line exits quietly.
    Output { failure: io::ErrorKind },
}

/// A result with the host's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    fn new(kind: ErrorKind, message: String) -> Error {
        Error {
            kind,
            message,
            detail: None,
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
        error.detail = Some(Detail::Output {
            failure: err.kind(),
        });
        error
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The whole message, as the command line prints it after `pi-rules: error: `.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The typed case, when the error is one a front end tells apart.
    pub fn detail(&self) -> Option<&Detail> {
        self.detail.as_ref()
    }

    /// Whether this is a failed write to a reader that went away.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(
            self.detail,
            Some(Detail::Output {
                failure: io::ErrorKind::BrokenPipe
            })
        )
    }

    /// The working directory that was not a directory, when that is the error.
    pub fn not_a_directory(&self) -> Option<NotADirectory> {
        match &self.detail {
            Some(Detail::NotADirectory { path }) => Some(NotADirectory { path: path.clone() }),
            _ => None,
        }
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
        error.detail = Some(Detail::NotADirectory { path: err.path });
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

/// The working directory given to a command is not a directory.
///
/// The front end says what the directory was called: the command line's `--cwd` (this error's
/// `Display`), or a request's `cwd` parameter ([`NotADirectory::for_param`]).
#[derive(Debug)]
pub struct NotADirectory {
    pub path: PathBuf,
}

impl NotADirectory {
    /// The message for the request parameter `name` (`params.cwd`), raw.
    pub fn for_param(&self, name: &str) -> String {
        format!(
            "{name}: `{}` is not a directory; pass the project directory (the one holding .pi/)",
            self.path.display()
        )
    }
}

impl std::fmt::Display for NotADirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`--cwd {}` is not a directory; pass the project directory (the one holding .pi/)",
            self.path.display()
        )
    }
}

impl std::error::Error for NotADirectory {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detail_is_the_typed_case_and_the_message_is_unchanged() {
        let gone = io::Error::from(io::ErrorKind::BrokenPipe);
        let message = format!("cannot write the output: {gone}");
        let pipe = Error::output(gone);
        assert_eq!(
            pipe.detail(),
            Some(&Detail::Output {
                failure: io::ErrorKind::BrokenPipe
            })
        );
        assert!(pipe.is_broken_pipe());
        assert_eq!(pipe.message(), message);
        let denied = Error::output(io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(!denied.is_broken_pipe());
        assert_eq!(denied.kind(), ErrorKind::Output);

        let cwd = NotADirectory {
            path: PathBuf::from("/x/y"),
        };
        let message = cwd.to_string();
        let err = Error::from(cwd);
        assert_eq!(
            err.detail(),
            Some(&Detail::NotADirectory {
                path: PathBuf::from("/x/y")
            })
        );
        assert_eq!(err.message(), message);
        assert_eq!(err.not_a_directory().unwrap().path, PathBuf::from("/x/y"));
        assert_eq!(err.kind(), ErrorKind::Input);

        assert_eq!(Error::input("x").detail(), None);
        assert!(Error::input("x").not_a_directory().is_none());
    }
}
