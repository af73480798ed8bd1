//! Finding what is at an offset of a rule document: a marker, a frontmatter attribute, the
//! placeholder, or (while typing, when nothing is whole yet) the start of one.

use crate::explain;
use pi_rules_core::condition::{self, Condition};
use pi_rules_core::frontmatter::{self, Attribute};
use pi_rules_core::markers::{self, Marker};
use pi_rules_core::placeholder::REVIEW_LOOP_MAX_CYCLES as PLACEHOLDER;
use pi_rules_core::span;
use std::ops::Range;

/// `offset` clamped to `text` and moved back to a character boundary.
pub(crate) fn clamp(text: &str, offset: usize) -> usize {
    span::floor_boundary(text, offset)
}

/// The byte range of `part` in `whole`, when `part` is a slice of it.
pub(crate) fn range_in(whole: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then_some(start..start + part.len())
}

/// The markers of the body of `text` (after its frontmatter), as the assembly finds them.
pub(crate) fn body_markers(text: &str) -> (usize, Vec<Marker>) {
    let body_start = frontmatter::split(text).body_start;
    (body_start, markers::scan_from(text, body_start))
}

/// The marker whose span holds `offset` (its end excluded, unless `offset` is the end of the
/// text), from `markers` in order.
pub(crate) fn marker_at(markers: &[Marker], offset: usize) -> Option<(usize, &Marker)> {
    let i = markers.partition_point(|m| m.span().end <= offset);
    markers
        .get(i)
        .filter(|m| m.span().start <= offset)
        .map(|m| (i, m))
}

/// The key of an opener's condition and its range in `text`, when the condition parses.
pub(crate) fn condition_key(text: &str, marker: &Marker) -> Option<(String, Range<usize>)> {
    let raw = text.get(marker.condition())?;
    let parsed = condition::parse(raw)?;
    let key = parsed.key();
    let range = range_in(text, key)?;
    Some((key.to_owned(), range))
}

/// The parsed condition of an opener.
pub(crate) fn condition_of<'t>(text: &'t str, marker: &Marker) -> Option<Condition<'t>> {
    condition::parse(text.get(marker.condition())?)
}

/// For each opener of `markers`, the index of its closer, matched as explain matches them
/// ([`explain::closer_indices_into`]).
pub(crate) fn closers(markers: &[Marker]) -> Vec<Option<usize>> {
    let mut closer_of = Vec::new();
    explain::closer_indices_into(markers, &mut closer_of, &mut Vec::new());
    closer_of
}

/// The frontmatter attribute `requires_setting` or `requires` on whose line `offset` is.
pub(crate) fn gate_attribute_at(text: &str, offset: usize) -> Option<Attribute<'_>> {
    let fm = frontmatter::split(text);
    fm.attributes.into_iter().find(|a| {
        a.line.start <= offset
            && offset <= a.line.end
            && (a.key == "requires_setting" || a.key == "requires")
    })
}

/// The `{{REVIEW_LOOP_MAX_CYCLES}}` in the body of `text` that holds `offset`.
pub(crate) fn placeholder_at(text: &str, body_start: usize, offset: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let first = offset.saturating_sub(PLACEHOLDER.len() - 1).max(body_start);
    (first..=offset.min(bytes.len())).find_map(|start| {
        bytes
            .get(start..)
            .filter(|rest| rest.starts_with(PLACEHOLDER.as_bytes()))
            .map(|_| start..start + PLACEHOLDER.len())
            .filter(|r| r.contains(&offset))
    })
}

/// The range of the frontmatter's lines as an author types them: the header when the text has a
/// whole one, else, when the text opens with a `---` line, from after it to the next line that
/// is `---` (or the end).
pub(crate) fn header_region(text: &str) -> Option<Range<usize>> {
    let fm = frontmatter::split(text);
    if let Some(header) = fm.header {
        return Some(header);
    }
    let start = if text.starts_with("---\n") {
        4
    } else if text.starts_with("---\r\n") {
        5
    } else {
        return None;
    };
    let mut at = start;
    for line in text[start..].split_inclusive('\n') {
        let content = line.trim_end_matches('\n').trim_end_matches('\r');
        if content == "---" {
            return Some(start..at);
        }
        at += line.len();
    }
    Some(start..text.len())
}

/// The identifier characters of a settings key.
pub(crate) fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `end` moved forward over the bytes that satisfy `keep` (ASCII only, so it stays on a
/// character boundary).
pub(crate) fn extend_forward(text: &str, end: usize, keep: impl Fn(u8) -> bool) -> usize {
    let bytes = text.as_bytes();
    let mut end = end;
    while end < bytes.len() && bytes[end].is_ascii() && keep(bytes[end]) {
        end += 1;
    }
    end
}

/// The start of the line holding `offset`.
pub(crate) fn line_start(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}
