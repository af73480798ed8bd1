//! `explain`'s decision recorder, its report model and the report's wording.
//!
//! The assembly runs once with a [`Recorder`] (an [`Observer`](pi_rules_core::Observer)) that
//! records every gate and block decision in order (`recorder.rs`); the [`Explanation`] joins them
//! with the loader's per-name report, the settings and their sources, and every marker of each
//! file, so blocks inside dropped blocks, which are never evaluated, are listed too (`model.rs`).
//! `wording.rs` puts a file's status and a block's state in words; it keeps the text it quotes
//! (keys, names, values) raw unless the caller passes an escaper ([`Show`]). The front ends write
//! the report, one file at a time.
//!
//! Output and memory stay linear in the input: each file's decisions and warnings are a slice
//! taken once, positions come from a forward cursor, setting values are one-line forms made once
//! per key, and reasons are built into reused strings.

mod model;
mod recorder;
mod wording;

pub use model::{
    closer_indices_into, ranges_by_file, BlockView, Cursor, Described, Explanation, Scratch,
    SettingsView, State, StrayView,
};
pub use recorder::{offset, Decided, Gate, GatePart, Key, Names, Reason, Recorder};
pub use wording::{
    push_position, push_setting, raw, write_gate_reason, write_outcome_reason, Show,
};

use std::borrow::Cow;

/// The deepest nesting the text tree indents; deeper blocks show their depth as a number.
pub const MAX_INDENT: usize = 16;

/// The most characters of a value or condition shown in one line of text.
pub const MAX_SHOWN_CHARS: usize = 60;

/// Estimated tokens for `bytes` bytes of text: one per four bytes, rounded up.
pub fn estimate_tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

/// `text` cut to at most `max` characters, raw; a cut text ends with `…` and its full length in
/// bytes, so that a megabyte-long setting shows as one short line. Escaping the cut text gives
/// what the terminal escaper's `escape_truncated` gives for `text`.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((at, _)) => Cow::Owned(format!("{}… ({} bytes)", &text[..at], text.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::{escape, escape_truncated};

    /// Cutting raw and escaping after is what the escaper's own cut gives, the cut counted in
    /// the text's characters, not in its escaped form.
    #[test]
    fn cut_then_escape_is_escape_truncated() {
        let long = "é\u{1b}".repeat(50);
        for text in ["", "short", "a\nbcdef", "\u{202e}abc", &long] {
            for max in [0, 3, 60] {
                assert_eq!(
                    escape(&cut(text, max)),
                    escape_truncated(text, max),
                    "{text:?} {max}"
                );
            }
        }
        assert_eq!(cut("a\nbcdef", 3), "a\nb… (7 bytes)");
        assert!(matches!(cut("short", 60), Cow::Borrowed(_)));
    }
}
