//! Table repair: removing blank lines between markdown table rows.
//!
//! The reference runs `text.replace(/(\|[^\n]*)\n(?:[ \t]*\n)+(?=\|)/g, "$1\n")`: a run of blank
//! lines (spaces and tabs only; a `\r` makes a line non-blank) goes when the line before it holds
//! a `|` and the line after it starts with `|`. That is what dropping a conditional table row
//! leaves behind. This is the same rewrite in linear time (the regex itself rescans long lines
//! once per `|`).
//!
//! The `find_*` functions only say where the gaps are, so that the assembler can close them in
//! its own buffer without copying the text once more.

use crate::find;
use std::borrow::Cow;
use std::ops::Range;

/// Appends `text` with its table gaps closed to `out`.
pub fn repair_into(text: &str, out: &mut String) {
    let mut gaps = Vec::new();
    find_gaps(text, 0, &mut gaps);
    copy_without(text, &gaps, out);
}

/// Repairs `text`, borrowing it when there is nothing to repair.
pub fn repair(text: &str) -> Cow<'_, str> {
    let mut gaps = Vec::new();
    find_gaps(text, 0, &mut gaps);
    if gaps.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    copy_without(text, &gaps, &mut out);
    Cow::Owned(out)
}

/// Repairs `joined`: texts that were each repaired already, joined with `"\n\n"` separators
/// starting at the offsets `separators` (ascending). Gives the same text as [`repair`]; see
/// [`find_joined_gaps`].
pub fn repair_joined<'t>(joined: &'t str, separators: &[usize]) -> Cow<'t, str> {
    let mut gaps = Vec::new();
    find_joined_gaps(joined, separators, &mut gaps);
    if gaps.is_empty() {
        return Cow::Borrowed(joined);
    }
    let mut out = String::with_capacity(joined.len());
    copy_without(joined, &gaps, &mut out);
    Cow::Owned(out)
}

/// Appends `text` without the byte ranges `gaps` (ascending, disjoint) to `out`.
fn copy_without(text: &str, gaps: &[Range<usize>], out: &mut String) {
    let mut copied = 0;
    for gap in gaps {
        out.push_str(&text[copied..gap.start]);
        copied = gap.end;
    }
    out.push_str(&text[copied..]);
}

/// Appends to `gaps`, in order, the runs of blank lines that repair removes from `text[from..]`
/// (which is repaired as a text of its own), as offsets into `text`.
///
/// One walk over the lines that hold a `|`: a byte search finds the next `|`, and `table_end`
/// the end of its line or, when rows follow it, of the last of them (one search for both: the
/// first line break from the `|` that no `|` follows); the blank lines after that, if any, are a
/// gap when a row (a line starting with `|`) follows them. The line
/// after the run is where the walk goes on, so each byte is looked at once. (A substring search
/// for the row start `\n|` would stop at every row, and one per kind of blank byte before it
/// would read the text up to three times.)
pub fn find_gaps(text: &str, from: usize, gaps: &mut Vec<Range<usize>>) {
    let Some(region) = text.as_bytes().get(from..) else {
        return;
    };
    let mut line = 0;
    loop {
        // The next line holding a `|`: this one when it starts with one (a row).
        let bar = match region.get(line) {
            Some(b'|') => line,
            Some(_) => match find::memchr(b'|', &region[line..]) {
                Some(at) => line + at,
                None => return,
            },
            None => return,
        };
        // The end of that line, and when rows follow it, of the last of them: the first line
        // break from there that no `|` follows.
        let Some(end) = table_end(region, bar) else {
            return;
        };
        let mut next = end + 1;
        // The blank lines (spaces and tabs only) after it.
        while let Some(blank) = blank_line_end(&region[next..]) {
            next += blank + 1;
        }
        if next > end + 1 && region.get(next) == Some(&b'|') {
            gaps.push(from + end + 1..from + next);
        }
        line = next;
    }
}

