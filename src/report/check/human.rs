//! `--format human`: each finding as a heading, its location, the source lines it points at with
//! carets under the span, then notes and help, in the style of rustc and codespan:
//!
//! ```text
//! error[PR101]: unknown settings key `dcoo` in a condition
//!  --> .pi/rules/90-x.md:3:6
//!   |
//! 3 | {{IF:dcoo}}
//!   |      ^^^^ not a settings key or a feature
//!   |
//!   = help: did you mean `dco`?
//! ```
//!
//! Controls, bidirectional and hidden characters in a snippet are written as the escaper writes
//! them (`\x1b`, `\u{202e}`), a run of tag characters as `<N tag characters>`, tabs as four
//! spaces, and very long lines are cut around the span, so that the output is safe to print and
//! bounded. Carets are placed by display width (a CJK character or an emoji takes two columns of
//! a terminal), as codespan-reporting does.

use super::{counts, Positions, Style};
use crate::terminal::{escape_hidden, is_unsafe_or_hidden, write_char_escaped};
use pi_rules_core::lint::{Diagnostic, Report};
use pi_rules_core::span::floor_boundary;
use std::io::{self, Write};
use std::ops::Range;
use unicode_width::UnicodeWidthStr;

/// Lines longer than this (in bytes) are cut around the span.
const MAX_LINE_BYTES: usize = 240;

pub(super) fn render(
    report: &Report,
    positions: &Positions<'_>,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let style = Style { on: color };
    // Each finding is put together in one buffer and written whole: through `dyn Write`, each
    // piece would be a call of its own.
    let mut text = String::new();
    for d in &report.diagnostics {
        text.clear();
        diagnostic(d, positions, style, &mut text);
        text.push('\n');
        out.write_all(text.as_bytes())?;
    }
    let (errors, warnings, infos) = counts(report);
    let files = plural(report.files, "file");
    if errors + warnings + infos == 0 {
        writeln!(
            out,
            "{}",
            style.bold(&format!("no problems found in {files}"))
        )
    } else {
        let text = format!(
            "{}, {}, {} in {files}",
            plural(errors, "error"),
            plural(warnings, "warning"),
            plural(infos, "info")
        );
        writeln!(out, "{}", style.bold(&text))
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// One underline: where on its line, primary or not, and its text.
struct Mark<'d> {
    columns: Range<usize>,
    primary: bool,
    text: &'d str,
}

/// `n` spaces.
fn spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// `n` in decimal, right-aligned in `width` columns.
fn number(out: &mut String, n: usize, width: usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n);
    spaces(out, width.saturating_sub(digits.len()));
    out.push_str(digits);
}

