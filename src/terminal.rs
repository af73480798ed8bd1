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
pub use pi_rules_host::escape::{
    escape, escape_keeping_tabs, escape_text, escape_truncated, is_unsafe, is_unsafe_in_text,
    Escaped,
};
use std::borrow::Cow;
use std::io::{self, IsTerminal};

/// Writes a file's text (a rule, a rendered prompt) to `out`, which is the process's stdout:
/// the bytes exactly on a pipe or into a file, or with `raw`; on a terminal, as [`escape_text`]
/// shows them, and then, when something was escaped, a note on `err` that says so (after `out`
/// is flushed, so that it follows the text).
pub fn write_file_text(
    out: &mut dyn io::Write,
    err: &mut dyn io::Write,
    bytes: &[u8],
    raw: bool,
) -> pi_rules_host::error::Result<()> {
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
