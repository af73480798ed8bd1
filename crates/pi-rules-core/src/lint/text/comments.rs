//! HTML comments in the Markdown body (PR512): hidden when rendered, read by the model. Fenced
//! code blocks and code spans are skipped, recognised by a small CommonMark subset.

use crate::find;
use crate::lint::codes::Code;
use crate::lint::diagnostic::{excerpt, FileDiagnostics};
use std::ops::Range;

/// A fence line: `(fence character, length, nothing but blanks after the fence)`.
fn fence(line: &[u8]) -> Option<(u8, usize, bool)> {
    let indent = line.iter().take(4).take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = *rest.first().filter(|&&b| b == b'`' || b == b'~')?;
    let len = rest.iter().take_while(|&&b| b == ch).count();
    if len < 3 {
        return None;
    }
    let after = &rest[len..];
    if ch == b'`' && after.contains(&b'`') {
        return None;
    }
    Some((ch, len, after.iter().all(u8::is_ascii_whitespace)))
}

/// The code spans of a line segment (CommonMark: a backtick run closed by the next run of the
/// same length), as sorted byte ranges relative to the segment.
fn code_spans(seg: &[u8]) -> Vec<Range<usize>> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while let Some(at) = find::memchr(b'`', &seg[i..]) {
        let start = i + at;
        let len = seg[start..].iter().take_while(|&&b| b == b'`').count();
        runs.push((start, len));
        i = start + len;
    }
    // For each run, the next run of the same length.
    let mut next_same = vec![None; runs.len()];
    let mut last: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (index, &(_, len)) in runs.iter().enumerate().rev() {
        next_same[index] = last.insert(len, index);
    }
    let mut spans = Vec::new();
    let mut index = 0;
    while index < runs.len() {
        match next_same[index] {
            Some(close) => {
                let (start, _) = runs[index];
                let (end, len) = runs[close];
                spans.push(start..end + len);
                index = close + 1;
            }
            None => index += 1,
        }
    }
    spans
}

/// Reports HTML comments in the Markdown body (from `body_start`), outside fenced code blocks
/// and code spans.
pub(crate) fn check_html_comments(text: &str, body_start: usize, out: &mut FileDiagnostics) {
    scan(text, body_start, |span, content, unclosed| {
        report_comment(span, content, unclosed, out)
    });
}

/// The closed HTML comments of a Markdown text (from `body_start`) that hold more than blanks,
/// outside fenced code blocks and code spans, as byte ranges from `<!--` to `-->` included: what
/// an agent that strips comments (Claude Code) never reads. Linear in the text.
pub fn html_comments(text: &str, body_start: usize) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    scan(text, body_start, |span, _, unclosed| {
        if !unclosed {
            found.push(span);
        }
    });
    found
}

/// Hands each HTML comment of the body (from `body_start`) that holds more than blanks, outside
/// fenced code blocks and code spans, to `each` with its content and whether it is unclosed (an
/// unclosed one ends the scan). Indented code blocks are not recognised. Linear: each byte is
/// looked at a bounded number of times, and the search for `-->` is never repeated over the
/// same text.
fn scan(text: &str, body_start: usize, mut each: impl FnMut(Range<usize>, &str, bool)) {
    let bytes = text.as_bytes();
    let opener = find::Finder::new(b"<!--");
    if opener.find(&bytes[body_start..]).is_none() {
        return;
    }
    let closer = find::Finder::new(b"-->");
    // The last search for `-->`: (from, found at).
    let mut last_close: Option<(usize, Option<usize>)> = None;
    let mut find_close = |from: usize| -> Option<usize> {
        if let Some((searched, found)) = last_close {
            if searched <= from && found.is_none_or(|at| at >= from) {
                return found;
            }
        }
        let found = closer.find(&bytes[from..]).map(|at| from + at);
        last_close = Some((from, found));
        found
    };
    let mut open_fence: Option<(u8, usize)> = None;
    let mut pos = body_start;
    let mut at_line_start = true;
    while pos < bytes.len() {
        let end = find::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
        let seg = &bytes[pos..end];
        if at_line_start {
            match (open_fence, fence(seg)) {
                (None, Some((ch, len, _))) => {
                    open_fence = Some((ch, len));
                    pos = end + 1;
                    continue;
                }
                (Some((ch, len)), Some((c, l, true))) if c == ch && l >= len => {
                    open_fence = None;
                    pos = end + 1;
                    continue;
                }
                (Some(_), _) => {
                    pos = end + 1;
                    continue;
                }
                (None, None) => {}
            }
        }
        if opener.find(seg).is_none() {
            pos = end + 1;
            at_line_start = true;
            continue;
        }
        let spans = if find::memchr(b'`', seg).is_some() {
            code_spans(seg)
        } else {
            Vec::new()
        };
        let mut span_index = 0;
        let mut from = 0;
        let mut resume = None;
        while let Some(found) = opener.find(&seg[from..]) {
            let start = from + found;
            while span_index < spans.len() && spans[span_index].end <= start {
                span_index += 1;
            }
            if spans.get(span_index).is_some_and(|s| s.start <= start) {
                from = spans[span_index].end;
                continue;
            }
            let at = pos + start;
            match find_close(at + 4) {
                Some(close) => {
                    let content = &text[at + 4..close];
                    if !content.trim().is_empty() {
                        each(at..close + 3, content, false);
                    }
                    if close + 3 <= end {
                        from = close + 3 - pos;
                    } else {
                        resume = Some(close + 3);
                        break;
                    }
                }
                None => {
                    let indent = start == seg.iter().take_while(|&&b| b == b' ').count();
                    if at_line_start && indent && start <= 3 {
                        each(at..at + 4, &text[at + 4..], true);
                        return;
                    }
                    from = start + 4;
                }
            }
        }
        match resume {
            Some(next) => {
                pos = next;
                at_line_start = false;
            }
            None => {
                pos = end + 1;
                at_line_start = true;
            }
        }
    }
}

fn report_comment(span: Range<usize>, content: &str, unclosed: bool, out: &mut FileDiagnostics) {
    let Some(d) = out.report(Code::HtmlComment, Some(span)) else {
        return;
    };
    if unclosed {
        d.message("unclosed HTML comment: the rest of the file is hidden when rendered")
            .label("from here on, a rendered review shows nothing; the model reads it all");
    } else {
        d.message(format!(
            "HTML comment, hidden when rendered: \"{}\"",
            excerpt(content.trim(), 60)
        ))
        .label("a rendered review shows nothing here; the model reads it");
    }
    d.help("if the model should follow it, make it visible text; otherwise delete it");
}
