//! The text evaluation can produce around markers: blank runs (PR804), empty table rows (PR803)
//! and marker text assembled from pieces (PR207).
//!
//! One walk over the file's events carries a set of *states*. A state is what matters of the
//! output so far (line breaks since the last visible character, the current line's shape, the
//! start of a partial `{{IF` match) plus the decisions taken since then, as class masks per
//! variable. At an opener a state splits into "kept" and "dropped", each only when the path
//! condition and its decisions allow it; identical states merge. A state forgets its decisions
//! once a line with other text has been output, because nothing that follows depends on them
//! any more, so the states at any point are bounded by the variables that touch the region
//! around it. As a last resort a region is cut at [`MAX_STATES`] states, and findings in it say
//! so.
//!
//! Each file is taken to be joined to others with a blank line (`"\n\n"`) on both sides, as
//! assembly does. A file's one final line break is expected: the second blank line it makes at
//! the join after it is the format's, and is not reported. Nor are blank lines before the text's
//! first visible character (a blank line after the frontmatter, or at the first line).

use super::{Cond, Event, File};
use crate::find;
use crate::lint::codes::Code;
use crate::lint::diagnostic::FileDiagnostics;
use crate::span::line_span;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

/// At most this many states are followed at one point of a file.
pub(crate) const MAX_STATES: usize = 256;

/// Line breaks are counted up to this many.
const NL_CAP: u8 = 12;

const NONE: u32 = u32::MAX;

/// The shape of the current output line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Line {
    /// Nothing but spaces and tabs yet.
    Start,
    /// A `|` first, then only `|`, spaces and tabs.
    Pipes,
    /// Anything else.
    Other,
}

/// What matters of the output so far; states with equal tails and decisions merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Tail {
    /// Line breaks since the last character that is not white space.
    nl: u8,
    /// The line the blank run started on holds a `|` (known from the first line break on).
    first_line_pipe: bool,
    /// A blank line of the run holds a `\r`, which keeps table repair from removing it.
    blank_cr: bool,
    /// A marker was removed inside the run.
    seam: bool,
    /// Some visible character has been output.
    started: bool,
    line: Line,
    line_pipe: bool,
    /// A block was dropped inside the current line.
    line_drop: bool,
    /// Nothing at all on the current line yet.
    col0: bool,
    /// Longest suffix of the output that starts `{{IF` or `{{/IF` (see [`step`]).
    kmp: u8,
    /// Characters output since the last removed marker, up to 5 (5 when `kmp` is 0).
    since_seam: u8,
}

/// Source positions for reporting; not compared when states merge.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Witness {
    /// First marker removed in the current blank run.
    run_marker: u32,
    /// First block dropped in the current blank run.
    run_drop: u32,
    /// Where the current line's first `|` is.
    row_start: u32,
    row_drop: u32,
    kmp_start: u32,
    last_at: u32,
}

impl Witness {
    /// Nothing to point at yet; the last character output was at `last_at`.
    fn none(last_at: u32) -> Witness {
        Witness {
            run_marker: NONE,
            run_drop: NONE,
            row_start: NONE,
            row_drop: NONE,
            kmp_start: NONE,
            last_at,
        }
    }
}

impl Tail {
    /// At the start of a file, after the blank line that joins it to the file before.
    fn at_start() -> Tail {
        Tail {
            nl: 2,
            first_line_pipe: false,
            blank_cr: false,
            seam: false,
            started: false,
            line: Line::Start,
            line_pipe: false,
            line_drop: false,
            col0: true,
            kmp: 0,
            since_seam: 5,
        }
    }

    /// Just after a character that ends every window, on a line that holds a `|` or not.
    fn after_hard(line_pipe: bool) -> Tail {
        Tail {
            nl: 0,
            started: true,
            line: Line::Other,
            line_pipe,
            col0: false,
            ..Tail::at_start()
        }
    }
}

#[derive(Debug, Clone)]
struct State {
    /// Decisions since the last point the output no longer depends on: (variable, classes),
    /// sorted by variable.
    local: Vec<(usize, u64)>,
    /// Decisions dropped from `local` because no later opener tests their variable; kept for
    /// the message only.
    pruned: Vec<(usize, u64)>,
    tail: Tail,
    wit: Witness,
    truncated: bool,
}

impl State {
    fn mask(&self, var: usize) -> u64 {
        match self.local.binary_search_by_key(&var, |&(v, _)| v) {
            Ok(i) => self.local[i].1,
            Err(_) => u64::MAX,
        }
    }

