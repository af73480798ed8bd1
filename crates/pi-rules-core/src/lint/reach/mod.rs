//! What evaluation can produce: reasoning over the conditions that lead to each block.
//!
//! A block's *path condition* is the conjunction of the conditions of the blocks around it and of
//! the file's frontmatter gate. Every condition tests one variable (a settings key or a feature
//! predicate), so a conjunction holds for some settings exactly when, for every variable, the
//! classes its conditions allow ([`domain`]) still meet. That gives, without enumerating
//! assignments:
//!
//! - **unreachable blocks** (PR801): the path condition cannot hold;
//! - **redundant conditions** (PR802): the path already implies the block's own condition;
//! - **constant conditions** (PR106): a condition that always or never holds under the schema.
//!
//! [`windows`] then follows the text evaluation can produce, region by region, to find blank
//! runs (PR804), empty table rows (PR803) and marker text assembled from pieces (PR207).
//!
//! Everything here works on one file, as the engine would evaluate it: the top-level walk of
//! [`crate::blocks`] (stray closers are text; an opener without a closer makes the rest of the
//! file text) and its matching with [`crate::markers::match_opener`].

mod domain;
mod windows;

use super::codes::Code;
use super::conditions::{is_impossible_comparison, Context};
use super::diagnostic::{excerpt, FileDiagnostics};
use crate::condition::{self, Condition, Operator};
use crate::frontmatter::Frontmatter;
use crate::markers::{self, BlockKind, Marker};
use crate::span::line_col;
use crate::value::Value;
use domain::{shown, Classes, Domain};
use std::collections::HashMap;
use std::ops::Range;

/// A variable that conditions test.
#[derive(Debug)]
struct Var<'t> {
    name: &'t str,
    /// `None` for a feature predicate.
    domain: Option<Domain>,
    classes: Classes,
    /// Event index of the last opener that tests this variable.
    last_use: usize,
}

/// What a block's condition (with `IFNOT` applied) allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cond {
    /// Fails closed for `IF` and `IFNOT` alike (unknown key, malformed, comparison on a feature):
    /// the block is always dropped. Reported by other checks.
    Never,
    /// A comparison with a literal beyond [`domain::MAX_LITERALS`]: nothing is assumed.
    Opaque,
    /// The block is kept exactly when `var` is in one of the classes of `mask`.
    Atom { var: usize, mask: u64 },
}

/// A block's condition, and whether it always (`Some(true)`) or never holds, to be reported.
type Decided = (Cond, Option<bool>);

/// A condition as parsed: its variable and, for a comparison, the operator and literal; `None`
/// when it fails closed.
type Parsed = Option<(usize, Option<(Operator, Value)>)>;

/// A matched block.
#[derive(Debug)]
struct Block {
    /// Index of the opener and the closer in the file's markers.
    opener: usize,
    closer: usize,
    cond: Cond,
    /// Index of its `Close` event.
    close_event: usize,
}

/// The file body as evaluation walks it.
#[derive(Debug, Clone)]
enum Event {
    Text(Range<usize>),
    Open(usize),
    Close(usize),
}

/// Where a variable's constraint in a path comes from.
#[derive(Debug, Clone, Copy)]
enum Origin {
    /// The frontmatter gate; the span of its line.
    Gate(usize, usize),
    Block(usize),
}

/// Everything the reasoning knows about one file.
struct File<'t> {
    text: &'t str,
    markers: &'t [Marker],
    vars: Vec<Var<'t>>,
    blocks: Vec<Block>,
    events: Vec<Event>,
    body: usize,
    /// The gate's constraints, per variable.
    gate: Vec<(usize, u64, Range<usize>)>,
}

/// The lists of one file's walk, kept from one file to the next: allocated afresh for each
/// file, they are scattered through a heap that grows with the layer.
#[derive(Default)]
pub(crate) struct Scratch {
    events: Vec<Event>,
    blocks: Vec<Block>,
    states: windows::Scratch,
}

