//! Marker scanning and matching: `{{IF:COND}}`, `{{IFNOT:COND}}`, `{{/IF}}` and `{{/IFNOT}}`.
//!
//! [`scan`] finds every marker of a text in one left-to-right pass, with the same leftmost,
//! non-overlapping matches as the reference's regex
//! `\{\{(IFNOT:([^}]+)|IF:([^}]+)|\/IFNOT|\/IF)\}\}`. [`match_opener`] pairs an opener with its
//! closer using an explicit stack. Neither recurses, and both are linear in their input.

use crate::find;
use crate::placeholder::REVIEW_LOOP_MAX_CYCLES as PLACEHOLDER;
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
    scan_body(text, from, out, None)
}

/// [`scan_into`] for the assembler: when `placeholders` is given, the offset of every
/// `{{REVIEW_LOOP_MAX_CYCLES}}` outside the markers goes there, and its two `{` do not count as
/// other braces. When the result is then `false`, the placeholders of any text made of pieces of
/// `text[from..]` that leave markers whole are exactly the listed ones its pieces hold: a
/// placeholder needs a `{` followed by `{R`, and only a listed placeholder's first `{` is.
pub(crate) fn scan_body(
    text: &str,
    from: usize,
    out: &mut Vec<Marker>,
    mut placeholders: Option<&mut Vec<usize>>,
) -> bool {
    let bytes = &text.as_bytes()[..text.len().min(MAX_OFFSET)];
    let mut other = false;
    let mut closing = Closing::default();
    // The search for `{` goes on at `pos`. After an opener it goes on inside the condition, so
    // that one search both finds a `{` there and goes past it; `end` is where the last marker
    // ends, and a `{` before it lies inside that marker's condition.
    let mut pos = from;
    let mut end = from;
    while let Some(at) = bytes
        .get(pos..)
        .and_then(|rest| find::memchr_near(b'{', rest))
        .map(|at| pos + at)
    {
        if at < end {
            other = true;
            pos = end;
            continue;
        }
        if bytes.get(at + 1) != Some(&b'{') {
            other = true;
            pos = at + 1;
            continue;
        }
        match match_at(bytes, at, &mut closing) {
            Some(marker) => {
                end = marker.span.end as usize;
                pos = if marker.closer {
                    end
                } else {
                    marker.condition().start
                };
                out.push(marker);
            }
            None => match placeholders.as_deref_mut() {
                Some(found) if bytes[at..].starts_with(PLACEHOLDER.as_bytes()) => {
                    found.push(at);
                    pos = at + PLACEHOLDER.len();
                }
                _ => {
                    other = true;
                    pos = at + 1;
                }
            },
        }
    }
    other
}

/// Tries the marker regex at `start` (where `{{` stands). `bytes` is at most [`MAX_OFFSET`]
/// long, so every offset fits a `u32`.
#[inline]
fn match_at(bytes: &[u8], start: usize, closing: &mut Closing) -> Option<Marker> {
    let marker = |kind: BlockKind, closer: bool, end: usize| Marker {
        span: Span::new(start..end),
        kind,
        closer,
    };
    let (kind, closer) = head(bytes.get(start + 2..)?)?;
    if closer {
        let end = start + 3 + kind.keyword().len() + 2;
        return Some(marker(kind, true, end));
    }
    let cond_start = start + 3 + kind.keyword().len();
    let cond_end = closing.find(bytes, cond_start);
    let closed = cond_end > cond_start && bytes.get(cond_end + 1) == Some(&b'}');
    closed.then(|| marker(kind, false, cond_end + 2))
}

/// The last search for a `}`: from `from`, the first one is at `at` (the end of the text when
/// there is none). Condition runs of neighbouring candidates overlap, so reusing it keeps the
/// scan linear on text such as `{{IF:{{IF:{{IF:…` with no closing brace.
#[derive(Default)]
struct Closing {
    from: usize,
    at: usize,
    valid: bool,
}

