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
mod markers;
mod reach;
pub mod schema;
mod settings_files;
mod sources;
pub mod suggest;
mod text;

pub use codes::{explain, lookup, Code, CodeInfo, CODES};
pub use diagnostic::{
    apply_edits, is_unsafe_to_print, visible, Diagnostic, Edit, FilePath, Fix, Label, Severity,
    Text, MAX_PER_CODE,
};
pub use files::is_rule_name;
pub use schema::{KeyInfo, SchemaInfo};
pub use sources::{SourceLines, Sources};

use crate::settings::SettingsFile;
use conditions::Context;
use diagnostic::FileDiagnostics;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::ops::Range;

/// The feature predicates a host can report (SPEC §2.7).
pub const FEATURES: &[&str] = &["coms_active", "external_ai_agents"];

/// A rule file over this many bytes is not loaded.
pub const MAX_RULE_BYTES: u64 = 131_072;

/// A rule layer, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LayerKind {
    Package,
    User,
    Project,
}

impl LayerKind {
    /// `package`, `user` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Package => "package",
            LayerKind::User => "user",
            LayerKind::Project => "project",
        }
    }

    /// The conventional prefix range of new names in this layer (SPEC §8), inclusive.
    pub fn prefix_range(self) -> (u64, u64) {
        match self {
            LayerKind::Package => (0, 69),
            LayerKind::User => (70, 89),
            LayerKind::Project => (90, 99),
        }
    }
}

/// One layer directory as listed: every entry, including those the loader ignores.
#[derive(Debug, Clone)]
pub struct LayerInput {
    pub kind: LayerKind,
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
    /// The path as found on disk, or `<embedded>/NAME`.
    pub path: String,
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
            link: None,
            escape: None,
            invalid_name: false,
            content,
        }
    }
}

