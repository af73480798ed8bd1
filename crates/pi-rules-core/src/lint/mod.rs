//! `pi-rules check`: a static lint over the three rule layers and the settings files.
//!
//! The caller (the binary) lists the layer directories, ignored entries included, reads files
//! (bounded), parses the settings files and hands everything in as plain data ([`LintInput`]).
//! [`lint`] returns a [`Report`]: [`Diagnostic`]s with stable [`Code`]s, and the text of every
//! file they point into. Nothing here does I/O or prints.
//!
//! Every file is checked, including gated ones and lower copies that a higher layer shadows, and
//! every block, including blocks inside blocks that evaluation would drop: the checks walk all
//! markers rather than the evaluation. Everything is linear in the input, and each code is
//! reported at most [`MAX_PER_CODE`] times per file, so output stays bounded on hostile input.
//!
//! Modules by subject: [`codes`] (the table of codes and their explanations), [`diagnostic`]
//! (the data), `conditions`, `markers`, `frontmatter`, `text`, `files`, `settings_files` (the
//! checks), [`suggest`] ("did you mean") and [`schema`] (what the checks need from the schema).

pub mod codes;
mod conditions;
pub mod diagnostic;
mod files;
mod frontmatter;
mod incremental;
mod markers;
mod reach;
pub mod schema;
pub mod scope;
mod settings_files;
mod sources;
pub mod suggest;
pub(crate) mod text;

pub use codes::{explain, lookup, Code, CodeInfo, Severity, CODES};
pub use diagnostic::{apply_edits, Diagnostic, Edit, FilePath, Fix, Label, Text, MAX_PER_CODE};
pub use files::is_rule_name;
pub use frontmatter::{suggest_code, LINT_IGNORE_KEY};
pub use incremental::{check_layers, combine, lint_settings, FileLint, LayerFindings};
pub use schema::{KeyInfo, SchemaInfo};
pub use scope::{NestedInput, ScopeGlob, ScopedRule};
pub use sources::{SourceLines, Sources};
pub use text::html_comments;

use crate::settings::SettingsFile;
use crate::FileId;
use conditions::Context;
use diagnostic::FileDiagnostics;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;

/// The feature predicates a host can report (SPEC §2.7).
pub const FEATURES: &[&str] = &["coms_active", "external_ai_agents"];

/// A rule file over this many bytes is not loaded.
pub const MAX_RULE_BYTES: u64 = 131_072;

use crate::layer::Layer;

/// One layer directory as listed: every entry, including those the loader ignores.
#[derive(Debug, Clone)]
pub struct LayerInput {
    pub kind: Layer,
    pub entries: Vec<Entry>,
    /// Why the layer directory cannot be listed, when it exists but is unusable, or when a
    /// package directory that was asked for is missing: (path, reason).
    pub problem: Option<(String, String)>,
}

/// One directory entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The file name, e.g. `10-agent-routing.md`.
    pub name: String,
    /// The path as found on disk, or `<embedded>/NAME`, as the report shows it.
    pub path: String,
    /// The host's id of the file, which its findings carry ([`Diagnostic::file_id`]).
    pub file_id: Option<FileId>,
    /// Set when the entry is a symbolic link.
    pub link: Option<Link>,
    /// Set when the file resolves somewhere it must not.
    pub escape: Option<Escape>,
    /// The name on disk is not valid UTF-8 (`name` has it with replacement characters); the
    /// loader never lists it.
    pub invalid_name: bool,
    pub content: Content,
}

impl Entry {
    /// A plain entry: not a link, where it should be, with a UTF-8 name.
    pub fn new(name: impl Into<String>, path: impl Into<String>, content: Content) -> Entry {
        Entry {
            name: name.into(),
            path: path.into(),
            file_id: None,
            link: None,
            escape: None,
            invalid_name: false,
            content,
        }
    }
}

