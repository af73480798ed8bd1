//! The scope of a rule: the paths (`paths:`) and agents (`agents:`) its frontmatter limits it to.
//!
//! pi-config never reads these keys; pi-rules honours them where the project turns scopes on,
//! and in every other agent's files. A key's value takes three forms, as the rule files of
//! Claude Code and Cursor users hold them:
//! - one line, comma-separated: `paths: src/api/**, **/*.sql` (a comma inside `{}` or `[]`
//!   belongs to the glob: `**/*.{ts,tsx}` is one);
//! - a flow list: `paths: ["src/api/**", "**/*.sql"]`;
//! - an empty value followed by list lines: `paths:` then `  - "src/api/**"`.
//!
//! Quotes (`"` or `'`) around an item are optional. Globs are gitignore-style and relative to the
//! directory the scope belongs to (see [`compile_glob`]).

use crate::frontmatter::Frontmatter;
use crate::text::js_trim;
use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use std::borrow::Cow;
use std::ops::Range;

/// At most this many items are read from one `paths:` or `agents:`; the rest are reported.
pub const MAX_ITEMS: usize = 1_000;
/// An item longer than this many bytes is reported and not used.
pub const MAX_ITEM_LEN: usize = 1_024;

/// The agents `agents:` may name, lowercase. `pi` is the agent pi-rules assembles for.
pub const KNOWN_AGENTS: &[&str] = &[
    "pi",
    "claude",
    "codex",
    "gemini",
    "copilot",
    "cursor",
    "windsurf",
    "cline",
    "kiro",
    "goose",
    "opencode",
    "qwen",
    "kilo",
    "amp",
    "aider",
    "roo",
    "zed",
    "junie",
    "jules",
    "warp",
    "augment",
    "crush",
    "trae",
    "firebender",
    "antigravity",
];

/// The scope a rule's header declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleScope<'a> {
    /// `paths:`, when the header has the key.
    pub paths: Option<Decl<'a>>,
    /// `agents:`, when the header has the key.
    pub agents: Option<Decl<'a>>,
    /// What could not be read: items past [`MAX_ITEMS`], items longer than [`MAX_ITEM_LEN`].
    pub problems: Vec<Problem>,
}

/// One key's declaration: its line and its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decl<'a> {
    /// Byte range of the key's line in the file.
    pub line: Range<usize>,
    /// The items, unquoted, in order; empty items are dropped.
    pub items: Vec<Item<'a>>,
}

/// One glob or agent name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<'a> {
    /// The item without its quotes.
    pub text: &'a str,
    /// Byte range of [`Item::text`] in the file.
    pub span: Range<usize>,
}

/// Something in a scope that was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    /// Byte range in the file: the item, or the key's line.
    pub span: Range<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// The key has more than [`MAX_ITEMS`] items; the rest (this many) are not read.
    TooManyItems { dropped: usize },
    /// An item longer than [`MAX_ITEM_LEN`] bytes.
    ItemTooLong,
}

impl<'a> RuleScope<'a> {
    /// Whether the rule is limited at all: it has a path or an agent.
    pub fn is_scoped(&self) -> bool {
        self.has_paths() || self.has_agents()
    }

    /// Whether `paths:` names at least one glob.
    pub fn has_paths(&self) -> bool {
        self.paths.as_ref().is_some_and(|d| !d.items.is_empty())
    }

    /// Whether `agents:` names at least one agent.
    pub fn has_agents(&self) -> bool {
        self.agents.as_ref().is_some_and(|d| !d.items.is_empty())
    }

    /// The globs of `paths:`, in order.
    pub fn globs(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.paths
            .iter()
            .flat_map(|d| d.items.iter().map(|i| i.text))
    }

    /// The names of `agents:`, in order, as written.
    pub fn agent_names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.agents
            .iter()
            .flat_map(|d| d.items.iter().map(|i| i.text))
    }

    /// Whether the rule is for `agent`: it names no agent, or names this one (ASCII case
    /// ignored).
    pub fn is_for_agent(&self, agent: &str) -> bool {
        !self.has_agents() || self.agent_names().any(|a| a.eq_ignore_ascii_case(agent))
    }
}

