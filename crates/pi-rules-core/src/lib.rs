//! The pi-rules engine: pure functions from rule texts and setting values to the assembled rules
//! text, with every decision available as data.
//!
//! This crate does no I/O: no files, no environment, no printing. The `pi-rules` binary discovers
//! and reads files and hands the texts in. See `ARCHITECTURE.md` at the repository root.
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::dbg_macro)]

pub mod scope;
pub mod settings;
pub mod text;
pub mod value;

pub use scope::{Features, Scope, Settings};
pub use value::{Object, Value};
