//! The `{{REVIEW_LOOP_MAX_CYCLES}}` placeholder in assembled rules.

/// The placeholder, exactly as rules write it.
pub const REVIEW_LOOP_MAX_CYCLES: &str = "{{REVIEW_LOOP_MAX_CYCLES}}";

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
