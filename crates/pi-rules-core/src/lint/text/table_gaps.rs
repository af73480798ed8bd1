//! Blank lines holding `\r` between table rows (PR501): table repair keeps them, so the table is
//! split in two. Lines of nothing but markers and whitespace count as blank.

use crate::find;
use crate::lint::codes::Code;
use crate::lint::diagnostic::FileDiagnostics;
use crate::markers::Marker;
use std::ops::Range;

/// Reports runs of blank lines that hold `\r`, between a line with `|` and a line starting with
/// `|`. Lines made only of markers and whitespace count as blank: dropping a block leaves them
/// so. `markers` are sorted; only the body (from `body_start`) is looked at.
pub(crate) fn check_table_gaps(
    text: &str,
    body_start: usize,
    markers: &[Marker],
    out: &mut FileDiagnostics,
) {
    let bytes = text.as_bytes();
    if find::memchr(b'\r', &bytes[body_start..]).is_none() {
        return;
    }
    let mut m = 0;
    let mut prev_has_pipe = false;
    // The current run of blankish lines after a `|` line: (range, holds a `\r`).
    let mut run: Option<(Range<usize>, bool)> = None;
    let mut start = body_start;
    while start <= bytes.len() {
        let end = find::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let line = start..end;
        match blankish(bytes, line.clone(), markers, &mut m) {
            Some(has_cr) if prev_has_pipe || run.is_some() => {
                let r = run.get_or_insert((line.start..line.end, false));
                r.0.end = line.end;
                r.1 |= has_cr;
            }
            _ => {
                if let Some((range, true)) = run.take() {
                    if starts_row(bytes, line.clone(), markers, m) {
                        report_gap(range, out);
                    }
                }
                prev_has_pipe = find::memchr(b'|', &bytes[line.clone()]).is_some();
                run = None;
            }
        }
        if end == bytes.len() {
            break;
        }
        start = end + 1;
    }
}

/// `Some(holds \r)` when the line is only spaces, tabs, `\r` and whole markers.
fn blankish(bytes: &[u8], line: Range<usize>, markers: &[Marker], m: &mut usize) -> Option<bool> {
    while *m < markers.len() && markers[*m].span().end <= line.start {
        *m += 1;
    }
    let mut k = *m;
    let mut pos = line.start;
    let mut has_cr = false;
    let gap_ok = |from: usize, to: usize, has_cr: &mut bool| {
        bytes[from..to].iter().all(|&b| {
            *has_cr |= b == b'\r';
            matches!(b, b' ' | b'\t' | b'\r')
        })
    };
    while k < markers.len() && markers[k].span().start < line.end {
        let span = markers[k].span();
        if span.start < pos || span.end > line.end {
            return None;
        }
        if !gap_ok(pos, span.start, &mut has_cr) {
            return None;
        }
        pos = span.end;
        k += 1;
    }
    gap_ok(pos, line.end, &mut has_cr).then_some(has_cr)
}

/// Whether the line starts with `|` (after markers at its start).
fn starts_row(bytes: &[u8], line: Range<usize>, markers: &[Marker], m: usize) -> bool {
    let mut pos = line.start;
    for marker in markers.iter().skip(m) {
        if marker.span().start != pos {
            break;
        }
        pos = marker.span().end;
    }
    bytes.get(pos) == Some(&b'|')
}

fn report_gap(range: Range<usize>, out: &mut FileDiagnostics) {
    let Some(d) = out.report(Code::CrTableGap, Some(range)) else {
        return;
    };
    d.message("blank line with `\\r` between table rows")
        .label("table repair keeps this line, so the table is split in two")
        .help("use `\\n` line endings, or put the markers on the row lines");
}