impl Closing {
    /// The first `}` at or after `from`, or the end of `bytes`.
    #[inline]
    fn find(&mut self, bytes: &[u8], from: usize) -> usize {
        if self.valid && self.from <= from && from <= self.at {
            return self.at;
        }
        let at = next(bytes, b'}', from).unwrap_or(bytes.len());
        *self = Closing {
            from,
            at,
            valid: true,
        };
        at
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

/// Position of the first `byte` at or after `from`.
///
/// A plain vector search: its first step looks at the next sixteen bytes, which is where the next
/// marker or the end of a condition usually is.
#[inline]
fn next(bytes: &[u8], byte: u8, from: usize) -> Option<usize> {
    find::memchr(byte, bytes.get(from..)?).map(|at| from + at)
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
    use proptest::prelude::*;

    /// The reference's regex, transcribed naively: at each position left to right, the first
    /// alternative that matches, then on after it.
    fn naive_scan(text: &str, from: usize) -> Vec<(usize, usize, BlockKind, bool)> {
        let b = text.as_bytes();
        let mut found = Vec::new();
        let mut pos = from;
        while pos < b.len() {
            let rest = &b[pos..];
            let opener = |keyword: &[u8]| -> Option<usize> {
                let cond = rest.strip_prefix(b"{{")?.strip_prefix(keyword)?;
                let len = cond.iter().position(|&c| c == b'}')?;
                (len > 0 && cond.get(len + 1) == Some(&b'}')).then(|| 2 + keyword.len() + len + 2)
            };
            let closer = |marker: &[u8]| rest.starts_with(marker).then_some(marker.len());
            let hit = [
                opener(b"IFNOT:").map(|n| (n, BlockKind::IfNot, false)),
                opener(b"IF:").map(|n| (n, BlockKind::If, false)),
                closer(b"{{/IFNOT}}").map(|n| (n, BlockKind::IfNot, true)),
                closer(b"{{/IF}}").map(|n| (n, BlockKind::If, true)),
            ]
            .into_iter()
            .flatten()
            .next();
            match hit {
                Some((n, kind, is_closer)) => {
                    found.push((pos, pos + n, kind, is_closer));
                    pos += n;
                }
                None => pos += 1,
            }
        }
        found
    }

    fn scan_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("{"),
            Just("}"),
            Just("{{"),
            Just("}}"),
            Just("IF:"),
            Just("IFNOT:"),
            Just("/IF"),
            Just("/IFNOT"),
            Just("a"),
            Just("\n"),
            Just("{{IF:a}}"),
            Just("{{/IF}}"),
            Just("{{REVIEW_LOOP_MAX_CYCLES}}"),
            Just("{{REVIEW_"),
            Just("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

        #[test]
        fn scan_equals_the_regex_and_counts_the_other_braces(text in scan_text(), from in 0usize..8) {
            let from = from.min(text.len());
            let expected = naive_scan(&text, from);
            let mut markers = Vec::new();
            let other = scan_into(&text, from, &mut markers);
            let got: Vec<_> = markers.iter().map(|m| (m.span().start, m.span().end, m.kind, m.closer)).collect();
            prop_assert_eq!(&got, &expected);
            let braces = text[from..].matches('{').count();
            prop_assert_eq!(other, braces != 2 * expected.len());

            // With placeholders taken aside: every one outside the markers.
            let mut placeholders = Vec::new();
            markers.clear();
            let other = scan_body(&text, from, &mut markers, Some(&mut placeholders));
            prop_assert_eq!(markers.len(), expected.len());
            let mut outside = Vec::new();
            let mut gap_start = from;
            for end in expected.iter().map(|m| m.0).chain([text.len()]) {
                outside.extend(text[gap_start..end].match_indices(PLACEHOLDER).map(|(at, _)| gap_start + at));
                gap_start = expected.iter().find(|m| m.0 == end).map_or(end, |m| m.1);
            }
            prop_assert_eq!(&placeholders, &outside);
            prop_assert_eq!(other, braces != 2 * (expected.len() + outside.len()));
        }
    }

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
