//! The pi-rules command-line tool as a library: layer discovery, bounded file reading, the
//! settings files and the command implementations. `main.rs` only parses arguments.

pub mod check;
pub mod commands;
pub mod embedded;
pub mod eval;
pub mod explain;
pub mod loader;
pub mod repo;
pub mod report;
pub mod session;
