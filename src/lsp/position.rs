//! Byte offsets to the protocol's positions and back.
//!
//! A position is a zero-based line and a character offset in that line, counted in the encoding
//! the client and the server agreed on at `initialize`: UTF-8 code units (bytes) or UTF-16 code
//! units. A line ends at any of the protocol's three line breaks, `\n`, `\r\n` and a lone `\r`
//! (the specification's "end-of-line sequences"); the break is not part of the line's length. Every
//! mapping is clamped, never fails: an offset inside a character maps to
//! that character's start, a position past a line's end to the line's end, a line past the last to
//! the end of the text.

use lsp_types::{Position, PositionEncodingKind, Range};

/// The unit of a position's `character`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Bytes of UTF-8.
    Utf8,
    /// Code units of UTF-16 (the protocol's default).
    Utf16,
}

impl Encoding {
    /// The protocol's name of this encoding.
    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }
}

/// A character outside ASCII: where it starts and how long it is in each encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wide {
    start: usize,
    utf8: u8,
    utf16: u8,
}

/// The lines of one version of a text, built once and asked many times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    encoding: Encoding,
    len: usize,
    /// Per line: the byte offset of its start and of its end (before `\n`, `\r\n` or `\r`).
    lines: Vec<(usize, usize)>,
    /// Every character outside ASCII, in text order.
    wide: Vec<Wide>,
}

impl LineIndex {
    pub fn new(text: &str, encoding: Encoding) -> LineIndex {
        let mut lines = Vec::new();
        let last = push_lines(text.as_bytes(), 0, text.len(), &mut lines);
        lines.push((last, text.len()));
        LineIndex {
            encoding,
            len: text.len(),
            lines,
            wide: wide_chars(text, 0),
        }
    }

    /// Brings the index up to date with an edit: `text` is the text after it, in which the
    /// bytes `replaced` of the text before were replaced by `inserted` bytes. Only the lines
    /// around the edit are read again (from the line before its first to the line after its
    /// last: a `\r` and a `\n` may meet or part there); the others are moved. Many small edits
    /// of a large text in one change cost the edits, not the text each time.
    pub fn edit(&mut self, text: &str, replaced: std::ops::Range<usize>, inserted: usize) {
        let removed = replaced.len();
        let moved = |at: usize| at - removed + inserted;
        let first = self.line_of(replaced.start).saturating_sub(1);
        let kept = (self.line_of(replaced.end) + 2).min(self.lines.len());
        let from = self.lines[first].0;
        // The text read again ends where the first line kept starts, or at the text's end.
        let to = self
            .lines
            .get(kept)
            .map_or(text.len(), |&(start, _)| moved(start));
        let mut fresh = Vec::new();
        let last = push_lines(text.as_bytes(), from, to, &mut fresh);
        if kept == self.lines.len() {
            fresh.push((last, text.len()));
        }
        for line in &mut self.lines[kept..] {
            *line = (moved(line.0), moved(line.1));
        }
        self.lines.splice(first..kept, fresh);
        let lo = self.wide.partition_point(|w| w.start < replaced.start);
        let hi = self.wide.partition_point(|w| w.start < replaced.end);
        for w in &mut self.wide[hi..] {
            w.start = moved(w.start);
        }
        let added = wide_chars(
            &text[replaced.start..replaced.start + inserted],
            replaced.start,
        );
        self.wide.splice(lo..hi, added);
        self.len = text.len();
    }

