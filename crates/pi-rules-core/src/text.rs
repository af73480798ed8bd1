//! JavaScript string semantics that Rust's standard library does not share.
//!
//! `String.prototype.trim` and the regex class `\s` use ECMAScript's WhiteSpace and
//! LineTerminator sets. They include U+FEFF and exclude U+0085, so `str::trim` is not a
//! substitute.

/// Whether `c` is in JavaScript's `\s` (WhiteSpace or LineTerminator).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// Whether `c` ends a line for the JavaScript regex `.` (which does not match it).
pub fn is_js_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// JavaScript `String.prototype.trim`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// JavaScript `String.prototype.trimStart`.
pub fn js_trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_whitespace)
}

/// The length of `s` in UTF-16 code units, which is what JavaScript's `length` counts.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_table() {
        let cases = [
            ("  a  ", "a"),
            ("\u{feff}a\u{feff}", "a"),
            ("\u{85}a", "\u{85}a"),
            ("\u{2028}\u{3000}a\u{a0}\t\r\n", "a"),
            ("\u{200b}a", "\u{200b}a"),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(js_trim(input), expected, "{input:?}");
        }
    }
}
