//! Marker scanning and matching: `{{IF:COND}}`, `{{IFNOT:COND}}`, `{{/IF}}` and `{{/IFNOT}}`.
//!
//! [`scan`] finds every marker of a text in one left-to-right pass, with the same leftmost,
//! non-overlapping matches as the reference's regex
//! `\{\{(IFNOT:([^}]+)|IF:([^}]+)|\/IFNOT|\/IF)\}\}`. [`match_opener`] pairs an opener with its
//! closer using an explicit stack. Neither recurses, and both are linear in their input.

use crate::find;
use crate::span::{Span, MAX_OFFSET};
use std::ops::Range;

/// Which of the two block kinds a marker belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// `{{IF:…}}` … `{{/IF}}`
    If,
    /// `{{IFNOT:…}}` … `{{/IFNOT}}`
    IfNot,
}

impl BlockKind {
    /// The opener's keyword, as in `{{IF:` (`"IF"`).
    pub fn keyword(self) -> &'static str {
        match self {
            BlockKind::If => "IF",
            BlockKind::IfNot => "IFNOT",
        }
    }
}

/// One marker found in a text: 12 bytes, its position kept as `u32` offsets (see
/// [`crate::span`] for texts over 4 GiB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    span: Span,
    pub kind: BlockKind,
    /// True for `{{/IF}}` and `{{/IFNOT}}`.
    pub closer: bool,
}

impl Marker {
    pub fn is_opener(&self) -> bool {
        !self.closer
    }

    /// The whole marker, braces included.
    #[inline]
    pub fn span(&self) -> Range<usize> {
        self.span.range()
    }

    /// The condition text between `:` and `}}`, exactly as written; an empty range at the end of
    /// the marker for closers.
    #[inline]
    pub fn condition(&self) -> Range<usize> {
        let Range { start, end } = self.span.range();
        if self.closer {
            end..end
        } else {
            // `{{` + keyword + `:` … `}}`; a scanned opener is always that long.
            (start + 3 + self.kind.keyword().len()).min(end)..end.saturating_sub(2)
        }
    }
}

/// Finds every marker in `text`, in order.
pub fn scan(text: &str) -> Vec<Marker> {
    scan_from(text, 0)
}

/// Finds every marker in `text[from..]` (a body after its frontmatter), with offsets into the
/// whole `text`.
pub fn scan_from(text: &str, from: usize) -> Vec<Marker> {
    let mut markers = Vec::new();
    scan_into(text, from, &mut markers);
    markers
}

/// Like [`scan_from`], appending to `out` so a caller can reuse the allocation. Returns whether
/// `text[from..]` holds a `{` other than the two that open each marker found (one in plain text,
/// or inside a condition). When it does not, no text made of pieces of `text[from..]` that
/// leave markers whole can hold `{{REVIEW_LOOP_MAX_CYCLES}}`.
///
/// Only the first [`MAX_OFFSET`] bytes of `text` are scanned (see [`crate::span`]).
pub fn scan_into(text: &str, from: usize, out: &mut Vec<Marker>) -> bool {
    let bytes = &text.as_bytes()[..text.len().min(MAX_OFFSET)];
    let mut scan = Scan {
        bytes,
        next_brace: NextBrace::default(),
        other_braces: false,
    };
    let mut pos = from;
    while let Some(found) = scan.find_open_braces(pos) {
        match scan.match_at(found) {
            Some(marker) => {
                pos = marker.span.end as usize;
                out.push(marker);
            }
            None => {
                scan.other_braces = true;
                pos = found + 1;
            }
        }
    }
    scan.other_braces
}

struct Scan<'b> {
    bytes: &'b [u8],
    /// End of the run of non-`}` bytes that starts at or before the cached position. Condition
    /// runs of neighbouring candidates overlap, so caching the next `}` keeps the scan linear on
    /// text such as `{{IF:{{IF:{{IF:…` with no closing brace.
    next_brace: NextBrace,
    /// A `{` was seen that does not open a marker.
    other_braces: bool,
}