/// Appends finding `d`, each line ending with a line break.
fn diagnostic(d: &Diagnostic, positions: &Positions<'_>, style: Style, out: &mut String) {
    let severity = style.severity_code(d.severity);
    // `error[PR202]`
    if style.on {
        out.push_str("\x1b[");
        out.push_str(severity);
        out.push('m');
    }
    out.push_str(d.severity.as_str());
    out.push('[');
    out.push_str(d.code.id());
    out.push(']');
    if style.on {
        out.push_str("\x1b[0m");
    }
    style.push(out, "1", ":");
    out.push(' ');
    style.push(out, "1", &escape_hidden(&d.message));
    out.push('\n');
    let kept = d.span.as_ref().and_then(|_| positions.lines(&d.path));
    let (Some(kept), Some(span)) = (kept, &d.span) else {
        out.push(' ');
        style.push(out, GUTTER, "-->");
        out.push(' ');
        out.push_str(&escape_hidden(&d.path));
        out.push('\n');
        return trailer(d, 2, style, out);
    };
    let p = Positions::within(Some(kept), d);

    // Lines to show: the primary span's first line and each label's first line.
    let mut spans: Vec<(Range<usize>, bool, &str)> = vec![(span.clone(), true, &*d.label)];
    spans.extend(
        d.labels
            .iter()
            .map(|l| (l.span.clone(), false, &*l.message)),
    );
    let mut lines: Vec<(usize, String, Vec<Mark<'_>>)> = Vec::new();
    for (span, primary, text) in spans {
        let line = kept.line_col(span.start).line;
        let (start, shown) = kept.line(line).unwrap_or((span.start, ""));
        let (shown, columns) = snippet(start, shown, span);
        let mark = Mark {
            columns,
            primary,
            text,
        };
        match lines.iter_mut().find(|(l, _, _)| *l == line) {
            Some((_, _, marks)) => marks.push(mark),
            None => lines.push((line, shown, vec![mark])),
        }
    }
    lines.sort_by_key(|(l, _, _)| *l);
    let width = lines
        .last()
        .map_or(1, |(l, _, _)| itoa::Buffer::new().format(*l).len());

    // ` --> path:line:column`
    spaces(out, width);
    style.push(out, GUTTER, "-->");
    out.push(' ');
    out.push_str(&escape_hidden(&d.path));
    out.push(':');
    number(out, p.line, 0);
    out.push(':');
    number(out, p.column, 0);
    out.push('\n');
    gutter_line(out, width, style);
    let mut previous: Option<usize> = None;
    for (line, shown, marks) in &lines {
        if previous.is_some_and(|prev| line - prev > 1) {
            style.push(out, GUTTER, "...");
            out.push('\n');
        }
        previous = Some(*line);
        if style.on {
            out.push_str("\x1b[");
            out.push_str(GUTTER);
            out.push('m');
        }
        number(out, *line, width);
        out.push_str(" |");
        if style.on {
            out.push_str("\x1b[0m");
        }
        out.push(' ');
        out.push_str(shown);
        out.push('\n');
        for mark in marks {
            spaces(out, width);
            out.push(' ');
            style.push(out, GUTTER, "|");
            out.push(' ');
            spaces(out, mark.columns.start);
            let code = if mark.primary { severity } else { GUTTER };
            let glyph = if mark.primary { '^' } else { '-' };
            if style.on {
                out.push_str("\x1b[");
                out.push_str(code);
                out.push('m');
            }
            out.extend(std::iter::repeat_n(glyph, mark.columns.len().max(1)));
            if style.on {
                out.push_str("\x1b[0m");
            }
            let label = escape_hidden(mark.text);
            if !label.is_empty() {
                out.push(' ');
                style.push(out, code, &label);
            }
            out.push('\n');
        }
    }
    if !d.notes.is_empty() || d.help.is_some() || d.fix.is_some() {
        gutter_line(out, width, style);
    }
    trailer(d, width + 1, style, out)
}

/// The gutter colour.
const GUTTER: &str = "1;34";

/// `{pad} |`: an empty line of the gutter.
fn gutter_line(out: &mut String, width: usize, style: Style) {
    spaces(out, width + 1);
    style.push(out, GUTTER, "|");
    out.push('\n');
}

/// The `= note:` and `= help:` lines.
fn trailer(d: &Diagnostic, indent: usize, style: Style, out: &mut String) {
    let line = |out: &mut String, what: &str, text: &str| {
        spaces(out, indent);
        style.push(out, "1", what);
        out.push(' ');
        out.push_str(&escape_hidden(text));
    };
    for note in &d.notes {
        line(out, "= note:", note);
        out.push('\n');
    }
    if let Some(help) = &d.help {
        line(out, "= help:", help);
        out.push('\n');
    }
    if let Some(fix) = &d.fix {
        line(out, "= fix:", &fix.description);
        out.push_str(" (`pi-rules check --fix` does this)\n");
    }
}

fn is_tag(c: char) -> bool {
    matches!(c, '\u{e0000}'..='\u{e007f}')
}

/// How a character of a snippet is shown.
fn shown_char(c: char, out: &mut String) {
    match c {
        '\t' => out.push_str("    "),
        c if is_unsafe_or_hidden(c) => {
            let _ = write_char_escaped(out, c);
        }
        c => out.push(c),
    }
}

/// A line as shown, from its `text` (without its line break) starting at byte `start` of the
/// file, and the display columns (0-based, in terminal cells) that `span` (in the file) covers on
/// it.
fn snippet(start: usize, text: &str, span: Range<usize>) -> (String, Range<usize>) {
    let floor = |i: usize| floor_boundary(text, i);
    let span_start = floor(span.start.saturating_sub(start));
    let span_end = floor(span.end.saturating_sub(start).max(span_start));
    let (mut from, mut to) = (0, text.len());
    if to > MAX_LINE_BYTES {
        from = floor(span_start.saturating_sub(MAX_LINE_BYTES / 3));
        to = floor(from + MAX_LINE_BYTES);
    }
    let mut shown = String::new();
    let mut cols = 0;
    if from > 0 {
        shown.push('…');
        cols += 1;
    }
    let mut columns = 0..0;
    // A run of tag characters shows as one `<N tag characters>`; `skip_to` ends the run.
    let mut skip_to = from;
    for (offset, c) in text[from..to].char_indices() {
        let at = from + offset;
        if at == span_start {
            columns.start = cols;
        }
        if at == span_end {
            columns.end = cols;
        }
        if at < skip_to {
            continue;
        }
        let before = shown.len();
        if is_tag(c) {
            let run: Vec<char> = text[at..to].chars().take_while(|&c| is_tag(c)).collect();
            skip_to = at + run.iter().map(|c| c.len_utf8()).sum::<usize>();
            if run.len() > 1 {
                shown.push_str(&format!("<{} tag characters>", run.len()));
            } else {
                shown_char(c, &mut shown);
            }
        } else {
            shown_char(c, &mut shown);
        }
        cols += shown[before..].width();
    }
    if span_start >= to {
        columns.start = cols;
    }
    if span_end >= to {
        columns.end = cols;
    }
    if to < text.len() {
        shown.push('…');
    }
    columns.end = columns.end.max(columns.start);
    (shown, columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_table() {
        // (text, span, expected line, expected columns)
        let cases = [
            ("{{IF:dcoo}}", 5..9, "{{IF:dcoo}}", 5..9),
            ("a\n\tb\u{202e}c\n", 4..7, "    b\\u{202e}c", 5..13),
            ("\u{1b}[2J\u{200b}x", 0..7, "\\x1b[2J\\u{200b}x", 0..15),
            ("x\r\n", 0..3, "x", 0..1),
            ("é{{/IF}}", 2..9, "é{{/IF}}", 1..8),
            ("a\u{e0041}\u{e0042}b", 1..9, "a<2 tag characters>b", 1..19),
            // Wide characters take two cells each.
            ("漢字{{/IF}}", 6..13, "漢字{{/IF}}", 4..11),
            ("🦀 {{IF:x}}", 5..13, "🦀 {{IF:x}}", 3..11),
            ("e\u{301}{{/IF}}", 3..10, "e\u{301}{{/IF}}", 1..8),
        ];
        for (text, span, line, columns) in cases {
            let range = pi_rules_core::span::line_span(text, span.start);
            assert_eq!(
                snippet(range.start, &text[range], span.clone()),
                (line.to_owned(), columns),
                "{text:?}"
            );
        }
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        let text = format!("{}{{{{/IF}}}}{}", "a".repeat(100_000), "b".repeat(100_000));
        let (shown, columns) = snippet(0, &text, 100_000..100_007);
        assert!(shown.chars().count() < MAX_LINE_BYTES + 4);
        let picked: String = shown
            .chars()
            .skip(columns.start)
            .take(columns.len())
            .collect();
        assert_eq!(picked, "{{/IF}}");
    }
}
