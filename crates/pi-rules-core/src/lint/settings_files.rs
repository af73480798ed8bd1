//! Checks on settings files, from what the settings parser keeps: a file that does not parse (the
//! whole file is ignored), values that fail validation, unknown and repeated keys, and a `.json`
//! ignored because a `.jsonc` sits beside it. Also hidden text in the file's strings (which
//! `render` puts into agent prompts) and comments, with the scan that rule text gets: see
//! [`check_hidden`].

use super::codes::Code;
use super::diagnostic::{excerpt, file, FileDiagnostics, FilePath};
use super::schema::SchemaInfo;
use super::suggest;
use super::text::{self, Place, Unit};
use super::{Escape, SettingsInput};
use crate::find;
use crate::settings::FileProblem;
use indexmap::IndexMap;
use std::ops::Range;

/// The span of the JSON string that starts at `offset` (its opening quote), quotes included.
fn string_span(text: &str, offset: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    if bytes.get(offset) != Some(&b'"') {
        return None;
    }
    let mut i = offset + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(offset..i + 1),
            b'\n' => break,
            _ => i += 1,
        }
    }
    Some(offset..offset + 1)
}

/// A one-character span at `offset`, on a char boundary.
fn point(text: &str, offset: usize) -> Range<usize> {
    let start = crate::span::floor_boundary(text, offset);
    let len = text[start..].chars().next().map_or(0, char::len_utf8);
    start..start + len
}

/// Whether the syntax error at `offset` is a trailing comma.
fn trailing_comma(text: &str, offset: usize) -> bool {
    let offset = point(text, offset).start;
    let before = text[..offset].trim_end();
    let after = text[offset..].trim_start();
    (before.ends_with(',') && after.starts_with(['}', ']']))
        || (after.starts_with(',') && after[1..].trim_start().starts_with(['}', ']']))
}

pub(crate) fn check(
    schema: &SchemaInfo,
    input: &SettingsInput,
    files: &mut IndexMap<FilePath, FileDiagnostics>,
) {
    if let Some(json) = &input.ignored_json {
        if let Some(d) = file(files, json).report(Code::SettingsJsonIgnored, None) {
            d.message("this settings file is ignored")
                .note(format!(
                    "`{}` exists beside it and is read instead",
                    input.path
                ))
                .help("move what you need into the `.jsonc` file and delete this one");
        }
    }
    if let Some(Escape::OutsideProject { real, .. } | Escape::SpecialFile { real }) = &input.escape
    {
        if let Some(d) = file(files, &input.path).report(Code::LinkOutsideProject, None) {
            d.message(format!(
                "the project settings file resolves to `{}`, outside the project",
                excerpt(&real.display().to_string(), 200)
            ))
            .note("its settings change every rule and agent prompt of the project")
            .help("commit the file itself, or put personal settings in ~/.pi");
        }
    }
    let text = input.text.as_str();
    let out = file(files, &input.path);
    check_hidden(text, out);
    if let Some(problem) = input.file.problem() {
        let (span, message) = match problem {
            FileProblem::Syntax(error) => (
                Some(point(text, error.offset)),
                format!("settings file is not valid JSONC: {}", error.message),
            ),
            FileProblem::NotAnObject { .. } => {
                let start = text.len() - text.trim_start().len();
                (
                    Some(point(text, start)),
                    format!("settings file is ignored: {problem}"),
                )
            }
            FileProblem::Unreadable { message } => {
                (None, format!("cannot read the settings file: {message}"))
            }
        };
        let comma = matches!(problem, FileProblem::Syntax(e) if trailing_comma(text, e.offset));
        if matches!(problem, FileProblem::Unreadable { .. }) {
            if let Some(d) = out.report(Code::SettingsUnreadable, span) {
                d.message(message)
                    .note(
                        "the whole file is ignored: its settings come from the other file, the \
                         environment or the defaults",
                    )
                    .help("make it a readable file of at most 1 MiB, or remove it");
            }
        } else if let Some(d) = out.report(Code::SettingsParseError, span) {
            d.message(message)
                .label("reading stops here")
                .note(
                    "the whole file is ignored: its settings come from the other file, the \
                       environment or the defaults",
                )
                .help(if comma {
                    "remove the trailing comma: JSONC allows comments, not trailing commas"
                } else {
                    "fix the syntax; settings files are JSON with `//` and `/* */` comments"
                });
        }
        return;
    }
    for rejected in input.file.rejected() {
        let span = rejected.offset.and_then(|o| string_span(text, o));
        if let Some(d) = out.report(Code::SettingsInvalidValue, span) {
            d.message(format!(
                "the value of `{}` is ignored: {}",
                rejected.key, rejected.reason
            ))
            .label("this key's value fails its check")
            .note("a lower source supplies the key instead: the global file, the environment or the default");
        }
    }
    for unknown in input.file.unknown_keys() {
        let span = string_span(text, unknown.offset);
        if let Some(d) = out.report(Code::SettingsUnknownKey, span) {
            d.message(format!(
                "unknown settings key `{}` is ignored",
                excerpt(&unknown.key, 60)
            ))
            .label("not in the settings schema")
            .maybe_help(
                suggest::closest(&unknown.key, schema.names())
                    .map(|s| format!("did you mean `{s}`?")),
            );
        }
    }
    for duplicate in input.file.duplicate_keys() {
        let span = string_span(text, duplicate.offset);
        if let Some(d) = out.report(Code::SettingsDuplicateKey, span) {
            d.message(format!(
                "`{}` appears more than once; only the last value counts",
                excerpt(&duplicate.key, 60)
            ))
            .label("repeated here")
            .help("keep one entry per key");
        }
    }
}