impl Scan<'_> {
    /// Position of the next `{{` at or after `from`.
    fn find_open_braces(&mut self, from: usize) -> Option<usize> {
        let bytes = self.bytes;
        let mut i = from;
        loop {
            let j = next_open_brace(bytes, i)?;
            if bytes.get(j + 1) == Some(&b'{') {
                return Some(j);
            }
            self.other_braces = true;
            i = j + 1;
        }
    }

    /// The first `}` at or after `from` (or the end), noting a `{` on the way.
    fn next_closing_brace(&mut self, from: usize) -> usize {
        let bytes = self.bytes;
        let cache = &mut self.next_brace;
        if cache.valid && cache.from <= from && from <= cache.at {
            // Inside a run looked at before, which began inside an earlier candidate: that
            // candidate's `{{` is in this run.
            self.other_braces = true;
            return cache.at;
        }
        // One search finds the end of the condition, or a `{` before it.
        let rest = &bytes[from.min(bytes.len())..];
        let at = match next_brace(rest) {
            Some(off) if rest[off] == b'}' => from + off,
            Some(off) => {
                self.other_braces = true;
                find::memchr(b'}', &rest[off..]).map_or(bytes.len(), |o| from + off + o)
            }
            None => bytes.len(),
        };
        *cache = NextBrace {
            from,
            at,
            valid: true,
        };
        at
    }
    /// Tries the marker regex at `start` (where `{{` stands). `bytes` is at most
    /// [`MAX_OFFSET`] long, so every offset fits a `u32`.
    fn match_at(&mut self, start: usize) -> Option<Marker> {
        let marker = |kind: BlockKind, closer: bool, end: usize| Marker {
            span: Span::new(start..end),
            kind,
            closer,
        };
        let (kind, closer) = head(&self.bytes[start + 2..])?;
        if closer {
            let end = start + 3 + kind.keyword().len() + 2;
            return Some(marker(kind, true, end));
        }
        let cond_start = start + 3 + kind.keyword().len();
        let cond_end = self.next_closing_brace(cond_start);
        let closed = cond_end > cond_start && self.bytes.get(cond_end + 1) == Some(&b'}');
        closed.then(|| marker(kind, false, cond_end + 2))
    }
}

/// What follows a `{{` that starts a marker: `IF:` or `IFNOT:` (an opener, whose condition
/// comes next), or `/IF}}` or `/IFNOT}}` (a whole closer).
#[inline]
fn head(rest: &[u8]) -> Option<(BlockKind, bool)> {
    const IF: Word = Word::of(b"IF:");
    const IFNOT: Word = Word::of(b"IFNOT:");
    const END_IF: Word = Word::of(b"/IF}}");
    const END_IFNOT: Word = Word::of(b"/IFNOT}}");
    let Some(&word) = rest.first_chunk::<8>() else {
        // Near the end of the text: the same tests, byte by byte.
        return [
            (b"IF:".as_slice(), BlockKind::If, false),
            (b"/IF}}", BlockKind::If, true),
            (b"IFNOT:", BlockKind::IfNot, false),
        ]
        .into_iter()
        .find(|(head, ..)| rest.starts_with(head))
        .map(|(_, kind, closer)| (kind, closer));
    };
    // The eight bytes after `{{`, compared with each head in one step.
    let word = u64::from_le_bytes(word);
    if IF.starts(word) {
        Some((BlockKind::If, false))
    } else if END_IF.starts(word) {
        Some((BlockKind::If, true))
    } else if IFNOT.starts(word) {
        Some((BlockKind::IfNot, false))
    } else if END_IFNOT.starts(word) {
        Some((BlockKind::IfNot, true))
    } else {
        None
    }
}

/// Up to eight bytes as a little-endian word, with the mask of the bytes that count.
struct Word {
    bytes: u64,
    mask: u64,
}