/// Runs the reasoning on one rule file. `markers` have spans into `text`.
pub(crate) fn check(
    cx: &Context<'_>,
    text: &str,
    front: &Frontmatter<'_>,
    markers: &[Marker],
    out: &mut FileDiagnostics,
    scratch: &mut Scratch,
) {
    if text.is_empty() {
        return;
    }
    let mut events = std::mem::take(&mut scratch.events);
    let mut blocks = std::mem::take(&mut scratch.blocks);
    events.clear();
    blocks.clear();
    let Some(file) = File::build(cx, text, front, markers, out, events, blocks) else {
        return;
    };
    file.paths(out);
    windows::check(&file, out, &mut scratch.states);
    scratch.events = file.events;
    scratch.blocks = file.blocks;
}

impl<'t> File<'t> {
    fn build(
        cx: &Context<'_>,
        text: &'t str,
        front: &Frontmatter<'t>,
        markers: &'t [Marker],
        out: &mut FileDiagnostics,
        mut events: Vec<Event>,
        mut blocks: Vec<Block>,
    ) -> Option<File<'t>> {
        let body = front.body_start;
        let openers = walk(text, body, markers, &mut events);
        blocks.reserve(openers.len());
        // Variables, and the literals each settings key is compared with.
        let mut index: HashMap<(&str, bool), usize, foldhash::fast::RandomState> =
            HashMap::default();
        let mut names: Vec<(&str, bool)> = Vec::new();
        let mut literals: Vec<Vec<Value>> = Vec::new();
        let mut intern = |name: &'t str, feature: bool, literals: &mut Vec<Vec<Value>>| {
            *index.entry((name, feature)).or_insert_with(|| {
                names.push((name, feature));
                literals.push(Vec::new());
                names.len() - 1
            })
        };
        let gate = front.gate();
        let mut gate_vars = Vec::new();
        if let Some(key) = gate.requires_setting {
            if !cx.schema.contains(key) {
                return None;
            }
            let line = front
                .attribute("requires_setting")
                .map_or(0..0, |a| a.line.clone());
            gate_vars.push((intern(key, false, &mut literals), line));
        }
        if let Some(name) = gate.requires {
            if !cx.features.contains(&name) {
                return None;
            }
            let line = front.attribute("requires").map_or(0..0, |a| a.line.clone());
            gate_vars.push((intern(name, true, &mut literals), line));
        }
        // A `Parsed` per distinct condition text.
        let mut distinct: Vec<Parsed> = Vec::new();
        // Per opener, its condition in `distinct`: the same condition is often written many
        // times, and it is parsed and looked up once.
        let mut parsed: Vec<usize> = Vec::with_capacity(openers.len());
        let mut known: HashMap<&str, usize, foldhash::fast::RandomState> = HashMap::default();
        let mut previous: Option<(&str, usize)> = None;
        for &(m, _) in &openers {
            let raw = &text[markers[m].condition()];
            let seen = match previous {
                Some((text, first)) if text == raw => Some(first),
                _ => known.get(raw).copied(),
            };
            if let Some(first) = seen {
                previous = Some((raw, first));
                // The literal is listed again, as when it was first met (a value need not
                // equal itself).
                if let Some((var, Some((_, literal)))) = &distinct[first] {
                    list_literal(&mut literals[*var], literal);
                }
                parsed.push(first);
                continue;
            }
            known.insert(raw, distinct.len());
            previous = Some((raw, distinct.len()));
            parsed.push(distinct.len());
            let p = match condition::parse(raw) {
                None => None,
                Some(Condition::Bare { key }) => {
                    if cx.features.contains(&key) {
                        Some((intern(key, true, &mut literals), None))
                    } else if cx.schema.contains(key) {
                        Some((intern(key, false, &mut literals), None))
                    } else {
                        None
                    }
                }
                Some(Condition::Compare {
                    key, op, literal, ..
                }) => {
                    if cx.schema.contains(key) {
                        let var = intern(key, false, &mut literals);
                        list_literal(&mut literals[var], &literal);
                        Some((var, Some((op, literal))))
                    } else {
                        None
                    }
                }
            };
            distinct.push(p);
        }
        let mut vars: Vec<Var<'t>> = names
            .iter()
            .zip(&literals)
            .map(|(&(name, feature), literals)| {
                if feature {
                    Var {
                        name,
                        domain: None,
                        classes: Classes::feature(),
                        last_use: 0,
                    }
                } else {
                    // Invariant: only known keys are interned as settings variables.
                    let info = cx.schema.get(name).expect("interned keys are known");
                    let domain = Domain::of(info);
                    let classes = Classes::of_key(&domain, literals);
                    Var {
                        name,
                        domain: Some(domain),
                        classes,
                        last_use: 0,
                    }
                }
            })
            .collect();

        let mut file = File {
            text,
            markers,
            vars: Vec::new(),
            blocks,
            events,
            body,
            gate: Vec::new(),
        };
        for (var, line) in gate_vars {
            let mask = vars[var].classes.truthy();
            let full = vars[var].classes.full();
            if mask == 0 || mask == full {
                constant_gate(text, &vars[var], mask != 0, line.clone(), out);
            }
            file.gate.push((var, mask, line));
        }
        // What a condition allows, per distinct condition and kind of block: the condition and
        // whether it always (`Some(true)`) or never holds, to be reported.
        let mut made: Vec<[Option<Decided>; 2]> = vec![[None; 2]; distinct.len()];
        for (&(m, closer), &d) in openers.iter().zip(&parsed) {
            let marker = &markers[m];
            let p = &distinct[d];
            let kind = usize::from(marker.kind == BlockKind::IfNot);
            let (cond, constant) = match made[d][kind] {
                Some(done) => done,
                None => {
                    let done = Self::cond(cx, &vars, p, marker.kind);
                    made[d][kind] = Some(done);
                    done
                }
            };
            if let (Some(always), Some((var, test))) = (constant, p) {
                constant_condition(text, marker, &vars[*var], test, always, out);
            }
            file.blocks.push(Block {
                opener: m,
                closer,
                cond,
                close_event: 0,
            });
        }
        // Event indexes: closers, and the last use of each variable.
        for (e, event) in file.events.iter().enumerate() {
            match event {
                Event::Open(b) => {
                    if let Cond::Atom { var, .. } = file.blocks[*b].cond {
                        vars[var].last_use = e;
                    }
                }
                Event::Close(b) => file.blocks[*b].close_event = e,
                Event::Text(_) => {}
            }
        }
        file.vars = vars;
        Some(file)
    }

    /// What the condition `p` of a block of `kind` allows, and whether it always
    /// (`Some(true)`) or never holds where that is to be reported.
    fn cond(cx: &Context<'_>, vars: &[Var<'_>], p: &Parsed, kind: BlockKind) -> Decided {
        let Some((var, test)) = p else {
            return (Cond::Never, None);
        };
        let v = &vars[*var];
        let full = v.classes.full();
        let mask = match (test, &v.domain) {
            (None, _) => Some(v.classes.truthy()),
            (Some((op, literal)), Some(domain)) => {
                v.classes.equal(domain, literal).map(|eq| match op {
                    Operator::Equals => eq,
                    Operator::NotEquals => full & !eq,
                })
            }
            (Some(_), None) => None,
        };
        let Some(mask) = mask else {
            return (Cond::Opaque, None);
        };
        let mask = if kind == BlockKind::IfNot {
            full & !mask
        } else {
            mask
        };
        let mut constant = None;
        if mask == 0 || mask == full {
            let pr105 = match (test, cx.schema.get(v.name)) {
                (Some((_, literal)), Some(info)) => is_impossible_comparison(info, literal),
                _ => false,
            };
            if !pr105 {
                constant = Some(mask != 0);
            }
        }
        (Cond::Atom { var: *var, mask }, constant)
    }

    /// Unreachable blocks and redundant conditions: one walk with the path condition per
    /// variable, restored when a block ends.
    fn paths(&self, out: &mut FileDiagnostics) {
        let mut cur: Vec<u64> = self.vars.iter().map(|v| v.classes.full()).collect();
        let mut origins: Vec<Vec<(Origin, u64)>> = vec![Vec::new(); self.vars.len()];
        for (var, mask, line) in &self.gate {
            cur[*var] &= mask;
            origins[*var].push((Origin::Gate(line.start, line.end), *mask));
        }
        // Undo log: (var, previous mask) per open block, or `None` for a block that constrains
        // nothing.
        let mut undo: Vec<Option<(usize, u64)>> = Vec::new();
        // How many open blocks can never be kept; inside them nothing is reported.
        let mut dead = 0usize;
        let mut dead_from: Vec<bool> = Vec::new();
        for event in &self.events {
            match *event {
                Event::Text(_) => {}
                Event::Open(b) => {
                    let block = &self.blocks[b];
                    let mut never = false;
                    let mut entry = None;
                    match block.cond {
                        Cond::Never => never = true,
                        Cond::Opaque => {}
                        Cond::Atom { var, mask } => {
                            let full = self.vars[var].classes.full();
                            if mask == 0 {
                                never = true;
                            } else if dead == 0 {
                                let path = cur[var];
                                if path & mask == 0 {
                                    self.unreachable(b, var, mask, &origins[var], out);
                                    never = true;
                                } else if path & !mask & full == 0 && mask != full {
                                    self.redundant(b, var, mask, &origins[var], out);
                                }
                            }
                            entry = Some((var, cur[var]));
                            cur[var] &= mask;
                            origins[var].push((Origin::Block(b), mask));
                        }
                    }
                    undo.push(entry);
                    dead_from.push(never);
                    if never {
                        dead += 1;
                    }
                }
                Event::Close(_) => {
                    if let Some(Some((var, previous))) = undo.pop() {
                        cur[var] = previous;
                        origins[var].pop();
                    }
                    if dead_from.pop() == Some(true) {
                        dead -= 1;
                    }
                }
            }
        }
    }

    fn opener(&self, b: usize) -> &Marker {
        &self.markers[self.blocks[b].opener]
    }

    /// `{{IF:x}}` as written (shortened).
    fn shown_opener(&self, b: usize) -> String {
        excerpt(&self.text[self.opener(b).span()], 60)
    }

    fn origin_span(&self, origin: Origin) -> Range<usize> {
        match origin {
            Origin::Gate(start, end) => start..end,
            Origin::Block(b) => self.opener(b).span(),
        }
    }

    fn origin_shown(&self, origin: Origin) -> String {
        match origin {
            Origin::Gate(start, end) => format!(
                "the frontmatter line `{}`",
                excerpt(self.text[start..end].trim_end_matches('\r'), 60)
            ),
            Origin::Block(b) => {
                let at = line_col(self.text, self.opener(b).span().start);
                format!("`{}` (line {})", self.shown_opener(b), at.line)
            }
        }
    }

    /// The origins that explain a finding: the nearest one that does it alone, else all.
    fn culprits(origins: &[(Origin, u64)], alone: impl Fn(u64) -> bool) -> Vec<(Origin, u64)> {
        match origins.iter().rev().find(|(_, m)| alone(*m)) {
            Some(found) => vec![*found],
            None => origins.iter().rev().copied().collect(),
        }
    }

    fn unreachable(
        &self,
        b: usize,
        var: usize,
        mask: u64,
        origins: &[(Origin, u64)],
        out: &mut FileDiagnostics,
    ) {
        let Some(d) = out.report(Code::UnreachableBlock, Some(self.opener(b).span())) else {
            return;
        };
        let culprits = Self::culprits(origins, |m| m & mask == 0);
        let v = &self.vars[var];
        let names: Vec<String> = culprits
            .iter()
            .map(|(o, _)| self.origin_shown(*o))
            .collect();
        d.message(format!(
            "`{}` can never be kept: {} rules it out",
            self.shown_opener(b),
            names.join(" together with ")
        ))
        .label(format!("this needs {}", self.describe(var, mask, "or")));
        for (origin, m) in &culprits {
            d.secondary(
                self.origin_span(*origin),
                format!("this needs {}", self.describe(var, *m, "or")),
            );
        }
        d.note(format!(
            "no value of `{}` satisfies both, so the text of this block never reaches the prompt",
            v.name
        ))
        .help("remove the block, or move it out of the block that excludes it");
    }

    fn redundant(
        &self,
        b: usize,
        var: usize,
        mask: u64,
        origins: &[(Origin, u64)],
        out: &mut FileDiagnostics,
    ) {
        let marker = self.opener(b);
        let Some(d) = out.report(Code::RedundantCondition, Some(marker.span())) else {
            return;
        };
        let full = self.vars[var].classes.full();
        let culprits = Self::culprits(origins, |m| m & !mask & full == 0);
        let names: Vec<String> = culprits
            .iter()
            .map(|(o, _)| self.origin_shown(*o))
            .collect();
        d.message(format!(
            "`{}` always holds here: {} already ensures it",
            self.shown_opener(b),
            names.join(" together with ")
        ))
        .label("this condition adds nothing");
        for (origin, m) in &culprits {
            d.secondary(
                self.origin_span(*origin),
                format!("this already needs {}", self.describe(var, *m, "or")),
            );
        }
        let keyword = marker.kind.keyword();
        d.help(format!(
            "remove the `{{{{{keyword}:…}}}}` marker and its `{{{{/{keyword}}}}}`, keeping the text between them"
        ));
    }

    /// "`x` to be true", "`k` to be 3 or 5", "`s` to be truthy", for the classes of `mask`.
    fn describe(&self, var: usize, mask: u64, joiner: &str) -> String {
        let v = &self.vars[var];
        let classes = &v.classes.classes;
        let chosen: Vec<usize> = (0..classes.len()).filter(|i| mask >> i & 1 == 1).collect();
        if chosen.len() == classes.len() {
            return format!("`{}` to have any value", v.name);
        }
        // A whole truthiness, such as "truthy", reads better than a list of classes.
        for truthy in [true, false] {
            let all: Vec<usize> = (0..classes.len())
                .filter(|&i| classes[i].truthy == truthy)
                .collect();
            if all.len() > 1 && all == chosen {
                let word = if truthy { "truthy" } else { "falsy" };
                return format!("`{}` to be {word}", v.name);
            }
        }
        let parts: Vec<String> = chosen.iter().map(|&i| self.class_value(var, i)).collect();
        format!("`{}` to be {}", v.name, parts.join(&format!(" {joiner} ")))
    }

    /// One class in words: `3`, `false`, `on`, `another truthy value`.
    fn class_value(&self, var: usize, class: usize) -> String {
        let v = &self.vars[var];
        let c = &v.classes.classes[class];
        let Some(domain) = &v.domain else {
            return if c.truthy { "on" } else { "off" }.to_owned();
        };
        if let Some(literal) = &c.literal {
            return shown(literal);
        }
        // The only value of its kind (such as `false` for a boolean) is named.
        let mut others: Vec<Value> = v
            .classes
            .classes
            .iter()
            .filter_map(|o| o.literal.clone())
            .collect();
        others.push(c.example.clone());
        if domain.other(&others, c.truthy).is_none()
            && matches!(c.example, Value::Bool(_) | Value::Number(_))
        {
            return shown(&c.example);
        }
        let same_kind = v
            .classes
            .classes
            .iter()
            .filter(|o| o.truthy == c.truthy)
            .count();
        let word = if c.truthy { "truthy" } else { "falsy" };
        if same_kind > 1 {
            format!("another {word} value")
        } else {
            word.to_owned()
        }
    }

    /// "`x` is false and `k` is 3": one example of the classes allowed by `local` (and the path).
    fn witness(&self, local: &[(usize, u64)]) -> String {
        let parts: Vec<String> = local
            .iter()
            .filter_map(|&(var, mask)| {
                let full = self.vars[var].classes.full();
                if mask & full == full {
                    return None;
                }
                let class = (0..64).find(|i| mask >> i & 1 == 1)?;
                Some(format!(
                    "`{}` is {}",
                    self.vars[var].name,
                    self.class_value(var, class)
                ))
            })
            .collect();
        parts.join(" and ")
    }
}