impl LayerInput {
    /// A layer of `entries` whose directory was listed without a problem.
    pub fn new(kind: Layer, entries: Vec<Entry>) -> LayerInput {
        LayerInput {
            kind,
            entries,
            problem: None,
        }
    }
}

/// Where a symbolic link points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The target as written in the link.
    pub target: String,
}

/// Where a file really is, when that is a problem: decided by the caller, who can resolve paths.
pub use crate::layer::Escape;

/// What reading an entry gave (following links).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// The bytes, at most [`MAX_RULE_BYTES`].
    Bytes(Vec<u8>),
    /// Over [`MAX_RULE_BYTES`]: `size` from `stat`, or at least `MAX_RULE_BYTES + 1` when a
    /// bounded read found more.
    Oversized { size: u64 },
    /// A directory.
    Directory,
    /// A FIFO, socket or the like, never opened; `kind` names it (`FIFO`).
    Special { kind: String },
    /// `stat`, open or read failed; `reason` says how (`dangling link`).
    Unreadable { reason: String },
    /// Not read, because the name is not a rule name.
    NotRead,
    /// Read and checked by a [`Linter`], which took the bytes (`len` of them) and kept only
    /// the lines its findings point into.
    Checked { len: usize },
}

/// One settings file that exists.
#[derive(Debug, Clone)]
pub struct SettingsInput {
    /// The path as found on disk, as the report shows it.
    pub path: String,
    /// The host's id of the file, which its findings carry ([`Diagnostic::file_id`]).
    pub file_id: Option<FileId>,
    /// Its text (empty when unreadable).
    pub text: String,
    /// What the settings parser made of it.
    pub file: SettingsFile,
    /// The `pi-config-settings.json` beside this `.jsonc`, ignored because this one exists.
    pub ignored_json: Option<String>,
    /// Set when the project settings file resolves outside the project.
    pub escape: Option<Escape>,
}

/// Everything [`lint`] looks at.
pub struct LintInput<'a> {
    /// The layers, in any order. [`lint`] takes the bytes of each rule file and lets them go
    /// once the file is checked, keeping only the lines its findings point into.
    pub layers: Vec<LayerInput>,
    pub settings: &'a [SettingsInput],
    pub schema: &'a SchemaInfo,
    /// The feature predicates, normally [`FEATURES`].
    pub features: &'a [&'a str],
    /// The order the loader sorts names in (ICU root collation, as `localeCompare`).
    pub collate: &'a dyn Fn(&str, &str) -> Ordering,
    /// Scopes are on for pi (`[rules] scoped`); off (`false`, the default), `check` says where a
    /// `paths:` or `agents:` has no effect in pi yet.
    pub scoped: bool,
}

/// The findings, and the lines they point into.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Sorted by layer (package, user, project, then settings files), path, line and column.
    pub diagnostics: Vec<Diagnostic>,
    /// The lines of each file that its findings point into, by path, as the spans index them.
    pub sources: Sources,
    /// How many files were read and checked.
    pub files: usize,
    /// The lines of files checked on their own and put together by [`combine`], by path.
    parts: HashMap<FilePath, std::sync::Arc<Sources>, foldhash::fast::RandomState>,
}

impl Report {
    /// Lines and columns of the findings in the file at `path`, and the text of their lines:
    /// `None` when none of its findings has a position.
    pub fn lines(&self, path: &str) -> Option<SourceLines<'_>> {
        match self.parts.get(path) {
            Some(part) => part.lines(path),
            None => self.sources.lines(path),
        }
    }

    /// Adds the findings of a file the linter does not read itself (pi-rules' configuration
    /// file, checked by the host), all at `path`, after every other finding, and keeps the lines
    /// of `text` they point into.
    pub fn add_file(&mut self, path: &str, text: &str, diagnostics: Vec<Diagnostic>) {
        self.add_findings(path, text, diagnostics);
        self.files += 1;
    }

    /// [`Report::add_file`] without counting the file as one more checked: more findings on a
    /// rule file the linter read, or on a file the report does not count (another agent's
    /// instruction file).
    pub fn add_findings(&mut self, path: &str, text: &str, diagnostics: Vec<Diagnostic>) {
        let mut out = FileDiagnostics::new(path);
        for d in diagnostics {
            out.push(d);
        }
        self.sources.insert(&out, text, true);
        self.diagnostics.extend(out.finish(None));
    }

    /// How many findings have `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }
}