impl Word {
    const fn of(text: &[u8]) -> Word {
        let mut bytes = 0;
        let mut i = 0;
        while i < text.len() {
            bytes |= (text[i] as u64) << (8 * i);
            i += 1;
        }
        let mask = if text.len() >= 8 {
            u64::MAX
        } else {
            (1 << (8 * text.len())) - 1
        };
        Word { bytes, mask }
    }

    /// Whether the word read from a text starts with these bytes.
    #[inline]
    fn starts(&self, word: u64) -> bool {
        word & self.mask == self.bytes
    }
}

/// Position of the next `{` at or after `from`.
///
/// Markers often lie a few bytes apart (`{{IF:x}}word{{/IF}}`, or one right after the other), so
/// the next sixteen bytes are looked at as two words before a byte search is set up.
#[inline]
fn next_open_brace(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let Some((near, far)) = rest.split_first_chunk::<16>() else {
        return find::memchr(b'{', rest).map(|at| from + at);
    };
    let (low, high) = near.split_at(8);
    for (offset, word) in [(0, low), (8, high)] {
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        if let Some(at) = first_byte(word, b'{') {
            return Some(from + offset + at);
        }
    }
    find::memchr(b'{', far).map(|at| from + 16 + at)
}

/// Position of the first `}` or `{` in `rest`.
///
/// A condition is mostly a short key: the first thirty-two bytes are looked at as words before a
/// byte search is set up.
#[inline]
fn next_brace(rest: &[u8]) -> Option<usize> {
    let mut words = rest.chunks_exact(8);
    for (n, word) in words.by_ref().take(4).enumerate() {
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let found = zero_bytes(word, b'}') | zero_bytes(word, b'{');
        if found != 0 {
            return Some(8 * n + found.trailing_zeros() as usize / 8);
        }
    }
    let seen = rest.len() - words.remainder().len() - 8 * words.len();
    find::memchr2(b'}', b'{', &rest[seen..]).map(|at| seen + at)
}

/// The index of the first byte equal to `byte` in the eight bytes of `word` (little-endian).
#[inline]
fn first_byte(word: u64, byte: u8) -> Option<usize> {
    let zeros = zero_bytes(word, byte);
    (zeros != 0).then(|| zeros.trailing_zeros() as usize / 8)
}

