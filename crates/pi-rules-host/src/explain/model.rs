//! The report model: an assembly run and its recorded decisions joined per file, with each
//! included file's blocks (evaluated or not) and stray closers, and the settings the report
//! refers to with their sources.

use super::cut;
use super::recorder::{Decided, GatePart, Recorder};
use super::MAX_SHOWN_CHARS;
use crate::assembly::{self, NameEntry, Run};
use crate::loader::Loaded;
use pi_rules_core::find;
use pi_rules_core::markers::{self, BlockKind, Marker};
use pi_rules_core::{frontmatter, span, Value, Warning, WarningKind};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::rc::Rc;

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
    /// The value's JSON text, [`cut`] for one line and raw: a printer escapes it.
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
            shown: cut(&json, MAX_SHOWN_CHARS).into(),
            source: source.into(),
        };
        self.described
            .borrow_mut()
            .insert(key.into(), described.clone());
        described
    }
}

/// `explain`'s report: one run and its recorded decisions; files are detailed one at a time as
/// they are written.
pub struct Explanation<'r> {
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
    /// The file's blocks and stray closers (see [`Explanation::detail_into`]).
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

impl<'r> Explanation<'r> {
    pub fn new(run: &'r Run, recorder: &'r Recorder, coms_flag: bool) -> Explanation<'r> {
        let files = run.loaded.as_ref().map_or(0, |l| l.files.len());
        let warnings = run.assembly.as_ref().map_or(&[][..], |a| &a.warnings[..]);
        Explanation {
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

#[cfg(test)]
mod tests {
    use super::*;

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
