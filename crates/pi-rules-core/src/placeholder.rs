//! The `{{REVIEW_LOOP_MAX_CYCLES}}` placeholder in assembled rules.

use crate::find::{self, Finder, HeuristicFrequencyRank};
use std::borrow::Cow;
use std::sync::OnceLock;

/// The placeholder, exactly as rules write it.
pub const REVIEW_LOOP_MAX_CYCLES: &str = "{{REVIEW_LOOP_MAX_CYCLES}}";

/// Appends to `found` the offset of every placeholder in `text[from..]`, in order (offsets into
/// `text`). Placeholders do not overlap: the search goes on after each one.
pub fn find(text: &str, from: usize, found: &mut Vec<usize>) {
    let Some(mut rest) = text.as_bytes().get(from..) else {
        return;
    };
    let needle = REVIEW_LOOP_MAX_CYCLES.as_bytes();
    let mut base = from;
    // `{` is rare in prose, and a byte search beats a substring searcher's set-up there. Text
    // with many `{` that start no placeholder (markers kept verbatim) goes to the substring
    // searcher, which skips them.
    let mut misses = 0;
    while misses < 16 {
        let Some(at) = find::memchr(b'{', rest) else {
            return;
        };
        let skip = if rest[at..].starts_with(needle) {
            found.push(base + at);
            at + needle.len()
        } else {
            misses += 1;
            at + 1
        };
        rest = &rest[skip..];
        base += skip;
    }
    found.extend(finder().find_iter(rest).map(|at| base + at));
}

/// A substring searcher for the placeholder that looks for its `V` and `X` first.
fn finder() -> &'static Finder<'static> {
    static FINDER: OnceLock<Finder<'static>> = OnceLock::new();
    FINDER.get_or_init(|| Finder::with_ranker(REVIEW_LOOP_MAX_CYCLES.as_bytes(), RareLetters))
}

struct RareLetters;

impl HeuristicFrequencyRank for RareLetters {
    fn rank(&self, byte: u8) -> u8 {
        match byte {
            b'X' => 0,
            b'V' => 1,
            _ => 255,
        }
    }
}

/// Replaces every placeholder in `text` by `value`, borrowing `text` when there is none; also
/// returns how many were replaced.
pub fn substitute<'t>(text: &'t str, value: &str) -> (Cow<'t, str>, usize) {
    let mut found = Vec::new();
    find(text, 0, &mut found);
    if found.is_empty() {
        return (Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len() + 16);
    replace(text, &found, value, &mut out);
    (Cow::Owned(out), found.len())
}

/// Appends `text` to `out` with every placeholder replaced by `value`, and returns how many were
/// replaced.
pub fn substitute_into(text: &str, value: &str, out: &mut String) -> usize {
    let mut found = Vec::new();
    find(text, 0, &mut found);
    replace(text, &found, value, out);
    found.len()
}

fn replace(text: &str, found: &[usize], value: &str, out: &mut String) {
    let mut copied = 0;
    for &at in found {
        out.push_str(&text[copied..at]);
        out.push_str(value);
        copied = at + REVIEW_LOOP_MAX_CYCLES.len();
    }
    out.push_str(&text[copied..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitute_table() {
        let cases = [
            ("a{{REVIEW_LOOP_MAX_CYCLES}}b", "a3b", 1),
            (
                "{{REVIEW_LOOP_MAX_CYCLES}}{{REVIEW_LOOP_MAX_CYCLES}}",
                "33",
                2,
            ),
            (
                "{{REVIEW_LOOP_MAX_CYCLES }}{{review_loop_max_cycles}}",
                "{{REVIEW_LOOP_MAX_CYCLES }}{{review_loop_max_cycles}}",
                0,
            ),
            ("{{{REVIEW_LOOP_MAX_CYCLES}}}", "{3}", 1),
            ("{{REVIEW_LOOP_MAX_CYCLES}}}}", "3}}", 1),
            (
                &format!(
                    "{}{{{{REVIEW_LOOP_MAX_CYCLES}}}}x{{{{REVIEW_LOOP_MAX_CYCLES}}}}",
                    "{{/IF}}".repeat(20)
                ),
                &format!("{}3x3", "{{/IF}}".repeat(20)),
                2,
            ),
        ];
        for (input, expected, n) in cases {
            let mut out = String::new();
            assert_eq!(substitute_into(input, "3", &mut out), n);
            assert_eq!(out, expected, "{input:?}");
            let mut found = Vec::new();
            find(input, 0, &mut found);
            assert_eq!(found.len(), n, "{input:?}");
        }
    }
}