/// The high bit of each byte of `word` equal to `byte`, except that a byte above an equal one may
/// be flagged too: the lowest flag is exact.
#[inline]
fn zero_bytes(word: u64, byte: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

#[derive(Default)]
struct NextBrace {
    /// Position of the first `}` at or after `from`, or `len` when there is none.
    from: usize,
    at: usize,
    valid: bool,
}

/// Marks an index into a marker list that has no partner (see [`match_opener`]).
pub const UNPAIRED: u32 = u32::MAX;

/// Finds the closer of the opener `markers[open]`, considering markers up to `limit` (exclusive).
///
/// The stack holds the indexes of the openers met so far. A closer of the kind on top pops it;
/// the opener is closed when its own entry pops. A closer of the other kind means the opener has
/// no closer. Every opener met on the way that is closed inside gets its closer written into
/// `pairs` (indexed by marker), so evaluating the block needs no second search. Marker indexes
/// are `u32`: a text of at most 4 GiB holds fewer than 2^32 / 7 markers.
#[inline]
pub fn match_opener(
    markers: &[Marker],
    open: usize,
    limit: usize,
    stack: &mut Vec<u32>,
    pairs: &mut [u32],
) -> Option<usize> {
    let limit = limit.min(markers.len());
    // Most blocks hold no other block: the next marker decides.
    if let (Some(opener), Some(next)) = (markers.get(open), markers.get(open + 1)) {
        if next.closer && open + 1 < limit {
            if next.kind != opener.kind {
                return None;
            }
            pairs[open] = index(open + 1);
            return Some(open + 1);
        }
    }
    stack.clear();
    stack.push(index(open));
    for i in open + 1..limit {
        let marker = &markers[i];
        if marker.is_opener() {
            stack.push(index(i));
            continue;
        }
        let top = *stack.last()? as usize;
        if markers[top].kind != marker.kind {
            return None;
        }
        stack.pop();
        pairs[top] = index(i);
        if stack.is_empty() {
            return Some(i);
        }
    }
    None
}

/// A marker index as stored in `pairs` and the stack.
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(UNPAIRED)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, expected markers rendered as text).
    fn shown(text: &str) -> Vec<String> {
        scan(text)
            .iter()
            .map(|m| {
                if m.closer {
                    format!("/{}", m.kind.keyword())
                } else {
                    format!("{}:{}", m.kind.keyword(), &text[m.condition()])
                }
            })
            .collect()
    }

    #[test]
    fn scan_table() {
        let cases: &[(&str, &[&str])] = &[
            ("plain text", &[]),
            ("{{IF:a}}x{{/IF}}", &["IF:a", "/IF"]),
            ("{{IFNOT:a}}x{{/IFNOT}}", &["IFNOT:a", "/IFNOT"]),
            ("{{IF:}}{{if:a}}{{ IF:a}}{{/IF }}{{IFNOT}}", &[]),
            ("{{{IF:a}}}", &["IF:a"]),
            ("{{IF:a{{IF:b}}", &["IF:a{{IF:b"]),
            ("{{IF:a\nb}}", &["IF:a\nb"]),
            ("{{IF:a}b}}{{/IF}}", &["/IF"]),
            ("{{IF:{{IF:{{IF:", &[]),
            ("{{/IFNOT}}{{/IF}}", &["/IFNOT", "/IF"]),
            ("{{IF: a == 'x' }}", &["IF: a == 'x' "]),
            ("é{{IF:é}}", &["IF:é"]),
        ];
        for (input, expected) in cases {
            assert_eq!(shown(input), *expected, "{input:?}");
        }
    }

    #[test]
    fn markers_are_small() {
        assert!(std::mem::size_of::<Marker>() <= 12);
    }

    #[test]
    fn scan_from_keeps_whole_text_offsets() {
        let text = "{{/IF}}ab{{IF:x}}";
        let markers = scan_from(text, 3);
        assert_eq!(markers.len(), 1);
        assert_eq!(markers[0].span(), 9..17);
        assert_eq!(&text[markers[0].condition()], "x");
        let closer = scan(text)[0];
        assert_eq!(closer.condition(), 7..7);
    }

    #[test]
    fn spans_cover_the_marker() {
        let text = "ab{{IF:x}}cd{{/IF}}";
        let markers = scan(text);
        assert_eq!(&text[markers[0].span()], "{{IF:x}}");
        assert_eq!(&text[markers[1].span()], "{{/IF}}");
    }

    fn matched(text: &str) -> Option<usize> {
        let markers = scan(text);
        let mut pairs = vec![UNPAIRED; markers.len()];
        match_opener(&markers, 0, markers.len(), &mut Vec::new(), &mut pairs)
    }

    #[test]
    fn match_table() {
        let cases: &[(&str, Option<usize>)] = &[
            ("{{IF:a}}{{/IF}}", Some(1)),
            ("{{IF:a}}{{IF:b}}{{/IF}}{{/IF}}", Some(3)),
            ("{{IF:a}}{{IFNOT:b}}{{/IFNOT}}{{/IF}}", Some(3)),
            ("{{IF:a}}{{/IFNOT}}{{/IF}}", None),
            ("{{IF:a}}{{IFNOT:b}}{{/IF}}{{/IFNOT}}", None),
            ("{{IF:a}}{{IF:b}}{{/IF}}", None),
            ("{{IFNOT:a}}{{/IFNOT}}{{/IFNOT}}", Some(1)),
        ];
        for (input, expected) in cases {
            assert_eq!(matched(input), *expected, "{input:?}");
        }
    }

    #[test]
    fn deep_nesting_is_linear_and_does_not_recurse() {
        let depth = 100_000;
        let text = format!("{}{}", "{{IF:a}}".repeat(depth), "{{/IF}}".repeat(depth));
        assert_eq!(matched(&text), Some(2 * depth - 1));
    }
}
