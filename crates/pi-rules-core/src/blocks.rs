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
use crate::markers::{self, BlockKind, Marker, UNPAIRED};
use crate::scope::{Scope, Settings};
use crate::text::js_trim_start;
use crate::value::Value;

/// Reusable buffers for evaluating many bodies without reallocating.
#[derive(Debug, Default)]
pub struct Scratch {
    markers: Vec<Marker>,
    stack: Vec<u32>,
    pairs: Vec<u32>,
}

impl Scratch {
    /// Drops capacity beyond what a body of `bytes` bytes could need, so that one huge input does
    /// not pin its buffers for the rest of a long-running process.
    pub(crate) fn release_excess(&mut self, bytes: usize) {
        // A marker is at least 7 bytes long.
        let most = bytes / 7 + 1;
        shrink(&mut self.markers, most);
        shrink(&mut self.stack, most);
        shrink(&mut self.pairs, most);
    }
}

/// Shrinks `v` when it holds far more than `needed` and is large.
pub(crate) fn shrink<T>(v: &mut Vec<T>, needed: usize) {
    const KEEP_BYTES: usize = 1 << 20;
    if v.capacity() * std::mem::size_of::<T>() > KEEP_BYTES && v.capacity() > 4 * needed {
        v.clear();
        v.shrink_to(needed);
    }
}

/// One body to evaluate: the file's whole text and where its body starts, so that reported spans
/// are offsets into the whole text.
pub struct Body<'t> {
    pub file: usize,
    pub text: &'t str,
    pub start: usize,
}

/// Appends the evaluated body to `out`, warnings to `warnings`, decisions to `observer`.
///
/// Returns whether the body holds a `{` other than the two that open each marker. When it does
/// not, what was appended holds no `{{REVIEW_LOOP_MAX_CYCLES}}`: markers kept verbatim are kept
/// whole, and no other text has a `{`.
pub fn evaluate<O: Observer>(
    body: &Body<'_>,
    scope: &Scope<'_>,
    scratch: &mut Scratch,
    out: &mut String,
    warnings: &mut Vec<Warning>,
    observer: &mut O,
) -> bool {
    let text = body.text;
    let Scratch {
        markers,
        stack,
        pairs,
    } = scratch;
    markers.clear();
    let other_braces = markers::scan_into(text, body.start, markers);
    if markers.is_empty() {
        out.push_str(&text[body.start.min(text.len())..]);
        return other_braces;
    }
    pairs.clear();
    pairs.resize(markers.len(), UNPAIRED);
    let markers: &[Marker] = markers;
    let mut eval = Evaluator {
        file: body.file,
        text,
        scope,
        markers,
        warnings,
        observer,
        recent: [None; RECENT],
        next_recent: 0,
    };

    let mut pos = body.start;
    let mut i = 0;
    while i < markers.len() {
        let marker = &markers[i];
        let span = marker.span();
        if marker.closer {
            out.push_str(&text[pos..span.end]);
            pos = span.end;
            eval.warn(span, WarningKind::StrayCloser { kind: marker.kind });
            i += 1;
            continue;
        }
        match markers::match_opener(markers, i, markers.len(), stack, pairs) {
            None => {
                eval.warn(span, WarningKind::Unbalanced { kind: marker.kind });
                break;
            }
            Some(close) => {
                out.push_str(&text[pos..span.start]);
                eval.block(i, close, pairs, out);
                pos = markers[close].span().end;
                i = close + 1;
            }
        }
    }
    out.push_str(&text[pos..]);
    other_braces
}

struct Evaluator<'e, 'a, O> {
    file: usize,
    /// The file's whole text; marker spans are offsets into it.
    text: &'a str,
    scope: &'e Scope<'e>,
    markers: &'e [Marker],
    warnings: &'e mut Vec<Warning>,
    observer: &'e mut O,
    /// The last few bare conditions looked up. Rules test a handful of keys many times over
    /// (a table with a row per agent), and a comparison of the text is cheaper than parsing it
    /// and hashing the key again.
    recent: [Option<Recent<'a, 'e>>; RECENT],
    /// Where the next condition is remembered.
    next_recent: usize,
}

/// How many bare conditions an evaluation remembers.
const RECENT: usize = 4;

/// A bare condition as written and what its key names.
#[derive(Clone, Copy)]
struct Recent<'a, 'v> {
    raw: &'a str,
    /// The key's byte range in `raw` (after the leading whitespace).
    key: (usize, usize),
    names: Names<'v>,
}

/// What a bare key names, whatever the block's kind.
#[derive(Clone, Copy)]
enum Names<'v> {
    Feature(bool),
    Setting(&'v Value),
    Nothing,
}