/// The events of a body: text, and the openers and closers of matched blocks (by block index,
/// blocks numbered in opener order), appended to `events`. Returns each block's opener and
/// closer markers.
fn walk(
    text: &str,
    body: usize,
    markers: &[Marker],
    events: &mut Vec<Event>,
) -> Vec<(usize, usize)> {
    // At most an event per marker and one for the text before each and after the last; sized
    // once, the list is not grown (and copied) marker after marker.
    events.reserve(2 * markers.len() + 1);
    let mut openers: Vec<(usize, usize)> = Vec::with_capacity(markers.len());
    let mut stack = Vec::new();
    let mut pairs = vec![markers::UNPAIRED; markers.len()];
    let mut open: Vec<usize> = Vec::new();
    let mut pos = body;
    let mut i = 0;
    let push_text = |events: &mut Vec<Event>, range: Range<usize>| {
        if !range.is_empty() {
            events.push(Event::Text(range));
        }
    };
    while i < markers.len() {
        if markers[i].closer {
            // A stray closer is kept as text.
            i += 1;
            continue;
        }
        let Some(close) = markers::match_opener(markers, i, markers.len(), &mut stack, &mut pairs)
        else {
            // No closer: the rest is kept verbatim.
            break;
        };
        push_text(events, pos..markers[i].span().start);
        for k in i..=close {
            let m = &markers[k];
            if k > i {
                push_text(events, markers[k - 1].span().end..m.span().start);
            }
            if m.closer {
                if let Some(o) = open.pop() {
                    events.push(Event::Close(o));
                    openers[o].1 = k;
                }
            } else {
                events.push(Event::Open(openers.len()));
                open.push(openers.len());
                openers.push((k, k));
            }
        }
        pos = markers[close].span().end;
        i = close + 1;
    }
    push_text(events, pos..text.len());
    openers
}

