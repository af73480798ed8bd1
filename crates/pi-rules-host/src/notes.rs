//! What the host tells a user beside its results.

use std::fmt;
use std::io::Write;

/// Writes one diagnostic line to stderr, ignoring failures: a stderr that cannot be written must
/// not cost the command its real output.
pub fn note(err: &mut dyn Write, args: fmt::Arguments<'_>) {
    let _ = err.write_fmt(args);
    let _ = err.write_all(b"\n");
}
