//! The host's errors.

use std::fmt;

/// A usage error found after argument parsing (an unknown key in `--set`, a bad code): exit 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}
