//! The one escaper: what is shown to a person passes through it, so that nothing from a file
//! reaches a terminal or a reader as a character that acts or hides. Text the tool did not write
//! itself (file names, paths, conditions, values, snippets) passes through [`escape`] before a
//! human-readable printer shows it, so that a hostile rule file named `x\e]0;OWNED\a\e[2J.md`
//! cannot set the terminal title or clear the screen, and a newline in a name cannot forge an
//! output line. Findings (their messages, excerpts and snippets) go through [`escape_hidden`],
//! which also writes out every character the hidden-text check reports (zero-width, tag,
//! variation selector, private use and invisible format characters), since a finding is often
//! about one of them.
//!
//! One notation everywhere: `\n`, `\r`, `\t`, `\0`, `\x1b` for the other C0 controls, DEL and
//! the C1 controls, and `\u{202e}` for every other character. Pure: it neither reads nor prints;
//! the host keeps its messages raw and the front ends escape what they print.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// Whether `c` must not reach a terminal as itself: C0 controls (tab and newline included), DEL,
/// C1 controls, the bidirectional controls (which reorder what follows them), and the line and
/// paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\0'..='\x1f' | '\x7f'..='\u{9f}'
        | '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        | '\u{2028}' | '\u{2029}')
}

/// `text` with every [`is_unsafe`] character written visibly: `\n`, `\r`, `\t`, `\0`, `\x1b`
/// for the other C0, DEL and C1 controls, and `\u{202e}` for the rest. Borrowed when there is
/// nothing to escape.
pub fn escape(text: &str) -> Cow<'_, str> {
    if is_plain(text) || !text.contains(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let _ = write_escaped(&mut out, text);
    Cow::Owned(out)
}

/// Whether `text` is printable ASCII, the common case, which needs no look at its characters.
fn is_plain(text: &str) -> bool {
    text.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// Writes `text` to `out` with every [`is_unsafe`] character escaped as [`escape`] does.
fn write_escaped(out: &mut dyn fmt::Write, text: &str) -> fmt::Result {
    if is_plain(text) {
        return out.write_str(text);
    }
    write_escaped_where(out, text, is_unsafe)
}

/// Whether `c` must not reach a terminal inside a file's text: [`is_unsafe`] except the line
/// break and the tab, which lay the text out. A carriage return is escaped: alone, it would move
/// the cursor back and let the rest of a line hide what came before it.
pub fn is_unsafe_in_text(c: char) -> bool {
    c != '\n' && c != '\t' && is_unsafe(c)
}

/// [`escape`], except that tabs stay tabs: a line of a diff, whose line break is not part of it,
/// keeps its indentation.
pub fn escape_keeping_tabs(text: &str) -> Cow<'_, str> {
    if is_plain(text) || !text.contains(|c| c != '\t' && is_unsafe(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let _ = write_escaped_where(&mut out, text, |c| c != '\t' && is_unsafe(c));
    Cow::Owned(out)
}

/// A file's bytes as they may reach a terminal: every [`is_unsafe_in_text`] character written
/// as [`escape`] writes it, and every byte that is not part of valid UTF-8 as `\xNN` (a lone
/// `0x9b` is a control sequence to some terminals). Line breaks and tabs stay as they are, so
/// the text keeps its layout. Also returns how many characters and bytes were escaped.
pub fn escape_text(bytes: &[u8]) -> (Cow<'_, str>, usize) {
    let unsafe_chars = |text: &str| text.chars().filter(|&c| is_unsafe_in_text(c)).count();
    if let Ok(text) = std::str::from_utf8(bytes) {
        let count = unsafe_chars(text);
        if count == 0 {
            return (Cow::Borrowed(text), 0);
        }
        let mut out = String::with_capacity(text.len() + 4 * count);
        let _ = write_escaped_where(&mut out, text, is_unsafe_in_text);
        return (Cow::Owned(out), count);
    }
    let mut out = String::with_capacity(bytes.len() + 16);
    let mut count = 0;
    for chunk in bytes.utf8_chunks() {
        count += unsafe_chars(chunk.valid());
        let _ = write_escaped_where(&mut out, chunk.valid(), is_unsafe_in_text);
        for byte in chunk.invalid() {
            count += 1;
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    (Cow::Owned(out), count)
}

/// Writes `text` to `out` with every character for which `escaped` holds written visibly, as
/// [`escape`] writes it.
fn write_escaped_where(
    out: &mut dyn fmt::Write,
    text: &str,
    escaped: fn(char) -> bool,
) -> fmt::Result {
    let mut rest = text;
    while let Some(at) = rest.find(escaped) {
        out.write_str(&rest[..at])?;
        let c = rest[at..].chars().next().unwrap_or_default();
        write_char_escaped(out, c)?;
        rest = &rest[at + c.len_utf8()..];
    }
    out.write_str(rest)
}

/// Writes `c` in the escaper's notation, whatever it is: `\n`, `\r`, `\t`, `\0`, `\xNN` below
/// U+0100, `\u{N}` above.
pub fn write_char_escaped(out: &mut dyn fmt::Write, c: char) -> fmt::Result {
    match c {
        '\n' => out.write_str("\\n"),
        '\r' => out.write_str("\\r"),
        '\t' => out.write_str("\\t"),
        '\0' => out.write_str("\\0"),
        c if (c as u32) < 0x100 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    }
}

/// Whether `c` is [`is_unsafe`], or hidden or misleading in some context: every character the
/// hidden-text check reports (PR503-PR511, PR513), such as U+200B ZERO WIDTH SPACE, the tag
/// characters, the variation selectors and private-use characters. What a finding shows.
pub fn is_unsafe_or_hidden(c: char) -> bool {
    is_unsafe(c) || crate::lint::text::is_hidden(c)
}

/// `text` with every [`is_unsafe_or_hidden`] character written as [`escape`] writes it: for
/// findings, whose subject is often such a character. Borrowed when there is nothing to escape.
pub fn escape_hidden(text: &str) -> Cow<'_, str> {
    if is_plain(text) || !text.contains(is_unsafe_or_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let _ = write_escaped_where(&mut out, text, is_unsafe_or_hidden);
    Cow::Owned(out)
}

/// A `Display` value shown with its unsafe characters escaped, without building a `String`:
/// `writeln!(err, "{}", Escaped(&message))`.
pub struct Escaped<D>(pub D);

impl<D: fmt::Display> fmt::Display for Escaped<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Filter<'a, 'b>(&'a mut fmt::Formatter<'b>);
        impl fmt::Write for Filter<'_, '_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                write_escaped(self.0, s)
            }
        }
        write!(Filter(f), "{}", self.0)
    }
}

