//! `explain`'s decision recorder and report model.
//!
//! The assembly runs once with a [`Recorder`] (an [`Observer`]) that records every gate and block
//! decision in order; the [`Report`] joins them with the loader's per-name report, the settings
//! and their sources, and every marker of each file (so blocks inside dropped blocks, which are
//! never evaluated, are listed too). The front ends write it, one file at a time.
//!
//! Output and memory stay linear in the input: each file's decisions and warnings are a slice
//! taken once, positions come from a forward cursor, setting values are one-line forms made once
//! per key, and reasons are built into reused strings.

use crate::assembly::{self, NameEntry, Run};
use crate::escape::{escape, escape_truncated};
use crate::loader::{Candidate, Loaded, NameReport, Pick, MAX_RULE_BYTES};
use pi_rules_core::event::{BlockDecision, BlockReason, GateDecision, GateReason};
use pi_rules_core::find;
use pi_rules_core::lint::{suggest, FEATURES};
use pi_rules_core::markers::{self, BlockKind, Marker};
use pi_rules_core::{frontmatter, span, Observer, Value, Warning, WarningKind};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::ops::Range;
use std::rc::Rc;

/// The deepest nesting the text tree indents; deeper blocks show their depth as a number.
pub const MAX_INDENT: usize = 16;

/// The most characters of a value or condition shown in one line of text.
pub const MAX_SHOWN_CHARS: usize = 60;

/// Estimated tokens for `bytes` bytes of text: one per four bytes, rounded up.
pub fn estimate_tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

// ---------------------------------------------------------------------------------------------
// Recording the decisions.

/// A key or feature name, as its place in the recorder's [`Names`]: a layer of many files tests
/// the same few keys thousands of times, and each decision holds four bytes for its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key(pub u32);

/// The names that decisions refer to, each kept once.
#[derive(Default)]
pub struct Names {
    pub list: Vec<Rc<str>>,
    /// Looked up once per decision: a fast, per-process seeded hasher.
    pub index: HashMap<Rc<str>, Key, foldhash::fast::RandomState>,
}

impl Names {
    /// The key of `name`, added when it is new.
    pub fn key(&mut self, name: &str) -> Key {
        if let Some(&key) = self.index.get(name) {
            return key;
        }
        // Fewer than 2^32 names: each comes from a marker of a bounded file.
        let key = Key(u32::try_from(self.list.len()).unwrap_or(u32::MAX));
        let name: Rc<str> = name.into();
        self.list.push(Rc::clone(&name));
        self.index.insert(name, key);
        key
    }

    pub fn name(&self, key: Key) -> &str {
        self.list.get(key.0 as usize).map_or("", |name| name)
    }
}

/// Why a block's condition held, kept after the assembly.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    Feature { name: Key, on: bool },
    Truthy { key: Key, truthy: bool },
    Compare { key: Key, equal: bool },
    UnknownKey { key: Key },
    Malformed,
}

impl Reason {
    pub fn of(reason: &BlockReason<'_>, names: &mut Names) -> Reason {
        let mut key = |name: &str| names.key(name);
        match reason {
            BlockReason::Feature { name, on } => Reason::Feature {
                name: key(name),
                on: *on,
            },
            BlockReason::Truthy { key: name, value } => Reason::Truthy {
                key: key(name),
                truthy: value.is_truthy(),
            },
            BlockReason::Compare {
                key: name, equal, ..
            } => Reason::Compare {
                key: key(name),
                equal: *equal,
            },
            BlockReason::UnknownKey { key: name } => Reason::UnknownKey { key: key(name) },
            BlockReason::Malformed => Reason::Malformed,
        }
    }

    /// The settings key whose value decided, if one did.
    pub fn setting(&self) -> Option<Key> {
        match self {
            Reason::Truthy { key, .. } | Reason::Compare { key, .. } => Some(*key),
            _ => None,
        }
    }
}

/// One evaluated block, in 28 bytes: offsets are `u32`, as the engine keeps them (rule files are
/// at most 131,073 bytes).
#[derive(Debug)]
pub struct Decided {
    pub file: u32,
    pub opener: u32,
    pub closer: [u32; 2],
    pub kept: bool,
    pub reason: Reason,
}