    /// Adds the decision that `var` is in `mask`; a new list comes from `pool`.
    fn restrict(&mut self, var: usize, mask: u64, pool: &mut Pool) {
        match self.local.binary_search_by_key(&var, |&(v, _)| v) {
            Ok(i) => self.local[i].1 &= mask,
            Err(i) => {
                if self.local.capacity() == 0 {
                    self.local = pool.decisions();
                }
                self.local.insert(i, (var, mask));
            }
        }
    }

    fn seam(&mut self, marker: u32) {
        self.tail.seam = true;
        if self.wit.run_marker == NONE {
            self.wit.run_marker = marker;
        }
        self.tail.since_seam = if self.tail.kmp == 0 { 5 } else { 0 };
    }
}

/// A finding before it is reported.
#[derive(Debug, Clone, PartialEq)]
enum Hit {
    /// A run of `nl` line breaks between visible characters, not at the file's edges.
    Blank {
        nl: u8,
        marker: u32,
        drop: u32,
        /// The character that ends the run: runs that end at the same place are one finding.
        end: u32,
    },
    /// At the end of the file (the join after it counted), where the text ends with a blank line
    /// (one final line break is expected and not a finding); `empty` when nothing was output.
    End {
        nl: u8,
        marker: u32,
        drop: u32,
        empty: bool,
    },
    Row {
        start: u32,
        drop: u32,
    },
    Leak {
        start: u32,
        end: u32,
        len: u8,
    },
}

/// One step of the `{{IF` / `{{/IF` matcher: the new state and, on a full match, its length.
///
/// States: 0 nothing, 1 `{`, 2 `{{`, 3 `{{I`, 4 `{{/`, 5 `{{/I`.
fn step(state: u8, c: u8) -> (u8, Option<u8>) {
    match (state, c) {
        (1 | 2, b'{') => (2, None),
        (_, b'{') => (1, None),
        (2, b'I') => (3, None),
        (4, b'I') => (5, None),
        (2, b'/') => (4, None),
        (3, b'F') => (0, Some(4)),
        (5, b'F') => (0, Some(5)),
        _ => (0, None),
    }
}

/// Whether `c` ends every window: it is not white space, `|`, or part of `{{IF`/`{{/IF`.
#[inline]
fn is_hard(c: u8) -> bool {
    HARD[usize::from(c)]
}

/// [`is_hard`] for each byte.
static HARD: [bool; 256] = {
    let mut table = [true; 256];
    let soft = *b" \t\r\n|{/IF";
    let mut i = 0;
    while i < soft.len() {
        table[soft[i] as usize] = false;
        i += 1;
    }
    table
};

/// Feeds one output character to a state's tail and witness, handing `hit` its findings.
#[inline]
fn push(t: &mut Tail, w: &mut Witness, c: u8, at: u32, hit: impl FnMut(Hit)) {
    if is_hard(c) && t.nl < 3 {
        // What [`push_any`] does for such a character, which ends no blank run and starts no
        // match.
        t.nl = 0;
        t.first_line_pipe = false;
        t.blank_cr = false;
        t.seam = false;
        t.started = true;
        t.line = Line::Other;
        t.line_drop = false;
        t.col0 = false;
        t.kmp = 0;
        t.since_seam = 5;
        w.run_marker = NONE;
        w.run_drop = NONE;
        w.last_at = at;
        return;
    }
    if (c == b' ' || c == b'\t') && t.kmp == 0 {
        // What [`push_any`] does for such a character outside a match.
        t.col0 = false;
        if t.line == Line::Other {
            t.line_drop = false;
        }
        t.since_seam = 5;
        w.last_at = at;
        return;
    }
    push_any(t, w, c, at, hit);
}