/// Reads the scope declared by `fm`, the frontmatter of `text`.
pub fn parse<'a>(text: &'a str, fm: &Frontmatter<'a>) -> RuleScope<'a> {
    let mut scope = RuleScope::default();
    let Some(header) = fm.header.clone() else {
        return scope;
    };
    for (key, slot) in [("paths", 0), ("agents", 1)] {
        let Some(attr) = fm.attribute(key) else {
            continue;
        };
        let mut items = Vec::new();
        if attr.value.is_empty() {
            list_lines(text, attr.line.end, header.end, &mut items);
        } else {
            let (inner, at) = match attr.value.strip_prefix('[') {
                Some(rest) if rest.ends_with(']') => (&rest[..rest.len() - 1], 1),
                _ => (attr.value, 0),
            };
            split_items(text, attr.value_span.start + at, inner, &mut items);
        }
        let decl = bound(attr.line.clone(), items, &mut scope.problems);
        if slot == 0 {
            scope.paths = Some(decl);
        } else {
            scope.agents = Some(decl);
        }
    }
    scope
}

/// Keeps at most [`MAX_ITEMS`] items, none longer than [`MAX_ITEM_LEN`], reporting the rest.
fn bound<'a>(
    line: Range<usize>,
    mut items: Vec<Item<'a>>,
    problems: &mut Vec<Problem>,
) -> Decl<'a> {
    if items.len() > MAX_ITEMS {
        problems.push(Problem {
            kind: ProblemKind::TooManyItems {
                dropped: items.len() - MAX_ITEMS,
            },
            span: line.clone(),
        });
        items.truncate(MAX_ITEMS);
    }
    items.retain(|item| {
        let keep = item.text.len() <= MAX_ITEM_LEN;
        if !keep {
            problems.push(Problem {
                kind: ProblemKind::ItemTooLong,
                span: item.span.clone(),
            });
        }
        keep
    });
    Decl { line, items }
}

/// The list lines (`  - item`) after a key's line, up to the first line that is neither an item,
/// blank, nor a `#` comment. `from` is the end of the key's line, `end` the header's.
fn list_lines<'a>(text: &'a str, from: usize, end: usize, items: &mut Vec<Item<'a>>) {
    let mut start = from + 1;
    while start < end {
        let stop = text[start..end].find('\n').map_or(end, |i| start + i);
        let raw = &text[start..stop];
        let content = raw.strip_suffix('\r').unwrap_or(raw);
        let trimmed = js_trim(content);
        let at = start + (content.len() - crate::text::js_trim_start(content).len());
        start = stop + 1;
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some(rest) = trimmed.strip_prefix('-') else {
            break;
        };
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            break;
        }
        let lead = rest.len() - crate::text::js_trim_start(rest).len();
        push_item(text, at + 1 + lead, strip_comment(js_trim(rest)), items);
    }
}

/// An unquoted item's trailing ` # comment` removed.
fn strip_comment(item: &str) -> &str {
    if item.starts_with(['"', '\'']) {
        return item;
    }
    match item.find(" #") {
        Some(i) => item[..i].trim_end(),
        None => item,
    }
}

/// The pieces of a one-line list, as byte ranges of `value`: split on the commas outside quotes,
/// `{}` and `[]` (`**/*.{ts,tsx}, "a,b"` is two pieces), untrimmed.
pub fn list_pieces(value: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let bytes = value.as_bytes();
    let (mut depth, mut quote, mut start) = (0usize, 0u8, 0usize);
    let mut at = 0;
    std::iter::from_fn(move || {
        if start > bytes.len() {
            return None;
        }
        while at < bytes.len() {
            let b = bytes[at];
            at += 1;
            match b {
                b'"' | b'\'' if quote == 0 => quote = b,
                q if q == quote && quote != 0 => quote = 0,
                b'{' | b'[' if quote == 0 => depth += 1,
                b'}' | b']' if quote == 0 => depth = depth.saturating_sub(1),
                b',' if quote == 0 && depth == 0 => {
                    let piece = start..at - 1;
                    start = at;
                    return Some(piece);
                }
                _ => {}
            }
        }
        let piece = start..bytes.len();
        start = bytes.len() + 1;
        Some(piece)
    })
}

/// Splits a one-line value into items (see [`list_pieces`]).
fn split_items<'a>(text: &'a str, base: usize, value: &'a str, items: &mut Vec<Item<'a>>) {
    for piece in list_pieces(value) {
        push_piece(text, base, value, piece, items);
    }
}