impl Decided {
    pub fn opener(&self) -> usize {
        self.opener as usize
    }

    pub fn closer(&self) -> Range<usize> {
        self.closer[0] as usize..self.closer[1] as usize
    }
}

/// An offset as the engine keeps it.
pub fn offset(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

/// One gate part: `requires_setting` or `requires`.
#[derive(Debug, Clone)]
pub enum GatePart {
    Setting { key: Box<str> },
    UnknownSetting { key: Box<str> },
    Feature { name: Box<str>, on: bool },
    UnknownFeature { name: Box<str> },
}

impl GatePart {
    pub fn of(reason: &GateReason<'_>) -> GatePart {
        match reason {
            GateReason::Setting { key, .. } => GatePart::Setting { key: (*key).into() },
            GateReason::UnknownSetting { key } => GatePart::UnknownSetting { key: (*key).into() },
            GateReason::Feature { name, on } => GatePart::Feature {
                name: (*name).into(),
                on: *on,
            },
            GateReason::UnknownFeature { name } => GatePart::UnknownFeature {
                name: (*name).into(),
            },
        }
    }
}

#[derive(Debug)]
pub struct Gate {
    pub included: bool,
    pub setting: Option<GatePart>,
    pub feature: Option<GatePart>,
}

/// Decisions recorded during the assembly, in the order the engine makes them: one gate per
/// file, and the blocks of each file in text order.
#[derive(Default)]
pub struct Recorder {
    pub gates: Vec<Gate>,
    pub blocks: Vec<Decided>,
    pub names: Names,
    /// Per name of [`Names`], whether a block's condition read it as a settings key: marked as
    /// the decisions come, so that the settings section needs no pass over them (18 MB of
    /// decisions at 16,000 files).
    pub read_by_blocks: Vec<bool>,
}

impl Observer for Recorder {
    fn gate(&mut self, decision: &GateDecision<'_>) {
        self.gates.push(Gate {
            included: decision.included,
            setting: decision.setting.as_ref().map(GatePart::of),
            feature: decision.feature.as_ref().map(GatePart::of),
        });
    }

    fn block(&mut self, decision: &BlockDecision<'_>) {
        let reason = Reason::of(&decision.reason, &mut self.names);
        if let Some(key) = reason.setting() {
            let at = key.0 as usize;
            if at >= self.read_by_blocks.len() {
                self.read_by_blocks.resize(at + 1, false);
            }
            self.read_by_blocks[at] = true;
        }
        self.blocks.push(Decided {
            file: offset(decision.file),
            opener: offset(decision.opener.start),
            closer: [offset(decision.closer.start), offset(decision.closer.end)],
            kept: decision.kept,
            reason,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// The report model.

/// A forward-only line and column cursor over one text: each query starts where the last one
/// stopped, so positions asked for in increasing order cost one pass over the text in all.
pub struct Cursor<'t> {
    pub text: &'t str,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl<'t> Cursor<'t> {
    pub fn new(text: &'t str) -> Self {
        Cursor {
            text,
            offset: 0,
            line: 1,
            column: 1,
        }
    }

    /// The 1-based line and column (in characters) of `offset`; offsets before the last one asked
    /// for start again from the top.
    pub fn at(&mut self, offset: usize) -> (usize, usize) {
        let offset = span::floor_boundary(self.text, offset);
        if offset < self.offset {
            *self = Cursor::new(self.text);
        }
        let between = &self.text[self.offset..offset];
        match find::memrchr(b'\n', between.as_bytes()) {
            Some(last) => {
                self.line += find::count(b'\n', between.as_bytes());
                self.column = between[last + 1..].chars().count() + 1;
            }
            None => self.column += between.chars().count(),
        }
        self.offset = offset;
        (self.line, self.column)
    }
}

/// Appends `line:column`.
pub fn push_position(out: &mut String, line: usize, column: usize) {
    out.push_str(itoa::Buffer::new().format(line));
    out.push(':');
    out.push_str(itoa::Buffer::new().format(column));
}

/// Appends ``key` = VALUE from SOURCE`, the start of a reason that a setting's value gave.
pub fn push_setting(out: &mut String, key: &str, described: &Described) {
    out.push('`');
    out.push_str(&escape(key));
    out.push_str("` = ");
    out.push_str(&described.shown);
    out.push_str(" from ");
    out.push_str(&described.source);
}

/// What the report says about one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Kept,
    Dropped,
    Unbalanced,
    Leaked,
    NotEvaluated,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Kept => "kept",
            State::Dropped => "dropped",
            State::Unbalanced => "unbalanced",
            State::Leaked => "leaked",
            State::NotEvaluated => "not-evaluated",
        }
    }
}

/// One block of an included file.
pub struct BlockView<'a> {
    pub line: usize,
    pub column: usize,
    pub kind: BlockKind,
    pub condition: &'a str,
    pub opener: Range<usize>,
    pub depth: usize,
    pub state: State,
    pub decided: Option<&'a Decided>,
    /// For a block that was not evaluated: the position of the dropped block it sits in.
    pub inside: Option<(usize, usize)>,
}