/// [`push`] without its short paths: any character can take this way.
#[inline]
fn push_any(t: &mut Tail, w: &mut Witness, c: u8, at: u32, mut hit: impl FnMut(Hit)) {
    match c {
        b'\n' => {
            if t.line == Line::Pipes && t.line_drop {
                hit(Hit::Row {
                    start: w.row_start,
                    drop: w.row_drop,
                });
            }
            if t.nl == 0 {
                t.first_line_pipe = t.line_pipe;
            }
            t.nl = (t.nl + 1).min(NL_CAP);
            t.line = Line::Start;
            t.line_pipe = false;
            t.line_drop = false;
            t.col0 = true;
        }
        b' ' | b'\t' | b'\r' => {
            if c == b'\r' && t.nl > 0 {
                t.blank_cr = true;
            }
            t.col0 = false;
        }
        _ => {
            // Blank lines before the first visible character (at the file's first line, or
            // after its frontmatter) are not reported: a blank line between the fence and a
            // heading is how frontmatter is written.
            if t.nl >= 3 && t.started && t.seam {
                let repaired = t.first_line_pipe && !t.blank_cr && c == b'|' && t.col0;
                if !repaired {
                    hit(Hit::Blank {
                        nl: t.nl,
                        marker: w.run_marker,
                        drop: w.run_drop,
                        end: at,
                    });
                }
            }
            t.nl = 0;
            t.first_line_pipe = false;
            t.blank_cr = false;
            t.seam = false;
            t.started = true;
            w.run_marker = NONE;
            w.run_drop = NONE;
            if c == b'|' {
                if t.line == Line::Start {
                    t.line = Line::Pipes;
                    w.row_start = at;
                }
                t.line_pipe = true;
            } else {
                t.line = Line::Other;
            }
            t.col0 = false;
        }
    }
    if t.line == Line::Other {
        t.line_drop = false;
    }
    let before = t.kmp;
    let (next, matched) = step(t.kmp, c);
    t.since_seam = (t.since_seam + 1).min(5);
    if let Some(len) = matched {
        if t.since_seam < len {
            hit(Hit::Leak {
                start: w.kmp_start,
                end: at + 1,
                len,
            });
        }
    }
    if next == 1 || (next == 2 && before == 2) {
        w.kmp_start = if next == 1 { at } else { w.last_at };
    }
    t.kmp = next;
    if next == 0 {
        t.since_seam = 5;
    }
    w.last_at = at;
}

/// A text event, prepared once: what each state must feed itself, and what it becomes after
/// the first character that ends every window.
struct Segment<'t> {
    /// The characters up to and including the first hard one (runs shortened where that
    /// changes nothing), with their offsets.
    lead: Vec<(u8, u32)>,
    /// What follows the first hard character, when there is one.
    after: Option<After<'t>>,
    /// The segment holds a line break, so what follows it depends on nothing before it.
    fresh: bool,
}

/// The part of a segment after its first hard character: only what follows the last hard
/// character matters, and whether the line it is on holds a `|`.
struct After<'t> {
    /// The text after the last hard character, and its offset.
    rest: &'t [u8],
    rest_at: usize,
    /// Whether the line of the last hard character holds a `|`, when a line break between the
    /// first and the last hard character decides it.
    known_pipe: Option<bool>,
    /// Whether a `|` lies between the first and the last hard character (no line break there).
    pipe_between: bool,
    /// The tail and witness after the segment, for a line without and with a `|`, once needed.
    done: [Option<(Tail, Witness)>; 2],
}

impl After<'_> {
    /// The tail and witness after the segment, for a current line before the segment that
    /// holds a `|` or not. `memo` holds what the same text after the last hard character gave
    /// in an earlier segment.
    #[inline]
    fn get(&mut self, line_pipe_in: bool, memo: &mut Memo) -> (Tail, Witness) {
        let line_pipe = self.known_pipe.unwrap_or(line_pipe_in || self.pipe_between);
        let variant = usize::from(line_pipe);
        if let Some(done) = self.done[variant] {
            return done;
        }
        let from = (self.rest_at - 1) as u32;
        let mut tail = Tail::after_hard(line_pipe);
        let mut wit = Witness::none(from);
        if !self.rest.is_empty() {
            // Offsets are kept relative to `from` while none of them is cut to 32 bits.
            let relative = self.rest_at + self.rest.len() < NONE as usize;
            let hit = if relative && memo.rest == self.rest {
                memo.done[variant]
            } else {
                None
            };
            if let Some((t, w)) = hit {
                tail = t;
                wit = w.shifted(from, u32::wrapping_add);
            } else {
                let mut found = false;
                shortened(self.rest, self.rest_at, 0, |c, at| {
                    push(&mut tail, &mut wit, c, at, |_| found = true);
                });
                debug_assert!(!found, "no finding without a marker");
                if relative {
                    if memo.rest != self.rest {
                        memo.rest.clear();
                        memo.rest.extend_from_slice(self.rest);
                        memo.done = [None; 2];
                    }
                    memo.done[variant] = Some((tail, wit.shifted(from, u32::wrapping_sub)));
                }
            }
        }
        self.done[variant] = Some((tail, wit));
        (tail, wit)
    }
}