/// Checks everything in `input`: each rule file in the loader's order (layer by layer, names
/// in `input.collate` order), then the layers as a whole and the settings files.
pub fn lint(mut input: LintInput<'_>) -> Report {
    let mut linter = Linter::new(input.schema, input.features).scoped(input.scoped);
    input.layers.sort_by_key(|layer| layer.kind);
    for layer in &mut input.layers {
        let dir = (layer.kind == Layer::Project).then_some("");
        let mut entries: Vec<&mut Entry> = layer.entries.iter_mut().collect();
        entries.sort_by(|a, b| (input.collate)(&a.name, &b.name));
        for entry in entries {
            linter.check_rule_in(entry, dir);
        }
    }
    linter.finish(&input.layers, input.settings, input.collate)
}

/// A lint run fed one rule file at a time, so that a caller can check each file as soon as it
/// has read it, while its text is still in the cache, and need not hold every text before the
/// first check: [`Linter::check_rule`] for each entry, then [`Linter::finish`] with the layers
/// and the settings files. [`lint`] does the same from a [`LintInput`].
pub struct Linter<'a> {
    cx: Context<'a>,
    /// The findings so far, by path.
    files: IndexMap<FilePath, FileDiagnostics>,
    report: Report,
    /// Lists every file needs, kept from one file to the next.
    scratch: Scratch,
    /// The codes each rule file silences for itself with `lint-ignore:`, by path: the checks
    /// across the layers honour them too.
    ignored: HashMap<FilePath, Vec<Code>, foldhash::fast::RandomState>,
    /// The project and nested rules with usable globs, for the host's walk of the repository.
    scoped_rules: Vec<ScopedRule>,
    /// The nested rule directories, checked across their files by [`Linter::finish`].
    nested: Vec<NestedInput>,
}