    /// The line that `offset` is in.
    fn line_of(&self, offset: usize) -> usize {
        self.lines.partition_point(|&(start, _)| start <= offset) - 1
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The number of lines (a text ending in a line break has an empty last line).
    pub fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// The characters outside ASCII that start in `from..to`.
    fn wide_in(&self, from: usize, to: usize) -> &[Wide] {
        let lo = self.wide.partition_point(|w| w.start < from);
        let hi = self.wide.partition_point(|w| w.start < to);
        &self.wide[lo..hi]
    }

    /// `offset` clamped to the text and moved back to the start of the character it is in.
    fn floor_boundary(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        let i = self.wide.partition_point(|w| w.start < offset);
        match i.checked_sub(1).map(|i| self.wide[i]) {
            Some(w) if offset < w.start + usize::from(w.utf8) => w.start,
            _ => offset,
        }
    }

    /// The position of a byte offset: clamped to the text, to a character's start, and to its
    /// line's end (an offset on the `\r` of a `\r\n` is the line's end).
    pub fn position(&self, offset: usize) -> Position {
        let offset = self.floor_boundary(offset);
        let line = self.line_of(offset);
        let (start, end) = self.lines[line];
        let offset = offset.min(end);
        let character = match self.encoding {
            Encoding::Utf8 => offset - start,
            Encoding::Utf16 => {
                let saved: usize = self
                    .wide_in(start, offset)
                    .iter()
                    .map(|w| usize::from(w.utf8 - w.utf16))
                    .sum();
                offset - start - saved
            }
        };
        Position {
            line: saturate(line),
            character: saturate(character),
        }
    }

    /// The byte offset of a position: past the last line is the end of the text, past a line's
    /// end is that end, inside a character (half of a surrogate pair, a byte inside a UTF-8
    /// sequence) is that character's start.
    pub fn offset(&self, position: Position) -> usize {
        let Some(&(start, end)) = self.lines.get(position.line as usize) else {
            return self.len;
        };
        let units = position.character as usize;
        match self.encoding {
            Encoding::Utf8 => self.floor_boundary(start.saturating_add(units).min(end)),
            Encoding::Utf16 => {
                let mut units = units;
                let mut at = start;
                for w in self.wide_in(start, end) {
                    let gap = w.start - at;
                    if units <= gap {
                        return at + units;
                    }
                    units -= gap;
                    at = w.start;
                    if units < usize::from(w.utf16) {
                        return at;
                    }
                    units -= usize::from(w.utf16);
                    at += usize::from(w.utf8);
                }
                at.saturating_add(units).min(end)
            }
        }
    }

    /// The protocol's range of a byte range.
    pub fn range(&self, range: std::ops::Range<usize>) -> Range {
        Range {
            start: self.position(range.start),
            end: self.position(range.end),
        }
    }

    /// The byte range of a protocol range; an end before the start is the start.
    pub fn offsets(&self, range: Range) -> std::ops::Range<usize> {
        let start = self.offset(range.start);
        let end = self.offset(range.end).max(start);
        start..end
    }
}

/// Pushes the lines that end in `bytes[from..to]` (start, and end before the break), `from`
/// being a line's start; returns where the line after the last break starts. A `\r` just before
/// `\n` is one break with it; any other `\r` is a break of its own.
fn push_lines(bytes: &[u8], from: usize, to: usize, lines: &mut Vec<(usize, usize)>) -> usize {
    let mut start = from;
    let mut i = from;
    while i < to {
        match bytes[i] {
            b'\n' => {
                lines.push((start, i));
                start = i + 1;
            }
            b'\r' => {
                lines.push((start, i));
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    start
}

/// The characters of `text` outside ASCII, their starts counted from `base`.
fn wide_chars(text: &str, base: usize) -> Vec<Wide> {
    if text.is_ascii() {
        return Vec::new();
    }
    text.char_indices()
        .filter(|(_, c)| !c.is_ascii())
        .map(|(start, c)| Wide {
            start: base + start,
            // At most 4 and 2: the casts are exact.
            utf8: c.len_utf8() as u8,
            utf16: c.len_utf16() as u8,
        })
        .collect()
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    /// Every character boundary maps to a position and back to itself, in both encodings, and
    /// agrees with counting the line's characters in that encoding.
    fn round_trips(text: &str) {
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            let index = LineIndex::new(text, encoding);
            for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
                let p = index.position(offset);
                // On the `\n` of a `\r\n` the line has ended before the `\r`.
                let in_crlf = text[..offset].ends_with('\r') && text[offset..].starts_with('\n');
                let upto = if in_crlf { offset - 1 } else { offset };
                // Lines as the specification counts them: every `\r\n`, `\r` and `\n` ends one.
                let breaks = text[..upto].replace("\r\n", "\n").replace('\r', "\n");
                let line = breaks.matches('\n').count();
                let before = breaks.rsplit('\n').next().unwrap_or("");
                let want = match encoding {
                    Encoding::Utf8 => before.len(),
                    Encoding::Utf16 => before.encode_utf16().count(),
                };
                assert_eq!(p, pos(line as u32, want as u32), "{text:?} at {offset}");
                let back = index.offset(p);
                if in_crlf {
                    assert_eq!(back, offset - 1, "{text:?} at {offset} ({encoding:?})");
                } else {
                    assert_eq!(back, offset, "{text:?} at {offset} ({encoding:?})");
                }
            }
        }
    }

    #[test]
    fn ascii_lines() {
        let index = LineIndex::new("ab\ncd\n", Encoding::Utf16);
        assert_eq!(index.line_count(), 3);
        assert_eq!(index.position(0), pos(0, 0));
        assert_eq!(index.position(2), pos(0, 2));
        assert_eq!(index.position(3), pos(1, 0));
        assert_eq!(index.position(6), pos(2, 0));
        assert_eq!(index.offset(pos(1, 1)), 4);
        round_trips("ab\ncd\n");
        round_trips("");
        round_trips("\n\n");
    }

    #[test]
    fn cjk_counts_one_utf16_unit_three_bytes() {
        let text = "日本語 key\n中";
        round_trips(text);
        let u16 = LineIndex::new(text, Encoding::Utf16);
        let u8 = LineIndex::new(text, Encoding::Utf8);
        let k = text.find("key").unwrap();
        assert_eq!(u16.position(k), pos(0, 4));
        assert_eq!(u8.position(k), pos(0, 10));
        assert_eq!(u16.offset(pos(0, 4)), k);
        assert_eq!(u8.offset(pos(0, 10)), k);
        // A byte inside 本 maps to its start, in both directions.
        assert_eq!(u8.position(4), pos(0, 3));
        assert_eq!(u8.offset(pos(0, 4)), 3);
    }

    #[test]
    fn emoji_counts_two_utf16_units_four_bytes() {
        let text = "🚀 {{IF:dco}}\n👍🏽x";
        round_trips(text);
        let u16 = LineIndex::new(text, Encoding::Utf16);
        let open = text.find("{{").unwrap();
        assert_eq!(u16.position(open), pos(0, 3));
        assert_eq!(u16.offset(pos(0, 3)), open);
        // Between the two halves of the surrogate pair: the emoji's start.
        assert_eq!(u16.offset(pos(0, 1)), 0);
        // 👍 and its skin tone are two characters of two units each.
        let x = text.find('x').unwrap();
        assert_eq!(u16.position(x), pos(1, 4));
        assert_eq!(u16.offset(pos(1, 4)), x);
        assert_eq!(u16.offset(pos(1, 3)), text.find('\n').unwrap() + 5);
    }

    #[test]
    fn combining_marks_are_characters_of_their_own() {
        // e + U+0301 COMBINING ACUTE ACCENT: one grapheme, two code points, one unit each in UTF-16.
        let text = "cafe\u{301} = x";
        round_trips(text);
        let u16 = LineIndex::new(text, Encoding::Utf16);
        let eq = text.find('=').unwrap();
        assert_eq!(u16.position(eq), pos(0, 6));
        assert_eq!(LineIndex::new(text, Encoding::Utf8).position(eq), pos(0, 7));
        assert_eq!(u16.offset(pos(0, 6)), eq);
    }

    #[test]
    fn crlf_belongs_to_the_line_break() {
        let text = "ab\r\ncd\r\n";
        round_trips(text);
        let index = LineIndex::new(text, Encoding::Utf16);
        assert_eq!(index.position(2), pos(0, 2));
        // The `\r` and the `\n` are the line's end.
        assert_eq!(index.position(3), pos(0, 2));
        assert_eq!(index.position(4), pos(1, 0));
        assert_eq!(index.offset(pos(0, 2)), 2);
        assert_eq!(index.offset(pos(0, 9)), 2);
        assert_eq!(index.range(0..8).end, pos(2, 0));
    }

    #[test]
    fn a_lone_cr_is_a_line_break() {
        // The specification's three line breaks: `\n`, `\r\n` and `\r` alone.
        let text = "a\rb\r\nc\nd\r";
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            let index = LineIndex::new(text, encoding);
            assert_eq!(index.line_count(), 5);
            assert_eq!(index.position(2), pos(1, 0));
            assert_eq!(index.offset(pos(1, 0)), 2);
            assert_eq!(index.offset(pos(1, 9)), 3);
            assert_eq!(index.offset(pos(2, 0)), 5);
            assert_eq!(index.offset(pos(3, 1)), 8);
            // After the last `\r`: an empty line.
            assert_eq!(index.offset(pos(4, 0)), text.len());
            assert_eq!(index.position(text.len()), pos(4, 0));
        }
        round_trips(text);
        round_trips("a\rb\r");
        round_trips("\r\r\n\n\r😀\rx");
    }

    /// An index brought up by edits is the index of the text after them, whatever the edits
    /// join or part (a `\r` and a `\n`, a wide character, a line at either end).
    #[test]
    fn an_edited_index_is_the_index_of_the_edited_text() {
        const PIECES: &[&str] = &["a", "bc", "\n", "\r", "\r\n", "😀", "é", "日", ""];
        let mut seed: u64 = 0x1ead_5eed;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % n
        };
        for _ in 0..2000 {
            let mut text: String = (0..next(12)).map(|_| PIECES[next(PIECES.len())]).collect();
            let encoding = [Encoding::Utf8, Encoding::Utf16][next(2)];
            let mut index = LineIndex::new(&text, encoding);
            for _ in 0..4 {
                let boundaries: Vec<usize> = (0..=text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                let a = boundaries[next(boundaries.len())];
                let b = boundaries[next(boundaries.len())];
                let (start, end) = (a.min(b), a.max(b));
                let insert: String = (0..next(3)).map(|_| PIECES[next(PIECES.len())]).collect();
                text.replace_range(start..end, &insert);
                index.edit(&text, start..end, insert.len());
                assert_eq!(index, LineIndex::new(&text, encoding), "{text:?}");
            }
        }
    }

    #[test]
    fn past_the_end_is_clamped() {
        let text = "ab\n日本";
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            let index = LineIndex::new(text, encoding);
            assert_eq!(index.offset(pos(0, 100)), 2);
            assert_eq!(index.offset(pos(1, 100)), text.len());
            assert_eq!(index.offset(pos(7, 0)), text.len());
            assert_eq!(index.offset(pos(u32::MAX, u32::MAX)), text.len());
            assert_eq!(index.position(usize::MAX), index.position(text.len()));
        }
        assert_eq!(
            LineIndex::new(text, Encoding::Utf16).position(100),
            pos(1, 2)
        );
        assert_eq!(
            LineIndex::new(text, Encoding::Utf8).position(100),
            pos(1, 6)
        );
    }

    #[test]
    fn offsets_of_a_range_are_ordered() {
        let index = LineIndex::new("abc\ndef", Encoding::Utf16);
        let r = Range {
            start: pos(1, 2),
            end: pos(0, 1),
        };
        assert_eq!(index.offsets(r), 6..6);
        let r = Range {
            start: pos(0, 1),
            end: pos(1, 2),
        };
        assert_eq!(index.offsets(r), 1..6);
    }
}
