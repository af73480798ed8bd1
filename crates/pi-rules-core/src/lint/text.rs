//! Checks on the raw text: invalid UTF-8, hidden and bidirectional Unicode controls, tag
//! characters, and blank lines holding `\r` between table rows (which table repair keeps).

use super::codes::Code;
use super::diagnostic::{excerpt, FileDiagnostics};
use crate::markers::Marker;
use std::borrow::Cow;
use std::ops::Range;

/// Decodes `bytes` the way the loader does (invalid sequences become U+FFFD, a BOM is kept) and
/// reports each invalid sequence with its byte offset in the file.
pub(crate) fn decode<'b>(bytes: &'b [u8], out: &mut FileDiagnostics) -> Cow<'b, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut raw = 0;
    let mut decoded = 0;
    for chunk in bytes.utf8_chunks() {
        raw += chunk.valid().len();
        decoded += chunk.valid().len();
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        let span = decoded..decoded + '\u{fffd}'.len_utf8();
        if let Some(d) = out.report(Code::InvalidUtf8, Some(span)) {
            let shown: Vec<String> = invalid.iter().map(|b| format!("\\x{b:02X}")).collect();
            d.message(format!(
                "invalid UTF-8 at byte {raw}: `{}` is read as U+FFFD",
                shown.join("")
            ))
            .label("the model sees `\u{fffd}` here")
            .help("re-save the file as UTF-8");
        }
        raw += invalid.len();
        decoded += '\u{fffd}'.len_utf8();
    }
    String::from_utf8_lossy(bytes)
}

/// The kind of a character that should not be in a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hidden {
    Bidi,
    Invisible,
    Tag,
}

fn hidden(c: char, at: usize) -> Option<Hidden> {
    match c {
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => Some(Hidden::Bidi),
        '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{061c}' => Some(Hidden::Invisible),
        '\u{feff}' if at > 0 => Some(Hidden::Invisible),
        '\u{e0000}'..='\u{e007f}' => Some(Hidden::Tag),
        _ => None,
    }
}

/// The Unicode name of a hidden character, for messages.
fn char_name(c: char) -> &'static str {
    match c {
        '\u{061c}' => "ARABIC LETTER MARK",
        '\u{200b}' => "ZERO WIDTH SPACE",
        '\u{200c}' => "ZERO WIDTH NON-JOINER",
        '\u{200d}' => "ZERO WIDTH JOINER",
        '\u{200e}' => "LEFT-TO-RIGHT MARK",
        '\u{200f}' => "RIGHT-TO-LEFT MARK",
        '\u{202a}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202b}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202c}' => "POP DIRECTIONAL FORMATTING",
        '\u{202d}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202e}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2060}' => "WORD JOINER",
        '\u{2061}' => "FUNCTION APPLICATION",
        '\u{2062}' => "INVISIBLE TIMES",
        '\u{2063}' => "INVISIBLE SEPARATOR",
        '\u{2064}' => "INVISIBLE PLUS",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        '\u{feff}' => "ZERO WIDTH NO-BREAK SPACE (BOM)",
        _ => "TAG",
    }
}

/// Reports runs of hidden characters: one finding per run of the same kind.
pub(crate) fn check_hidden(text: &str, out: &mut FileDiagnostics) {
    // Every hidden character is outside ASCII; skip ASCII-only text at once.
    if text.is_ascii() {
        return;
    }
    let mut run: Option<(Hidden, Range<usize>)> = None;
    for (at, c) in text.char_indices() {
        let kind = if c.is_ascii() { None } else { hidden(c, at) };
        match (&mut run, kind) {
            (Some((k, range)), Some(kind)) if *k == kind && range.end == at => {
                range.end = at + c.len_utf8();
            }
            (_, kind) => {
                if let Some((k, range)) = run.take() {
                    report_hidden(text, k, range, out);
                }
                run = kind.map(|k| (k, at..at + c.len_utf8()));
            }
        }
    }
    if let Some((k, range)) = run {
        report_hidden(text, k, range, out);
    }
}