/// A stray closer, kept verbatim.
pub struct StrayView<'a> {
    pub line: usize,
    pub column: usize,
    pub marker: &'a str,
}

/// The settings the report refers to, with their values and sources. A value's one-line form and
/// its source are made once per key, however many blocks test it.
pub struct SettingsView<'r> {
    pub run: &'r Run,
    pub described: RefCell<HashMap<Box<str>, Described, foldhash::fast::RandomState>>,
}

/// A key's value as JSON text cut for one line, and where it came from, for people.
#[derive(Clone)]
pub struct Described {
    pub shown: Rc<str>,
    pub source: Rc<str>,
}

impl SettingsView<'_> {
    pub fn value(&self, key: &str) -> &Value {
        self.run.resolved.resolve_key(key)
    }

    pub fn source(&self, key: &str) -> Rc<str> {
        self.described(key).source
    }

    pub fn described(&self, key: &str) -> Described {
        if let Some(described) = self.described.borrow().get(key) {
            return described.clone();
        }
        let json = self
            .value(key)
            .to_json()
            .unwrap_or_else(|| "undefined".to_owned());
        let source = self.run.resolved.get(key).map_or_else(
            || "unknown".to_owned(),
            |v| self.run.session.source_label(v.source),
        );
        let described = Described {
            shown: escape_truncated(&json, MAX_SHOWN_CHARS).into(),
            source: source.into(),
        };
        self.described
            .borrow_mut()
            .insert(key.into(), described.clone());
        described
    }
}

/// The whole report, built from one run; files are detailed one at a time as they are written.
pub struct Report<'r> {
    pub run: &'r Run,
    pub recorder: &'r Recorder,
    pub settings: SettingsView<'r>,
    /// Whether `--coms-active` was given.
    pub coms_flag: bool,
    /// Per taken file, the range of its warnings in the assembly's list.
    pub warnings: Vec<Range<usize>>,
    /// Per taken file, the range of its recorded block decisions.
    pub decided: Vec<Range<usize>>,
    /// The working lists and strings of one file, kept from one file to the next.
    pub scratch: RefCell<Scratch<'r>>,
}

/// What detailing and writing one file needs, kept across the files of a report: allocated
/// afresh for each file, these lists and strings land in a heap that grows with the layer, and
/// the allocator's and the caches' cost per file grows with it.
#[derive(Default)]
pub struct Scratch<'r> {
    /// The file's blocks and stray closers (see [`Report::detail_into`]).
    pub blocks: Vec<BlockView<'r>>,
    pub strays: Vec<StrayView<'r>>,
    /// The file's markers, the closer of each opener, and the walks' stacks.
    pub markers: Vec<Marker>,
    pub closers: Vec<Option<usize>>,
    pub open: Vec<usize>,
    pub stack: Vec<(usize, Option<(usize, usize)>)>,
    /// A line of the text form, or a reason of the JSON form.
    pub line: String,
    /// A warning's message, before it is escaped into a line.
    pub message: String,
}

