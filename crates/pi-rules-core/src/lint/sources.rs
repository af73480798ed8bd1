//! The lines a lint report points into.
//!
//! A printer needs, for each finding, the line and column of its span, its labels and its
//! edits, and the text of the lines it shows. A [`Linter`](super::Linter) works these lines out
//! as soon as it has checked a file, while the text is still at hand, and keeps only them: a
//! layer of thousands of files with a finding or two each keeps a few lines of each, not every
//! text, and a file without findings keeps nothing. The text itself is let go at once.

use super::diagnostic::{FileDiagnostics, FilePath};
use crate::find;
use crate::span::{floor_boundary, LineCol};
use std::collections::HashMap;
use std::ops::Range;

/// The lines of each file that its findings point into, by path.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The text of every kept line, line breaks included, one after the other.
    text: String,
    /// The kept lines, file by file; each file's in order of position.
    lines: Vec<Line>,
    by_path: HashMap<FilePath, File, foldhash::fast::RandomState>,
    /// The offsets of the file being kept, reused from one file to the next.
    offsets: Vec<usize>,
}

/// One kept line.
#[derive(Debug, Clone)]
struct Line {
    /// 1-based.
    number: usize,
    /// Where the line starts in its file.
    start: usize,
    /// Where its text, line break included, is in [`Sources::text`].
    text: Range<usize>,
}

/// Where one file's lines are.
#[derive(Debug, Clone)]
struct File {
    /// In [`Sources::lines`].
    lines: Range<usize>,
    /// The length of the file's text.
    len: usize,
    /// The text was the file's bytes as read, not a decoding with replacement characters.
    exact: bool,
}

impl Sources {
    /// The kept lines of the file at `path`: `None` when no finding of the file has a position.
    pub fn lines(&self, path: &str) -> Option<SourceLines<'_>> {
        let file = self.by_path.get(path)?;
        Some(SourceLines {
            text: &self.text,
            lines: self.lines.get(file.lines.clone())?,
            len: file.len,
        })
    }

    /// How many files have kept lines.
    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }

    /// Keeps the lines of `text` that the findings in `out` point into, as the lines of the
    /// file at `out`'s path. Two texts at one path (the same directory listed as two layers)
    /// resolve as whole texts used to: the lines of the last exact text win over those of a
    /// decoded one, and otherwise the last text's lines win; a decoded text that loses still
    /// gives the lines that the exact one has not.
    pub(crate) fn insert(&mut self, out: &FileDiagnostics, text: &str, exact: bool) {
        self.insert_with(out, &[], text, exact);
    }

    /// [`Sources::insert`], keeping also the lines that `spans` point into: those of findings
    /// that may come once the text is let go (a glob that matches no file).
    pub(crate) fn insert_with(
        &mut self,
        out: &FileDiagnostics,
        spans: &[Range<usize>],
        text: &str,
        exact: bool,
    ) {
        let mut offsets = std::mem::take(&mut self.offsets);
        offsets.clear();
        out.offsets(&mut offsets);
        offsets.extend(spans.iter().flat_map(|s| [s.start, s.end]));
        if offsets.is_empty() {
            self.offsets = offsets;
            return;
        }
        // Clamped as the spans are read: within the text, on a char boundary.
        for offset in &mut offsets {
            *offset = floor_boundary(text, *offset);
        }
        offsets.sort_unstable();
        offsets.dedup();
        let path = out.path();
        let first = self.lines.len();
        match self.by_path.get(path) {
            Some(old) if old.exact && !exact => {
                // The old lines stay; the new text fills in the lines they lack.
                let old = old.lines.clone();
                let kept = &self.lines[old.clone()];
                offsets.retain(|&o| !line_of(kept, o).is_some_and(|l| self.holds(l, o)));
                self.lines.extend_from_within(old);
                self.keep(text, &offsets);
                self.lines[first..].sort_by_key(|l| l.start);
            }
            _ => self.keep(text, &offsets),
        }
        let file = File {
            lines: first..self.lines.len(),
            len: text.len(),
            exact: exact || self.by_path.get(path).is_some_and(|old| old.exact),
        };
        self.by_path.insert(path.clone(), file);
        self.offsets = offsets;
    }

    /// Whether the kept `line` holds byte `offset` (at or after its start) of its file: up to its
    /// line break included, or to the end of the file when it has none.
    fn holds(&self, line: &Line, offset: usize) -> bool {
        let text = &self.text[line.text.clone()];
        offset < line.start + text.len() || !text.ends_with('\n')
    }

    /// Appends the lines of `text` that hold `offsets` (sorted, on char boundaries), each once,
    /// with a cursor that reads the text once up to the last offset.
    fn keep(&mut self, text: &str, offsets: &[usize]) {
        let bytes = text.as_bytes();
        let first = self.lines.len();
        // The line at the cursor: its number and start.
        let (mut number, mut start, mut cursor) = (1, 0, 0);
        for &offset in offsets {
            // Already kept: the last line kept holds it.
            if let Some(line) = self.lines[first..].last() {
                if self.holds(line, offset) {
                    continue;
                }
            }
            let between = &bytes[cursor..offset];
            number += find::count(b'\n', between);
            if let Some(i) = find::memrchr(b'\n', between) {
                start = cursor + i + 1;
            }
            cursor = offset;
            let at = self.text.len();
            let line_end =
                find::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |i| offset + i + 1);
            self.text.push_str(&text[start..line_end]);
            self.lines.push(Line {
                number,
                start,
                text: at..self.text.len(),
            });
        }
    }
}