impl LayerInput {
    /// A layer of `entries` whose directory was listed without a problem.
    pub fn new(kind: LayerKind, entries: Vec<Entry>) -> LayerInput {
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Escape {
    /// A project rule or settings file whose real path is outside the project.
    OutsideProject { real: String },
    /// A rule that is, or links to, a special file (`/proc`, `/sys`, a device).
    SpecialFile { real: String },
}

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
    /// The path as found on disk.
    pub path: String,
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
}

impl Report {
    /// Lines and columns of the findings in the file at `path`, and the text of their lines:
    /// `None` when none of its findings has a position.
    pub fn lines(&self, path: &str) -> Option<SourceLines<'_>> {
        self.sources.lines(path)
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
    let mut linter = Linter::new(input.schema, input.features);
    input.layers.sort_by_key(|layer| layer.kind);
    for layer in &mut input.layers {
        let mut entries: Vec<&mut Entry> = layer.entries.iter_mut().collect();
        entries.sort_by(|a, b| (input.collate)(&a.name, &b.name));
        for entry in entries {
            linter.check_rule(entry);
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
}

impl<'a> Linter<'a> {
    /// A run against `schema`, with the feature predicates `features` (normally [`FEATURES`]).
    pub fn new(schema: &'a SchemaInfo, features: &'a [&'a str]) -> Linter<'a> {
        Linter {
            cx: Context { schema, features },
            files: IndexMap::new(),
            report: Report::default(),
            scratch: Scratch::default(),
        }
    }

    /// Checks `entry` on its own when it is a rule file that was read, and takes its bytes
    /// (the entry becomes [`Content::Checked`]; the lines its findings point into are kept in
    /// the report, the rest is let go); anything else
    /// waits for [`Linter::finish`]. Two entries with the same path must come in layer order
    /// (package, user, project), as their findings are kept in the order they are found.
    pub fn check_rule(&mut self, entry: &mut Entry) {
        if !is_rule_name(&entry.name) {
            return;
        }
        let Content::Bytes(bytes) = &mut entry.content else {
            return;
        };
        let bytes = std::mem::take(bytes);
        entry.content = Content::Checked { len: bytes.len() };
        let out = diagnostic::file(&mut self.files, &entry.path);
        let text = check_rule_text(&self.cx, &bytes, out, &mut self.scratch);
        let exact = matches!(text, Cow::Borrowed(_));
        self.report.sources.insert(out, &text, exact);
        out.shrink();
        // A file without findings needs no list (most files of a layer have none): it is the
        // list just added, the last one.
        if self.files.last().is_some_and(|(_, out)| out.is_empty()) {
            self.files.pop();
        }
        self.report.files += 1;
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
            ..
        } = self;
        let mut sorted: Vec<&LayerInput> = layers.iter().collect();
        sorted.sort_by_key(|layer| layer.kind);
        let shadowed = files::check_layers(collate, &sorted, &mut files);
        for settings in settings {
            settings_files::check(cx.schema, settings, &mut files);
            if let Some(out) = files.get(settings.path.as_str()) {
                report.sources.insert(out, &settings.text, false);
            }
            report.files += 1;
        }
        // Sorted by layer (settings files last), then path; within a file by position.
        let rank: std::collections::HashMap<&str, LayerKind, foldhash::fast::RandomState> = sorted
            .iter()
            .flat_map(|l| l.entries.iter().map(|e| (e.path.as_str(), l.kind)))
            .collect();
        let layer_rank = |path: &str| rank.get(path).map_or(3, |k| *k as u8);
        for (path, out) in sorted_by_path(files, layer_rank) {
            let note = shadowed.get(path.as_str()).map(String::as_str);
            report.diagnostics.extend(out.finish(note));
        }
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

/// The working lists of [`check_rule_text`], kept across the files of a run: allocated afresh
/// for each file, they are scattered through a heap that grows with the layer, and the
/// allocator's and the caches' costs per file grow with it.
#[derive(Default)]
struct Scratch {
    markers: Vec<crate::markers::Marker>,
    reach: reach::Scratch,
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
    decoded
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
        };
        lint(input)
    }

    /// Lints one project rule `90-x.md` holding `text`.
    pub fn lint_one(text: &str) -> Report {
        let layers = [LayerInput {
            kind: LayerKind::Project,
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
mod tests {
    use super::*;

    fn entry(name: &str, content: Content) -> Entry {
        Entry::new(name, name, content)
    }

    fn bytes(text: &str) -> Content {
        Content::Bytes(text.as_bytes().to_vec())
    }

    fn run(layers: &[LayerInput]) -> Vec<(String, Code)> {
        testing::lint_layers(layers, None)
            .diagnostics
            .into_iter()
            .map(|d| (d.path.to_string(), d.code))
            .collect()
    }

    fn layer(kind: LayerKind, entries: Vec<Entry>) -> LayerInput {
        LayerInput::new(kind, entries)
    }

    fn prefixed(kind: LayerKind, entries: Vec<(&str, Content)>) -> LayerInput {
        let dir = kind.as_str();
        layer(
            kind,
            entries
                .into_iter()
                .map(|(n, c)| Entry {
                    path: format!("{dir}/{n}"),
                    ..entry(n, c)
                })
                .collect(),
        )
    }

    #[test]
    fn layer_table() {
        use Code::*;
        use LayerKind::*;
        let long = "x".repeat(400);
        type Case<'a> = (&'a str, Vec<LayerInput>, Vec<(&'a str, Code)>);
        let cases: Vec<Case<'_>> = vec![
            (
                "clean",
                vec![prefixed(Package, vec![("00-a.md", bytes("a"))])],
                vec![],
            ),
            (
                "oversized hides",
                vec![
                    prefixed(Package, vec![("00-a.md", bytes("a"))]),
                    prefixed(
                        User,
                        vec![("00-a.md", Content::Oversized { size: 200_000 })],
                    ),
                ],
                vec![("user/00-a.md", OversizedFile)],
            ),
            (
                "stub",
                vec![
                    prefixed(Package, vec![("00-a.md", bytes(&long))]),
                    prefixed(Project, vec![("00-a.md", bytes("short"))]),
                ],
                vec![("project/00-a.md", StubOverride)],
            ),
            (
                "masked",
                vec![
                    prefixed(Package, vec![("00-a.md", bytes(&long))]),
                    prefixed(User, vec![("00-a.md", bytes(""))]),
                ],
                vec![("user/00-a.md", MaskedRule)],
            ),
            (
                "ranges",
                vec![
                    prefixed(User, vec![("10-x.md", bytes("a")), ("75-y.md", bytes("a"))]),
                    prefixed(Project, vec![("5-x.md", bytes("a")), ("x.md", bytes("a"))]),
                ],
                // `x.md` has no prefix and sorts after every numbered name: no finding.
                vec![
                    ("user/10-x.md", NameOutOfRange),
                    ("project/5-x.md", UnpaddedPrefix),
                    ("project/5-x.md", NameOutOfRange),
                    ("project/5-x.md", CollationOrder),
                ],
            ),
            (
                "names without a prefix",
                vec![
                    prefixed(
                        Package,
                        vec![
                            ("00-a.md", bytes("a")),
                            ("20-b.md", bytes("a")),
                            ("-zz.md", bytes("a")),
                        ],
                    ),
                    prefixed(
                        User,
                        vec![("-mine.md", bytes("a")), ("mine.md", bytes("a"))],
                    ),
                    prefixed(
                        Project,
                        vec![
                            ("-team.md", bytes("a")),
                            ("1team.md", bytes("a")),
                            ("team.md", bytes("a")),
                        ],
                    ),
                ],
                // In byte order `-` sorts before digits, and `1team.md` before `20-b.md`: those
                // names load before package rules. A package name has no layer below it.
                vec![
                    ("user/-mine.md", NameOutOfRange),
                    ("project/-team.md", NameOutOfRange),
                    ("project/1team.md", NameOutOfRange),
                ],
            ),
            (
                "collation",
                vec![prefixed(
                    Package,
                    vec![("40-a.md", bytes("a")), ("5-b.md", bytes("b"))],
                )],
                vec![
                    ("package/5-b.md", UnpaddedPrefix),
                    ("package/5-b.md", CollationOrder),
                ],
            ),
            (
                "ignored",
                vec![prefixed(
                    Project,
                    vec![
                        ("90-a.MD", Content::NotRead),
                        ("90-b.md", Content::Directory),
                        ("notes.txt", Content::NotRead),
                    ],
                )],
                vec![
                    ("project/90-a.MD", IgnoredFile),
                    ("project/90-b.md", IgnoredFile),
                ],
            ),
            (
                "unreadable falls back",
                vec![
                    prefixed(Package, vec![("00-a.md", bytes("a"))]),
                    prefixed(
                        User,
                        vec![(
                            "00-a.md",
                            Content::Unreadable {
                                reason: "dangling link".into(),
                            },
                        )],
                    ),
                ],
                vec![("user/00-a.md", UnreadableRule)],
            ),
        ];
        for (name, layers, expected) in cases {
            let got = run(&layers);
            let expected: Vec<(String, Code)> = expected
                .into_iter()
                .map(|(p, c)| (p.to_owned(), c))
                .collect();
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn shadowed_copies_are_checked_and_noted() {
        let layers = vec![
            prefixed(
                LayerKind::Package,
                vec![("00-a.md", bytes("{{/IF}} a long enough text"))],
            ),
            prefixed(
                LayerKind::Project,
                vec![("00-a.md", bytes("Override{{IF:dco}} when signing{{/IF}}."))],
            ),
        ];
        let report = testing::lint_layers(&layers, None);
        assert_eq!(report.diagnostics.len(), 1);
        let d = &report.diagnostics[0];
        assert_eq!(d.code, Code::StrayCloser);
        assert_eq!(
            d.notes.last().map(|n| &**n),
            Some("this copy is not loaded: `project/00-a.md` overrides it")
        );
        assert_eq!(report.files, 2);
    }

    #[test]
    fn a_misnamed_file_is_reported_once_with_the_files_it_displaces() {
        let layers = vec![prefixed(
            LayerKind::Package,
            vec![
                ("00-a.md", bytes("a")),
                ("100-x.md", bytes("x")),
                ("20-y.md", bytes("y")),
                ("30-z.md", bytes("z")),
            ],
        )];
        let report = testing::lint_layers(&layers, None);
        let order: Vec<&Diagnostic> = report
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::CollationOrder)
            .collect();
        assert_eq!(order.len(), 1, "{order:#?}");
        assert_eq!(order[0].path, "package/100-x.md");
        assert!(
            order[0].message.contains("`20-y.md`, `30-z.md`"),
            "{}",
            order[0].message
        );
    }

    #[test]
    fn a_name_without_prefix_is_placed_by_the_collator() {
        // ICU root collation puts `_` before digits and digits before letters.
        let icu_like = |a: &str, b: &str| {
            let key = |s: &str| -> Vec<u8> {
                s.bytes()
                    .map(|c| match c {
                        b'_' => 0,
                        b'-' => 1,
                        b'0'..=b'9' => 2 + c - b'0',
                        _ => c,
                    })
                    .collect()
            };
            key(a).cmp(&key(b))
        };
        let layers = vec![
            prefixed(
                LayerKind::Package,
                vec![("00-core.md", bytes("c")), ("60-tasks.md", bytes("t"))],
            ),
            prefixed(
                LayerKind::Project,
                vec![
                    ("_x.md", bytes("x")),
                    ("90-a.md", bytes("a")),
                    ("95-b.md", bytes("b")),
                    ("zz.md", bytes("z")),
                ],
            ),
        ];
        let report = testing::lint_layers(&layers, Some(&icu_like));
        let found = |path: &str| {
            report
                .diagnostics
                .iter()
                .find(|d| d.path == path && d.code == Code::NameOutOfRange)
        };
        // `_x.md` loads before the package rules; `zz.md`, after every numbered rule, is where
        // a project rule belongs and is no finding.
        let x = found("project/_x.md").expect("a finding for `_x.md`");
        assert_eq!(
            x.message,
            "`_x.md` has no numeric prefix and loads before `00-core.md` and one other rule of the \
             layers below"
        );
        assert!(x.notes.join(" ").contains("before every numbered name"));
        assert!(found("project/zz.md").is_none());
    }

    #[test]
    fn blocks_inside_dropped_blocks_are_checked() {
        let layers = vec![prefixed(
            LayerKind::Package,
            vec![("00-a.md", bytes("A{{IF:dco}}{{IF:dcoo}}x{{/IF}}{{/IF}}"))],
        )];
        assert_eq!(
            run(&layers),
            vec![("package/00-a.md".to_owned(), Code::UnknownSettingKey)]
        );
    }

    #[test]
    fn one_directory_listed_as_two_layers_keeps_each_copys_fixes_to_itself() {
        // A package directory that is also the project's: the same paths in two layers, whose
        // findings share one list. Each copy's look-alike markers are repaired on its own text.
        let text = "{{if:dco}}a{{/IF}}\n{{ IF:dco}}b";
        let copy = || vec![Entry::new("90-x.md", "same/90-x.md", bytes(text))];
        let layers = vec![
            layer(LayerKind::Package, copy()),
            layer(LayerKind::Project, copy()),
        ];
        let report = testing::lint_layers(&layers, None);
        let fixed = |d: &&Diagnostic| d.code == Code::NearMissMarker && d.fix.is_some();
        // Two look-alikes in each copy, each with its fix.
        assert_eq!(report.diagnostics.iter().filter(fixed).count(), 4);
        let lines = report
            .lines("same/90-x.md")
            .expect("findings with positions");
        assert_eq!(lines.line(1), Some((0, "{{if:dco}}a{{/IF}}")));
        assert_eq!(lines.line(2), Some((19, "{{ IF:dco}}b")));
        assert_eq!(report.files, 2);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Fragments that exercise every check.
    const PIECES: &[&[u8]] = &[
        b"{{",
        b"}}",
        b"}",
        b"IF:",
        b"IFNOT:",
        b"/IF",
        b"/IFNOT",
        b"if:",
        b" ",
        b"\t",
        b"\n",
        b"\r",
        b"\r\n",
        b"---",
        b"|",
        b":",
        b"==",
        b"!=",
        b"=",
        b"\"",
        b"dco",
        b"coms_active",
        b"requires: ",
        b"requires_setting: ",
        b"REVIEW_LOOP_MAX_CYCLES",
        b"SETTINGS",
        b"x",
        "é".as_bytes(),
        "\u{202e}".as_bytes(),
        "\u{200b}".as_bytes(),
        "\u{feff}".as_bytes(),
        "\u{e0041}".as_bytes(),
        b"\xff",
        b"\xc3",
    ];

    fn text() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0..PIECES.len(), 0..80).prop_map(|ix| {
            ix.into_iter()
                .flat_map(|i| PIECES[i].iter().copied())
                .collect()
        })
    }

    proptest! {
        #[test]
        fn any_text_lints_without_panic_and_spans_are_valid(bytes in text(), lower in text()) {
            let texts = [("p", String::from_utf8_lossy(&lower).into_owned()), ("q", String::from_utf8_lossy(&bytes).into_owned())];
            let layers = vec![
                LayerInput::new(LayerKind::Package, vec![
                    Entry::new("00-a.md", "p/00-a.md", Content::Bytes(lower)),
                ]),
                LayerInput::new(LayerKind::Project, vec![
                    Entry::new("00-a.md", "q/00-a.md", Content::Bytes(bytes)),
                ]),
            ];
            let schema = testing::schema();
            let input = LintInput {
                layers,
                settings: &[],
                schema: &schema,
                features: FEATURES,
                collate: &|a: &str, b: &str| a.cmp(b),
            };
            let report = lint(input);
            let keys: Vec<(bool, &str, usize)> = report
                .diagnostics
                .iter()
                .map(|d| (d.path.starts_with('q'), d.path.as_str(), d.span.as_ref().map_or(0, |s| s.start)))
                .collect();
            prop_assert!(keys.windows(2).all(|w| w[0] <= w[1]), "not sorted: {keys:?}");
            for d in &report.diagnostics {
                let text = texts.iter().find(|(dir, _)| d.path.starts_with(dir)).map_or("", |(_, t)| t.as_str());
                let spans = d.span.iter().chain(d.labels.iter().map(|l| &l.span));
                let lines = report.lines(&d.path);
                for span in spans {
                    prop_assert!(span.start <= span.end && span.end <= text.len(), "{d:?}");
                    prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
                    // The kept lines place the span as the whole text does.
                    let lines = lines.expect("a file with positions keeps lines");
                    for offset in [span.start, span.end] {
                        let at = crate::span::line_col(text, offset);
                        prop_assert_eq!(lines.line_col(offset), at);
                        let range = crate::span::line_span(text, offset);
                        prop_assert_eq!(lines.line(at.line), Some((range.start, &text[range])));
                    }
                }
                prop_assert!(!d.message.is_empty(), "{d:?}");
            }
        }

        #[test]
        fn a_linter_fed_in_listing_order_reports_as_lint_does(
            package in prop::collection::vec(text(), 0..4),
            project in prop::collection::vec(text(), 0..4),
        ) {
            // Names out of the loader's order, one without a prefix and one that is in both
            // layers.
            let layer = |kind: LayerKind, dir: &str, texts: &[Vec<u8>]| {
                let entries = texts
                    .iter()
                    .enumerate()
                    .map(|(i, text)| {
                        let name = ["9-b.md", "x.md", "00-a.md", "10-c.md"][i % 4];
                        Entry::new(name, format!("{dir}/{name}"), Content::Bytes(text.clone()))
                    })
                    .collect();
                LayerInput::new(kind, entries)
            };
            let layers = vec![
                layer(LayerKind::Project, "q", &project),
                layer(LayerKind::Package, "p", &package),
            ];
            let schema = testing::schema();
            let collate = |a: &str, b: &str| a.cmp(b);
            let expected = lint(LintInput {
                layers: layers.clone(),
                settings: &[],
                schema: &schema,
                features: FEATURES,
                collate: &collate,
            });
            // Layer by layer, each as listed, last entry first.
            let mut linter = Linter::new(&schema, FEATURES);
            let mut fed = layers;
            fed.sort_by_key(|l| l.kind);
            for layer in &mut fed {
                for entry in layer.entries.iter_mut().rev() {
                    linter.check_rule(entry);
                }
            }
            let got = linter.finish(&fed, &[], &collate);
            prop_assert_eq!(&got.diagnostics, &expected.diagnostics);
            prop_assert_eq!(got.files, expected.files);
            for d in &got.diagnostics {
                let (got, expected) = (got.lines(&d.path), expected.lines(&d.path));
                let position = |lines: Option<SourceLines<'_>>, offset: usize| {
                    let lines = lines?;
                    let at = lines.line_col(offset);
                    Some((at, lines.line(at.line).map(|(start, text)| (start, text.to_owned()))))
                };
                for span in d.span.iter().chain(d.labels.iter().map(|l| &l.span)) {
                    for offset in [span.start, span.end] {
                        prop_assert_eq!(position(got, offset), position(expected, offset));
                    }
                }
            }
        }
    }
}
