//! Checks on markers: balance (unclosed openers, stray and mismatched closers) and text that
//! looks like a marker or placeholder but is not one.
//!
//! Balance uses the engine's equivalent linear algorithm (SPEC §2.3): one pass with a global
//! stack of openers; a mismatched closer leaves every open block unclosed and empties the stack;
//! a closer with an empty stack is stray. Markers come from [`crate::markers::scan`], so every
//! block is checked, including those inside blocks that evaluation would drop.

use super::codes::Code;
use super::diagnostic::{excerpt, FileDiagnostics, Fix};
use super::suggest;
use crate::find;
use crate::markers::{BlockKind, Marker};
use crate::placeholder::REVIEW_LOOP_MAX_CYCLES;

/// How far after `{{` near-miss detection looks (bytes).
const WINDOW: usize = 96;

fn shown(text: &str, marker: &Marker) -> String {
    excerpt(&text[marker.span()], 60)
}

/// Reports unclosed openers, stray closers and mismatched closers among `markers`.
///
/// A mismatched closer leaves the blocks open at that point without a closer; the closers written
/// further on to close them then find no open block. Those follow from the mismatch, so they are
/// shown in its finding rather than reported as stray closers of their own.
pub(crate) fn check_balance(text: &str, markers: &[Marker], out: &mut FileDiagnostics) {
    struct Mismatch {
        closer: usize,
        /// The blocks left open, outermost first.
        open: Vec<usize>,
        /// Later closers that match them.
        consequences: Vec<usize>,
    }
    let mut stack: Vec<usize> = Vec::new();
    let mut mismatches: Vec<Mismatch> = Vec::new();
    // The blocks the last mismatch left open, innermost last, still waiting for their closers.
    let mut waiting: Vec<usize> = Vec::new();
    for (i, marker) in markers.iter().enumerate() {
        if marker.is_opener() {
            stack.push(i);
            continue;
        }
        let Some(&top) = stack.last() else {
            // The innermost waiting block of this kind, and those inside it, count as closed.
            let meant = waiting
                .iter()
                .rposition(|&open| markers[open].kind == marker.kind);
            match (meant, mismatches.last_mut()) {
                (Some(j), Some(last)) => {
                    waiting.truncate(j);
                    last.consequences.push(i);
                }
                _ => stray(text, marker, out),
            }
            continue;
        };
        if markers[top].kind == marker.kind {
            stack.pop();
            continue;
        }
        mismatches.push(Mismatch {
            closer: i,
            open: stack.clone(),
            consequences: Vec::new(),
        });
        waiting = std::mem::take(&mut stack);
    }
    for m in &mismatches {
        mismatched(
            text,
            markers,
            &m.open,
            &markers[m.closer],
            &m.consequences,
            out,
        );
    }
    for &open in &stack {
        let marker = &markers[open];
        let Some(d) = out.report(Code::UnclosedBlock, Some(marker.span())) else {
            continue;
        };
        let keyword = marker.kind.keyword();
        d.message(format!("`{}` is never closed", shown(text, marker)))
            .label("from here on the text is kept verbatim, markers included")
            .help(format!("add `{{{{/{keyword}}}}}` where the block ends"));
    }
}

fn stray(text: &str, marker: &Marker, out: &mut FileDiagnostics) {
    let Some(d) = out.report(Code::StrayCloser, Some(marker.span())) else {
        return;
    };
    d.message(format!("`{}` closes no open block", &text[marker.span()]))
        .label("kept in the prompt verbatim")
        .help(format!(
            "remove it, or add the missing `{{{{{}:…}}}}`",
            marker.kind.keyword()
        ));
}

