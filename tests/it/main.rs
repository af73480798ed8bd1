//! The integration tests, as one test binary: one link instead of one per file. Each module is
//! the file of the same name; `common` and `conformance_data` are their shared helpers.

mod common;
mod conformance_data;

mod authoring;
mod check;
mod cli;
mod config;
mod confine;
mod docs_command;
mod engine_conformance;
mod exit_codes;
mod explain;
mod export;
mod export_lint;
mod export_warnings;
mod fix_diff;
mod git_spawn;
mod hostile_files;
mod import;
mod layers_conformance;
mod lint_noise;
mod loader;
mod lsp;
mod lsp_fuzz;
mod raw_messages;
mod readme_examples;
mod roundtrip;
mod scoped;
mod serve;
mod show_trust;
mod subdir_note;
mod trust_io;
mod trust_text;
mod trust_write;
mod turn;