impl<'e, 'a, O: Observer> Evaluator<'e, 'a, O> {
    fn warn(&mut self, span: std::ops::Range<usize>, kind: WarningKind) {
        self.warnings.push(Warning::new(self.file, span, kind));
    }

    /// Evaluates the matched block `open`..`close`, whose nested pairs are in `pairs`.
    fn block(&mut self, open: usize, close: usize, pairs: &[u32], out: &mut String) {
        if !self.holds(open, close) {
            return;
        }
        let mut pos = self.markers[open].span().end;
        let mut k = open + 1;
        while k < close {
            let marker = &self.markers[k];
            let span = marker.span();
            out.push_str(&self.text[pos..span.start]);
            // Every opener inside a matched block is closed inside it: its pair is set.
            let pair = pairs[k] as usize;
            if marker.closer || self.holds(k, pair) {
                pos = span.end;
                k += 1;
            } else {
                pos = self.markers[pair].span().end;
                k = pair + 1;
            }
        }
        out.push_str(&self.text[pos..self.markers[close].span().start]);
    }

    /// Tests the condition of opener `open` (closed by `close`), warning where it fails closed.
    fn holds(&mut self, open: usize, close: usize) -> bool {
        let markers = self.markers;
        let marker = &markers[open];
        let condition = marker.condition();
        let text: &'a str = self.text;
        let raw = &text[condition.clone()];
        let invert = marker.kind == BlockKind::IfNot;
        let settings: &'e Settings = self.scope.settings;
        let bare = match self.recall(raw) {
            Some(recent) => Some(recent),
            None => match condition::parse(raw) {
                None => None,
                Some(Condition::Bare { key }) => Some(self.remember(raw, key)),
                Some(Condition::Compare {
                    key, op, literal, ..
                }) => {
                    let (kept, reason) = match settings.get(key) {
                        Some(value) => {
                            let equal = value.strict_equals(&literal);
                            let holds = equal == (op == Operator::Equals);
                            (holds != invert, BlockReason::Compare { key, equal, value })
                        }
                        None => self.unknown(condition.start, raw, key),
                    };
                    return self.decided(open, close, kept, reason);
                }
            },
        };
        let (kept, reason) = match bare {
            None => {
                self.warn(condition.clone(), WarningKind::MalformedCondition);
                (false, BlockReason::Malformed)
            }
            Some(Recent {
                raw, key, names, ..
            }) => {
                let key = &raw[key.0..key.1];
                match names {
                    Names::Feature(on) => (on != invert, BlockReason::Feature { name: key, on }),
                    Names::Setting(value) => (
                        value.is_truthy() != invert,
                        BlockReason::Truthy { key, value },
                    ),
                    Names::Nothing => self.unknown(condition.start, raw, key),
                }
            }
        };
        self.decided(open, close, kept, reason)
    }

    /// Reports the decision on block `open`..`close` and returns whether it is kept.
    fn decided(&mut self, open: usize, close: usize, kept: bool, reason: BlockReason<'_>) -> bool {
        let marker = &self.markers[open];
        self.observer.block(&BlockDecision {
            file: self.file,
            kind: marker.kind,
            opener: marker.span(),
            condition: marker.condition(),
            closer: self.markers[close].span(),
            kept,
            reason,
        });
        kept
    }

    /// A bare condition written exactly as `raw` that was looked up lately.
    fn recall(&self, raw: &str) -> Option<Recent<'a, 'e>> {
        self.recent
            .iter()
            .flatten()
            .find(|recent| recent.raw == raw)
            .copied()
    }

    /// Looks up the bare `key` of condition `raw` and remembers what it names.
    fn remember(&mut self, raw: &'a str, key: &'a str) -> Recent<'a, 'e> {
        let names = match self.scope.features.get(key) {
            Some(on) => Names::Feature(on),
            None => self
                .scope
                .settings
                .get(key)
                .map_or(Names::Nothing, Names::Setting),
        };
        let start = raw.len() - js_trim_start(raw).len();
        let recent = Recent {
            raw,
            key: (start, start + key.len()),
            names,
        };
        self.recent[self.next_recent] = Some(recent);
        self.next_recent = (self.next_recent + 1) % RECENT;
        recent
    }

    /// Warns about an unknown `key`, which starts the condition `raw` (at `at`) once it is
    /// trimmed.
    fn unknown<'k>(&mut self, at: usize, raw: &str, key: &'k str) -> (bool, BlockReason<'k>) {
        let start = at + (raw.len() - js_trim_start(raw).len());
        self.warn(start..start + key.len(), WarningKind::UnknownKey);
        (false, BlockReason::UnknownKey { key })
    }
}
