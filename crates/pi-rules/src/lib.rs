//! The pi-rules command-line tool as a library: layer discovery, bounded file reading, the
//! settings files, one module per command, and the output layer. `main.rs` only parses
//! arguments and maps results to exit codes.

pub mod assembly;
pub mod authoring;
pub mod bounded;
pub mod check;
pub mod commands;
pub mod embedded;
pub mod eval;
pub mod fix;
pub mod invocation;
pub mod json;
pub mod lines;
pub mod loader;
pub mod output;
pub mod repo;
pub mod report;
pub mod serve;
pub mod session;
pub mod terminal;
pub mod unified_diff;
pub mod writing;
