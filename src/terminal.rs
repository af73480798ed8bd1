//! What reaches a terminal: escaping of text the tool did not write itself, and colour choice.
//!
//! Every human-readable printer passes file names, paths, conditions, values and snippets through
//! [`escape`] before printing them, so that a hostile rule file named
//! `x\e]0;OWNED\a\e[2J.md` cannot set the terminal title or clear the screen, and a newline in a
//! name cannot forge an output line. A whole file's text (`show`'s rule, `render`'s prompt) goes
//! to a terminal as [`escape_text`] shows it, which keeps its line breaks and tabs and escapes
//! the rest as [`escape`] does. JSON escapes the C0 controls itself but carries DEL, the C1
//! controls and the bidirectional characters as they are: on a terminal, JSON output goes
//! through [`JsonEscaper`], which writes those as `\uXXXX` escapes, the same string to any JSON
//! reader. Usage errors, which quote the command line, go through [`escape_keeping_sgr`].
//!
//! Nothing here writes to the process's streams: `output.rs` builds on this module, not
//! the other way round.

use clap::ValueEnum;
pub use pi_rules_host::escape::{
    escape, escape_hidden, escape_keeping_tabs, escape_text, escape_truncated, is_unsafe,
    is_unsafe_in_text, is_unsafe_or_hidden, write_char_escaped, Escaped,
};
use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether JSON carries `c` as itself although it must not reach a terminal so: the
/// [`is_unsafe`] characters from DEL up (JSON escapes the C0 controls itself).
pub fn is_unsafe_in_json(c: char) -> bool {
    c >= '\x7f' && is_unsafe(c)
}

/// The first bytes of the UTF-8 forms of the [`is_unsafe_in_json`] characters: DEL, C1 (`C2`),
/// U+061C (`D8`), and the marks, separators and bidirectional controls of U+2000 (`E2`).
fn starts_unsafe_in_json(byte: u8) -> bool {
    matches!(byte, 0x7f | 0xc2 | 0xd8 | 0xe2)
}

/// JSON text with every [`is_unsafe_in_json`] character written as its `\uXXXX` escape. Valid
/// JSON holds such characters only inside strings, where the escape stands for the same
/// character, so any JSON reader reads the same value. Bytes that are not UTF-8 pass as they
/// are. Borrowed when there is nothing to escape.
pub fn escape_json(json: &[u8]) -> Cow<'_, [u8]> {
    if !json.iter().any(|&b| starts_unsafe_in_json(b)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    let mut bytes = Vec::new();
    for chunk in json.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_unsafe_in_json(c) {
                let _ = write!(out, "\\u{:04x}", c as u32);
            } else {
                out.push(c);
            }
        }
        if !chunk.invalid().is_empty() {
            bytes.extend_from_slice(out.as_bytes());
            bytes.extend_from_slice(chunk.invalid());
            out.clear();
        }
    }
    bytes.extend_from_slice(out.as_bytes());
    Cow::Owned(bytes)
}

/// [`escape_json`] over a stream of writes: a character that a write cuts in two is kept for
/// the next, so that its escape does not depend on where the writes fall.
#[derive(Debug, Default)]
pub struct JsonEscaper {
    carry: Vec<u8>,
}

impl JsonEscaper {
    /// `buf`, after what the last call kept, escaped up to a cut character at its end, which is
    /// kept for the next call.
    pub fn escape<'a>(&mut self, buf: &'a [u8]) -> Cow<'a, [u8]> {
        if self.carry.is_empty() {
            let cut = Self::cut_at(buf);
            self.carry.extend_from_slice(&buf[cut..]);
            return escape_json(&buf[..cut]);
        }
        let mut joined = std::mem::take(&mut self.carry);
        joined.extend_from_slice(buf);
        let cut = Self::cut_at(&joined);
        self.carry.extend_from_slice(&joined[cut..]);
        joined.truncate(cut);
        Cow::Owned(escape_json(&joined).into_owned())
    }

    /// What the last call kept: the start of a character that no later write finished.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.carry)
    }

    /// Where an unfinished character that may need escaping begins at the end of `bytes`, or
    /// `bytes.len()`: the others pass as they are whether cut or not.
    fn cut_at(bytes: &[u8]) -> usize {
        let len = bytes.len();
        let from = len.saturating_sub(2);
        for (at, &byte) in bytes.iter().enumerate().skip(from) {
            let needs = match byte {
                0xc2 | 0xd8 => 2,
                0xe2 => 3,
                _ => continue,
            };
            if len - at < needs {
                return at;
            }
        }
        len
    }
}