fn constant_gate(
    text: &str,
    v: &Var<'_>,
    always: bool,
    line: Range<usize>,
    out: &mut FileDiagnostics,
) {
    let Some(d) = out.report(Code::ConstantCondition, Some(line)) else {
        return;
    };
    let described = v.domain.as_ref().map_or("", |d| d.described.as_str());
    let _ = text;
    if always {
        d.message(format!(
            "`requires_setting: {}` always passes: the key is {described}, which is never falsy",
            v.name
        ))
        .label("this gate never drops the file")
        .help("remove the line");
    } else {
        d.message(format!(
            "`requires_setting: {}` never passes: the key is {described}, which is never truthy",
            v.name
        ))
        .label("this gate always drops the file")
        .help("gate the file on a key that can be truthy, or delete the file");
    }
}

fn constant_condition(
    text: &str,
    marker: &Marker,
    v: &Var<'_>,
    test: &Option<(Operator, Value)>,
    always: bool,
    out: &mut FileDiagnostics,
) {
    let Some(d) = out.report(Code::ConstantCondition, Some(marker.condition())) else {
        return;
    };
    let described = v.domain.as_ref().map_or("", |d| d.described.as_str());
    let opener = excerpt(&text[marker.span()], 60);
    let outcome = if always {
        "always holds: the block is always kept"
    } else {
        "never holds: the block is always dropped"
    };
    let why = match test {
        None => {
            let which = if (marker.kind == BlockKind::If) == always {
                "truthy"
            } else {
                "falsy"
            };
            format!("`{}` is {described}, always {which}", v.name)
        }
        Some((_, literal)) => {
            if v.domain.as_ref().is_some_and(|d| d.contains(literal)) {
                format!("`{}` is {described}, always {}", v.name, shown(literal))
            } else {
                format!("`{}` is {described}, never {}", v.name, shown(literal))
            }
        }
    };
    d.message(format!("`{opener}` {outcome}"))
        .label(why)
        .help(if always {
            "remove the markers and keep the text"
        } else {
            "remove the block, or compare with a value the key can hold"
        });
}

/// Adds `literal` to a variable's compared literals unless one strictly equal to it is there.
fn list_literal(list: &mut Vec<Value>, literal: &Value) {
    if !list.iter().any(|l| l.strict_equals(literal)) {
        list.push(literal.clone());
    }
}

#[cfg(test)]
mod tests;
