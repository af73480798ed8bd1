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
use crate::placeholder::REVIEW_LOOP_MAX_CYCLES;
use crate::scope::{Scope, Settings};
use crate::text::js_trim_start;
use crate::value::Value;
use std::ops::Range;

/// Reusable buffers for evaluating many bodies without reallocating.
#[derive(Debug, Default)]
pub struct Scratch {
    markers: Vec<Marker>,
    stack: Vec<u32>,
    pairs: Vec<u32>,
    /// Placeholder offsets in the body's text.
    placeholders: Vec<usize>,
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
        shrink(
            &mut self.placeholders,
            bytes / REVIEW_LOOP_MAX_CYCLES.len() + 1,
        );
    }

    /// Makes room for the markers of a typical text of `bytes` bytes (one every hundred bytes or
    /// so) and a few placeholders, so that a first call does not grow its lists step by step.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        let typical = bytes / 128 + 16;
        self.markers.reserve(typical);
        self.pairs.reserve(typical);
        self.stack.reserve(16);
        self.placeholders.reserve(16);
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

/// What [`evaluate`] reports besides the text it appends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluated {
    /// Whether the body holds a `{` other than the two that open each marker and, when
    /// placeholders were filled in, the two that open each placeholder. When it does not, what
    /// was appended holds no `{{REVIEW_LOOP_MAX_CYCLES}}` (any more): markers kept verbatim are
    /// kept whole, and no other text has a `{`.
    pub other_braces: bool,
    /// How many `{{REVIEW_LOOP_MAX_CYCLES}}` were replaced while copying.
    pub filled: usize,
}

/// Appends the evaluated body to `out`, warnings to `warnings`, decisions to `observer`.
/// `conditions` remembers what each condition means in `scope`: give every body of one assembly
/// the same memo.
///
/// With `fill`, the placeholders of the appended text are replaced by it as the text is copied,
/// when the body's braces make that possible (see [`Evaluated`]); otherwise none is.
#[allow(clippy::too_many_arguments)]
pub fn evaluate<'a, O: Observer>(
    body: &Body<'a>,
    scope: &Scope<'a>,
    conditions: &mut Conditions<'a>,
    scratch: &mut Scratch,
    out: &mut String,
    warnings: &mut Vec<Warning>,
    observer: &mut O,
    fill: Option<&str>,
) -> Evaluated {
    let text = body.text;
    let Scratch {
        markers,
        stack,
        pairs,
        placeholders,
    } = scratch;
    markers.clear();
    placeholders.clear();
    let found = fill.is_some().then_some(&mut *placeholders);
    let other_braces = markers::scan_body(text, body.start, markers, found);
    let (value, pending): (&str, &[usize]) = match fill {
        Some(value) if !other_braces => (value, placeholders),
        _ => ("", &[]),
    };
    let mut pieces = Pieces {
        text,
        out,
        pending,
        value,
        filled: 0,
    };
    let start = body.start.min(text.len());
    if markers.is_empty() {
        pieces.copy(start..text.len());
        return Evaluated {
            other_braces,
            filled: pieces.filled,
        };
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
        pieces,
    };

    let mut pos = start;
    let mut i = 0;
    while i < markers.len() {
        let marker = &markers[i];
        let span = marker.span();
        if marker.closer {
            // Kept verbatim, with the text before it: copied with what follows.
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
                eval.pieces.copy(pos..span.start);
                eval.block(i, close, pairs);
                pos = markers[close].span().end;
                i = close + 1;
            }
        }
    }
    eval.pieces.copy(pos..text.len());
    Evaluated {
        other_braces,
        filled: eval.pieces.filled,
    }
}

/// Copies pieces of a body's text to the output, replacing the placeholders listed in `pending`
/// by `value` on the way.
struct Pieces<'e, 'a> {
    text: &'a str,
    out: &'e mut String,
    /// The offsets of the placeholders not passed yet, ascending. Each lies wholly inside or
    /// wholly outside every piece: pieces end at markers, and no placeholder overlaps a marker.
    pending: &'e [usize],
    value: &'e str,
    filled: usize,
}

impl Pieces<'_, '_> {
    /// Appends `text[range]`; pieces come in text order.
    #[inline(always)]
    fn copy(&mut self, range: Range<usize>) {
        match self.pending.first() {
            Some(&at) if at < range.end => self.copy_filling(range),
            _ => self.out.push_str(&self.text[range]),
        }
    }