/// The line break that ends the table whose row starts at `from`: the first `\n` at or after
/// `from` that no `|` follows (at the end of the text, none does), or `None` when the last line
/// has no line break.
///
/// The rows are not taken one at a time: 32 bytes, and the 32 after them shifted by one, are
/// compared with `\n` and `|` at once, as words, in plain integer arithmetic (which the compiler
/// turns into vector instructions). No step waits for the one before, where a search per row
/// would have to find the end of one row before it could look for the end of the next: on the
/// typical layer, that wait was most of the time of finding the gaps.
fn table_end(bytes: &[u8], from: usize) -> Option<usize> {
    /// The line breaks no `|` follows among the eight bytes at `at` of `chunk`.
    #[inline(always)]
    fn ends(chunk: &[u8; STEP + 1], at: usize) -> u64 {
        let word = |at: usize| {
            let mut word = [0; 8];
            word.copy_from_slice(&chunk[at..at + 8]);
            u64::from_le_bytes(word)
        };
        // Approximate marks are enough. A wrong `|` mark is only ever on a byte that is itself
        // a `|` or a `}`, so it never hides a line break. A wrong line break mark is only ever
        // on a `\u{b}` right after a true line break, which no `|` follows: that one is found
        // first.
        find::word_matches(word(at), b'\n') & !find::word_matches(word(at + 1), b'|')
    }
    const STEP: usize = 32;
    let mut at = from;
    while let Some(chunk) = bytes
        .get(at..)
        .and_then(<[u8]>::first_chunk::<{ STEP + 1 }>)
    {
        let (a, b, c, d) = (
            ends(chunk, 0),
            ends(chunk, 8),
            ends(chunk, 16),
            ends(chunk, 24),
        );
        if a | b | c | d != 0 {
            // The first word with a mark, and the first mark in it.
            let (word, marks) = match (a, b, c) {
                (0, 0, 0) => (3, d),
                (0, 0, _) => (2, c),
                (0, _, _) => (1, b),
                _ => (0, a),
            };
            return Some(at + 8 * word + marks.trailing_zeros() as usize / 8);
        }
        at += STEP;
    }
    // The last few bytes.
    let rest = bytes.get(at..)?;
    rest.iter()
        .enumerate()
        .find(|&(i, &b)| b == b'\n' && rest.get(i + 1) != Some(&b'|'))
        .map(|(i, _)| at + i)
}

/// The offset of the line break that ends `text`'s first line, if that line is blank.
fn blank_line_end(text: &[u8]) -> Option<usize> {
    let blank = text.iter().position(|&b| b != b' ' && b != b'\t')?;
    (text[blank] == b'\n').then_some(blank)
}

/// Appends to `gaps` the runs of blank lines that repair removes from `joined`: texts that were
/// each repaired already, joined with `"\n\n"` separators starting at the offsets `separators`
/// (ascending). A repaired text has no gap left inside it, so the only gaps the join can create
/// are runs of blank lines that cross a separator; only those are looked at.
pub fn find_joined_gaps(joined: &str, separators: &[usize], gaps: &mut Vec<Range<usize>>) {
    JoinedGaps::default().advance(joined, separators, gaps);
}

/// [`find_joined_gaps`] one text at a time, for an assembler that closes each gap as soon as it
/// is known, while the text after it is short.
///
/// A separator is settled once the run of blank lines after it ends before the end of the text
/// so far; until then a later text may still put a row after it. Each call resumes where the
/// last one stopped, so the work over a whole assembly is linear.
#[derive(Debug, Default, Clone)]
pub struct JoinedGaps {
    /// How many separators are settled.
    settled: usize,
    /// How far the run after the first unsettled separator has been looked at.
    scanned: usize,
}

impl JoinedGaps {
    /// Starts over, for a new text.
    pub fn reset(&mut self) {
        *self = JoinedGaps::default();
    }

    /// Appends to `gaps` the gaps of the separators that `joined` settles. `separators` is the
    /// list given to the previous call with more appended, and `joined` the text given to it with
    /// more appended (and the gaps it reported removed, which lie before every unsettled
    /// separator).
    pub fn advance(&mut self, joined: &str, separators: &[usize], gaps: &mut Vec<Range<usize>>) {
        let bytes = joined.as_bytes();
        let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\n');
        while let Some(&sep) = separators.get(self.settled) {
            let from = self.scanned.max(sep).min(bytes.len());
            let next = from + bytes[from..].iter().take_while(|&&b| blank(b)).count();
            self.scanned = next;
            if next == bytes.len() {
                // The run reaches the end: a later text decides.
                return;
            }
            // This separator and those inside its run (after texts that were all blank lines)
            // are settled together.
            while separators.get(self.settled).is_some_and(|&s| s < next) {
                self.settled += 1;
            }
            // The caller may close the gap below, which moves the text after it.
            self.scanned = 0;
            if let Some(gap) = joined_gap(bytes, sep, next) {
                gaps.push(gap);
            }
        }
    }
}