/// The tail and witness (with offsets relative to the last hard character) after the text
/// that follows the last hard character of a segment, for a line without and with a `|`: the
/// same short text ends many segments.
#[derive(Default)]
pub(super) struct Memo {
    rest: Vec<u8>,
    done: [Option<(Tail, Witness)>; 2],
}

impl Witness {
    /// The witness with `by` applied (with `op`) to each offset that is set.
    fn shifted(self, by: u32, op: fn(u32, u32) -> u32) -> Witness {
        let f = |at: u32| if at == NONE { NONE } else { op(at, by) };
        Witness {
            run_marker: f(self.run_marker),
            run_drop: f(self.run_drop),
            row_start: f(self.row_start),
            row_drop: f(self.row_drop),
            kmp_start: f(self.kmp_start),
            last_at: f(self.last_at),
        }
    }
}

impl<'t> Segment<'t> {
    /// The segment of `text` at `range`; `lead` is a buffer to fill (its contents are dropped).
    fn new(text: &'t str, range: std::ops::Range<usize>, mut lead: Vec<(u8, u32)>) -> Segment<'t> {
        let bytes = &text.as_bytes()[range.clone()];
        let base = range.start;
        let hard = bytes.iter().position(|&c| is_hard(c));
        let lead_end = hard.map_or(bytes.len(), |h| h + 1);
        lead.clear();
        shortened(&bytes[..lead_end], base, 5, |c, at| lead.push((c, at)));
        let after = hard.map(|h| {
            // The first hard character is a hard character: the search ends there at the
            // latest.
            let mut last = bytes.len() - 1;
            while last > h && !is_hard(bytes[last]) {
                last -= 1;
            }
            let between = if last > h {
                &bytes[h + 1..last]
            } else {
                &[][..]
            };
            let (known_pipe, pipe_between) = match find::memrchr(b'\n', between) {
                Some(nl) => (
                    Some(find::memchr(b'|', &between[nl + 1..]).is_some()),
                    false,
                ),
                None => (None, find::memchr(b'|', between).is_some()),
            };
            After {
                rest: &bytes[last + 1..],
                rest_at: base + last + 1,
                known_pipe,
                pipe_between,
                done: [None; 2],
            }
        });
        // A line break is before the first hard character, between the first and the last, or
        // after the last (those between are known already).
        let fresh = match &after {
            None => find::memchr(b'\n', bytes).is_some(),
            Some(after) => {
                after.known_pipe.is_some()
                    || find::memchr(b'\n', &bytes[..lead_end]).is_some()
                    || find::memchr(b'\n', after.rest).is_some()
            }
        };
        Segment { lead, after, fresh }
    }
}

/// Hands `out` the characters of `bytes` (at offsets from `base`) with long runs shortened
/// where that changes nothing for [`push`]: the first `exact` characters are kept as they are
/// (they may complete a match across the marker before them), and the last one always.
#[inline]
fn shortened(bytes: &[u8], base: usize, exact: usize, mut out: impl FnMut(u8, u32)) {
    if bytes.len() <= exact + 1 {
        // The first `exact` characters and the last: all of them.
        for (i, &c) in bytes.iter().enumerate() {
            out(c, (base + i) as u32);
        }
        return;
    }
    // The last character handed out, and how many times in a row.
    let mut last = 0u8;
    let mut run = 0usize;
    for (i, &c) in bytes.iter().enumerate() {
        let repeated = run > 0 && last == c;
        if repeated && i >= exact && i + 1 < bytes.len() {
            let keep = match c {
                b'\n' => usize::from(NL_CAP) + 1,
                b'|' | b'{' | b'I' | b'F' | b'/' => 2,
                _ => 1,
            };
            if run >= keep {
                continue;
            }
        }
        if repeated {
            run += 1;
        } else {
            last = c;
            run = 1;
        }
        out(c, (base + i) as u32);
    }
}

/// The state lists of [`check`], kept from one file to the next.
#[derive(Default)]
pub(super) struct Scratch {
    /// The states at the current event.
    states: Vec<State>,
    /// The states that go on to the next event.
    flow: Vec<State>,
    /// The states that skip a dropped block, with the event they resume at. Blocks nest, so
    /// the states that resume soonest are last.
    jumps: Vec<(usize, State)>,
    pool: Pool,
    /// A segment's characters up to its first hard one.
    lead: Vec<(u8, u32)>,
    memo: Memo,
}

/// Emptied decision lists of states that are gone, for the states made later: a state is
/// copied at every opener, and its decisions with it.
#[derive(Default)]
struct Pool {
    decisions: Vec<Vec<(usize, u64)>>,
}

impl Pool {
    /// An empty decision list, with room when one was given back.
    fn decisions(&mut self) -> Vec<(usize, u64)> {
        self.decisions.pop().unwrap_or_default()
    }