    /// Appends `text[range]` with the placeholders inside it replaced, and passes those before it
    /// (in text that was dropped).
    #[inline(never)]
    fn copy_filling(&mut self, range: Range<usize>) {
        let len = REVIEW_LOOP_MAX_CYCLES.len();
        let mut copied = range.start;
        while let Some((&at, rest)) = self.pending.split_first() {
            if at >= range.end {
                break;
            }
            self.pending = rest;
            if at >= range.start && at + len <= range.end {
                self.out.push_str(&self.text[copied..at]);
                self.out.push_str(self.value);
                copied = at + len;
                self.filled += 1;
            }
        }
        self.out.push_str(&self.text[copied..range.end]);
    }
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
    pieces: Pieces<'e, 'a>,
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
    raw: &'a [u8],
    /// What testing it gives before `IFNOT` inverts it; `None` when it fails closed (it is
    /// malformed or names nothing known).
    test: Option<bool>,
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
    /// What the condition `text[condition]` means in `scope`.
    #[inline(always)]
    fn known(&mut self, text: &'a str, condition: Range<usize>, scope: &Scope<'a>) -> &Known<'a> {
        /// Never read: every slot is filled before it is looked at.
        const NOTHING: Known<'static> = Known {
            raw: &[],
            test: None,
            meaning: Meaning::Malformed,
        };
        let raw = text.as_bytes().get(condition.clone()).unwrap_or_default();
        let slot = &mut self.slots[slot(raw)];
        if !matches!(slot, Some(known) if same(known.raw, raw)) {
            Self::learn(slot, text.get(condition).unwrap_or_default(), scope);
        }
        slot.as_ref().unwrap_or(&NOTHING)
    }

    /// Interprets `raw` and remembers it in `slot`.
    #[cold]
    #[inline(never)]
    fn learn(slot: &mut Option<Known<'a>>, raw: &'a str, scope: &Scope<'a>) {
        let meaning = interpret(raw, scope);
        let test = match meaning {
            Meaning::Malformed => None,
            Meaning::Key { names, .. } => match names {
                Names::Feature(on) => Some(on),
                Names::Truthy { truthy, .. } => Some(truthy),
                Names::Compare { holds, .. } => Some(holds),
                Names::Unknown => None,
            },
        };
        *slot = Some(Known {
            raw: raw.as_bytes(),
            test,
            meaning,
        });
    }
}

/// Whether `a` and `b` hold the same bytes. Conditions are short keys: up to 32 bytes are
/// compared as words, without a call (to `memcmp`, which cost more than the rest of a lookup for
/// a three-letter key like `dco`).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        s.get(at..at + 8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
    };
    if n >= 8 {
        return match n {
            8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
            17..=32 => {
                word(a, 0) == word(b, 0)
                    && word(a, 8) == word(b, 8)
                    && word(a, n - 16) == word(b, n - 16)
                    && word(a, n - 8) == word(b, n - 8)
            }
            _ => a == b,
        };
    }
    // Fewer than eight bytes: the first and last four, or two, which may overlap.
    let half = |s: &[u8], at: usize| {
        s.get(at..at + 4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap_or_default()))
    };
    let quarter = |s: &[u8], at: usize| {
        s.get(at..at + 2)
            .map(|w| u16::from_le_bytes(w.try_into().unwrap_or_default()))
    };
    match n {
        4.. => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        2.. => quarter(a, 0) == quarter(b, 0) && quarter(a, n - 2) == quarter(b, n - 2),
        _ => a.first() == b.first(),
    }
}

/// The memo slot of condition `raw`: its length and first and last bytes, mixed.
#[inline]
fn slot(bytes: &[u8]) -> usize {
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
    fn block(&mut self, open: usize, close: usize, pairs: &[u32]) {
        if !self.holds(open, close) {
            return;
        }
        let mut pos = self.markers[open].span().end;
        let mut k = open + 1;
        while k < close {
            let marker = &self.markers[k];
            let span = marker.span();
            self.pieces.copy(pos..span.start);
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
        self.pieces.copy(pos..self.markers[close].span().start);
    }

    /// Tests the condition of opener `open` (closed by `close`), warning where it fails closed.
    #[inline(always)]
    fn holds(&mut self, open: usize, close: usize) -> bool {
        let marker = &self.markers[open];
        let condition = marker.condition();
        let invert = marker.kind == BlockKind::IfNot;
        let known = *self
            .conditions
            .known(self.text, condition.clone(), self.scope);
        let kept = match known.test {
            Some(test) => test != invert,
            None => {
                self.fails_closed(&known.meaning, condition);
                false
            }
        };
        let reason = match known.meaning {
            Meaning::Malformed => BlockReason::Malformed,
            Meaning::Key { key, names, .. } => match names {
                Names::Feature(on) => BlockReason::Feature { name: key, on },
                Names::Truthy { value, .. } => BlockReason::Truthy { key, value },
                Names::Compare { value, equal, .. } => BlockReason::Compare { key, equal, value },
                Names::Unknown => BlockReason::UnknownKey { key },
            },
        };
        self.decided(open, close, kept, reason)
    }

    /// Warns about the condition at `condition`, which fails closed.
    #[cold]
    fn fails_closed(&mut self, meaning: &Meaning<'a>, condition: Range<usize>) {
        match *meaning {
            Meaning::Malformed => self.warn(condition, WarningKind::MalformedCondition),
            Meaning::Key { key, at, .. } => {
                let start = condition.start + at;
                self.warn(start..start + key.len(), WarningKind::UnknownKey);
            }
        }
    }

    /// Reports the decision on block `open`..`close` and returns whether it is kept.
    #[inline(always)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn same_is_byte_equality(
            a in prop::collection::vec(prop::sample::select(b"ab".to_vec()), 0..40),
            flip in any::<prop::sample::Index>(),
            equal in any::<bool>(),
        ) {
            // Either the same bytes, or the same length with one byte changed.
            let mut b = a.clone();
            if !equal && !b.is_empty() {
                let at = flip.index(b.len());
                b[at] ^= 1;
            }
            prop_assert_eq!(same(&a, &b), a == b);
            prop_assert!(!same(&a, &b[..b.len().saturating_sub(1)]) || a.is_empty());
        }
    }
}
