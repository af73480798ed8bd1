//! Settings: the schema, settings files, resolution and the cache (SPEC §4).
//!
//! Settings go through three typed stages:
//!
//! 1. raw file values, as parsed ([`SettingsFile::raw`], from [`jsonc`]);
//! 2. per-file checked values, where a value that fails its key's check is absent and the reason
//!    is kept ([`SettingsFile::values`], [`SettingsFile::rejected`]);
//! 3. resolved values, each with its [`Source`] ([`resolve`] → [`Resolved`]).
//!
//! Nothing here reads files or the environment: the binary finds and reads the files and hands
//! in their texts, and passes an [`EnvLookup`]. [`SettingsCache`] does the same through
//! [`SettingsFs`]. Which key follows which rule is decided in one place, `rule.rs`.

pub mod agents;
mod cache;
mod file;
pub mod js_number;
pub mod jsonc;
mod resolve;
mod rule;
mod schema;

pub use agents::parse_agent_names;
pub use cache::{SettingsCache, SettingsFs, RECHECK_INTERVAL};
pub use file::{
    settings_file_in, FileProblem, RejectReason, Rejected, SettingsFile, SETTINGS_FILE_NAMES,
};
pub use jsonc::{KeyAt, SyntaxError};
pub use resolve::{resolve, EnvLookup, Resolved, ResolvedValue, Source};
pub use schema::{KeyKind, KeySpec, Schema, SchemaError};
