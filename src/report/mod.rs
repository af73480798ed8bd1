//! The printers of the host's reports, one module per report, shared by the front ends: each
//! command prints its report through them, and `serve` writes the same JSON (and `explain`'s
//! text) through the same functions, so a method's result is the command's `--format json` by
//! construction.
//!
//! - [`assemble`]: the block, its warnings and the per-file report as JSON;
//! - [`settings`]: the resolved settings as JSON, and `settings`' rows;
//! - [`explain`]: `explain`'s report ([`pi_rules_host::explain::Explanation`]) as a text tree or
//!   JSON;
//! - [`check`]: the lint report in its four formats, and [`check::CheckRun`];
//! - [`scope`]: what scopes did to an assembly, a part of `assemble`'s and `explain`'s reports.

pub mod assemble;
pub mod check;
pub mod explain;
pub mod scope;
pub mod settings;