/// `text` escaped and cut to at most `max` characters; a cut value ends with `…` and its full
/// length in bytes, so that a megabyte-long setting prints as one short line.
pub fn escape_truncated(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => escape(text),
        Some((cut, _)) => Cow::Owned(format!("{}… ({} bytes)", escape(&text[..cut]), text.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeping_tabs_is_escape_with_tabs_left_alone() {
        for text in [
            "plain",
            "\tindented",
            "a\tb\u{1b}[2J\tc\r\n\u{202e}",
            "\t",
            "",
        ] {
            let by_pieces: Vec<String> = text.split('\t').map(|p| escape(p).into_owned()).collect();
            assert_eq!(escape_keeping_tabs(text), by_pieces.join("\t"), "{text:?}");
        }
        assert!(matches!(escape_keeping_tabs("a\tb"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_notation_for_both_sets() {
        let cases = [
            ("plain", "plain", "plain"),
            ("a\u{1b}[2Jb", "a\\x1b[2Jb", "a\\x1b[2Jb"),
            ("a\tb\n", "a\\tb\\n", "a\\tb\\n"),
            ("\u{85}\u{202e}", "\\x85\\u{202e}", "\\x85\\u{202e}"),
            ("a\u{200b}b", "a\u{200b}b", "a\\u{200b}b"),
            (
                "\u{e0041}\u{e000}\u{fe0f}",
                "\u{e0041}\u{e000}\u{fe0f}",
                "\\u{e0041}\\u{e000}\\u{fe0f}",
            ),
            ("é ⏎ …", "é ⏎ …", "é ⏎ …"),
        ];
        for (text, escaped, hidden) in cases {
            assert_eq!(escape(text), escaped, "{text:?}");
            assert_eq!(escape_hidden(text), hidden, "{text:?}");
        }
    }

    #[test]
    fn the_wider_set_holds_the_narrow_one_and_every_hidden_character() {
        for c in (0..0x11_0000).filter_map(char::from_u32) {
            if is_unsafe(c) || crate::lint::text::is_hidden(c) {
                assert!(is_unsafe_or_hidden(c), "{c:?}");
            }
        }
        for c in (0x20..0x7f).filter_map(char::from_u32) {
            assert!(!is_unsafe_or_hidden(c), "{c:?}");
        }
    }
}