/// Splits `items` (in file order) into one range per file, for `files` files.
pub fn ranges_by_file<T>(
    items: &[T],
    files: usize,
    file_of: impl Fn(&T) -> usize,
) -> Vec<Range<usize>> {
    let mut ranges = Vec::with_capacity(files);
    let mut at = 0;
    for file in 0..files {
        let start = at;
        while at < items.len() && file_of(&items[at]) == file {
            at += 1;
        }
        ranges.push(start..at);
    }
    ranges
}

impl<'r> Report<'r> {
    pub fn new(run: &'r Run, recorder: &'r Recorder, coms_flag: bool) -> Report<'r> {
        let files = run.loaded.as_ref().map_or(0, |l| l.files.len());
        let warnings = run.assembly.as_ref().map_or(&[][..], |a| &a.warnings[..]);
        Report {
            run,
            recorder,
            settings: SettingsView {
                run,
                described: RefCell::default(),
            },
            coms_flag,
            warnings: ranges_by_file(warnings, files, |w| w.file()),
            decided: ranges_by_file(&recorder.blocks, files, |d| d.file as usize),
            scratch: RefCell::default(),
        }
    }

    pub fn all_warnings(&self) -> &'r [Warning] {
        self.run
            .assembly
            .as_ref()
            .map_or(&[][..], |a| &a.warnings[..])
    }

    pub fn file_warnings(&self, file: usize) -> &'r [Warning] {
        let range = self.warnings.get(file).cloned().unwrap_or(0..0);
        &self.all_warnings()[range]
    }

    pub fn names(&self) -> impl Iterator<Item = NameEntry<'r>> + 'r {
        let run = self.run;
        run.loaded
            .iter()
            .flat_map(move |loaded| assembly::name_entries(loaded, run.assembly.as_ref()))
    }

    pub fn loaded(&self) -> Option<&'r Loaded> {
        self.run.loaded.as_ref()
    }

    pub fn text_of(&self, file: usize) -> &'r str {
        self.loaded()
            .and_then(|l| l.files.get(file))
            .map_or("", |f| f.text.as_ref())
    }

    /// Bytes the file adds to the block (0 unless included).
    pub fn bytes_of(&self, entry: &NameEntry<'_>) -> usize {
        match (entry.file, self.run.assembly.as_ref()) {
            (Some(i), Some(a)) => a.contributed.get(i).copied().unwrap_or(0),
            _ => 0,
        }
    }

    pub fn included_count(&self) -> usize {
        self.names().filter(|e| e.status() == "included").count()
    }

    /// Every block of an included file in opener order, and its stray closers, into
    /// `scratch.blocks` and `scratch.strays`.
    pub fn detail_into(&self, file: usize, scratch: &mut Scratch<'r>) {
        let Scratch {
            blocks,
            strays,
            markers: found,
            closers,
            open,
            stack,
            ..
        } = scratch;
        blocks.clear();
        strays.clear();
        let text = self.text_of(file);
        let body_start = frontmatter::split(text).body_start;
        let warnings = self.file_warnings(file);
        let decided = &self.recorder.blocks[self.decided.get(file).cloned().unwrap_or(0..0)];
        let unbalanced_at = warnings.iter().find_map(|w| match w.kind {
            WarningKind::Unbalanced { .. } => Some(w.span().start),
            _ => None,
        });
        let mut cursor = Cursor::new(text);
        strays.extend(
            warnings
                .iter()
                .filter(|w| matches!(w.kind, WarningKind::StrayCloser { .. }))
                .map(|w| {
                    let (line, column) = cursor.at(w.span().start);
                    StrayView {
                        line,
                        column,
                        marker: text.get(w.span()).unwrap_or(""),
                    }
                }),
        );
        found.clear();
        markers::scan_into(&text[body_start..], 0, found);
        closers_into(found, body_start, closers, open);
        let mut cursor = Cursor::new(text);
        let mut decisions = decided.iter().peekable();
        // Enclosing blocks: (end of closer, position of the dropped block it is or is in).
        stack.clear();
        for (i, marker) in found.iter().enumerate() {
            if marker.closer {
                continue;
            }
            let start = marker.span().start + body_start;
            while stack.last().is_some_and(|(close, _)| *close <= start) {
                stack.pop();
            }
            let (line, column) = cursor.at(start);
            let condition =
                &text[marker.condition().start + body_start..marker.condition().end + body_start];
            while decisions.peek().is_some_and(|d| d.opener() < start) {
                decisions.next();
            }
            let decided = decisions.next_if(|d| d.opener() == start);
            let depth = stack.len();
            let (state, inside) = match decided {
                Some(d) => {
                    let dropped = (!d.kept).then_some((line, column));
                    stack.push((d.closer().end, dropped));
                    (if d.kept { State::Kept } else { State::Dropped }, None)
                }
                None if unbalanced_at == Some(start) => (State::Unbalanced, None),
                None if unbalanced_at.is_some_and(|u| u < start) => (State::Leaked, None),
                None => {
                    // Each entry holds the dropped block it is in (its own position when it
                    // is the dropped one), so the top answers without a walk down the stack.
                    let parent = stack.last().and_then(|(_, dropped)| *dropped);
                    if let Some(close) = closers[i] {
                        stack.push((close, parent));
                    }
                    (State::NotEvaluated, parent)
                }
            };
            blocks.push(BlockView {
                line,
                column,
                kind: marker.kind,
                condition,
                opener: start..marker.span().end + body_start,
                depth,
                state,
                decided,
                inside,
            });
        }
    }

    /// Why a block was kept or dropped (or not evaluated), in words, appended to `out`; values
    /// cut for one line.
    pub fn write_why(&self, block: &BlockView<'_>, out: &mut String) {
        let invert = if block.kind == BlockKind::IfNot {
            ", inverted by IFNOT"
        } else {
            ""
        };
        let Some(decided) = block.decided else {
            match block.state {
                State::Unbalanced => out.push_str(
                    "no matching closer: this marker and the rest of the file are kept verbatim",
                ),
                State::Leaked => {
                    out.push_str("after an unbalanced opener: kept verbatim, never evaluated")
                }
                _ => match block.inside {
                    None => out.push_str("not reached"),
                    Some((line, column)) => {
                        out.push_str("inside the dropped block at ");
                        push_position(out, line, column);
                    }
                },
            }
            return;
        };
        let settings = &self.settings;
        let names = &self.recorder.names;
        // The common reasons are put together piece by piece: a layer of many files has one
        // per block, and `write!` costs several times as much. Writing to a `String` cannot fail.
        let _ = match &decided.reason {
            Reason::Feature { name, on } => {
                out.push_str("feature `");
                out.push_str(&escape(names.name(*name)));
                out.push_str(if *on { "` is on" } else { "` is off" });
                out.push_str(invert);
                Ok(())
            }
            Reason::Truthy { key, truthy } => {
                let key = names.name(*key);
                push_setting(out, key, &settings.described(key));
                out.push_str(if *truthy { " is truthy" } else { " is falsy" });
                out.push_str(invert);
                Ok(())
            }
            Reason::Compare { key, .. } => {
                let key = names.name(*key);
                push_setting(out, key, &settings.described(key));
                let held = decided.kept != (block.kind == BlockKind::IfNot);
                out.push_str(if held {
                    ": the comparison is true"
                } else {
                    ": the comparison is false"
                });
                out.push_str(invert);
                Ok(())
            }
            Reason::UnknownKey { key } if FEATURES.contains(&names.name(*key)) => {
                let key = names.name(*key);
                write!(
                    out,
                    "`{}` is a feature, which a condition can only test bare (`{{{{{}:{}}}}}`); a \
                 comparison on it looks for a settings key and fails closed",
                    escape(key),
                    block.kind.keyword(),
                    escape(key)
                )
            }
            Reason::UnknownKey { key } => {
                let key = names.name(*key);
                let known = self.run.session.schema.names();
                let hint = suggest::closest(key, known)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                write!(
                    out,
                    "`{}` is neither a settings key nor a feature: fails closed{hint}",
                    escape_truncated(key, MAX_SHOWN_CHARS)
                )
            }
            Reason::Malformed => {
                out.push_str("malformed condition: fails closed");
                Ok(())
            }
        };
    }

    /// A file's status in words, appended to `out`.
    pub fn write_reason(&self, entry: &NameEntry<'_>, out: &mut String) {
        let gate = entry.file.and_then(|i| self.recorder.gates.get(i));
        write_outcome_reason(out, entry.report, gate, &self.settings);
    }

    /// The settings keys that gates and blocks read, in schema order. The blocks' keys were
    /// marked as they were recorded; the gates, one per file, are gathered here.
    pub fn keys_read(&self) -> Vec<&'r str> {
        let names = &self.recorder.names;
        let by_blocks = &self.recorder.read_by_blocks;
        let by_gates: HashSet<&str, foldhash::fast::RandomState> = self
            .recorder
            .gates
            .iter()
            .filter_map(|g| match &g.setting {
                Some(GatePart::Setting { key }) => Some(&**key),
                _ => None,
            })
            .collect();
        let read = |name: &str| {
            by_gates.contains(name)
                || names
                    .index
                    .get(name)
                    .is_some_and(|key| by_blocks.get(key.0 as usize) == Some(&true))
        };
        let schema = &self.run.session.schema;
        let mut ordered: Vec<&str> = schema.names().filter(|k| read(k)).collect();
        // The placeholder's key is always shown, once.
        if !ordered.contains(&"review_loop_max_cycles") {
            ordered.push("review_loop_max_cycles");
        }
        ordered
    }

    pub fn block_bytes(&self) -> usize {
        self.run.block.appended().len()
    }

    pub fn warning_count(&self) -> usize {
        self.all_warnings().len()
    }

    pub fn feature_source(&self, name: &str) -> String {
        match name {
            "coms_active" if self.coms_flag => "from the host: --coms-active".to_owned(),
            "coms_active" => "from the host: --coms-active was not given".to_owned(),
            _ => format!(
                "acpx_agents ({}), cli_agents ({})",
                self.settings.source("acpx_agents"),
                self.settings.source("cli_agents")
            ),
        }
    }
}

