//! The pi-rules engine: pure functions from rule texts and setting values to the assembled rules
//! text, with every decision available as data.
//!
//! This crate does no I/O: no files, no environment, no printing. The `pi-rules` binary discovers
//! and reads files and hands the texts in. See `ARCHITECTURE.md` at the repository root.
//!
//! Phases, one module each: [`frontmatter`] (header and gate), [`markers`] (scanning and matching
//! `{{IF:}}`/`{{IFNOT:}}`), [`condition`] (conditions and literals), [`blocks`] (evaluating a
//! body), [`table`] (table repair), [`placeholder`] (`{{REVIEW_LOOP_MAX_CYCLES}}`), composed by
//! [`assemble`](mod@assemble). [`render`] fills `{{SETTINGS}}` into agent prompts. [`value`] is
//! the JavaScript value model, [`settings`] the schema, files and resolution, and [`lint`] the
//! static checks behind `pi-rules check`; [`escape`] writes the characters that must not reach a
//! reader as they are visibly.
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::dbg_macro)]

pub mod assemble;
pub mod blocks;
pub mod condition;
pub mod escape;
pub mod event;
pub mod file_id;
pub mod find;
pub mod frontmatter;
pub mod layer;
pub mod lint;
pub mod markers;
pub mod placeholder;
pub mod render;
pub mod rule_scope;
pub mod scope;
pub mod settings;
pub mod span;
pub mod table;
pub mod text;
pub mod value;

pub use assemble::{assemble, assemble_observed, Assembler, Assembly};
pub use event::{
    BlockDecision, BlockReason, GateDecision, GateReason, Message, Observer, Warning, WarningKind,
};
pub use file_id::FileId;
pub use scope::{Features, Scope, Settings};
pub use value::{Object, Value};
