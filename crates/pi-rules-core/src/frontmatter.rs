//! Frontmatter: the `---` fenced `key: value` header of a rule file, and the gate it declares.
//!
//! The header is recognised exactly as the reference's regex
//! `^---\r?\n([\s\S]*?)\r?\n---\r?\n([\s\S]*)$` does: the first closing fence wins. It is not YAML:
//! each line is trimmed, blank and `#` lines are skipped, and the first `:` splits key from value.

use crate::text::{js_trim, js_trim_start};
use std::ops::Range;

/// A rule file split into its header and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter<'a> {
    /// The attribute lines, in order; a later key overrides an earlier one on lookup.
    pub attributes: Vec<Attribute<'a>>,
    /// Byte range of the header's content (between the fences), if there is a header.
    pub header: Option<Range<usize>>,
    /// Byte offset where the body starts (0 without a header).
    pub body_start: usize,
}

/// One `key: value` line of a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute<'a> {
    pub key: &'a str,
    pub value: &'a str,
    /// Byte range of the whole (untrimmed) line in the file.
    pub line: Range<usize>,
    /// Byte range of [`Attribute::value`] in the file.
    pub value_span: Range<usize>,
}

impl<'a> Frontmatter<'a> {
    /// The value of the last line that sets `key`.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.attributes
            .iter()
            .rev()
            .find(|a| a.key == key)
            .map(|a| a.value)
    }

    /// The last attribute line that sets `key`.
    pub fn attribute(&self, key: &str) -> Option<&Attribute<'a>> {
        self.attributes.iter().rev().find(|a| a.key == key)
    }
}

/// Splits `text` into header and body.
pub fn split(text: &str) -> Frontmatter<'_> {
    let Some((header, body_start)) = find_header(text) else {
        return Frontmatter {
            attributes: Vec::new(),
            header: None,
            body_start: 0,
        };
    };
    let mut attributes = Vec::new();
    let mut line_start = header.start;
    for raw in text[header.clone()].split('\n') {
        let line = line_start..line_start + raw.len();
        line_start = line.end + 1;
        // Splitting on `\r?\n`: the `\r` before a `\n` belongs to the separator.
        let content = raw.strip_suffix('\r').unwrap_or(raw);
        let trimmed = js_trim(content);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some(colon) = trimmed.find(':').filter(|&i| i > 0) else {
            continue;
        };
        let after_colon = &trimmed[colon + 1..];
        let value = js_trim(after_colon);
        // Offsets within the line: `trimmed` starts after the leading whitespace of `content`,
        // and `value` after the leading whitespace of `after_colon`.
        let value_start = line.start
            + (content.len() - js_trim_start(content).len())
            + colon
            + 1
            + (after_colon.len() - js_trim_start(after_colon).len());
        attributes.push(Attribute {
            key: js_trim(&trimmed[..colon]),
            value,
            line,
            value_span: value_start..value_start + value.len(),
        });
    }
    Frontmatter {
        attributes,
        header: Some(header),
        body_start,
    }
}

/// The header content range and the body start, when `text` opens with a header.
fn find_header(text: &str) -> Option<(Range<usize>, usize)> {
    let bytes = text.as_bytes();
    let open = if bytes.starts_with(b"---\n") {
        4
    } else if bytes.starts_with(b"---\r\n") {
        5
    } else {
        return None;
    };
    // The lazy group ends at the first `\r?\n---\r?\n` at or after `open`.
    let mut k = open;
    while let Some(off) = bytes[k..].iter().position(|&b| b == b'\n') {
        let nl = k + off;
        let after_fence = nl + 4;
        if bytes[nl + 1..].starts_with(b"---") {
            let body = if bytes[after_fence.min(bytes.len())..].starts_with(b"\n") {
                Some(after_fence + 1)
            } else if bytes[after_fence.min(bytes.len())..].starts_with(b"\r\n") {
                Some(after_fence + 2)
            } else {
                None
            };
            if let Some(body) = body {
                // The group may not start after its end: `---\n` then `\r\n---` at `open`
                // needs the `\r` inside the group only if it is at or after `open`.
                let end = if nl > open && bytes[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                return Some((open..end, body));
            }
        }
        k = nl + 1;
    }
    None
}

/// The gate a header declares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gate<'a> {
    /// `requires_setting: KEY`, trimmed; `None` when absent or empty.
    pub requires_setting: Option<&'a str>,
    /// `requires: NAME`, trimmed; `None` when absent or empty.
    pub requires: Option<&'a str>,
}

impl<'a> Frontmatter<'a> {
    pub fn gate(&self) -> Gate<'a> {
        let non_empty = |key| self.get(key).filter(|v| !v.is_empty());
        Gate {
            requires_setting: non_empty("requires_setting"),
            requires: non_empty("requires"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (text, expected attributes, expected body)
    type Case = (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static str,
    );

    #[test]
    fn split_table() {
        let cases: &[Case] = &[
            ("no header", &[], "no header"),
            ("---\na: 1\n---\nbody", &[("a", "1")], "body"),
            ("---\r\na: 1\r\n---\r\nbody", &[("a", "1")], "body"),
            ("---\na: 1\r\n---\nbody", &[("a", "1")], "body"),
            ("---\n\n---\nbody", &[], "body"),
            ("---\n---\nbody", &[], "---\n---\nbody"),
            ("--- \na: 1\n---\nbody", &[], "--- \na: 1\n---\nbody"),
            ("---\na: 1\n---", &[], "---\na: 1\n---"),
            ("---\na: 1\n---\n", &[("a", "1")], ""),
            ("---\na: 1\n--- \nb\n---\nbody", &[("a", "1")], "body"),
            (
                "---\na: 1\n---\nx\n---\nbody",
                &[("a", "1")],
                "x\n---\nbody",
            ),
            (
                "---\n# c\n :x\nnocolon\n k : v : w \n---\nb",
                &[("k", "v : w")],
                "b",
            ),
            ("---\na: 1\na: 2\n---\nb", &[("a", "1"), ("a", "2")], "b"),
            (
                "---\n\u{feff}a\u{feff}:\u{feff}1\n---\nb",
                &[("a", "1")],
                "b",
            ),
        ];
        for (text, attrs, body) in cases {
            let fm = split(text);
            let got: Vec<(&str, &str)> = fm.attributes.iter().map(|a| (a.key, a.value)).collect();
            for a in &fm.attributes {
                assert_eq!(&text[a.value_span.clone()], a.value, "{text:?}");
            }
            assert_eq!(got, *attrs, "{text:?}");
            assert_eq!(&text[fm.body_start..], *body, "{text:?}");
        }
    }

    #[test]
    fn later_key_wins_and_empty_gate_is_absent() {
        let fm = split("---\nrequires: a\nrequires: b\nrequires_setting:  \n---\n");
        assert_eq!(
            fm.gate(),
            Gate {
                requires_setting: None,
                requires: Some("b")
            }
        );
    }
}