fn report_hidden(text: &str, kind: Hidden, range: Range<usize>, out: &mut FileDiagnostics) {
    let code = match kind {
        Hidden::Bidi => Code::BidiControl,
        Hidden::Invisible => Code::InvisibleCharacter,
        Hidden::Tag => Code::TagCharacter,
    };
    let Some(d) = out.report(code, Some(range.clone())) else {
        return;
    };
    let run = &text[range];
    let count = run.chars().count();
    let first = run.chars().next().unwrap_or('\u{fffd}');
    let named = format!("U+{:04X} {}", u32::from(first), char_name(first));
    let what = if count == 1 {
        named
    } else {
        format!("{count} characters starting with {named}")
    };
    match kind {
        Hidden::Bidi => {
            d.message(format!("bidirectional control character: {what}"))
                .label("reorders how the text displays")
                .note("a reader can see different text than the model reads")
                .help("delete it, and review where this text came from");
        }
        Hidden::Invisible => {
            d.message(format!("invisible character: {what}"))
                .label("not shown by editors, read by the model")
                .help("delete it");
        }
        Hidden::Tag => {
            let decoded: String = run
                .chars()
                .filter_map(|c| {
                    let ascii = u32::from(c) - 0xE0000;
                    (0x20..0x7f)
                        .contains(&ascii)
                        .then(|| char::from(ascii as u8))
                })
                .collect();
            d.message(format!("Unicode tag characters: {what}"))
                .label("invisible text")
                .help("delete them, and review where this text came from");
            if !decoded.is_empty() {
                d.note(format!("hidden text: \"{}\"", excerpt(&decoded, 80)));
            }
        }
    }
}

/// Reports runs of blank lines that hold `\r`, between a line with `|` and a line starting with
/// `|`. Lines made only of markers and whitespace count as blank: dropping a block leaves them
/// so. `markers` are sorted; only the body (from `body_start`) is looked at.
pub(crate) fn check_table_gaps(
    text: &str,
    body_start: usize,
    markers: &[Marker],
    out: &mut FileDiagnostics,
) {
    let bytes = text.as_bytes();
    if memchr::memchr(b'\r', &bytes[body_start..]).is_none() {
        return;
    }
    let mut m = 0;
    let mut prev_has_pipe = false;
    // The current run of blankish lines after a `|` line: (range, holds a `\r`).
    let mut run: Option<(Range<usize>, bool)> = None;
    let mut start = body_start;
    while start <= bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let line = start..end;
        match blankish(bytes, line.clone(), markers, &mut m) {
            Some(has_cr) if prev_has_pipe || run.is_some() => {
                let r = run.get_or_insert((line.start..line.end, false));
                r.0.end = line.end;
                r.1 |= has_cr;
            }
            _ => {
                if let Some((range, true)) = run.take() {
                    if starts_row(bytes, line.clone(), markers, m) {
                        report_gap(range, out);
                    }
                }
                prev_has_pipe = memchr::memchr(b'|', &bytes[line.clone()]).is_some();
                run = None;
            }
        }
        if end == bytes.len() {
            break;
        }
        start = end + 1;
    }
}

/// `Some(holds \r)` when the line is only spaces, tabs, `\r` and whole markers.
fn blankish(bytes: &[u8], line: Range<usize>, markers: &[Marker], m: &mut usize) -> Option<bool> {
    while *m < markers.len() && markers[*m].span.end <= line.start {
        *m += 1;
    }
    let mut k = *m;
    let mut pos = line.start;
    let mut has_cr = false;
    let gap_ok = |from: usize, to: usize, has_cr: &mut bool| {
        bytes[from..to].iter().all(|&b| {
            *has_cr |= b == b'\r';
            matches!(b, b' ' | b'\t' | b'\r')
        })
    };
    while k < markers.len() && markers[k].span.start < line.end {
        let span = &markers[k].span;
        if span.start < pos || span.end > line.end {
            return None;
        }
        if !gap_ok(pos, span.start, &mut has_cr) {
            return None;
        }
        pos = span.end;
        k += 1;
    }
    gap_ok(pos, line.end, &mut has_cr).then_some(has_cr)
}