fn mismatched(
    text: &str,
    markers: &[Marker],
    stack: &[usize],
    closer: &Marker,
    consequences: &[usize],
    out: &mut FileDiagnostics,
) {
    let Some(d) = out.report(Code::MismatchedCloser, Some(closer.span())) else {
        return;
    };
    let Some(&top) = stack.last() else { return };
    let open = &markers[top];
    d.message(format!(
        "`{}` does not match the open `{}`",
        &text[closer.span()],
        shown(text, open)
    ))
    .label(format!("expected `{{{{/{}}}}}`", open.kind.keyword()))
    .help(format!(
        "close the inner block first with `{{{{/{}}}}}`",
        open.kind.keyword()
    ));
    // The outermost open block is where the verbatim text starts; show it and the innermost.
    let outer = &markers[stack[0]];
    d.secondary(open.span(), "this block is left unclosed".to_owned());
    if stack.len() > 1 {
        let enclosing = match stack.len() - 1 {
            1 => "so is the block around it".to_owned(),
            n => format!("so are the {n} blocks around it"),
        };
        d.secondary(
            outer.span(),
            format!("{enclosing}; from here on the text is kept verbatim"),
        );
    } else {
        d.note("from the open block on, the text is kept verbatim, markers included");
    }
    for &c in consequences {
        d.secondary(
            markers[c].span(),
            "meant to close a block left open above; kept verbatim, with no block to close",
        );
    }
    if !consequences.is_empty() {
        let n = consequences.len();
        d.note(if n == 1 {
            "the later closer meant for the blocks left open closes nothing either: it stays in \
             the prompt as text"
                .to_owned()
        } else {
            format!(
                "the {n} later closers meant for the blocks left open close nothing either: they \
                 stay in the prompt as text"
            )
        });
    }
}

/// Reports text after `body_start` that looks like a marker, the placeholder, or `{{SETTINGS}}`
/// but is not one. `markers` are the real markers, sorted.
pub(crate) fn check_near_misses(
    text: &str,
    body_start: usize,
    markers: &[Marker],
    out: &mut FileDiagnostics,
) {
    let bytes = text.as_bytes();
    let mut m = 0;
    let mut from = body_start;
    while let Some(off) = find::memchr(b'{', bytes.get(from..).unwrap_or_default()) {
        let p = from + off;
        from = p + 1;
        if bytes.get(p + 1) != Some(&b'{') || bytes.get(p + 2) == Some(&b'{') {
            continue;
        }
        while m < markers.len() && markers[m].span().end <= p {
            m += 1;
        }
        if markers.get(m).is_some_and(|mk| mk.span().start <= p) {
            continue;
        }
        if bytes[p..].starts_with(REVIEW_LOOP_MAX_CYCLES.as_bytes()) {
            continue;
        }
        classify(text, p, out);
    }
}

/// What follows `{{` at `p`, up to the end of the line, the next `{{`, or [`WINDOW`] bytes. The
/// next `{{` starts a candidate (or a marker) of its own, so no two candidates' spans overlap,
/// and their repairs can be applied together.
fn window(text: &str, p: usize) -> &str {
    let start = p + 2;
    let end = crate::span::floor_boundary(text, start + WINDOW);
    let w = &text[start..end];
    let w = match find::memchr2(b'\n', b'\r', w.as_bytes()) {
        Some(nl) => &w[..nl],
        None => w,
    };
    match w.find("{{") {
        Some(next) => &w[..next],
        None => w,
    }
}