fn push_piece<'a>(
    text: &'a str,
    base: usize,
    value: &'a str,
    piece: Range<usize>,
    items: &mut Vec<Item<'a>>,
) {
    let raw = &value[piece.clone()];
    let trimmed = js_trim(raw);
    let lead = raw.len() - crate::text::js_trim_start(raw).len();
    push_item(text, base + piece.start + lead, trimmed, items);
}

/// Pushes `item` (at byte `at` of `text`), without its quotes, unless it is empty.
fn push_item<'a>(text: &'a str, at: usize, item: &'a str, items: &mut Vec<Item<'a>>) {
    let (inner, offset) = unquote(item);
    if inner.is_empty() {
        return;
    }
    let start = at + offset;
    debug_assert_eq!(&text[start..start + inner.len()], inner);
    items.push(Item {
        text: &text[start..start + inner.len()],
        span: start..start + inner.len(),
    });
}

/// `item` without one pair of matching quotes, and where its content starts.
fn unquote(item: &str) -> (&str, usize) {
    for q in ['"', '\''] {
        if item.len() >= 2 && item.starts_with(q) && item.ends_with(q) {
            return (js_trim(&item[1..item.len() - 1]), 1 + lead_ws(&item[1..]));
        }
    }
    (item, 0)
}

fn lead_ws(s: &str) -> usize {
    s.len() - crate::text::js_trim_start(s).len()
}

/// A glob that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct GlobError {
    pub reason: String,
}

/// The patterns one glob stands for, in `globset`'s syntax, relative to its scope's directory:
/// - a leading `./` is dropped; a leading `/` anchors the glob at the directory;
/// - a glob with no other `/` matches at any depth (`*.sql` is `**/*.sql`);
/// - a glob also matches everything below what it names (`src/api` matches
///   `src/api/handler.ts`), and a trailing `/` only that.
///
/// `!` (gitignore's negation) is refused: a scope lists what a rule is for.
pub fn glob_patterns(glob: &str) -> Result<Vec<String>, GlobError> {
    let mut g = glob.trim();
    if g.is_empty() {
        return Err(GlobError {
            reason: "the glob is empty".into(),
        });
    }
    // Bounds the compiled matcher: its size grows with the glob's length (braces, `**/`,
    // classes), so a glob from anywhere (a rule, the configuration, another agent's file) is
    // refused past the length a scope's item may have.
    if g.len() > MAX_ITEM_LEN {
        return Err(GlobError {
            reason: format!(
                "the glob is {} bytes, over the {MAX_ITEM_LEN}-byte limit",
                g.len()
            ),
        });
    }
    if g.starts_with('!') {
        return Err(GlobError {
            reason: "`!` (negation) is not supported in a scope: list the paths the rule is for"
                .into(),
        });
    }
    while let Some(rest) = g.strip_prefix("./") {
        g = rest;
    }
    let anchored = g.starts_with('/');
    let g = g.trim_start_matches('/');
    let dir_only = g.ends_with('/');
    let g = g.trim_end_matches('/');
    if g.is_empty() {
        return Err(GlobError {
            reason: "the glob names the scope's whole directory: leave `paths:` out instead".into(),
        });
    }
    if g.split('/').any(|part| part == "..") {
        return Err(GlobError {
            reason: "a glob cannot reach out of its directory with `..`".into(),
        });
    }
    let base = if anchored || g.contains('/') || g.starts_with("**") {
        Cow::Borrowed(g)
    } else {
        Cow::Owned(format!("**/{g}"))
    };
    let below = if base.ends_with("/**") || base == "**" {
        None
    } else {
        Some(format!("{base}/**"))
    };
    let mut out = Vec::with_capacity(2);
    if !dir_only {
        out.push(base.clone().into_owned());
    }
    out.extend(below);
    if out.is_empty() {
        out.push(base.into_owned());
    }
    for pattern in &out {
        build(pattern)?;
    }
    Ok(out)
}

fn build(pattern: &str) -> Result<globset::Glob, GlobError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| GlobError {
            reason: e.kind().to_string(),
        })
}

/// Checks one glob: `Ok` when a scope can use it.
pub fn compile_glob(glob: &str) -> Result<(), GlobError> {
    glob_patterns(glob).map(|_| ())
}

/// The most bytes of glob patterns compiled into one set. A set's compiled size grows with its
/// patterns, and past globset's limit the whole set fails to build: one rule's hostile globs
/// would then silence every scoped rule. Patterns past this are compiled into further sets, so a
/// project's ordinary globs stay one set.
const SET_BUDGET: usize = 64 * 1024;