/// The last of `lines` (one file's, in order) that starts at or before byte `offset` of the
/// file: the one that holds it, when a kept line does.
fn line_of(lines: &[Line], offset: usize) -> Option<&Line> {
    let i = lines.partition_point(|l| l.start <= offset);
    lines.get(i.checked_sub(1)?)
}

/// The kept lines of one file: lines and columns of the offsets its findings point to, and the
/// text of those lines.
#[derive(Debug, Clone, Copy)]
pub struct SourceLines<'s> {
    text: &'s str,
    lines: &'s [Line],
    len: usize,
}

impl<'s> SourceLines<'s> {
    /// The line and column of byte `offset` of the file (1-based, the column in characters),
    /// clamped to the text and to a char boundary, as [`crate::span::line_col`] gives them on
    /// the whole text. Exact for the offsets of the report's findings; another offset is placed
    /// on the last kept line before it, at most at that line's end.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.len);
        let Some(line) = line_of(self.lines, offset) else {
            return LineCol { line: 1, column: 1 };
        };
        let text = &self.text[line.text.clone()];
        let within = floor_boundary(text, offset - line.start);
        LineCol {
            line: line.number,
            column: text[..within].chars().count() + 1,
        }
    }

    /// The kept line `number` (1-based): where it starts in the file, and its text without its
    /// line break (`\n` or `\r\n`).
    pub fn line(&self, number: usize) -> Option<(usize, &'s str)> {
        let i = self.lines.partition_point(|l| l.number < number);
        let line = self.lines.get(i).filter(|l| l.number == number)?;
        let text = &self.text[line.text.clone()];
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        Some((line.start, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::Code;
    use crate::span::{line_col, line_span};

    /// Findings at `spans` in a file at `path`.
    fn findings(path: &str, spans: &[Range<usize>]) -> FileDiagnostics {
        let mut out = FileDiagnostics::new(path);
        for span in spans {
            if let Some(d) = out.report(Code::StrayCloser, Some(span.clone())) {
                d.message("m");
            }
        }
        out
    }

    #[test]
    fn kept_lines_give_the_positions_and_lines_of_the_whole_text() {
        let texts = [
            "",
            "a",
            "ab\ncé\nd",
            "\n\n",
            "x\r\ny\r\n",
            "é\u{feff}\n\u{10000}z",
            "one\ntwo\n\nfour\n",
        ];
        for text in texts {
            // Every offset, one by one and all at once.
            let every: Vec<Range<usize>> = (0..=text.len() + 2).map(|o| o..o).collect();
            let each = every.iter().map(std::slice::from_ref);
            for spans in each.chain([&every[..]]) {
                let mut sources = Sources::default();
                sources.insert(&findings("p", spans), text, true);
                let lines = sources.lines("p").expect("kept");
                for span in spans {
                    let expected = line_col(text, span.start);
                    assert_eq!(lines.line_col(span.start), expected, "{text:?} {span:?}");
                    let line = lines.line(expected.line).expect("its line is kept");
                    let range = line_span(text, span.start.min(text.len()));
                    assert_eq!(line, (range.start, &text[range]), "{text:?} {span:?}");
                }
            }
        }
    }

    #[test]
    fn only_the_lines_of_findings_are_kept() {
        let text = "a\nbb\n{{/IF}}\nccc\ndddd\n";
        let mut sources = Sources::default();
        sources.insert(&findings("p", &[5..12, 6..7]), text, true);
        sources.insert(&findings("q", &[]), text, true);
        assert_eq!(sources.text, "{{/IF}}\n");
        assert_eq!(sources.len(), 1);
        assert!(sources.lines("q").is_none());
        let lines = sources.lines("p").expect("kept");
        assert_eq!(lines.line(3), Some((5, "{{/IF}}")));
        assert_eq!(lines.line(2), None);
        assert_eq!(lines.line_col(12), LineCol { line: 3, column: 8 });
    }

    #[test]
    fn an_exact_text_wins_over_a_decoded_one_at_the_same_path() {
        let cases: [(&[(&str, bool)], &str); 4] = [
            (&[("exact", true), ("decoded", false)], "exact"),
            (&[("decoded", false), ("exact", true)], "exact"),
            (&[("first", true), ("second", true)], "second"),
            (&[("first", false), ("second", false)], "second"),
        ];
        for (inserts, expected) in cases {
            let mut sources = Sources::default();
            for &(text, exact) in inserts {
                sources.insert(&findings("p", &[1..2, 2..2]), text, exact);
            }
            assert_eq!(sources.len(), 1);
            let lines = sources.lines("p").expect("kept");
            assert_eq!(lines.line(1), Some((0, expected)), "{inserts:?}");
        }
    }

    #[test]
    fn a_decoded_text_that_loses_still_gives_the_lines_the_exact_one_lacks() {
        let mut sources = Sources::default();
        sources.insert(&findings("p", &[0..1, 1..1]), "a\nb\nc", true);
        sources.insert(&findings("p", &[0..1, 4..5]), "x\ny\nz", false);
        let lines = sources.lines("p").expect("kept");
        assert_eq!(lines.line(1), Some((0, "a")));
        assert_eq!(lines.line(3), Some((4, "z")));
        assert_eq!(lines.line_col(4), LineCol { line: 3, column: 1 });
    }
}
