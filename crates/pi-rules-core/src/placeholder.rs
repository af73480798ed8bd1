//! The `{{REVIEW_LOOP_MAX_CYCLES}}` placeholder in assembled rules.

use std::borrow::Cow;

/// The placeholder, exactly as rules write it.
pub const REVIEW_LOOP_MAX_CYCLES: &str = "{{REVIEW_LOOP_MAX_CYCLES}}";

/// Replaces every placeholder in `text` by `value`, borrowing `text` when there is none; also
/// returns how many were replaced.
pub fn substitute<'t>(text: &'t str, value: &str) -> (Cow<'t, str>, usize) {
    if memchr::memmem::find(text.as_bytes(), REVIEW_LOOP_MAX_CYCLES.as_bytes()).is_none() {
        return (Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let count = substitute_into(text, value, &mut out);
    (Cow::Owned(out), count)
}

/// Appends `text` to `out` with every placeholder replaced by `value`, and returns how many were
/// replaced.
pub fn substitute_into(text: &str, value: &str, out: &mut String) -> usize {
    let finder = memchr::memmem::Finder::new(REVIEW_LOOP_MAX_CYCLES);
    let mut copied = 0;
    let mut count = 0;
    for at in finder.find_iter(text.as_bytes()) {
        out.push_str(&text[copied..at]);
        out.push_str(value);
        copied = at + REVIEW_LOOP_MAX_CYCLES.len();
        count += 1;
    }
    out.push_str(&text[copied..]);
    count
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
        ];
        for (input, expected, n) in cases {
            let mut out = String::new();
            assert_eq!(substitute_into(input, "3", &mut out), n);
            assert_eq!(out, expected, "{input:?}");
        }
    }
}