/// Many rules' globs compiled once (into one set, or a few when they are very large), each
/// pattern knowing its rule and glob.
#[derive(Debug, Clone, Default)]
pub struct ScopeMatcher {
    /// Each set with, per pattern of it, (rule, glob index in the rule's `paths:`).
    sets: Vec<(GlobSet, Vec<(u32, u32)>)>,
}

/// Builds a [`ScopeMatcher`]; globs that cannot be used are skipped (and returned by `add`).
#[derive(Default)]
pub struct ScopeMatcherBuilder {
    globs: Vec<(globset::Glob, (u32, u32))>,
}

impl ScopeMatcherBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds glob number `index` of rule `rule`.
    pub fn add(&mut self, rule: usize, index: usize, glob: &str) -> Result<(), GlobError> {
        for pattern in glob_patterns(glob)? {
            self.globs
                .push((build(&pattern)?, (rule as u32, index as u32)));
        }
        Ok(())
    }

    pub fn build(self) -> ScopeMatcher {
        let mut sets = Vec::new();
        let mut part = Vec::new();
        let mut bytes = 0;
        for (glob, owner) in self.globs {
            let len = glob.glob().len();
            if !part.is_empty() && bytes + len > SET_BUDGET {
                compile_part(std::mem::take(&mut part), &mut sets);
                bytes = 0;
            }
            bytes += len;
            part.push((glob, owner));
        }
        if !part.is_empty() {
            compile_part(part, &mut sets);
        }
        ScopeMatcher { sets }
    }
}

/// Compiles `part` into one set; when it is too large to compile, each half on its own, down to
/// a single pattern, which is left out when even it does not compile (it matches nothing).
fn compile_part(
    part: Vec<(globset::Glob, (u32, u32))>,
    sets: &mut Vec<(GlobSet, Vec<(u32, u32)>)>,
) {
    let mut builder = GlobSetBuilder::new();
    for (glob, _) in &part {
        builder.add(glob.clone());
    }
    match builder.build() {
        Ok(set) => sets.push((set, part.into_iter().map(|(_, owner)| owner).collect())),
        Err(_) if part.len() > 1 => {
            let mut first = part;
            let second = first.split_off(first.len() / 2);
            compile_part(first, sets);
            compile_part(second, sets);
        }
        Err(_) => {}
    }
}

impl ScopeMatcher {
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The (rule, glob) pairs whose glob matches `path`, relative to the scope's directory with
    /// `/` between its parts, into `out` (cleared first), each rule at most once, in rule order.
    pub fn matches_into(
        &self,
        path: &str,
        scratch: &mut Vec<usize>,
        out: &mut Vec<(usize, usize)>,
    ) {
        out.clear();
        if self.sets.is_empty() {
            return;
        }
        let candidate = Candidate::new(path);
        for (set, owners) in &self.sets {
            set.matches_candidate_into(&candidate, scratch);
            for &pattern in scratch.iter() {
                let (rule, glob) = owners[pattern];
                out.push((rule as usize, glob as usize));
            }
        }
        out.sort_unstable();
        out.dedup_by_key(|(rule, _)| *rule);
    }

    /// Whether any glob matches `path` (see [`ScopeMatcher::matches_into`]).
    pub fn is_match(&self, path: &str) -> bool {
        if self.sets.len() == 1 {
            return self.sets[0].0.is_match(path);
        }
        let candidate = Candidate::new(path);
        self.sets
            .iter()
            .any(|(set, _)| set.is_match_candidate(&candidate))
    }
}

/// The known agent closest to `name`, for a "did you mean": within two edits, or a known name
/// that starts with it or that it starts with.
pub fn suggest_agent(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    KNOWN_AGENTS
        .iter()
        .map(|&known| (edit_distance(&lower, known), known))
        .filter(|&(d, known)| {
            d <= 2.min(known.len() / 2).max(1)
                || (lower.len() >= 3 && (known.starts_with(&lower) || lower.starts_with(known)))
        })
        .min_by_key(|&(d, _)| d)
        .map(|(_, known)| known)
}

/// Whether `name` is a known agent (ASCII case ignored).
pub fn is_known_agent(name: &str) -> bool {
    KNOWN_AGENTS.iter().any(|k| k.eq_ignore_ascii_case(name))
}

/// Levenshtein distance on bytes, for short names (the caller bounds them).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests;
