//! What reaches a terminal: escaping of text the tool did not write itself, and colour choice.
//!
//! Every human-readable printer passes file names, paths, conditions, values and snippets through
//! [`escape`] before printing them, so that a hostile rule file named
//! `x\e]0;OWNED\a\e[2J.md` cannot set the terminal title or clear the screen, and a newline in a
//! name cannot forge an output line. A whole file's text (`show`'s rule, `render`'s prompt) goes
//! to a terminal through [`write_file_text`], which keeps its line breaks and tabs and escapes
//! the rest as [`escape`] does; on a pipe or into a file it stays byte for byte. JSON output
//! needs none of this: JSON escapes controls itself.

use crate::output::{note, output};
use clap::ValueEnum;
use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io::{self, IsTerminal};

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

/// Writes a file's text (a rule, a rendered prompt) to `out`, which is the process's stdout:
/// the bytes exactly on a pipe or into a file, or with `raw`; on a terminal, as [`escape_text`]
/// shows them, and then, when something was escaped, a note on `err` that says so (after `out`
/// is flushed, so that it follows the text).
pub fn write_file_text(
    out: &mut dyn io::Write,
    err: &mut dyn io::Write,
    bytes: &[u8],
    raw: bool,
) -> anyhow::Result<()> {
    if raw || !io::stdout().is_terminal() {
        return output(out.write_all(bytes));
    }
    let (text, escaped) = escape_text(bytes);
    output(out.write_all(text.as_bytes()))?;
    if escaped > 0 {
        output(out.flush())?;
        let what = if escaped == 1 {
            "1 control character or byte that is not UTF-8 is".to_owned()
        } else {
            format!("{escaped} control characters or bytes that are not UTF-8 are")
        };
        note(
            err,
            format_args!(
                "pi-rules: note: {what} shown escaped (`\\x1b`, `\\u{{202e}}`, `\\xNN`); \
                 --raw prints the bytes"
            ),
        );
    }
    Ok(())
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
        match c {
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            '\t' => out.write_str("\\t")?,
            '\0' => out.write_str("\\0")?,
            c if (c as u32) < 0x100 => write!(out, "\\x{:02x}", c as u32)?,
            c => write!(out, "\\u{{{:x}}}", c as u32)?,
        }
        rest = &rest[at + c.len_utf8()..];
    }
    out.write_str(rest)
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

/// `--color`: when to colour human-readable output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorChoice {
    /// Colour when the stream is a terminal, unless `NO_COLOR` is set or `TERM=dumb`;
    /// `CLICOLOR_FORCE` forces it on.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream that is (or is not) a terminal, given the environment lookup
    /// `env`.
    pub fn enabled_with(self, is_terminal: bool, env: impl Fn(&str) -> Option<String>) -> bool {
        let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                if set("NO_COLOR") {
                    false
                } else if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                    true
                } else if env("TERM").is_some_and(|t| t == "dumb") {
                    false
                } else {
                    is_terminal
                }
            }
        }
    }

    /// [`ColorChoice::enabled_with`] on the process environment.
    pub fn enabled(self, is_terminal: bool) -> bool {
        self.enabled_with(is_terminal, |name| std::env::var(name).ok())
    }
}

/// ANSI styling that is on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    pub on: bool,
}