impl<'a> Linter<'a> {
    /// A run against `schema`, with the feature predicates `features` (normally [`FEATURES`]).
    pub fn new(schema: &'a SchemaInfo, features: &'a [&'a str]) -> Linter<'a> {
        Linter {
            cx: Context {
                schema,
                features,
                scoped: false,
            },
            files: IndexMap::new(),
            report: Report::default(),
            scratch: Scratch::default(),
            ignored: HashMap::default(),
            scoped_rules: Vec::new(),
            nested: Vec::new(),
        }
    }

    /// Whether scopes are on for pi (`[rules] scoped`; off by default): off, the checks say
    /// where a `paths:`, an `agents:` or a nested rule directory has no effect in pi yet.
    pub fn scoped(mut self, scoped: bool) -> Self {
        self.cx.scoped = scoped;
        self
    }

    /// Checks `entry` on its own when it is a rule file that was read, and takes its bytes
    /// (the entry becomes [`Content::Checked`]; the lines its findings point into are kept in
    /// the report, the rest is let go); anything else
    /// waits for [`Linter::finish`]. Two entries with the same path must come in layer order
    /// (package, user, project), as their findings are kept in the order they are found.
    pub fn check_rule(&mut self, entry: &mut Entry) {
        self.check_rule_in(entry, None);
    }

    /// [`Linter::check_rule`] for a rule of the project directory (`dir` empty) or of a nested
    /// rule directory (`dir` its directory from the project directory, `packages/api`): its
    /// usable globs are kept for the host to try on the repository's files
    /// ([`Linter::scoped_rules`]), with the lines they are on.
    pub fn check_rule_in(&mut self, entry: &mut Entry, dir: Option<&str>) {
        let Some(bytes) = take_rule_bytes(entry) else {
            return;
        };
        let out = diagnostic::file(&mut self.files, &entry.path);
        let text = check_rule_text(&self.cx, &bytes, out, &mut self.scratch);
        let exact = matches!(text, Cow::Borrowed(_));
        if !self.scratch.ignored.is_empty() {
            let codes = std::mem::take(&mut self.scratch.ignored);
            self.ignored
                .insert(FilePath::from(entry.path.as_str()), codes);
        }
        let globs = &self.scratch.globs;
        let kept = if dir.is_some() { &globs[..] } else { &[] };
        self.report.sources.insert_with(out, kept, &text, exact);
        if let Some(dir) = dir.filter(|_| !globs.is_empty()) {
            let path = out.path().clone();
            // Two copies at one path (one directory listed as two layers) come one after the
            // other: the last one's globs count.
            if self.scoped_rules.last().is_some_and(|r| r.path == path) {
                self.scoped_rules.pop();
            }
            self.scoped_rules.push(ScopedRule {
                path,
                dir: dir.to_owned(),
                globs: globs
                    .iter()
                    .map(|span| ScopeGlob {
                        text: text[span.clone()].to_owned(),
                        span: span.clone(),
                    })
                    .collect(),
            });
        }
        out.shrink();
        // A file without findings needs no list (most files of a layer have none): it is the
        // list just added, the last one.
        if self.files.last().is_some_and(|(_, out)| out.is_empty()) {
            self.files.pop();
        }
        self.report.files += 1;
    }

    /// The project and nested rules checked so far that have usable globs, in the order they
    /// were checked: the host walks the repository once with all of them, and reports each glob
    /// that matched no file with [`Linter::matched_nothing`].
    pub fn scoped_rules(&self) -> &[ScopedRule] {
        &self.scoped_rules
    }

    /// Reports glob `glob` of rule `rule` (indexes into [`Linter::scoped_rules`]) as matching
    /// no file of the repository.
    pub fn matched_nothing(&mut self, rule: usize, glob: usize) {
        if let Some(scoped) = self.scoped_rules.get(rule) {
            scope::matches_nothing(scoped, glob, &mut self.files);
        }
    }

    /// Keeps a nested rule directory, whose rule files were checked with
    /// [`Linter::check_rule_in`], for the checks across its files in [`Linter::finish`].
    pub fn add_nested(&mut self, nested: NestedInput) {
        self.nested.push(nested);
    }

    /// Runs the checks on the layers as a whole and on the settings files, and returns the
    /// report. `layers` are those the rule files were checked from; `collate` is the order the
    /// loader sorts names in.
    pub fn finish(
        self,
        layers: &[LayerInput],
        settings: &[SettingsInput],
        collate: &dyn Fn(&str, &str) -> Ordering,
    ) -> Report {
        let Linter {
            cx,
            mut files,
            mut report,
            ignored,
            nested,
            ..
        } = self;
        let mut sorted: Vec<&LayerInput> = layers.iter().collect();
        sorted.sort_by_key(|layer| layer.kind);
        let shadowed = files::check_layers(collate, &sorted, &mut files);
        // Each nested directory is a layer of its own; the names it shares with the layers
        // above are replacements, not copies of one rule.
        for dir in &nested {
            files::check_layers(collate, &[&dir.layer], &mut files);
        }
        scope::check_nested(cx.scoped, &sorted, &nested, &mut files);
        for settings in settings {
            settings_files::check(cx.schema, settings, &mut files);
            if let Some(out) = files.get(settings.path.as_str()) {
                report.sources.insert(out, &settings.text, false);
            }
            report.files += 1;
        }
        // Sorted by layer (settings files last), then path; within a file by position.
        let rank: std::collections::HashMap<&str, Layer, foldhash::fast::RandomState> = sorted
            .iter()
            .copied()
            .chain(nested.iter().map(|n| &n.layer))
            .flat_map(|l| l.entries.iter().map(|e| (e.path.as_str(), l.kind)))
            .chain(nested.iter().map(|n| (n.label.as_str(), Layer::Project)))
            .collect();
        let layer_rank = |path: &str| rank.get(path).map_or(3, |k| *k as u8);
        for (path, out) in sorted_by_path(files, layer_rank) {
            let note = shadowed.get(path.as_str()).map(String::as_str);
            let mut found = out.finish(note);
            if let Some(codes) = ignored.get(path.as_str()) {
                found.retain(|d| !codes.contains(&d.code));
            }
            report.diagnostics.extend(found);
        }
        let all = layers.iter().chain(nested.iter().map(|n| &n.layer));
        identify(&mut report.diagnostics, &file_ids(all, settings));
        report
    }
}

/// The files' findings in order of `rank` (of a path), then path. Each path's rank is looked up
/// once, and the paths are copied side by side before they are sorted, so that the comparisons
/// read one buffer rather than each path where it was allocated.
fn sorted_by_path(
    files: IndexMap<FilePath, FileDiagnostics>,
    rank: impl Fn(&str) -> u8,
) -> impl Iterator<Item = (FilePath, FileDiagnostics)> {
    let mut text = String::with_capacity(files.keys().map(|path| path.len()).sum());
    let mut keys: Vec<(u8, Range<usize>, usize)> = Vec::with_capacity(files.len());
    for (i, path) in files.keys().enumerate() {
        let start = text.len();
        text.push_str(path);
        keys.push((rank(path), start..text.len(), i));
    }
    // Paths are unique: the order is total, and any sort gives it.
    keys.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| text[a.1.clone()].cmp(&text[b.1.clone()]))
    });
    let mut slots: Vec<Option<(FilePath, FileDiagnostics)>> = files.into_iter().map(Some).collect();
    keys.into_iter()
        .filter_map(move |(_, _, i)| slots.get_mut(i).and_then(Option::take))
}

