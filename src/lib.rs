//! The pi-rules command-line tool as a library: the front ends (one module per command, `serve`,
//! `eval`) on the host layer (`pi-rules-host`), and the output layer: streams, terminals, JSON.
//! `main.rs` only parses arguments and maps results to exit codes.

pub mod commands;
pub mod eval;
pub mod invocation;
pub mod json;
pub mod lines;
pub mod lsp;
pub mod output;
pub mod report;
pub mod serve;
pub mod terminal;
pub mod unified_diff;