impl Paint {
    /// `text` in SGR style `code` (e.g. `1;31`) when on; as it is otherwise.
    pub fn paint<'t>(self, code: &str, text: &'t str) -> Cow<'t, str> {
        if self.on {
            Cow::Owned(format!("\x1b[{code}m{text}\x1b[0m"))
        } else {
            Cow::Borrowed(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_table() {
        let cases = [
            ("plain name.md", "plain name.md"),
            (
                "x\x1b]0;OWNED\x07\x1b[2J.md",
                "x\\x1b]0;OWNED\\x07\\x1b[2J.md",
            ),
            (
                "a\n└─ 00-orchestrator-core.md  included",
                "a\\n└─ 00-orchestrator-core.md  included",
            ),
            ("tab\there", "tab\\there"),
            ("nul\0", "nul\\0"),
            ("del\x7f c1\u{9b}", "del\\x7f c1\\x9b"),
            ("rlo\u{202e}txt", "rlo\\u{202e}txt"),
            ("isolate\u{2066}", "isolate\\u{2066}"),
            ("sep\u{2028}", "sep\\u{2028}"),
            ("emoji 👨‍👩‍👧 and CJK 漢字", "emoji 👨‍👩‍👧 and CJK 漢字"),
        ];
        for (input, expected) in cases {
            assert_eq!(escape(input), expected, "{input:?}");
        }
        assert!(matches!(escape("clean"), Cow::Borrowed(_)));
        for (input, expected) in cases {
            assert_eq!(Escaped(input).to_string(), expected, "{input:?}");
        }
    }

    #[test]
    fn file_text_keeps_its_layout_and_loses_its_controls() {
        let cases: [(&[u8], &str, usize); 8] = [
            (b"# Rule\n\n- tab\there\n", "# Rule\n\n- tab\there\n", 0),
            (
                b"title\x1b]0;OWNED\x07\x1b[2J\n",
                "title\\x1b]0;OWNED\\x07\\x1b[2J\n",
                3,
            ),
            (b"crlf\r\nsafe\revil\n", "crlf\\r\nsafe\\revil\n", 2),
            (b"back\x08space and nul\0", "back\\x08space and nul\\0", 2),
            (
                "c1 \u{9b}31m rlo \u{202e}txt sep\u{2028}".as_bytes(),
                "c1 \\x9b31m rlo \\u{202e}txt sep\\u{2028}",
                3,
            ),
            // Bytes that are not UTF-8 (a lone C1 CSI byte, a cut sequence) show as `\xNN`.
            (
                b"raw \x9b2J cut \xe2\x82 end\n",
                "raw \\x9b2J cut \\xe2\\x82 end\n",
                3,
            ),
            (b"bad \xff then \x1b\n", "bad \\xff then \\x1b\n", 2),
            ("emoji 👨‍👩‍👧 漢字\n".as_bytes(), "emoji 👨‍👩‍👧 漢字\n", 0),
        ];
        for (input, expected, count) in cases {
            let (text, escaped) = escape_text(input);
            assert_eq!(text, expected, "{input:?}");
            assert_eq!(escaped, count, "{input:?}");
            assert!(!text.contains(is_unsafe_in_text), "{input:?}");
        }
        assert!(matches!(escape_text(b"clean\n").0, Cow::Borrowed(_)));
    }

    #[test]
    fn truncation_shows_the_length() {
        assert_eq!(escape_truncated("short", 10), "short");
        let long = "é".repeat(100);
        assert_eq!(
            escape_truncated(&long, 3),
            format!("ééé… ({} bytes)", long.len())
        );
        assert_eq!(escape_truncated("a\nbcdef", 3), "a\\nb… (7 bytes)");
    }

    #[test]
    fn colour_choice_table() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let auto = ColorChoice::Auto;
        assert!(auto.enabled_with(true, env(&[])));
        assert!(!auto.enabled_with(false, env(&[])));
        assert!(!auto.enabled_with(true, env(&[("NO_COLOR", "1")])));
        assert!(auto.enabled_with(true, env(&[("NO_COLOR", "")])));
        assert!(!auto.enabled_with(true, env(&[("TERM", "dumb")])));
        assert!(auto.enabled_with(false, env(&[("CLICOLOR_FORCE", "1")])));
        assert!(!auto.enabled_with(false, env(&[("CLICOLOR_FORCE", "0")])));
        assert!(!auto.enabled_with(false, env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])));
        assert!(ColorChoice::Always.enabled_with(false, env(&[("NO_COLOR", "1")])));
        assert!(!ColorChoice::Never.enabled_with(true, env(&[])));
    }
}