/// Reports hidden text in the strings and comments of a settings file, each finding at the
/// characters themselves. Strings are decoded: `"\u202e"` holds U+202E, which `render` copies
/// into a prompt as the character, so it is reported at the escape. A string is named by the
/// top-level key it belongs to.
///
/// This is a lexical pass (strings, comments, brackets), so it also runs on a file that does not
/// parse. A string runs to its closing quote, or to the end of the line when there is none.
pub(crate) fn check_hidden(text: &str, out: &mut FileDiagnostics) {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    // The top-level key whose value is being read, as written between its quotes.
    let mut key: Option<Range<usize>> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let (inner, end) = string_contents(bytes, i);
                let is_key = next_significant(bytes, end) == Some(b':');
                if is_key && depth == 1 {
                    key = Some(inner.clone());
                }
                let place = match (&key, is_key) {
                    (_, true) => Place::Key,
                    (Some(k), false) if depth >= 1 => Place::Value(&text[k.clone()]),
                    _ => Place::SettingsText,
                };
                let units = StringUnits {
                    text,
                    pos: inner.start,
                    end: inner.end,
                };
                text::scan(units, None, |run| text::report(run, place, out));
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = find::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |at| i + at);
                text::scan_text(&text[i..end], i, None, |run| {
                    text::report(run, Place::SettingsText, out)
                });
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end =
                    find::find(&bytes[i + 2..], b"*/").map_or(bytes.len(), |at| i + 2 + at + 2);
                text::scan_text(&text[i..end], i, None, |run| {
                    text::report(run, Place::SettingsText, out)
                });
                i = end;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    key = None;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// The contents of the string whose opening quote is at `start`, and where the string ends: just
/// after the closing quote, or at the line break or end of text that cuts it off.
fn string_contents(bytes: &[u8], start: usize) -> (Range<usize>, usize) {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return (start + 1..i, i + 1),
            b'\n' => return (start + 1..i, i),
            _ => i += 1,
        }
    }
    let end = i.min(bytes.len());
    (start + 1..end, end)
}

/// The first byte at or after `from` that is not whitespace or inside a comment.
fn next_significant(bytes: &[u8], mut from: usize) -> Option<u8> {
    loop {
        match bytes.get(from..)? {
            [b' ' | b'\t' | b'\n' | b'\r', ..] => from += 1,
            [b'/', b'/', ..] => {
                from = find::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |at| from + at)
            }
            [b'/', b'*', ..] => {
                from = find::find(&bytes[from + 2..], b"*/")
                    .map_or(bytes.len(), |at| from + 2 + at + 2)
            }
            [b, ..] => return Some(*b),
            [] => return None,
        }
    }
}

