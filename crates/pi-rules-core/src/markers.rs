//! Marker scanning and matching: `{{IF:COND}}`, `{{IFNOT:COND}}`, `{{/IF}}` and `{{/IFNOT}}`.
//!
//! [`scan`] finds every marker of a text in one left-to-right pass, with the same leftmost,
//! non-overlapping matches as the reference's regex
//! `\{\{(IFNOT:([^}]+)|IF:([^}]+)|\/IFNOT|\/IF)\}\}`. [`match_opener`] pairs an opener with its
//! closer using an explicit stack. Neither recurses, and both are linear in their input.

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

/// One marker found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub kind: BlockKind,
    /// True for `{{/IF}}` and `{{/IFNOT}}`.
    pub closer: bool,
    /// The whole marker, braces included.
    pub span: Range<usize>,
    /// The condition text between `:` and `}}`, exactly as written; empty for closers.
    pub condition: Range<usize>,
}

impl Marker {
    pub fn is_opener(&self) -> bool {
        !self.closer
    }
}

/// Finds every marker in `text`, in order.
pub fn scan(text: &str) -> Vec<Marker> {
    let mut markers = Vec::new();
    scan_into(text, &mut markers);
    markers
}

/// Like [`scan`], appending to `out` so a caller can reuse the allocation.
pub fn scan_into(text: &str, out: &mut Vec<Marker>) {
    let bytes = text.as_bytes();
    // End of the run of non-`}` bytes that starts at or before the cached position. Condition runs
    // of neighbouring candidates overlap, so caching the next `}` keeps the scan linear on text
    // such as `{{IF:{{IF:{{IF:…` with no closing brace.
    let mut next_brace = NextBrace::default();
    let mut pos = 0;
    while let Some(found) = find_open_braces(bytes, pos) {
        match match_at(bytes, found, &mut next_brace) {
            Some(marker) => {
                pos = marker.span.end;
                out.push(marker);
            }
            None => pos = found + 1,
        }
    }
}

/// Position of the next `{{` at or after `from`.
fn find_open_braces(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(off) = memchr::memchr(b'{', bytes.get(i..)?) {
        let j = i + off;
        if bytes.get(j + 1) == Some(&b'{') {
            return Some(j);
        }
        i = j + 1;
    }
    None
}

#[derive(Default)]
struct NextBrace {
    /// Position of the first `}` at or after `from`, or `len` when there is none.
    from: usize,
    at: usize,
    valid: bool,
}

impl NextBrace {
    fn find(&mut self, bytes: &[u8], from: usize) -> usize {
        if !(self.valid && self.from <= from && from <= self.at) {
            self.at = memchr::memchr(b'}', &bytes[from.min(bytes.len())..])
                .map_or(bytes.len(), |off| from + off);
            self.from = from;
            self.valid = true;
        }
        self.at
    }
}

/// Tries the marker regex at `start` (where `{{` stands).
fn match_at(bytes: &[u8], start: usize, next_brace: &mut NextBrace) -> Option<Marker> {
    let rest = &bytes[start + 2..];
    let opener = |kind: BlockKind, prefix_len: usize, next_brace: &mut NextBrace| {
        let cond_start = start + 2 + prefix_len;
        let cond_end = next_brace.find(bytes, cond_start);
        let closed = cond_end > cond_start && bytes.get(cond_end + 1) == Some(&b'}');
        closed.then(|| Marker {
            kind,
            closer: false,
            span: start..cond_end + 2,
            condition: cond_start..cond_end,
        })
    };
    let closer = |kind: BlockKind, len: usize| Marker {
        kind,
        closer: true,
        span: start..start + 2 + len,
        condition: start + 2 + len..start + 2 + len,
    };
    if rest.starts_with(b"IFNOT:") {
        opener(BlockKind::IfNot, 6, next_brace)
    } else if rest.starts_with(b"IF:") {
        opener(BlockKind::If, 3, next_brace)
    } else if rest.starts_with(b"/IFNOT}}") {
        Some(closer(BlockKind::IfNot, 8))
    } else if rest.starts_with(b"/IF}}") {
        Some(closer(BlockKind::If, 5))
    } else {
        None
    }
}

/// Finds the closer of the opener `markers[open]`, considering markers up to `limit` (exclusive).
///
/// The stack holds the kinds of the openers met so far. A closer of the kind on top pops it; the
/// opener is closed when its own entry pops. A closer of the other kind means the opener has no
/// closer. Every opener met on the way that is closed inside gets its closer written into `pairs`
/// (indexed by marker), so evaluating the block needs no second search.
pub fn match_opener(
    markers: &[Marker],
    open: usize,
    limit: usize,
    stack: &mut Vec<usize>,
    pairs: &mut [usize],
) -> Option<usize> {
    stack.clear();
    stack.push(open);
    for (i, marker) in markers.iter().enumerate().take(limit).skip(open + 1) {
        if marker.is_opener() {
            stack.push(i);
            continue;
        }
        let top = *stack.last()?;
        if markers[top].kind != marker.kind {
            return None;
        }
        stack.pop();
        pairs[top] = i;
        if stack.is_empty() {
            return Some(i);
        }
    }
    None
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
                    format!("{}:{}", m.kind.keyword(), &text[m.condition.clone()])
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
    fn spans_cover_the_marker() {
        let text = "ab{{IF:x}}cd{{/IF}}";
        let markers = scan(text);
        assert_eq!(&text[markers[0].span.clone()], "{{IF:x}}");
        assert_eq!(&text[markers[1].span.clone()], "{{/IF}}");
    }

    fn matched(text: &str) -> Option<usize> {
        let markers = scan(text);
        let mut pairs = vec![usize::MAX; markers.len()];
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