/// The gap of the blank run from separator `sep` to `next` (the first byte after the run), if the
/// line after the run is a row and the line before it holds a `|`.
fn joined_gap(bytes: &[u8], sep: usize, next: usize) -> Option<Range<usize>> {
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\n');
    // The line after the run must start with `|` (at `next`, so nothing blank before it).
    if bytes.get(next) != Some(&b'|') || bytes[next - 1] != b'\n' {
        return None;
    }
    // The line before the run: the one holding the last non-blank byte before `sep`.
    let last = sep - bytes[..sep].iter().rev().take_while(|&&b| blank(b)).count();
    if last == 0 {
        return None;
    }
    let newline = find::memchr(b'\n', &bytes[last..]).map(|off| last + off)?;
    let line_start = find::memrchr(b'\n', &bytes[..last]).map_or(0, |i| i + 1);
    find::memchr(b'|', &bytes[line_start..newline]).map(|_| newline + 1..next)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference's table repair, transcribed naively from its regex
    /// `(\|[^\n]*)\n(?:[ \t]*\n)+(?=\|)` with the global flag: try every start, leftmost first.
    pub(crate) fn naive_repair(text: &str) -> String {
        let b = text.as_bytes();
        let (mut out, mut copied, mut pos) = (String::new(), 0, 0);
        while pos < b.len() {
            if b[pos] != b'|' {
                pos += 1;
                continue;
            }
            let Some(newline) = b[pos..].iter().position(|&c| c == b'\n').map(|o| pos + o) else {
                break;
            };
            let (mut end, mut lines) = (newline + 1, 0);
            loop {
                let mut j = end;
                while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                    j += 1;
                }
                if j < b.len() && b[j] == b'\n' {
                    lines += 1;
                    end = j + 1;
                } else {
                    break;
                }
            }
            if lines > 0 && b.get(end) == Some(&b'|') {
                out.push_str(&text[copied..newline + 1]);
                copied = end;
                pos = end;
            } else {
                pos += 1;
            }
        }
        out.push_str(&text[copied..]);
        out
    }

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
        fn repair_equals_the_regex_transcribed(text in "[| \t\n\rx]{0,60}") {
            prop_assert_eq!(repair(&text), naive_repair(&text));
        }

        /// Tables of many rows, longer than the steps [`table_end`] takes, with the bytes its
        /// word arithmetic could take for a line break or a `|`.
        #[test]
        fn long_tables_equal_the_regex_transcribed(
            lines in prop::collection::vec(
                prop::sample::select(vec![
                    "| a | b |", "| a much longer cell | with more text in it |", "|", "||", "|}|",
                    "x | y", "", " ", "\t", " \t ", "x", "\u{b}", "|\u{b}", "\r", "| a |\r",
                ]),
                0..40,
            ),
            last_line_break in any::<bool>(),
        ) {
            let mut text = lines.join("\n");
            if last_line_break {
                text.push('\n');
            }
            prop_assert_eq!(repair(&text), naive_repair(&text));
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
            ("| a |\n\t\n| b |", "| a |\n| b |"),
            ("| a |\n \n| b |", "| a |\n| b |"),
            ("| a |\n\n \t\n| b |", "| a |\n| b |"),
            ("  \n\n| b |", "  \n\n| b |"),
            ("x\n\n| b |", "x\n\n| b |"),
            ("| a | \n| b |", "| a | \n| b |"),
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
            ("| a |\n  \t \n\n| b |\n\t\t\n| c |", "| a |\n| b |\n| c |"),
            ("a|b|c\n \n|", "a|b|c\n|"),
            ("| a |\n\n x\n\n| b |", "| a |\n\n x\n\n| b |"),
            ("x\n| a |\n\n| b |", "x\n| a |\n| b |"),
            ("|\n\n|\n\n|", "|\n|\n|"),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(repair(input), expected, "{input:?}");
        }
    }
}
