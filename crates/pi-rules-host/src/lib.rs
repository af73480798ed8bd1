//! The host layer of pi-rules, between the pure engine (`pi-rules-core`) and the front ends (the
//! command line, `serve`): it finds the project and its repository root, reads the rule layers
//! and the settings files (bounded, never hanging), writes rule files atomically, and runs the
//! operations every front end offers (assemble, explain's report, check with its fixes, show,
//! override, new).
//!
//! What it never does: parse a command line, know about terminals or JSON-RPC, print, read the
//! process environment or its current directory, or end the process. What it needs of the
//! process comes in as an [`Env`](env::Env) that each front end builds; what a user should hear
//! comes back as data. `clippy.toml` and the lints below enforce this.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod assembly;
pub mod authoring;
pub mod check;
pub mod config;
pub mod embedded;
pub mod env;
pub mod error;
pub mod escape;
pub mod explain;
pub mod export;
pub mod files;
pub mod fix;
pub mod ide;
pub mod loader;
pub mod notes;
pub mod repo;
pub mod scoped;
pub mod selection;
pub mod session;
pub mod settings_source;
pub mod writing;
