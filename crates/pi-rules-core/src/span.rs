//! Positions in a rule file: compact byte ranges ([`Span`]) for the records the engine keeps in
//! bulk, and line and column, computed only when something is printed.
//!
//! # Offsets are `u32`
//!
//! Markers and warnings store their positions as `u32` byte offsets into the file's whole text,
//! which keeps a [`Marker`](crate::markers::Marker) at 12 bytes and a
//! [`Warning`](crate::event::Warning) at 16. Every caller bounds its inputs far below 4 GiB: the
//! loader reads at most 131,073 bytes of a rule file, and `pi-rules eval` reads lines of at most
//! 64 MiB. The reference cannot hold a longer text either (a JavaScript string has at most
//! 2^29 − 24 UTF-16 units in V8).
//!
//! A longer text still never makes the engine panic, and its output is still deterministic:
//!
//! - markers are recognised only in the first `u32::MAX` bytes of a file; after that the text is
//!   plain and is kept as it is (so an opener before the limit whose closer lies after it is
//!   unbalanced);
//! - any other position past the limit (a frontmatter key, for example) saturates at
//!   `u32::MAX`, so a warning about it quotes an empty text;
//! - a file index past `u32::MAX` saturates the same way.

use crate::find;
use std::ops::Range;

/// The largest offset a [`Span`] holds; positions past it saturate to it.
pub const MAX_OFFSET: usize = u32::MAX as usize;

/// A byte range into a file's whole text, as two `u32` offsets (see the module docs for texts
/// over 4 GiB).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The span of `range`, each end saturating at [`MAX_OFFSET`].
    pub fn new(range: Range<usize>) -> Span {
        Span {
            start: saturate(range.start),
            end: saturate(range.end),
        }
    }

    /// The span as a `usize` range, for slicing.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> usize {
        self.end.saturating_sub(self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.end <= self.start
    }

    /// The text the span covers in `text`; empty when it does not lie on character boundaries
    /// inside `text` (a span of another file, or a saturated one).
    pub fn of(self, text: &str) -> &str {
        text.get(self.range()).unwrap_or_default()
    }
}

impl From<Span> for Range<usize> {
    fn from(span: Span) -> Range<usize> {
        span.range()
    }
}

/// `offset` as a `u32`, saturating at `u32::MAX`.
pub fn saturate(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

/// A 1-based line and column; the column counts characters (Unicode scalar values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// `offset`, clamped to `text` and moved back to a char boundary: where a span read from a
/// finding or a marker may be cut safely.
pub fn floor_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// The line and column of byte `offset` in `text` (clamped to the text, and to a char boundary).
pub fn line_col(text: &str, offset: usize) -> LineCol {
    let offset = floor_boundary(text, offset);
    let before = &text.as_bytes()[..offset];
    let line_start = find::memrchr(b'\n', before).map_or(0, |i| i + 1);
    LineCol {
        line: find::count(b'\n', before) + 1,
        column: text[line_start..offset].chars().count() + 1,
    }
}

/// The byte range of the line holding `offset`, without its line break.
pub fn line_span(text: &str, offset: usize) -> Range<usize> {
    let offset = offset.min(text.len());
    let bytes = text.as_bytes();
    let start = find::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
    let end = find::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |i| offset + i);
    let end = if end > start && bytes[end - 1] == b'\r' {
        end - 1
    } else {
        end
    };
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_saturate_and_never_slice_out_of_bounds() {
        let span = Span::new(5..usize::MAX);
        assert_eq!((span.start, span.end), (5, u32::MAX));
        assert_eq!(span.of("short"), "");
        assert_eq!(Span::new(1..3).of("abcd"), "bc");
        // Not on a character boundary: empty rather than a panic.
        assert_eq!(Span::new(0..1).of("é"), "");
        let reversed = Span { start: 3, end: 1 };
        assert_eq!(reversed.len(), 0);
        assert!(reversed.is_empty());
    }

    #[test]
    fn line_col_table() {
        let text = "ab\ncé\nd";
        let cases = [
            (0, 1, 1),
            (2, 1, 3),
            (3, 2, 1),
            (5, 2, 2),
            (6, 2, 3),
            (7, 3, 1),
            (99, 3, 2),
        ];
        for (offset, line, column) in cases {
            assert_eq!(line_col(text, offset), LineCol { line, column }, "{offset}");
        }
        assert_eq!(line_span("a\r\nbc\n", 4), 3..5);
    }
}