fn classify(text: &str, p: usize, out: &mut FileDiagnostics) {
    let w = window(text, p);
    // The candidate ends at the first `}` of the window, through `}}` when there are two.
    let brace = find::memchr(b'}', w.as_bytes());
    let close = brace.map(|b| {
        if w[b..].starts_with("}}") {
            b + 2
        } else {
            b + 1
        }
    });
    let inner = &w[..brace.unwrap_or(0)];

    let trimmed = w.trim_start_matches([' ', '\t']);
    if starts_with_word(trimmed, "SETTINGS") {
        let end = close.unwrap_or(w.len() - trimmed.len() + "SETTINGS".len());
        settings_placeholder(text, p, p + 2 + end, out);
        return;
    }
    if let Some(shape) = marker_shape(w) {
        let end = p + 2 + close.unwrap_or(shape.word_end);
        near_miss_marker(text, p..end, &shape, w, out);
        return;
    }
    let Some(close) = close else { return };
    if inner.is_empty() || inner.len() > 40 || inner.contains(':') {
        return;
    }
    // Compared as bytes: the name is ASCII, and any other byte costs one edit.
    let mut normal = [0u8; 40];
    let trimmed = inner.trim().as_bytes();
    for (slot, b) in normal.iter_mut().zip(trimmed) {
        *slot = match b {
            b'-' | b' ' | b'\t' => b'_',
            b => b.to_ascii_uppercase(),
        };
    }
    let name = &REVIEW_LOOP_MAX_CYCLES.as_bytes()[2..REVIEW_LOOP_MAX_CYCLES.len() - 2];
    if suggest::distance(&normal[..trimmed.len()], name, 3).is_none() {
        return;
    }
    let end = p + 2 + close;
    if let Some(d) = out.report(Code::NearMissPlaceholder, Some(p..end)) {
        d.message(format!(
            "`{}` is not the placeholder `{REVIEW_LOOP_MAX_CYCLES}`",
            excerpt(&text[p..end], 60)
        ))
        .label("left in the prompt as written")
        .help(format!("write `{REVIEW_LOOP_MAX_CYCLES}`"))
        .fix(Fix::replace(
            p..end,
            REVIEW_LOOP_MAX_CYCLES,
            format!("write `{REVIEW_LOOP_MAX_CYCLES}`"),
        ));
    }
}

fn starts_with_word(s: &str, word: &str) -> bool {
    s.len() >= word.len()
        && s.as_bytes()[..word.len()].eq_ignore_ascii_case(word.as_bytes())
        && !s
            .as_bytes()
            .get(word.len())
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

fn settings_placeholder(text: &str, p: usize, end: usize, out: &mut FileDiagnostics) {
    let Some(d) = out.report(Code::SettingsPlaceholderInRule, Some(p..end)) else {
        return;
    };
    d.message(format!(
        "`{}` is never substituted in a rule file",
        excerpt(&text[p..end], 60)
    ))
    .label("left in the prompt as written")
    .help("`{{SETTINGS}}` works in agent prompts only; in rules, use `{{IF:key}}…{{/IF}}` blocks");
}

/// The shape of marker-like text after `{{`.
struct Shape {
    closer: bool,
    kind: BlockKind,
    /// Spaces or tabs before the keyword or around the `/`.
    spaced: bool,
    /// The keyword is not upper case.
    cased: bool,
    /// Offset in the window just after the keyword.
    word_end: usize,
}

fn marker_shape(w: &str) -> Option<Shape> {
    let b = w.as_bytes();
    let mut i = 0;
    let skip = |i: &mut usize| {
        let s = *i;
        while b.get(*i).is_some_and(|c| *c == b' ' || *c == b'\t') {
            *i += 1;
        }
        *i > s
    };
    let mut spaced = skip(&mut i);
    let closer = b.get(i) == Some(&b'/');
    if closer {
        i += 1;
        spaced |= skip(&mut i);
    }
    let start = i;
    while b.get(i).is_some_and(u8::is_ascii_alphabetic) {
        i += 1;
    }
    if b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        return None;
    }
    let word = &w[start..i];
    let kind = if word.eq_ignore_ascii_case("if") {
        BlockKind::If
    } else if word.eq_ignore_ascii_case("ifnot") {
        BlockKind::IfNot
    } else {
        return None;
    };
    Some(Shape {
        closer,
        kind,
        spaced,
        cased: word != kind.keyword(),
        word_end: i,
    })
}