    /// A copy of `decisions`, in a list given back when there is one.
    fn copy(&mut self, decisions: &[(usize, u64)]) -> Vec<(usize, u64)> {
        if decisions.is_empty() {
            return Vec::new();
        }
        let mut copy = self.decisions();
        copy.extend_from_slice(decisions);
        copy
    }

    /// Keeps the decision lists of `state`, which is gone, for later states.
    fn give_back(&mut self, state: State) {
        for mut list in [state.local, state.pruned] {
            if list.capacity() > 0 {
                list.clear();
                self.decisions.push(list);
            }
        }
    }

    /// A copy of `state`, its decision lists taken from those given back.
    fn clone_state(&mut self, state: &State) -> State {
        State {
            local: self.copy(&state.local),
            pruned: self.copy(&state.pruned),
            tail: state.tail,
            wit: state.wit,
            truncated: state.truncated,
        }
    }
}

/// Follows the states through the file and reports what they find.
pub(super) fn check(file: &File<'_>, out: &mut FileDiagnostics, scratch: &mut Scratch) {
    let n = file.events.len();
    let Scratch {
        states,
        flow,
        jumps,
        pool,
        lead,
        memo,
    } = scratch;
    states.clear();
    flow.clear();
    jumps.clear();
    flow.push(State {
        local: Vec::new(),
        pruned: Vec::new(),
        tail: Tail::at_start(),
        wit: Witness::none(NONE),
        truncated: false,
    });
    let mut cur: Vec<u64> = file.vars.iter().map(|v| v.classes.full()).collect();
    for (var, mask, _) in &file.gate {
        cur[*var] &= mask;
    }
    let mut undo: Vec<Option<(usize, u64)>> = Vec::new();
    let mut hits: Vec<(Hit, State)> = Vec::new();

    for e in 0..n {
        arrive(states, flow, jumps, e);
        merge(states, file, e, pool);
        match &file.events[e] {
            Event::Text(range) => {
                if states.is_empty() {
                    continue;
                }
                let mut seg = Segment::new(file.text, range.clone(), std::mem::take(lead));
                for mut s in states.drain(..) {
                    for &(c, at) in &seg.lead {
                        push(&mut s.tail, &mut s.wit, c, at, |hit| {
                            hits.push((hit, for_finding(&s.local, &s.pruned, s.truncated)));
                        });
                    }
                    if let Some(after) = &mut seg.after {
                        let (tail, wit) = after.get(s.tail.line_pipe, memo);
                        s.tail = tail;
                        s.wit = wit;
                        if seg.fresh {
                            s.local.clear();
                            s.pruned.clear();
                            s.truncated = false;
                        }
                    }
                    flow.push(s);
                }
                *lead = seg.lead;
            }
            &Event::Open(b) => {
                let block = &file.blocks[b];
                let marker = block.opener as u32;
                for s in states.drain(..) {
                    let (keep, drop) = match block.cond {
                        Cond::Never => (None, Some(u64::MAX)),
                        Cond::Opaque => (Some(u64::MAX), Some(u64::MAX)),
                        Cond::Atom { var, mask } => {
                            let full = file.vars[var].classes.full();
                            let allowed = cur[var] & s.mask(var);
                            (
                                (allowed & mask != 0).then_some(cur[var] & mask),
                                (allowed & !mask & full != 0).then_some(cur[var] & !mask & full),
                            )
                        }
                    };
                    let var = match block.cond {
                        Cond::Atom { var, .. } => Some(var),
                        _ => None,
                    };
                    // A state both kept and dropped is copied; one that goes one way only
                    // is moved.
                    let (kept, dropped) = match (keep, drop) {
                        (Some(keep), Some(drop)) => {
                            (Some((pool.clone_state(&s), keep)), Some((s, drop)))
                        }
                        (Some(keep), None) => (Some((s, keep)), None),
                        (None, Some(drop)) => (None, Some((s, drop))),
                        (None, None) => {
                            pool.give_back(s);
                            (None, None)
                        }
                    };
                    if let Some((mut kept, mask)) = kept {
                        if let Some(var) = var {
                            kept.restrict(var, mask, pool);
                        }
                        kept.seam(marker);
                        flow.push(kept);
                    }
                    if let Some((mut dropped, mask)) = dropped {
                        if let Some(var) = var {
                            dropped.restrict(var, mask, pool);
                        }
                        dropped.seam(marker);
                        if dropped.wit.run_drop == NONE {
                            dropped.wit.run_drop = b as u32;
                        }
                        if dropped.tail.line != Line::Other {
                            if !dropped.tail.line_drop {
                                dropped.wit.row_drop = b as u32;
                            }
                            dropped.tail.line_drop = true;
                        }
                        jumps.push((block.close_event + 1, dropped));
                    }
                }
                let entry = match block.cond {
                    Cond::Atom { var, mask } => {
                        let previous = cur[var];
                        cur[var] &= mask;
                        Some((var, previous))
                    }
                    _ => None,
                };
                undo.push(entry);
            }
            &Event::Close(b) => {
                let block = &file.blocks[b];
                for mut s in states.drain(..) {
                    if let Cond::Atom { var, mask } = block.cond {
                        if file.vars[var].last_use > e {
                            s.restrict(var, mask, pool);
                        }
                    }
                    s.seam(block.closer as u32);
                    flow.push(s);
                }
                if let Some(Some((var, previous))) = undo.pop() {
                    cur[var] = previous;
                }
            }
        }
    }
    arrive(states, flow, jumps, n);
    merge(states, file, n, pool);
    for s in states.drain(..) {
        if s.tail.line == Line::Pipes && s.tail.line_drop {
            let hit = Hit::Row {
                start: s.wit.row_start,
                drop: s.wit.row_drop,
            };
            hits.push((hit, s.clone()));
        }
        // The join adds two line breaks. With the one a text file ends with, that is two blank
        // lines: the format's, not the author's, so it takes a third to make a finding (a text
        // that ends with a blank line, or one that is left empty).
        let nl = s.tail.nl.saturating_add(2);
        if nl >= 4 {
            let hit = Hit::End {
                nl,
                marker: s.wit.run_marker,
                drop: s.wit.run_drop,
                empty: !s.tail.started,
            };
            hits.push((hit, s));
        }
    }
    report(file, hits, out, pool);
}

/// Gathers in `states` (left empty by the event before) the states at event `e`: first those
/// that skipped a block to resume here, as they were sent here first, then those of the event
/// before.
#[inline]
fn arrive(
    states: &mut Vec<State>,
    flow: &mut Vec<State>,
    jumps: &mut Vec<(usize, State)>,
    e: usize,
) {
    let mut from = jumps.len();
    while from > 0 && jumps[from - 1].0 == e {
        from -= 1;
    }
    if from == jumps.len() {
        std::mem::swap(states, flow);
    } else if from + 1 == jumps.len() {
        // One state skipping one dropped block, the usual case: without setting up a drain
        // (0.4% of `check` on a large layer).
        if let Some((_, s)) = jumps.pop() {
            states.push(s);
        }
        states.append(flow);
    } else {
        states.extend(jumps.drain(from..).map(|(_, s)| s));
        states.append(flow);
    }
}

/// A state that holds only the decisions and the flag of another, for a finding.
fn for_finding(local: &[(usize, u64)], pruned: &[(usize, u64)], truncated: bool) -> State {
    State {
        local: local.to_vec(),
        pruned: pruned.to_vec(),
        tail: Tail::at_start(),
        wit: Witness::none(NONE),
        truncated,
    }
}

/// Drops decisions on variables no later opener tests, merges equal states and cuts the set at
/// [`MAX_STATES`], in place: the first of equal states stays, in order.
#[inline(always)]
fn merge(states: &mut Vec<State>, file: &File<'_>, e: usize, pool: &mut Pool) {
    // One state with no decision to drop, or none: nothing to drop, merge or cut.
    let trivial = match states.as_slice() {
        [] => true,
        [only] => only.local.iter().all(|&(v, _)| file.vars[v].last_use >= e),
        _ => false,
    };
    if !trivial {
        merge_many(states, file, e, pool);
    }
}

/// [`merge`] where there is something to do.
#[inline(never)]
fn merge_many(states: &mut Vec<State>, file: &File<'_>, e: usize, pool: &mut Pool) {
    let dead = |v: usize| file.vars[v].last_use < e;
    for s in states.iter_mut() {
        if s.local.iter().any(|&(v, _)| dead(v)) {
            if s.pruned.capacity() == 0 {
                s.pruned = pool.decisions();
            }
            s.pruned
                .extend(s.local.iter().filter(|&&(v, _)| dead(v)).copied());
            s.local.retain(|&(v, _)| !dead(v));
        }
    }
    if states.len() > 1 {
        let same = |a: &State, b: &State| a.tail == b.tail && a.local == b.local;
        // Many states go through a map from their hash to the latest distinct state with it;
        // `chain` links each distinct state to the one before it with the same hash.
        let mut seen: Option<(HashMap<u64, usize, foldhash::fast::RandomState>, Vec<usize>)> = None;
        let hasher = foldhash::fast::FixedState::default();
        let hash = |s: &State| hasher.hash_one((&s.local[..], &s.tail));
        // `states[..kept]` are the distinct states so far.
        let mut kept = 0;
        for i in 0..states.len() {
            let s = &states[i];
            // A few states are compared directly; many go through the map.
            let found = if kept < 16 {
                states[..kept].iter().position(|o| same(o, s))
            } else {
                let (map, chain) = seen.get_or_insert_with(|| {
                    let mut map = HashMap::default();
                    let mut chain = Vec::with_capacity(states.len());
                    for o in &states[..kept] {
                        chain.push(map.insert(hash(o), chain.len()).unwrap_or(usize::MAX));
                    }
                    (map, chain)
                });
                let mut at = map.get(&hash(s)).copied().unwrap_or(usize::MAX);
                while at != usize::MAX && !same(&states[at], s) {
                    at = chain[at];
                }
                (at != usize::MAX).then_some(at)
            };
            match found {
                Some(j) => {
                    let truncated = states[i].truncated;
                    states[j].truncated |= truncated;
                }
                None => {
                    if let Some((map, chain)) = &mut seen {
                        chain.push(map.insert(hash(s), kept).unwrap_or(usize::MAX));
                    }
                    if kept != i {
                        states.swap(kept, i);
                    }
                    kept += 1;
                }
            }
        }
        if kept < states.len() {
            for gone in states.drain(kept..) {
                pool.give_back(gone);
            }
        }
    }
    if states.len() > MAX_STATES {
        for gone in states.drain(MAX_STATES..) {
            pool.give_back(gone);
        }
        for s in states.iter_mut() {
            s.truncated = true;
        }
    }
}

fn report(file: &File<'_>, hits: Vec<(Hit, State)>, out: &mut FileDiagnostics, pool: &mut Pool) {
    let text = file.text;
    let mut seen: HashSet<(u8, u32), foldhash::fast::RandomState> = HashSet::default();
    let mut found: Vec<(usize, Code, Hit, State)> = Vec::new();
    for (hit, state) in hits {
        let (kind, anchor, position) = match &hit {
            Hit::Blank { marker, end, .. } => {
                (0, *end, file.markers[*marker as usize].span().start)
            }
            Hit::End { .. } => (2, 0, text.len()),
            Hit::Row { start, .. } => (3, *start, *start as usize),
            Hit::Leak { start, .. } => (4, *start, *start as usize),
        };
        if seen.insert((kind, anchor)) {
            let code = match kind {
                3 => Code::EmptyTableRow,
                4 => Code::LeakedMarkerText,
                _ => Code::BlankRun,
            };
            found.push((position, code, hit, state));
        } else {
            pool.give_back(state);
        }
    }
    found.sort_by_key(|(position, ..)| *position);
    for (_, code, hit, state) in found {
        emit(file, code, &hit, &state, out);
        pool.give_back(state);
    }
}

fn emit(file: &File<'_>, code: Code, hit: &Hit, state: &State, out: &mut FileDiagnostics) {
    let text = file.text;
    let when = {
        let mut decided = state.pruned.clone();
        decided.extend(state.local.iter().copied());
        decided.sort_by_key(|&(v, _)| v);
        let w = file.witness(&decided);
        if w.is_empty() {
            String::new()
        } else {
            format!(" when {w}")
        }
    };
    let marker_span = |m: u32| file.markers[m as usize].span();
    let opener_span = |b: u32| file.opener(b as usize).span();
    let blanks = |nl: u8| {
        let n = nl - 1;
        if nl >= NL_CAP {
            format!("{n} or more blank lines")
        } else {
            format!("{n} blank lines")
        }
    };
    let span = match hit {
        Hit::Blank { marker, drop, .. } => {
            if *drop != NONE {
                opener_span(*drop)
            } else {
                marker_span(*marker)
            }
        }
        Hit::End {
            marker,
            drop,
            empty,
            ..
        } => {
            let trimmed = text.trim_end_matches([' ', '\t', '\r', '\n']).len();
            if *empty && *drop != NONE {
                opener_span(*drop)
            } else if trimmed < text.len() && trimmed >= file.body {
                trimmed..text.len()
            } else if *marker != NONE {
                marker_span(*marker)
            } else {
                file.body..text.len()
            }
        }
        Hit::Row { start, .. } => {
            let line = line_span(text, *start as usize);
            line.start.max(*start as usize)..line.end
        }
        Hit::Leak { start, end, .. } => {
            let start = if *start == NONE {
                *end as usize - 1
            } else {
                *start as usize
            };
            start..*end as usize
        }
    };
    let span_is_end = span.end == text.len() && text[span.clone()].trim().is_empty();
    let Some(d) = out.report(code, Some(span)) else {
        return;
    };
    match hit {
        Hit::Blank { nl, drop, .. } => {
            d.message(format!("{} in a row{when}", blanks(*nl)));
            if *drop != NONE {
                d.label("dropping this block leaves the line breaks on both sides of it");
            } else {
                d.label("the line breaks on both sides of this marker add up");
            }
            d.help(
                "keep a block's paragraph and the blank line after it inside the block \
                 (`{{IF:x}}Paragraph.⏎⏎{{/IF}}Next paragraph.`), so that one blank line is left \
                 either way",
            );
        }
        Hit::End { nl, empty, .. } => {
            if *empty {
                d.message(format!(
                    "nothing of this file is left{when}, but it is still joined to the others: \
                     that makes {}",
                    blanks(*nl)
                ))
                .label("every part of the file can be dropped")
                .help(
                    "gate the whole file in its frontmatter (`requires_setting:` or `requires:`) \
                     instead of wrapping all of its text in a block",
                );
            } else {
                d.message(format!(
                    "the text ends with a blank line{when}: with the line break that ends its last \
                     line and the blank line that joins it to the next file, that makes {}",
                    blanks(*nl)
                ))
                .label(if span_is_end {
                    "the file ends here"
                } else {
                    "what follows this marker is dropped, down to the end of the file"
                })
                .help("end the file with one line break after its last line of text");
            }
        }
        Hit::Row { drop, .. } => {
            d.message(format!("this table row has only empty cells{when}"))
                .label("every cell of this row can be dropped");
            if *drop != NONE {
                d.secondary(opener_span(*drop), "dropping this block empties the row");
            }
            d.help(
                "put the whole row inside one block, with its line break: `{{IF:x}}| a | b |⏎{{/IF}}`",
            );
        }
        Hit::Leak { len, .. } => {
            let pattern = if *len == 4 { "{{IF" } else { "{{/IF" };
            d.message(format!(
                "the text around removed markers joins into `{pattern}`{when}"
            ))
            .label("this becomes marker text in the prompt, which is never evaluated")
            .help("do not put `{{`, `IF` or `/IF` right beside a marker");
        }
    }
    if state.truncated {
        d.note(format!(
            "only the first {MAX_STATES} combinations of settings were followed here; others \
             were not checked"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `push`'s short paths leave every tail and witness as the general way does, and find
    /// nothing, for every byte.
    #[test]
    fn the_short_paths_of_push_agree_with_the_general_way() {
        let wit = Witness {
            run_marker: 3,
            run_drop: 4,
            row_start: 5,
            row_drop: 6,
            kmp_start: 7,
            last_at: 8,
        };
        let mut tails = Vec::new();
        for nl in 0..=3 {
            for kmp in 0..=5 {
                for line in [Line::Start, Line::Pipes, Line::Other] {
                    for since_seam in [0, 3, 5] {
                        for flags in 0..1u8 << 7 {
                            let bit = |i: u8| flags & (1 << i) != 0;
                            tails.push(Tail {
                                nl,
                                first_line_pipe: bit(0),
                                blank_cr: bit(1),
                                seam: bit(2),
                                started: bit(3),
                                line,
                                line_pipe: bit(4),
                                line_drop: bit(5),
                                col0: bit(6),
                                kmp,
                                since_seam,
                            });
                        }
                    }
                }
            }
        }
        for tail in tails {
            for c in 0..=u8::MAX {
                let (mut short, mut short_wit, mut short_hits) = (tail, wit, Vec::new());
                push(&mut short, &mut short_wit, c, 9, |h| short_hits.push(h));
                let (mut any, mut any_wit, mut any_hits) = (tail, wit, Vec::new());
                push_any(&mut any, &mut any_wit, c, 9, |h| any_hits.push(h));
                assert_eq!(
                    (short, short_wit, short_hits),
                    (any, any_wit, any_hits),
                    "{tail:?} {c}"
                );
            }
        }
    }
}