/// The closer end (offset in the whole text) of every opener that has one, by marker index,
/// nested ones in dropped blocks included, into `closer_of`; `open` is working room.
fn closers_into(
    found: &[Marker],
    body_start: usize,
    closer_of: &mut Vec<Option<usize>>,
    open: &mut Vec<usize>,
) {
    closer_indices_into(found, closer_of, open);
    for closer in closer_of.iter_mut() {
        *closer = closer.map(|i| found[i].span().end + body_start);
    }
}

/// The index of the closer of every opener that has one, by marker index, into `closer_of`,
/// matched as the assembly matches them: a closer of the innermost open block's kind closes it;
/// one of the other kind leaves every open block without a closer. `open` is working room.
pub fn closer_indices_into(
    found: &[Marker],
    closer_of: &mut Vec<Option<usize>>,
    open: &mut Vec<usize>,
) {
    closer_of.clear();
    closer_of.resize(found.len(), None);
    open.clear();
    for (i, marker) in found.iter().enumerate() {
        if !marker.closer {
            open.push(i);
        } else if open.last().is_some_and(|&o| found[o].kind == marker.kind) {
            if let Some(o) = open.pop() {
                closer_of[o] = Some(i);
            }
        } else {
            open.clear();
        }
    }
}

/// Appends the reason for a file's status, in words. (Writing to a `String` cannot fail.)
pub fn write_outcome_reason(
    out: &mut String,
    report: &NameReport,
    gate: Option<&Gate>,
    settings: &SettingsView<'_>,
) {
    let push_layers = |out: &mut String, candidates: &[Candidate]| {
        for (i, c) in candidates.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(c.layer.as_str());
        }
    };
    match &report.outcome {
        Pick::Oversized {
            size,
            hides,
            winner,
            ..
        } => {
            let _ = write!(
                out,
                "oversized at {size} bytes (limit {MAX_RULE_BYTES}) in the {} layer",
                winner.layer.as_str()
            );
            if !hides.is_empty() {
                out.push_str(", hiding the ");
                push_layers(out, hides);
                out.push_str(" copy");
            }
        }
        Pick::Unreadable { failures } => {
            out.push_str("unreadable in every layer (");
            for (i, f) in failures.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                let _ = write!(out, "{}: {}", f.candidate.layer.as_str(), f.reason);
            }
            out.push(')');
        }
        Pick::Taken {
            masked: true,
            shadows,
            ..
        } => {
            out.push_str("masked: an empty link to a device hides the ");
            if shadows.is_empty() {
                out.push_str("(no)");
            } else {
                push_layers(out, shadows);
            }
            out.push_str(" copy");
        }
        Pick::Taken {
            fell_back_from,
            winner,
            ..
        } => {
            for (i, f) in fell_back_from.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                let _ = write!(
                    out,
                    "{} copy unreadable ({})",
                    f.candidate.layer.as_str(),
                    f.reason
                );
            }
            if !fell_back_from.is_empty() {
                let _ = write!(out, ", fell back to {}; ", winner.layer.as_str());
            }
            match gate {
                None => out.push_str("included"),
                Some(gate) => write_gate_reason(out, gate, settings),
            }
        }
    }
}