fn near_miss_marker(
    text: &str,
    span: std::ops::Range<usize>,
    shape: &Shape,
    w: &str,
    out: &mut FileDiagnostics,
) {
    let Some(d) = out.report(Code::NearMissMarker, Some(span.clone())) else {
        return;
    };
    let keyword = shape.kind.keyword();
    let after = &w[shape.word_end..];
    // Only case and spacing are repaired, and only when the result is exactly one marker.
    let mut exact: Option<String> = None;
    let (why, meant) = if shape.closer {
        let why = if shape.cased {
            "markers are upper case"
        } else if shape.spaced {
            "no spaces are allowed inside the braces"
        } else if after.trim_start().starts_with("}}") {
            "no space is allowed before `}}`"
        } else {
            "a closer ends with `}}` right after the keyword"
        };
        let spacing_only = after.trim_start_matches([' ', '\t']).starts_with("}}");
        if spacing_only || shape.cased || shape.spaced {
            exact = Some(format!("{{{{/{keyword}}}}}"));
        }
        (why, format!("{{{{/{keyword}}}}}"))
    } else {
        let rest = after.trim_start_matches([' ', '\t']);
        let cond_src = rest.strip_prefix(':').unwrap_or(rest);
        let cond_end = cond_src.find('}').unwrap_or(cond_src.len());
        let cond = cond_src[..cond_end].trim();
        let cond = if cond.is_empty() { "key" } else { cond };
        let why = if shape.cased {
            "markers are upper case"
        } else if shape.spaced {
            "no spaces are allowed inside the braces"
        } else if !after.starts_with(':') {
            if rest.starts_with(':') {
                "no space is allowed before the `:`"
            } else {
                "an opener needs a `:` after the keyword"
            }
        } else if after[1..].starts_with('}') {
            "the condition is empty"
        } else {
            "the condition must end with `}}` and cannot contain `}`"
        };
        let raw = crate::text::js_trim(&cond_src[..cond_end]);
        let repairable = shape.cased || shape.spaced || (rest.starts_with(':') && after != rest);
        if repairable
            && !raw.is_empty()
            && !raw.contains('{')
            && cond_src[cond_end..].starts_with("}}")
        {
            exact = Some(format!("{{{{{keyword}:{raw}}}}}"));
        }
        (why, format!("{{{{{keyword}:{}}}}}", excerpt(cond, 40)))
    };
    // The text replaced must be the whole look-alike, up to its `}}`.
    let exact = exact.filter(|m| {
        text[span.clone()].ends_with("}}")
            && crate::markers::scan(m)
                .first()
                .is_some_and(|k| k.span() == (0..m.len()))
    });
    d.message(format!(
        "`{}` looks like a marker but is plain text",
        excerpt(&text[span.clone()], 60)
    ))
    .label(why)
    .note("it is not evaluated and stays in the prompt as written")
    .help(format!("write `{meant}`"));
    if let Some(exact) = exact {
        let description = format!("write `{}`", excerpt(&exact, 60));
        d.fix(Fix::replace(span, exact, description));
    }
}