/// Whether the line starts with `|` (after markers at its start).
fn starts_row(bytes: &[u8], line: Range<usize>, markers: &[Marker], m: usize) -> bool {
    let mut pos = line.start;
    for marker in markers.iter().skip(m) {
        if marker.span.start != pos {
            break;
        }
        pos = marker.span.end;
    }
    bytes.get(pos) == Some(&b'|')
}

fn report_gap(range: Range<usize>, out: &mut FileDiagnostics) {
    let Some(d) = out.report(Code::CrTableGap, Some(range)) else {
        return;
    };
    d.message("blank line with `\\r` between table rows")
        .label("table repair keeps this line, so the table is split in two")
        .help("use `\\n` line endings, or put the markers on the row lines");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::testing::codes_of;
    use crate::markers;

    fn check(bytes: &[u8]) -> Vec<(Code, Option<String>)> {
        let mut out = FileDiagnostics::new("x.md");
        let text = decode(bytes, &mut out).into_owned();
        let markers = markers::scan(&text);
        check_hidden(&text, &mut out);
        check_table_gaps(&text, 0, &markers, &mut out);
        out.finish(None)
            .into_iter()
            .map(|d| (d.code, Some(d.message)))
            .collect()
    }

    #[test]
    fn text_table() {
        use Code::*;
        let cases: &[(&[u8], &[Code])] = &[
            (b"plain", &[]),
            ("\u{feff}bom at start, é, 👍".as_bytes(), &[]),
            (b"a\xffb\xc3", &[InvalidUtf8, InvalidUtf8]),
            ("x\u{202e}y".as_bytes(), &[BidiControl]),
            ("x\u{2066}\u{2069}y".as_bytes(), &[BidiControl]),
            (
                "x\u{200b}y\u{feff}".as_bytes(),
                &[InvisibleCharacter, InvisibleCharacter],
            ),
            ("x\u{e0041}\u{e0042}".as_bytes(), &[TagCharacter]),
            (b"| a |\n\n| b |", &[]),
            (b"| a |\r\n| b |\r\n", &[]),
            (b"| a |\r\n\r\n| b |\r\n", &[CrTableGap]),
            (
                b"| a |\r\n{{IF:x}}\r\n| b |\r\n{{/IF}}\r\n| c |",
                &[CrTableGap, CrTableGap],
            ),
            (b"| a |\n{{IF:x}}\n| b |\n{{/IF}}\n| c |", &[]),
            (b"| a |\r\n\r\ntext\r\n", &[]),
            (b"text\r\n\r\n| b |\r\n", &[]),
        ];
        for (bytes, expected) in cases {
            let got = check(bytes);
            assert_eq!(codes_of(&got), *expected, "{bytes:?}: {got:?}");
        }
    }

    #[test]
    fn messages_table() {
        let cases: &[(&[u8], &str)] = &[
            (
                b"ab\xff",
                "invalid UTF-8 at byte 2: `\\xFF` is read as U+FFFD",
            ),
            ("\u{202e}".as_bytes(), "U+202E RIGHT-TO-LEFT OVERRIDE"),
            (
                "a\u{e0068}\u{e0069}".as_bytes(),
                "2 characters starting with U+E0068",
            ),
        ];
        for (bytes, expected) in cases {
            let got = check(bytes);
            let message = got[0].1.clone().unwrap_or_default();
            assert!(message.contains(expected), "{message:?}");
        }
    }

    #[test]
    fn invalid_utf8_spans_point_at_the_replacement() {
        let mut out = FileDiagnostics::new("x.md");
        let text = decode(b"a\xff\xfeb", &mut out).into_owned();
        for d in out.finish(None) {
            let span = d.span.unwrap_or_default();
            assert_eq!(&text[span], "\u{fffd}");
        }
    }
}