/// A usage error as clap renders it, with every [`is_unsafe_in_text`] character of the command
/// line it quotes escaped, and clap's own colours, SGR sequences (`ESC [ digits m`), kept.
pub fn escape_keeping_sgr(text: &str) -> Cow<'_, str> {
    if !text.contains(is_unsafe_in_text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(at) = rest.find(is_unsafe_in_text) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let sgr = rest
            .strip_prefix("\x1b[")
            .map(|params| {
                params.len()
                    - params
                        .trim_start_matches(|c: char| c.is_ascii_digit() || c == ';')
                        .len()
            })
            .filter(|&n| rest.as_bytes().get(2 + n) == Some(&b'm'))
            .map(|n| 3 + n);
        let taken = match sgr {
            Some(n) => {
                out.push_str(&rest[..n]);
                n
            }
            None => {
                let c = rest.chars().next().unwrap_or_default();
                out.push_str(&escape(&rest[..c.len_utf8()]));
                c.len_utf8()
            }
        };
        rest = &rest[taken..];
    }
    out.push_str(rest);
    Cow::Owned(out)
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

    /// Text with every character JSON leaves alone but a terminal acts on, and its neighbours
    /// that must pass as they are.
    const HOSTILE: &str = "del\x7f c1\u{9b}31m \u{85} alm\u{61c} lrm\u{200e}\u{200f} \
        rlo\u{202e} lri\u{2066}\u{2069} sep\u{2028}\u{2029} é — → … 漢字 👨‍👩‍👧 \u{a0}\u{2014}\u{206a}";

    #[test]
    fn escape_json_writes_what_a_terminal_acts_on_as_escapes_that_read_the_same() {
        let json =
            serde_json::to_vec(&serde_json::json!({ "text": HOSTILE, "esc": "\x1b[2J" })).unwrap();
        let escaped = escape_json(&json);
        let text = std::str::from_utf8(&escaped).unwrap();
        assert!(
            !text.contains(|c: char| c != '\n' && is_unsafe(c)),
            "{text}"
        );
        for form in [
            "\\u007f", "\\u009b", "\\u0085", "\\u061c", "\\u200e", "\\u202e", "\\u2066",
        ] {
            assert!(text.contains(form), "{form} in {text}");
        }
        for kept in ["é — → … 漢字 👨‍👩‍👧 \u{a0}\u{2014}\u{206a}", "\\u001b[2J"]
        {
            assert!(text.contains(kept), "{kept:?} kept in {text}");
        }
        let read: serde_json::Value = serde_json::from_slice(&escaped).unwrap();
        assert_eq!(
            read,
            serde_json::from_slice::<serde_json::Value>(&json).unwrap()
        );
        assert!(matches!(
            escape_json(b"{\"a\":\"caf\xc3\xa9 \xe2\x80\x94\"}"),
            Cow::Owned(_)
        ));
        assert!(matches!(
            escape_json("{\"a\":\"plain é 漢\"}".as_bytes()),
            Cow::Borrowed(_)
        ));
        assert_eq!(&*escape_json(b"\xff\xc2\x9b\xc2"), b"\xff\\u009b\xc2");
    }

    proptest::proptest! {
        /// However the writes cut the text, the stream escapes it as [`escape_json`] escapes it
        /// whole.
        #[test]
        fn json_escaper_does_not_depend_on_where_writes_fall(
            cuts in proptest::collection::vec(0usize..200, 0..12),
            text in "[a\u{7f}\u{9b}\u{202e}\u{2066}\u{2028}\u{61c}é—👨\"\\\\]{0,60}",
        ) {
            let json = serde_json::to_vec(&text).unwrap();
            let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (json.len() + 1)).collect();
            points.sort_unstable();
            let mut escaper = JsonEscaper::default();
            let mut streamed = Vec::new();
            let mut from = 0;
            for at in points.into_iter().chain([json.len()]) {
                streamed.extend_from_slice(&escaper.escape(&json[from..at]));
                from = at;
            }
            streamed.extend_from_slice(&escaper.finish());
            proptest::prop_assert_eq!(streamed, escape_json(&json).into_owned());
        }
    }

    #[test]
    fn usage_errors_keep_clap_colours_and_escape_the_command_line() {
        let styled = "\x1b[1m\x1b[31merror:\x1b[0m unexpected argument \
            '\x1b[33m\x1b]0;PWNED\x07\x1b[2J\u{9b}31m\u{202e}x\x1b[0m'\n\n  tip: x\tb\n";
        assert_eq!(
            escape_keeping_sgr(styled),
            "\x1b[1m\x1b[31merror:\x1b[0m unexpected argument \
            '\x1b[33m\\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m\\u{202e}x\x1b[0m'\n\n  tip: x\tb\n"
        );
        assert!(matches!(
            escape_keeping_sgr("error: plain\n"),
            Cow::Borrowed(_)
        ));
        assert_eq!(escape_keeping_sgr("\x1b[1;31"), "\\x1b[1;31");
    }
}
