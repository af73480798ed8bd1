//! Table repair: removing blank lines between markdown table rows.
//!
//! The reference runs `text.replace(/(\|[^\n]*)\n(?:[ \t]*\n)+(?=\|)/g, "$1\n")`: a run of blank
//! lines (spaces and tabs only; a `\r` makes a line non-blank) goes when the line before it holds
//! a `|` and the line after it starts with `|`. That is what dropping a conditional table row
//! leaves behind. This is the same rewrite done line by line, in linear time (the regex itself
//! rescans long lines once per `|`).

use std::borrow::Cow;
use std::ops::Range;

/// Appends `text` with its table gaps closed to `out`.
pub fn repair_into(text: &str, out: &mut String) {
    let copied = for_each_gap(text, |copied, gap| {
        out.push_str(&text[copied..gap.start]);
    });
    out.push_str(&text[copied..]);
}

/// Repairs `text`, borrowing it when there is nothing to repair.
pub fn repair(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let copied = for_each_gap(text, |copied, gap| {
        if out.is_empty() {
            out.reserve(text.len());
        }
        out.push_str(&text[copied..gap.start]);
    });
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Repairs `joined`: texts that were each repaired already, joined with `"\n\n"` separators
/// starting at the offsets `separators` (ascending). Gives the same text as [`repair`], looking
/// only at the blank lines around each separator: a repaired text has no gap left inside it, so
/// the only gaps the join can create are runs of blank lines that cross a separator.
pub fn repair_joined<'t>(joined: &'t str, separators: &[usize]) -> Cow<'t, str> {
    let bytes = joined.as_bytes();
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\n');
    let mut gaps: Vec<Range<usize>> = Vec::new();
    // End of the blank stretch looked at for the previous separator: a separator inside it
    // (after a text that was all blank lines) belongs to the same run.
    let mut covered = 0;
    for &sep in separators {
        if sep < covered || sep >= bytes.len() {
            continue;
        }
        let next = sep + bytes[sep..].iter().take_while(|&&b| blank(b)).count();
        covered = next;
        // The line after the run must start with `|` (at `next`, so nothing blank before it).
        if bytes.get(next) != Some(&b'|') || bytes[next - 1] != b'\n' {
            continue;
        }
        // The line before the run: the one holding the last non-blank byte before `sep`.
        let last = sep - bytes[..sep].iter().rev().take_while(|&&b| blank(b)).count();
        if last == 0 {
            continue;
        }
        let Some(newline) = memchr::memchr(b'\n', &bytes[last..]).map(|off| last + off) else {
            continue;
        };
        let line_start = memchr::memrchr(b'\n', &bytes[..last]).map_or(0, |i| i + 1);
        if memchr::memchr(b'|', &bytes[line_start..newline]).is_some() {
            gaps.push(newline + 1..next);
        }
    }
    if gaps.is_empty() {
        return Cow::Borrowed(joined);
    }
    let mut out = String::with_capacity(joined.len());
    let mut copied = 0;
    for gap in gaps {
        out.push_str(&joined[copied..gap.start]);
        copied = gap.end;
    }
    out.push_str(&joined[copied..]);
    Cow::Owned(out)
}

/// Calls `gap(copied, range)` for each run of blank lines to remove, in order, where `copied` is
/// the end of the previous run (0 at first); returns the end of the last run (0 for none).
///
/// Only lines holding a `|` can start a gap, so the scan jumps from `|` to `|` and looks at the
/// end of each such line once.
fn for_each_gap(text: &str, mut gap: impl FnMut(usize, Range<usize>)) -> usize {
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut pos = 0;
    while let Some(pipe) = next_pipe(bytes, pos) {
        // Table lines are short: a plain loop beats a vectorised search's set-up here.
        let Some(nl) = bytes[pipe..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let run_start = pipe + nl + 1;
        let run_end = blank_run_end(bytes, run_start);
        if run_end > run_start && bytes.get(run_end) == Some(&b'|') {
            gap(copied, run_start..run_end);
            copied = run_end;
            pos = run_end;
        } else {
            pos = run_start;
        }
    }
    copied
}

/// The next `|` at or after `pos`; a table row starts with one, so look there first.
fn next_pipe(bytes: &[u8], pos: usize) -> Option<usize> {
    match bytes.get(pos) {
        Some(b'|') => Some(pos),
        Some(_) => memchr::memchr(b'|', &bytes[pos..]).map(|off| pos + off),
        None => None,
    }
}

/// The end of the run of blank lines (`[ \t]*\n`) starting at `start`: the start of the first line
/// that is not blank, or `start` when there is no blank line there.
fn blank_run_end(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' => i += 1,
            b'\n' => {
                i += 1;
                end = i;
            }
            _ => break,
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Repairs each text, joins them with separators, and returns the joined text and the
    /// separators' offsets.
    fn join_repaired(texts: &[String]) -> (String, Vec<usize>) {
        let mut joined = String::new();
        let mut separators = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            if i > 0 {
                separators.push(joined.len());
                joined.push_str("\n\n");
            }
            repair_into(text, &mut joined);
        }
        (joined, separators)
    }

    proptest! {
        #[test]
        fn repairing_around_separators_equals_repairing_everything(
            texts in prop::collection::vec("[| \t\n\rx]{0,12}", 0..6)
        ) {
            let (joined, separators) = join_repaired(&texts);
            prop_assert_eq!(repair_joined(&joined, &separators), repair(&joined));
        }

        #[test]
        fn repair_is_idempotent(text in "[| \t\n\rx]{0,40}") {
            let once = repair(&text).into_owned();
            prop_assert_eq!(repair(&once), once.as_str());
        }
    }

    #[test]
    fn repair_joined_table() {
        let cases: &[(&[&str], &str)] = &[
            (&["| a |", "| b |"], "| a |\n| b |"),
            (&["| a |\n  ", "\n| b |"], "| a |\n| b |"),
            (&["| a |", "", "\n", "| b |"], "| a |\n| b |"),
            (&["| a |", " | b |"], "| a |\n\n | b |"),
            (&["| a |\r", "| b |"], "| a |\r\n| b |"),
            (&["x", "| b |"], "x\n\n| b |"),
            (&["", "| b |"], "\n\n| b |"),
        ];
        for (texts, expected) in cases {
            let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
            let (joined, separators) = join_repaired(&texts);
            assert_eq!(repair_joined(&joined, &separators), *expected, "{texts:?}");
        }
    }

    #[test]
    fn repair_table() {
        let cases = [
            ("| a |\n\n| b |", "| a |\n| b |"),
            ("| a |\n \t\n\n| b |", "| a |\n| b |"),
            ("| a |\n\n| b |\n\n\n| c |", "| a |\n| b |\n| c |"),
            ("x | y\n\n|z", "x | y\n|z"),
            ("| a |\n\n b |", "| a |\n\n b |"),
            ("| a |\n\r\n| b |", "| a |\n\r\n| b |"),
            ("| a |\r\n\n| b |", "| a |\r\n| b |"),
            ("a\n\n| b |", "a\n\n| b |"),
            ("| a |\n\n", "| a |\n\n"),
            ("| a |\n| b |", "| a |\n| b |"),
            ("||||\n\n\n", "||||\n\n\n"),
            ("| a |\n  \n  | b |", "| a |\n  \n  | b |"),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(repair(input), expected, "{input:?}");
        }
    }
}
