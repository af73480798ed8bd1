//! `explain`'s two printers of the host's report ([`pi_rules_host::explain::Explanation`]): the JSON
//! form (`docs/explain-json.md`, `json.rs`), serialised straight from typed data, and the text
//! form (`text.rs`), a tree, everything it prints from files and settings escaped for the
//! terminal.

mod json;
mod text;

pub use json::write_json;
pub use text::write_text;

/// The version of the JSON form, documented in `docs/explain-json.md`.
pub const FORMAT_VERSION: u32 = 2;