/// The characters of a JSON string's contents, escapes decoded, each with the span it is written
/// in. A lone surrogate escape reads as U+FFFD, as the parser reads it; a malformed escape is
/// taken as the backslash.
struct StringUnits<'t> {
    text: &'t str,
    pos: usize,
    end: usize,
}

impl StringUnits<'_> {
    /// The code unit of a `\uXXXX` escape at `at`.
    fn code_unit(&self, at: usize) -> Option<u32> {
        let digits = self.text.get(at + 2..at + 6)?;
        if at + 6 > self.end || !self.text[at..].starts_with("\\u") {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    }
}

impl Iterator for StringUnits<'_> {
    type Item = Unit;

    fn next(&mut self) -> Option<Unit> {
        if self.pos >= self.end {
            return None;
        }
        let at = self.pos;
        let c = self.text[at..].chars().next()?;
        if c != '\\' {
            self.pos += c.len_utf8();
            return Some(Unit {
                c,
                span: at..self.pos,
                escaped: false,
            });
        }
        let simple = match self.text.as_bytes().get(at + 1) {
            Some(b'"') => Some('"'),
            Some(b'\\') => Some('\\'),
            Some(b'/') => Some('/'),
            Some(b'b') => Some('\u{8}'),
            Some(b'f') => Some('\u{c}'),
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b't') => Some('\t'),
            _ => None,
        };
        if let Some(c) = simple.filter(|_| at + 2 <= self.end) {
            self.pos = at + 2;
            return Some(Unit {
                c,
                span: at..self.pos,
                escaped: true,
            });
        }
        let Some(unit) = self.code_unit(at) else {
            self.pos = at + 1;
            return Some(Unit {
                c,
                span: at..self.pos,
                escaped: false,
            });
        };
        let (c, len) = match unit {
            0xD800..=0xDBFF => match self.code_unit(at + 6) {
                Some(low @ 0xDC00..=0xDFFF) => {
                    let joined = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    (char::from_u32(joined).unwrap_or('\u{fffd}'), 12)
                }
                _ => ('\u{fffd}', 6),
            },
            unit => (char::from_u32(unit).unwrap_or('\u{fffd}'), 6),
        };
        self.pos = at + len;
        Some(Unit {
            c,
            span: at..self.pos,
            escaped: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::testing::schema;
    use crate::settings::{Schema, SettingsFile};

    fn check_text(text: &str) -> Vec<(Code, String, Option<String>)> {
        let input = SettingsInput {
            file_id: None,
            path: "s.jsonc".to_owned(),
            text: text.to_owned(),
            file: SettingsFile::parse(Schema::embedded(), text),
            ignored_json: None,
            escape: None,
        };
        let mut files = IndexMap::new();
        check(&schema(), &input, &mut files);
        files
            .into_values()
            .flat_map(|f| f.finish(None))
            .map(|d| {
                let shown = d.span.map(|s| text[s].to_owned()).unwrap_or_default();
                (d.code, shown, d.help.map(String::from))
            })
            .collect()
    }

    #[test]
    fn settings_table() {
        use Code::*;
        let cases: &[(&str, &[(Code, &str)])] = &[
            ("{}", &[]),
            ("{\"dco\": true, // c\n \"pidash_port\": 80}", &[]),
            ("{\"dco\": true,}", &[(SettingsParseError, ",")]),
            ("[1]", &[(SettingsParseError, "[")]),
            (
                "{\"pidash_port\": 0}",
                &[(SettingsInvalidValue, "\"pidash_port\"")],
            ),
            ("{\"dcoo\": true}", &[(SettingsUnknownKey, "\"dcoo\"")]),
            (
                "{\"dco\": true, \"dco\": false}",
                &[(SettingsDuplicateKey, "\"dco\"")],
            ),
        ];
        for (text, expected) in cases {
            let got: Vec<(Code, String)> = check_text(text)
                .into_iter()
                .map(|(c, s, _)| (c, s))
                .collect();
            let expected: Vec<(Code, String)> = expected
                .iter()
                .map(|(c, s)| (*c, (*s).to_owned()))
                .collect();
            assert_eq!(got, expected, "{text:?}");
        }
        let helps = check_text("{\"dco\": true,}");
        assert!(helps[0]
            .2
            .as_deref()
            .is_some_and(|h| h.contains("trailing comma")));
        let helps = check_text("{\"use_worktree\": true}");
        assert_eq!(helps[0].2.as_deref(), Some("did you mean `use_worktrees`?"));
    }

    /// `(code, the file text its span covers, its notes)` for the hidden-text findings.
    fn hidden(text: &str) -> Vec<(Code, String, Vec<String>)> {
        let mut out = FileDiagnostics::new("s.jsonc");
        check_hidden(text, &mut out);
        out.finish(None)
            .into_iter()
            .map(|d| {
                let shown = d.span.map(|s| text[s].to_owned()).unwrap_or_default();
                (
                    d.code,
                    shown,
                    d.notes.into_iter().map(String::from).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn hidden_text_in_strings_and_comments() {
        use Code::*;
        let value = |key: &str| format!("in the value of `{key}`");
        let escape = "written as a JSON escape";
        // (text, [(code, span text, a note it must have)])
        type Expected<'a> = Vec<(Code, &'a str, String)>;
        let cases: Vec<(&str, Expected<'_>)> = vec![
            (
                "{\"commit_trailer\": \"Assisted-by\u{202e}x\"}",
                vec![(BidiControl, "\u{202e}", value("commit_trailer"))],
            ),
            (
                r#"{"commit_trailer": "a\u202Eb"}"#,
                vec![(BidiControl, r"\u202E", escape.to_owned())],
            ),
            (
                r#"{"image_model": "m\udb40\udc41\udb40\udc42"}"#,
                vec![(TagCharacter, r"\udb40\udc41\udb40\udc42", value("image_model"))],
            ),
            (
                r#"{"image_model": "x\u001b[31mred"}"#,
                vec![(ControlCharacter, r"\u001b[31m", value("image_model"))],
            ),
            (
                r#"{"image_model": "a\rb"}"#,
                vec![(BareCarriageReturn, r"\r", value("image_model"))],
            ),
            (
                "{\"dco\u{200b}\": true}",
                vec![(InvisibleCharacter, "\u{200b}", "in a key".to_owned())],
            ),
            (
                "{\"agent_overrides\": {\"w\": {\"model\": \"m\u{ad}n\"}}, \"dco\": true}",
                vec![(InvisibleFormatCharacter, "\u{ad}", value("agent_overrides"))],
            ),
            (
                "{\"cli_agents\": [\"a\", \"b\u{fe00}\"]}",
                vec![(VariationSelector, "\u{fe00}", value("cli_agents"))],
            ),
            (
                "// set by \u{202e}ops\n{\"dco\": true /* \u{2066} */}",
                vec![
                    (BidiControl, "\u{202e}", "in the settings file".to_owned()),
                    (BidiControl, "\u{2066}", "in the settings file".to_owned()),
                ],
            ),
            // Ordinary text, and escapes of ordinary characters.
            (
                "{\"commit_trailer\": \"Co-authored \u{2764}\u{fe0f} 漢字 \\n\\t\\r\\n \\\"q\\\" \\\\\"}",
                vec![],
            ),
            (r#"{"commit_trailer": "\ud83d\ude00 \u00e9 \ud800"}"#, vec![]),
            // Broken files are scanned too, without panicking.
            ("{\"image_model\": \"a\u{200b}", vec![(InvisibleCharacter, "\u{200b}", value("image_model"))]),
            ("{\"a\": \"\\", vec![]),
            ("{\"a\": \"\\u12", vec![]),
            ("\"\u{e000}\\", vec![(PrivateUseCharacter, "\u{e000}", String::new())]),
        ];
        for (text, expected) in cases {
            let got = hidden(text);
            assert_eq!(got.len(), expected.len(), "{text:?}: {got:?}");
            for ((code, span, notes), (want_code, want_span, want_note)) in
                got.iter().zip(&expected)
            {
                assert_eq!((code, span.as_str()), (want_code, *want_span), "{text:?}");
                assert!(
                    notes.iter().any(|n| n.contains(want_note.as_str())),
                    "{text:?}: {notes:?}"
                );
            }
        }
    }

    #[test]
    fn hidden_text_is_reported_through_check() {
        let text = r#"{"commit_trailer": "ok\u202e"}"#;
        let got = check_text(text);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            (got[0].0, got[0].1.as_str()),
            (Code::BidiControl, r"\u202e")
        );
    }
}
