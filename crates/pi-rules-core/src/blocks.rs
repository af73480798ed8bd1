//! Block evaluation: resolving the `{{IF:}}` and `{{IFNOT:}}` blocks of one file body.
//!
//! Semantics (SPEC §2.3): left to right, a stray closer is kept verbatim with a warning; an
//! opener without a closer keeps the rest of the text verbatim with a warning and ends the
//! evaluation; a matched block keeps its evaluated body when its condition holds and drops it
//! otherwise. Unknown keys and malformed conditions fail closed for both kinds.
//!
//! The walk is iterative. Matching an opener records the closer of every block nested inside it,
//! so a kept block is entered by moving forward and a dropped one is skipped in one step.

use crate::condition::{self, Condition, Operator};
use crate::event::{BlockDecision, BlockReason, Observer, Warning, WarningKind};
use crate::markers::{self, BlockKind, Marker};
use crate::scope::Scope;
use std::ops::Range;

/// Reusable buffers for evaluating many bodies without reallocating.
#[derive(Debug, Default)]
pub struct Scratch {
    markers: Vec<Marker>,
    stack: Vec<usize>,
    pairs: Vec<usize>,
}

/// One body to evaluate: the file's whole text and where its body starts, so that reported spans
/// are offsets into the whole text.
pub struct Body<'t> {
    pub file: usize,
    pub text: &'t str,
    pub start: usize,
}

/// Appends the evaluated body to `out`, warnings to `warnings`, decisions to `observer`.
pub fn evaluate<O: Observer>(
    body: &Body<'_>,
    scope: &Scope<'_>,
    scratch: &mut Scratch,
    out: &mut String,
    warnings: &mut Vec<Warning>,
    observer: &mut O,
) {
    let text = &body.text[body.start..];
    let Scratch {
        markers,
        stack,
        pairs,
    } = scratch;
    markers.clear();
    markers::scan_into(text, markers);
    if markers.is_empty() {
        out.push_str(text);
        return;
    }
    pairs.clear();
    pairs.resize(markers.len(), usize::MAX);
    let markers: &[Marker] = markers;
    let mut eval = Evaluator {
        body,
        text,
        scope,
        markers,
        warnings,
        observer,
    };

    let mut pos = 0;
    let mut i = 0;
    while i < markers.len() {
        let marker = &markers[i];
        if marker.closer {
            out.push_str(&text[pos..marker.span.end]);
            pos = marker.span.end;
            eval.warn(
                marker.span.clone(),
                WarningKind::StrayCloser { kind: marker.kind },
            );
            i += 1;
            continue;
        }
        match markers::match_opener(markers, i, markers.len(), stack, pairs) {
            None => {
                let condition = text[marker.condition.clone()].to_owned();
                let kind = marker.kind;
                eval.warn(
                    marker.span.clone(),
                    WarningKind::Unbalanced { kind, condition },
                );
                break;
            }
            Some(close) => {
                out.push_str(&text[pos..marker.span.start]);
                eval.block(i, close, pairs, out);
                pos = markers[close].span.end;
                i = close + 1;
            }
        }
    }
    out.push_str(&text[pos..]);
}

struct Evaluator<'e, 'a, O> {
    body: &'e Body<'a>,
    /// The body alone; marker spans are relative to it.
    text: &'a str,
    scope: &'e Scope<'e>,
    markers: &'e [Marker],
    warnings: &'e mut Vec<Warning>,
    observer: &'e mut O,
}

impl<O: Observer> Evaluator<'_, '_, O> {
    fn shift(&self, span: &Range<usize>) -> Range<usize> {
        span.start + self.body.start..span.end + self.body.start
    }

    fn warn(&mut self, span: Range<usize>, kind: WarningKind) {
        let span = self.shift(&span);
        self.warnings.push(Warning {
            file: self.body.file,
            span,
            kind,
        });
    }

    /// Evaluates the matched block `open`..`close`, whose nested pairs are in `pairs`.
    fn block(&mut self, open: usize, close: usize, pairs: &[usize], out: &mut String) {
        if !self.holds(open, close) {
            return;
        }
        let mut pos = self.markers[open].span.end;
        let mut k = open + 1;
        while k < close {
            let marker = &self.markers[k];
            out.push_str(&self.text[pos..marker.span.start]);
            if marker.closer || self.holds(k, pairs[k]) {
                pos = marker.span.end;
                k += 1;
            } else {
                let end = pairs[k];
                pos = self.markers[end].span.end;
                k = end + 1;
            }
        }
        out.push_str(&self.text[pos..self.markers[close].span.start]);
    }

    /// Tests the condition of opener `open` (closed by `close`), warning where it fails closed.
    fn holds(&mut self, open: usize, close: usize) -> bool {
        let markers = self.markers;
        let marker = &markers[open];
        let raw = &self.text[marker.condition.clone()];
        let invert = marker.kind == BlockKind::IfNot;
        let settings = self.scope.settings;
        let (kept, reason) = match condition::parse(raw) {
            None => {
                self.warn(
                    marker.condition.clone(),
                    WarningKind::MalformedCondition {
                        condition: raw.to_owned(),
                    },
                );
                (false, BlockReason::Malformed)
            }
            Some(Condition::Bare { key }) => match self.scope.features.get(key) {
                Some(on) => (on != invert, BlockReason::Feature { name: key, on }),
                None => match settings.get(key) {
                    Some(value) => (
                        value.is_truthy() != invert,
                        BlockReason::Truthy { key, value },
                    ),
                    None => self.unknown(marker, key),
                },
            },
            Some(Condition::Compare {
                key, op, literal, ..
            }) => match settings.get(key) {
                Some(value) => {
                    let equal = value.strict_equals(&literal);
                    let holds = equal == (op == Operator::Equals);
                    (holds != invert, BlockReason::Compare { key, equal, value })
                }
                None => self.unknown(marker, key),
            },
        };
        self.observer.block(&BlockDecision {
            file: self.body.file,
            kind: marker.kind,
            opener: self.shift(&marker.span),
            condition: self.shift(&marker.condition),
            closer: self.shift(&markers[close].span),
            kept,
            reason,
        });
        kept
    }

    fn unknown<'k>(&mut self, marker: &Marker, key: &'k str) -> (bool, BlockReason<'k>) {
        self.warn(
            marker.condition.clone(),
            WarningKind::UnknownKey {
                key: key.to_owned(),
            },
        );
        (false, BlockReason::UnknownKey { key })
    }
}
