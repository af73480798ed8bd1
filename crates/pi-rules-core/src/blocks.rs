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

    /// Makes room for the markers of a typical text of `bytes` bytes (one every hundred bytes or
    /// so), so that a first call does not grow its lists step by step.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        let typical = bytes / 128 + 16;
        self.markers.reserve(typical);
        self.pairs.reserve(typical);
        self.stack.reserve(16);
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
/// `conditions` remembers what each condition means in `scope`: give every body of one assembly
/// the same memo.
///
/// Returns whether the body holds a `{` other than the two that open each marker. When it does
/// not, what was appended holds no `{{REVIEW_LOOP_MAX_CYCLES}}`: markers kept verbatim are kept
/// whole, and no other text has a `{`.
pub fn evaluate<'a, O: Observer>(
    body: &Body<'a>,
    scope: &Scope<'a>,
    conditions: &mut Conditions<'a>,
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
        conditions,
        markers,
        warnings,
        observer,
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
    scope: &'e Scope<'a>,
    conditions: &'e mut Conditions<'a>,
    markers: &'e [Marker],
    warnings: &'e mut Vec<Warning>,
    observer: &'e mut O,
}

/// What the conditions of one assembly mean, remembered by their text.
///
/// Rules test a handful of conditions many times over (a table with a row per agent, an `IF` and
/// an `IFNOT` on the same key), and finding a condition's text among those met before is cheaper
/// than parsing it and hashing its key again. The memo is direct-mapped: a condition goes in the
/// slot its length and first and last bytes pick, replacing what was there, so a lookup is one
/// comparison whatever the input.
///
/// A memo is only valid for one [`Scope`]: make a new one for each assembly.
#[derive(Debug)]
pub struct Conditions<'a> {
    slots: [Option<Known<'a>>; SLOTS],
}

impl Default for Conditions<'_> {
    fn default() -> Self {
        Conditions {
            slots: [None; SLOTS],
        }
    }
}

/// How many conditions a memo holds (a power of two).
const SLOTS: usize = 32;

/// A condition as written and what it means.
#[derive(Debug, Clone, Copy)]
struct Known<'a> {
    raw: &'a str,
    meaning: Meaning<'a>,
}

/// What a condition means, whatever the block's kind.
#[derive(Debug, Clone, Copy)]
enum Meaning<'a> {
    /// It does not parse.
    Malformed,
    /// It names `key`, which starts `at` bytes into the condition.
    Key {
        key: &'a str,
        at: usize,
        names: Names<'a>,
    },
}

/// What a condition's key names, and what testing it gives before `IFNOT` inverts it.
#[derive(Debug, Clone, Copy)]
enum Names<'a> {
    /// A bare feature predicate.
    Feature(bool),
    /// A bare setting, tested for truthiness.
    Truthy { value: &'a Value, truthy: bool },
    /// A comparison: `equal` is the outcome of `===`, `holds` the outcome after the operator.
    Compare {
        value: &'a Value,
        equal: bool,
        holds: bool,
    },
    /// Neither a setting nor a feature predicate.
    Unknown,
}

impl<'a> Conditions<'a> {
    /// What condition `raw` means in `scope`.
    #[inline]
    fn meaning(&mut self, raw: &'a str, scope: &Scope<'a>) -> Meaning<'a> {
        let slot = &mut self.slots[slot(raw)];
        match slot {
            Some(known) if known.raw == raw => known.meaning,
            _ => Self::learn(slot, raw, scope),
        }
    }

    /// Interprets `raw` and remembers it in `slot`.
    #[cold]
    #[inline(never)]
    fn learn(slot: &mut Option<Known<'a>>, raw: &'a str, scope: &Scope<'a>) -> Meaning<'a> {
        let meaning = interpret(raw, scope);
        *slot = Some(Known { raw, meaning });
        meaning
    }
}

/// The memo slot of condition `raw`: its length and first and last bytes, mixed.
fn slot(raw: &str) -> usize {
    let bytes = raw.as_bytes();
    let (first, last) = match bytes {
        [] => (0, 0),
        [first, .., last] => (*first, *last),
        [only] => (*only, *only),
    };
    let mixed = (bytes.len() as u32)
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(u32::from(first) << 8 | u32::from(last))
        .wrapping_mul(0x85EB_CA6B);
    (mixed >> 27) as usize % SLOTS
}

/// Parses condition `raw` and looks its key up in `scope`. A bare key is a feature predicate
/// first, then a setting; a comparison reads settings only.
fn interpret<'a>(raw: &'a str, scope: &Scope<'a>) -> Meaning<'a> {
    let settings: &'a Settings = scope.settings;
    let (key, names) = match condition::parse(raw) {
        None => return Meaning::Malformed,
        Some(Condition::Bare { key }) => {
            let names = match scope.features.get(key) {
                Some(on) => Names::Feature(on),
                None => match settings.get(key) {
                    Some(value) => Names::Truthy {
                        value,
                        truthy: value.is_truthy(),
                    },
                    None => Names::Unknown,
                },
            };
            (key, names)
        }
        Some(Condition::Compare {
            key, op, literal, ..
        }) => {
            let names = match settings.get(key) {
                Some(value) => {
                    let equal = value.strict_equals(&literal);
                    Names::Compare {
                        value,
                        equal,
                        holds: equal == (op == Operator::Equals),
                    }
                }
                None => Names::Unknown,
            };
            (key, names)
        }
    };
    // The key starts the condition once it is trimmed.
    let at = raw.len() - js_trim_start(raw).len();
    Meaning::Key { key, at, names }
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
        let marker = &self.markers[open];
        let condition = marker.condition();
        let text: &'a str = self.text;
        let raw = &text[condition.clone()];
        let invert = marker.kind == BlockKind::IfNot;
        let (kept, reason) = match self.conditions.meaning(raw, self.scope) {
            Meaning::Malformed => {
                self.warn(condition.clone(), WarningKind::MalformedCondition);
                (false, BlockReason::Malformed)
            }
            Meaning::Key { key, at, names } => match names {
                Names::Feature(on) => (on != invert, BlockReason::Feature { name: key, on }),
                Names::Truthy { value, truthy } => {
                    (truthy != invert, BlockReason::Truthy { key, value })
                }
                Names::Compare {
                    value,
                    equal,
                    holds,
                } => (holds != invert, BlockReason::Compare { key, equal, value }),
                Names::Unknown => {
                    let start = condition.start + at;
                    self.warn(start..start + key.len(), WarningKind::UnknownKey);
                    (false, BlockReason::UnknownKey { key })
                }
            },
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
}
