//! The printers of the host's reports that more than one front end writes: each command prints
//! its report through them, and `serve` writes the same JSON (and `explain`'s text) through the
//! same functions, so a method's result is the command's `--format json` by construction. The
//! lint report's printers are [`crate::report`]'s.

pub mod assemble;
pub mod explain;
pub mod settings;
