//! Text that is shown to a person, with the characters that could mislead a reader or disturb a
//! terminal written visibly. Pure: it neither reads nor prints.

use std::borrow::Cow;

/// Whether printing `c` as is could mislead or disturb a terminal: control characters,
/// bidirectional controls, invisible characters and tag characters, and every other character
/// the hidden-text check reports (in any context).
pub fn is_unsafe_to_print(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
        || crate::lint::text::is_hidden(c)
}

/// [`is_unsafe_to_print`], answered without the tables for printable ASCII, which is always
/// safe.
fn unsafe_to_print(c: char) -> bool {
    if c.is_ascii() {
        !matches!(c, ' '..='~')
    } else {
        is_unsafe_to_print(c)
    }
}

/// `text` with every character that [`is_unsafe_to_print`] shown as `<U+XXXX>`.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_to_print) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe_to_print(c) {
            out.push_str(&format!("<U+{:04X}>", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_ascii_is_safe_and_the_shortcut_agrees() {
        for c in (0..0x80u8)
            .map(char::from)
            .chain(['é', '\u{202e}', '\u{200b}', '⏎', '…'])
        {
            assert_eq!(unsafe_to_print(c), is_unsafe_to_print(c), "{c:?}");
        }
        assert_eq!(visible("a\tb"), "a<U+0009>b");
        assert_eq!(visible("plain `{{IF:…}}` ⏎"), "plain `{{IF:…}}` ⏎");
    }
}