/// How many balance problems (unclosed openers, stray and mismatched closers) `text` has.
pub(crate) fn balance_problems(text: &str) -> usize {
    let markers = crate::markers::scan(text);
    let mut stack: Vec<crate::markers::BlockKind> = Vec::new();
    let mut problems = 0;
    for m in &markers {
        if m.is_opener() {
            stack.push(m.kind);
        } else if stack.last() == Some(&m.kind) {
            stack.pop();
        } else {
            problems += 1;
            stack.clear();
        }
    }
    problems + stack.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::testing::codes_of;
    use crate::markers;

    fn check(text: &str) -> Vec<(Code, Option<String>)> {
        let markers = markers::scan(text);
        let mut out = FileDiagnostics::new("x.md");
        check_balance(text, &markers, &mut out);
        check_near_misses(text, 0, &markers, &mut out);
        out.finish(None)
            .into_iter()
            .map(|d| (d.code, d.help.map(String::from)))
            .collect()
    }

    #[test]
    fn marker_table() {
        use Code::*;
        let cases: &[(&str, &[Code])] = &[
            ("plain {text} {{x}} {{#if a}}", &[]),
            ("{{IF:a}}x{{/IF}}{{IFNOT:b}}{{IF:c}}{{/IF}}{{/IFNOT}}", &[]),
            (
                "{{REVIEW_LOOP_MAX_CYCLES}} {{{REVIEW_LOOP_MAX_CYCLES}}}",
                &[],
            ),
            ("{{IF:a}}x", &[UnclosedBlock]),
            ("x{{/IF}}", &[StrayCloser]),
            ("{{IF:a}}x{{/IFNOT}}", &[MismatchedCloser]),
            // The two `{{/IF}}` follow from the mismatch: one finding.
            (
                "{{IF:a}}{{IF:b}}{{/IFNOT}}{{/IF}}{{/IF}}",
                &[MismatchedCloser],
            ),
            (
                "{{IF:a}}{{IF:b}}{{/IFNOT}}{{/IF}}{{/IF}}{{/IF}}",
                &[MismatchedCloser, StrayCloser],
            ),
            ("{{IF:a}}{{IFNOT:b}}{{/IF}}{{/IF}}", &[MismatchedCloser]),
            ("{{IF:a}}{{IF:b}}{{/IF}}", &[UnclosedBlock]),
            ("{{if:a}}", &[NearMissMarker]),
            ("{{ IF:a}}", &[NearMissMarker]),
            ("{{/IF }}", &[NearMissMarker]),
            ("{{IF:}}", &[NearMissMarker]),
            ("{{IF x}}", &[NearMissMarker]),
            ("{{IFNOT}}", &[NearMissMarker]),
            ("{{/if}}", &[NearMissMarker]),
            ("{{IF:a}b}}", &[NearMissMarker]),
            ("{{IF:a}x{{/IF}}", &[NearMissMarker, StrayCloser]),
            ("{{IFRAME}} {{IF2}}", &[]),
            ("{{REVIEW_LOOP_MAX_CYCLE}}", &[NearMissPlaceholder]),
            ("{{review_loop_max_cycles}}", &[NearMissPlaceholder]),
            ("{{ REVIEW_LOOP_MAX_CYCLES }}", &[NearMissPlaceholder]),
            ("{{REVIEW_LOOP_MAX_CYCLES}", &[NearMissPlaceholder]),
            ("{{MAX_CYCLES}}", &[]),
            (
                "{{SETTINGS}} {{SETTINGS:dco}}",
                &[SettingsPlaceholderInRule; 2],
            ),
            ("{{IF:a{{IF:b}}", &[UnclosedBlock]),
        ];
        for (text, expected) in cases {
            assert_eq!(codes_of(&check(text)), *expected, "{text:?}");
        }
    }

    #[test]
    fn near_miss_helps() {
        let cases = [
            ("{{if:dco}}", "write `{{IF:dco}}`"),
            ("{{ IFNOT: dco }}", "write `{{IFNOT:dco}}`"),
            ("{{/IF }}", "write `{{/IF}}`"),
            ("{{IF:}}", "write `{{IF:key}}`"),
            (
                "{{REVIEW_LOOP_MAX_CYCLE}}",
                "write `{{REVIEW_LOOP_MAX_CYCLES}}`",
            ),
        ];
        for (text, help) in cases {
            let got = check(text);
            assert_eq!(got.len(), 1, "{text:?}");
            assert_eq!(got[0].1.as_deref(), Some(help), "{text:?}");
        }
    }

    #[test]
    fn adversarial_input_is_bounded() {
        let text = "{{IF:".repeat(30_000);
        let got = check(&text);
        assert_eq!(got.len(), crate::lint::diagnostic::MAX_PER_CODE + 1);
        let text = "{{/IF}}".repeat(20_000);
        assert_eq!(
            check(&text).len(),
            crate::lint::diagnostic::MAX_PER_CODE + 1
        );
    }
}