/// The bytes of `entry` when it is a rule file that was read, taken: the entry becomes
/// [`Content::Checked`]. `None` for anything else, which is left as it is.
fn take_rule_bytes(entry: &mut Entry) -> Option<Vec<u8>> {
    if !is_rule_name(&entry.name) {
        return None;
    }
    let Content::Bytes(bytes) = &mut entry.content else {
        return None;
    };
    let bytes = std::mem::take(bytes);
    entry.content = Content::Checked { len: bytes.len() };
    Some(bytes)
}

/// The working lists of [`check_rule_text`], kept across the files of a run: allocated afresh
/// for each file, they are scattered through a heap that grows with the layer, and the
/// allocator's and the caches' costs per file grow with it.
#[derive(Default)]
struct Scratch {
    markers: Vec<crate::markers::Marker>,
    reach: reach::Scratch,
    /// The codes the last file checked silences for itself (`lint-ignore:`).
    ignored: Vec<Code>,
    /// The spans of the usable globs of the file's `paths:`.
    globs: Vec<Range<usize>>,
}

/// Checks one rule file's content; returns its text as the loader reads it, borrowed from
/// `bytes` when they are valid UTF-8. `scratch` lends it its working lists.
fn check_rule_text<'b>(
    cx: &Context<'_>,
    bytes: &'b [u8],
    out: &mut FileDiagnostics,
    scratch: &mut Scratch,
) -> Cow<'b, str> {
    // The findings of this copy start here (another copy at the same path may come before).
    let first = out.len();
    let decoded = text::decode(bytes, out);
    let text: &str = &decoded;
    let front = crate::frontmatter::split(text);
    frontmatter::check(cx, text, &front, out);
    scratch.globs.clear();
    let rule_scope = crate::rule_scope::parse(text, &front);
    scope::check(cx, text, &rule_scope, out, &mut scratch.globs);
    let body = front.body_start;
    let markers = &mut scratch.markers;
    markers.clear();
    crate::markers::scan_into(text, body, markers);
    let markers = &markers[..];
    markers::check_balance(text, markers, out);
    for marker in markers.iter().filter(|m| m.is_opener()) {
        conditions::check_condition(cx, text, marker, out);
    }
    reach::check(cx, text, &front, markers, out, &mut scratch.reach);
    scratch.ignored = frontmatter::ignored_codes(&front);
    markers::check_near_misses(text, body, markers, out);
    // Repairing look-alike markers must not unbalance the file (a lone `{{if:x}}` would become
    // an unclosed block): then none of them is offered.
    let marker_fixes = out.fixes_of(Code::NearMissMarker, first);
    if !marker_fixes.is_empty() {
        let mut edits: Vec<&Edit> = marker_fixes.iter().flat_map(|f| &f.edits).collect();
        edits.sort_by_key(|e| e.span.start);
        let fixed = apply_edits(text, &edits);
        if markers::balance_problems(&fixed) > markers::balance_problems(text) {
            out.drop_fixes(Code::NearMissMarker, first);
        }
    }
    text::check_hidden(text, out);
    text::check_table_gaps(text, body, markers, out);
    if !scratch.ignored.is_empty() {
        out.drop_codes(&scratch.ignored, first);
    }
    decoded
}