/// Appends what a frontmatter gate decided, and on what.
pub fn write_gate_reason(out: &mut String, gate: &Gate, settings: &SettingsView<'_>) {
    out.push_str(if gate.included { "included" } else { "gated" });
    let mut parts = [&gate.setting, &gate.feature]
        .into_iter()
        .flatten()
        .peekable();
    if parts.peek().is_none() {
        out.push_str(" (no frontmatter gate)");
        return;
    }
    out.push_str(" (");
    for (i, part) in parts.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = match part {
            GatePart::Setting { key } => {
                let described = settings.described(key);
                write!(
                    out,
                    "requires_setting: {} = {} from {}",
                    escape(key),
                    described.shown,
                    described.source
                )
            }
            GatePart::UnknownSetting { key } => {
                write!(
                    out,
                    "requires_setting: {} is not a settings key",
                    escape(key)
                )
            }
            GatePart::Feature { name, on } => write!(
                out,
                "requires: {} is {}",
                escape(name),
                if *on { "on" } else { "off" }
            ),
            GatePart::UnknownFeature { name } => {
                write!(out, "requires: {} is not a feature predicate", escape(name))
            }
        };
    }
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer of many files records a decision per block: they stay small.
    #[test]
    fn a_decision_is_28_bytes_and_names_are_kept_once() {
        assert_eq!(std::mem::size_of::<Decided>(), 28);
        let mut names = Names::default();
        let a = names.key("dco");
        let b = names.key("log_rules");
        assert_eq!(names.key("dco"), a);
        assert_ne!(a, b);
        assert_eq!((names.name(a), names.name(b)), ("dco", "log_rules"));
        assert_eq!(names.list.len(), 2);
    }

    #[test]
    fn the_cursor_matches_a_fresh_count() {
        let text = "ab\ncé\n\nd{{IF:x}}\n漢字x";
        let mut cursor = Cursor::new(text);
        for offset in 0..=text.len() {
            if !text.is_char_boundary(offset) {
                continue;
            }
            let fresh = pi_rules_core::span::line_col(text, offset);
            assert_eq!(cursor.at(offset), (fresh.line, fresh.column), "{offset}");
        }
        // Going back starts again from the top.
        assert_eq!(cursor.at(0), (1, 1));
        assert_eq!(cursor.at(4), (2, 2));
    }

    #[test]
    fn ranges_by_file_split_in_order() {
        let items = [0, 0, 2, 2, 2, 3];
        assert_eq!(
            ranges_by_file(&items, 5, |&f| f),
            vec![0..2, 2..2, 2..5, 5..6, 6..6]
        );
    }
}
