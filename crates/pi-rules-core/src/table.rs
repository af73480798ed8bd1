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