/// The ids the host gave the files it handed in, by path.
type IdsByPath<'a> = std::collections::HashMap<&'a str, FileId, foldhash::fast::RandomState>;

/// The ids the host gave the entries of `layers` and the `settings` files, by path.
fn file_ids<'a>(
    layers: impl IntoIterator<Item = &'a LayerInput>,
    settings: &'a [SettingsInput],
) -> IdsByPath<'a> {
    let mut ids = IdsByPath::default();
    for layer in layers {
        for entry in &layer.entries {
            if let Some(id) = entry.file_id {
                ids.insert(&entry.path, id);
            }
        }
    }
    for file in settings {
        if let Some(id) = file.file_id {
            ids.insert(&file.path, id);
        }
    }
    ids
}

/// Gives each finding the id of the file its path names (see [`file_ids`]).
fn identify(diagnostics: &mut [Diagnostic], ids: &IdsByPath<'_>) {
    if ids.is_empty() {
        return;
    }
    for d in diagnostics {
        d.file_id = ids.get(d.path.as_str()).copied();
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Helpers shared by the checks' unit tests.
    use super::*;

    /// The embedded schema, as the linter sees it.
    pub fn schema() -> SchemaInfo {
        SchemaInfo::from_schema(crate::settings::Schema::embedded())
    }

    /// An order of file names.
    pub type Collate<'c> = &'c dyn Fn(&str, &str) -> Ordering;

    /// Lints `layers` with the embedded schema, in byte order of names unless `collate` says
    /// otherwise.
    pub fn lint_layers(layers: &[LayerInput], collate: Option<Collate<'_>>) -> Report {
        let schema = schema();
        let bytes = |a: &str, b: &str| a.cmp(b);
        let input = LintInput {
            layers: layers.to_vec(),
            settings: &[],
            schema: &schema,
            features: FEATURES,
            collate: collate.unwrap_or(&bytes),
            scoped: false,
        };
        lint(input)
    }

    /// Lints one project rule `90-x.md` holding `text`.
    pub fn lint_one(text: &str) -> Report {
        let layers = [LayerInput {
            kind: Layer::Project,
            entries: vec![Entry::new(
                "90-x.md",
                "90-x.md",
                Content::Bytes(text.as_bytes().to_vec()),
            )],
            problem: None,
        }];
        lint_layers(&layers, None)
    }

    /// The codes of a list of findings.
    pub fn codes_of<T>(found: &[(Code, T)]) -> Vec<Code> {
        found.iter().map(|(c, _)| *c).collect()
    }
}

#[cfg(test)]
mod tests;
