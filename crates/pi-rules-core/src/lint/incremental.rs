//! [`lint`](super::lint) in parts, for a caller that keeps results between runs (the language
//! server): each rule file on its own ([`Linter::lint_rule`]), the checks across files
//! ([`check_layers`]) and each settings file ([`lint_settings`]), each giving findings that do
//! not change unless what it reads changes. [`combine`] puts the parts together into the
//! [`Report`] that a whole run gives, and [`LayerFindings::of`] gives one file's part of it.
//!
//! The parts recombine exactly because the codes the checks across files report are never
//! reported by the checks of a file on its own, and have no position: so the per-code bound of
//! a file is never shared between the two, and a file's findings are its own ones followed by
//! those across files, in position order (whole-file ones first), the shadowing note on each
//! positioned one.

use super::diagnostic::{FileDiagnostics, FilePath};
use super::sources::{SourceLines, Sources};
use super::{
    check_rule_text, files, settings_files, take_rule_bytes, Diagnostic, Entry, LayerInput, Linter,
    Report, SchemaInfo, SettingsInput,
};
use crate::layer::Layer;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The findings of one file checked on its own (a rule file's copies, or a settings file), and
/// the lines of its text that they point into.
#[derive(Debug, Clone)]
pub struct FileLint {
    /// The file's path, as the entries or the settings input give it.
    pub path: FilePath,
    /// In position order (whole-file findings first), each code's overflow summarised, without
    /// the notes that the checks across files add (see [`LayerFindings::of`]). A settings file's
    /// list may hold findings on the `.json` file beside it.
    pub diagnostics: Vec<Diagnostic>,
    /// How many files were read and checked (copies of a rule at one path count each).
    pub files: usize,
    /// The codes the file silences for itself (`lint-ignore:`): the checks across the layers
    /// honour them too ([`LayerFindings::of`]).
    pub ignored: Vec<super::Code>,
    sources: Arc<Sources>,
}

impl FileLint {
    /// Lines and columns of the findings in the file, and the text of their lines: as
    /// [`Report::lines`] gives them for the file's path.
    pub fn lines(&self) -> Option<SourceLines<'_>> {
        self.sources.lines(&self.path)
    }
}

impl Linter<'_> {
    /// Checks the rule files among `copies` on their own: the copies of one path, in layer order
    /// (usually one; two when one directory is listed as two layers). Each copy that was read
    /// becomes [`Content::Checked`](super::Content::Checked), as with [`Linter::check_rule`],
    /// whose findings and lines these are; nothing is kept in the linter.
    pub fn lint_rule(&mut self, copies: &mut [&mut Entry]) -> FileLint {
        let path = FilePath::from(copies.first().map_or("", |e| e.path.as_str()));
        let mut out = FileDiagnostics::new(path.clone());
        let mut sources = Sources::default();
        let mut files = 0;
        let mut ignored = Vec::new();
        for entry in copies.iter_mut() {
            let Some(bytes) = take_rule_bytes(entry) else {
                continue;
            };
            let text = check_rule_text(&self.cx, &bytes, &mut out, &mut self.scratch);
            // As a whole run keeps them: the last copy's that names any.
            let codes = std::mem::take(&mut self.scratch.ignored);
            if !codes.is_empty() {
                ignored = codes;
            }
            let exact = matches!(text, Cow::Borrowed(_));
            sources.insert(&out, &text, exact);
            files += 1;
        }
        let mut diagnostics = out.finish(None);
        if let Some(id) = copies.first().and_then(|e| e.file_id) {
            diagnostics.iter_mut().for_each(|d| d.file_id = Some(id));
        }
        FileLint {
            path,
            diagnostics,
            files,
            ignored,
            sources: Arc::new(sources),
        }
    }
}

/// Checks one settings file (what [`Linter::finish`] does for each).
pub fn lint_settings(schema: &SchemaInfo, settings: &SettingsInput) -> FileLint {
    let mut found: IndexMap<FilePath, FileDiagnostics> = IndexMap::new();
    settings_files::check(schema, settings, &mut found);
    let mut sources = Sources::default();
    if let Some(out) = found.get(settings.path.as_str()) {
        sources.insert(out, &settings.text, false);
    }
    let mut diagnostics: Vec<Diagnostic> = found
        .into_values()
        .flat_map(|out| out.finish(None))
        .collect();
    super::identify(
        &mut diagnostics,
        &super::file_ids([], std::slice::from_ref(settings)),
    );
    FileLint {
        path: FilePath::from(settings.path.as_str()),
        diagnostics,
        files: 1,
        ignored: Vec::new(),
        sources: Arc::new(sources),
    }
}

/// What the checks across the layers found: names, shadowing, prefixes, collation, entries that
/// are not rules. They read the entries' names, kinds, sizes, links and escapes, never a text.
#[derive(Debug, Clone, Default)]
pub struct LayerFindings {
    /// By path, in the order the checks found them.
    files: Map<FilePath, Vec<Diagnostic>>,
    /// For each copy that is read but shadowed, the note naming the copy loaded instead.
    shadowed: Map<String, String>,
    /// The layer of each entry's path (the highest, for a path listed in two layers).
    rank: Map<String, Layer>,
}

/// Runs the checks across `layers` (in any order; rule files read or already checked), in the
/// loader's order of names `collate`.
pub fn check_layers(
    layers: &[&LayerInput],
    collate: &dyn Fn(&str, &str) -> Ordering,
) -> LayerFindings {
    let mut sorted: Vec<&LayerInput> = layers.to_vec();
    sorted.sort_by_key(|layer| layer.kind);
    let mut found: IndexMap<FilePath, FileDiagnostics> = IndexMap::new();
    let shadowed = files::check_layers(collate, &sorted, &mut found);
    let rank = sorted
        .iter()
        .flat_map(|l| l.entries.iter().map(|e| (e.path.clone(), l.kind)))
        .collect();
    let ids = super::file_ids(sorted.iter().copied(), &[]);
    let files = found
        .into_iter()
        .map(|(path, out)| {
            let mut found = out.finish(None);
            super::identify(&mut found, &ids);
            (path, found)
        })
        .filter(|(_, found)| !found.is_empty())
        .collect();
    LayerFindings {
        files,
        shadowed: shadowed.into_iter().collect(),
        rank,
    }
}

impl LayerFindings {
    /// The findings of the file at `path` in the report of a whole run: `own` (its
    /// [`FileLint`], if it is a rule file that was read) and those across files, in order.
    pub fn of(&self, path: &str, own: Option<&FileLint>) -> Vec<Diagnostic> {
        let mut found: Vec<Diagnostic> = own.map(|o| o.diagnostics.clone()).unwrap_or_default();
        if let Some(across) = self.files.get(path) {
            let ignored = own.map_or(&[][..], |o| &o.ignored[..]);
            found.extend(
                (across.iter())
                    .filter(|d| !ignored.contains(&d.code))
                    .cloned(),
            );
        }
        if let Some(note) = self.shadowed.get(path) {
            for d in found.iter_mut().filter(|d| d.span.is_some()) {
                d.notes.push(Cow::Owned(note.clone()));
            }
        }
        found.sort_by_key(|d| d.span.as_ref().map_or((0, 0), |s| (1, s.start)));
        found
    }

    /// Whether the checks across files found anything at `path`, or note it as shadowed.
    pub fn touches(&self, path: &str) -> bool {
        self.files.contains_key(path) || self.shadowed.contains_key(path)
    }
}

/// The report of a whole run, from its parts: `across` from [`check_layers`] on the layers,
/// `rules` the [`FileLint`] of each path with rule files read, `settings` those of the settings
/// files in their order. The same findings in the same order, and the same lines, as
/// [`lint`](super::lint) on the same input.
pub fn combine<'f>(
    across: &LayerFindings,
    rules: impl IntoIterator<Item = &'f FileLint>,
    settings: &[FileLint],
) -> Report {
    let mut report = Report::default();
    let mut by_path: IndexMap<FilePath, Vec<Diagnostic>> = IndexMap::new();
    let mut own: Map<&str, &FileLint> = Map::default();
    for lint in rules {
        report.files += lint.files;
        if !lint.sources.is_empty() {
            (report.parts).insert(lint.path.clone(), Arc::clone(&lint.sources));
        }
        own.insert(lint.path.as_str(), lint);
    }
    let mut paths: Vec<&str> = own.keys().copied().collect();
    paths.extend(across.files.keys().map(FilePath::as_str));
    for path in paths {
        if by_path.contains_key(path) {
            continue;
        }
        let found = across.of(path, own.get(path).copied());
        if !found.is_empty() {
            by_path.insert(FilePath::from(path), found);
        }
    }
    for lint in settings {
        report.files += lint.files;
        if !lint.sources.is_empty() {
            (report.parts).insert(lint.path.clone(), Arc::clone(&lint.sources));
        }
        for d in &lint.diagnostics {
            by_path.entry(d.path.clone()).or_default().push(d.clone());
        }
    }
    let rank = |path: &str| across.rank.get(path).map_or(3, |k| *k as u8);
    let mut sorted: Vec<(u8, FilePath, Vec<Diagnostic>)> = by_path
        .into_iter()
        .map(|(path, found)| (rank(&path), path, found))
        .collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_str().cmp(b.1.as_str())));
    report.diagnostics = sorted.into_iter().flat_map(|(_, _, found)| found).collect();
    report
}

#[cfg(test)]
mod tests {
    use super::super::testing::schema;
    use super::super::{lint, Content, LintInput, FEATURES};
    use super::*;

    fn entry(name: &str, dir: &str, content: Content) -> Entry {
        Entry::new(name, format!("{dir}/{name}"), content)
    }

    fn bytes(text: &str) -> Content {
        Content::Bytes(text.as_bytes().to_vec())
    }

    /// Layers with findings of every kind: per file, across files (a shadowed copy, a stub, an
    /// unreadable copy, names), and one directory listed as two layers.
    fn layers(shared_dir: bool) -> Vec<LayerInput> {
        let many_closers = "{{/IF}}\n".repeat(60);
        let package = if shared_dir { "p" } else { "pkg" };
        vec![
            LayerInput::new(
                Layer::Project,
                vec![
                    entry("10-a.md", "p", bytes("{{IF:nope}}\nx\n")),
                    entry("20-b.md", "p", bytes("short")),
                    entry("30-c.md", "p", bytes(&many_closers)),
                    entry("5-d.md", "p", bytes("ok\n")),
                    entry("x.MD", "p", Content::NotRead),
                    entry(
                        "40-e.md",
                        "p",
                        Content::Unreadable {
                            reason: "no".into(),
                        },
                    ),
                ],
            ),
            LayerInput::new(
                Layer::User,
                vec![
                    entry("10-a.md", "u", bytes("{{/IF}}\nuser copy\n")),
                    entry("40-e.md", "u", bytes("user e\n")),
                ],
            ),
            LayerInput::new(
                Layer::Package,
                vec![
                    entry("20-b.md", package, bytes(&"long text ".repeat(20))),
                    entry("60-f.md", package, Content::Oversized { size: 200_000 }),
                    entry("70-g.md", package, bytes("\u{feff}bad \u{202e} text\r\n")),
                ],
            ),
        ]
    }

    fn by_parts(mut layers: Vec<LayerInput>, settings: &[SettingsInput]) -> Report {
        let schema = schema();
        let collate = |a: &str, b: &str| a.cmp(b);
        let mut linter = Linter::new(&schema, FEATURES);
        layers.sort_by_key(|l| l.kind);
        let mut copies: IndexMap<String, Vec<(usize, usize)>> = IndexMap::new();
        for (l, layer) in layers.iter().enumerate() {
            for (e, entry) in layer.entries.iter().enumerate() {
                copies.entry(entry.path.clone()).or_default().push((l, e));
            }
        }
        let mut rules = Vec::new();
        for at in copies.values() {
            let mut taken: Vec<Entry> = at
                .iter()
                .map(|&(l, e)| layers[l].entries[e].clone())
                .collect();
            let mut refs: Vec<&mut Entry> = taken.iter_mut().collect();
            rules.push(linter.lint_rule(&mut refs));
            for (&(l, e), entry) in at.iter().zip(taken) {
                layers[l].entries[e] = entry;
            }
        }
        let across = check_layers(&layers.iter().collect::<Vec<_>>(), &collate);
        let settings: Vec<FileLint> = settings.iter().map(|s| lint_settings(&schema, s)).collect();
        combine(&across, &rules, &settings)
    }

    fn whole(layers: Vec<LayerInput>, settings: &[SettingsInput]) -> Report {
        let schema = schema();
        let collate = |a: &str, b: &str| a.cmp(b);
        lint(LintInput {
            layers,
            settings,
            schema: &schema,
            features: FEATURES,
            collate: &collate,
            scoped: false,
        })
    }

    fn settings() -> Vec<SettingsInput> {
        let text = "{\"nope\": 1, \"nope\": 2,\n \"\u{202e}\": true}\n";
        vec![SettingsInput {
            file_id: None,
            path: "p/pi-config-settings.jsonc".into(),
            text: text.into(),
            file: crate::settings::SettingsFile::parse(crate::settings::Schema::embedded(), text),
            ignored_json: Some("p/pi-config-settings.json".into()),
            escape: None,
        }]
    }

    #[test]
    fn the_parts_combine_into_the_report_of_a_whole_run() {
        for shared_dir in [false, true] {
            let settings = settings();
            let expected = whole(layers(shared_dir), &settings);
            let got = by_parts(layers(shared_dir), &settings);
            assert!(
                expected.diagnostics.len() > 10,
                "{:#?}",
                expected.diagnostics
            );
            assert!(
                expected.diagnostics.iter().any(|d| !d.notes.is_empty()),
                "a shadowing note"
            );
            assert_eq!(
                got.diagnostics, expected.diagnostics,
                "shared: {shared_dir}"
            );
            assert_eq!(got.files, expected.files);
            for d in &expected.diagnostics {
                let (Some(a), Some(b)) = (expected.lines(&d.path), got.lines(&d.path)) else {
                    assert_eq!(d.span, None, "{d:?}");
                    assert!(got.lines(&d.path).is_none());
                    continue;
                };
                let spans = d.span.iter().chain(d.labels.iter().map(|l| &l.span));
                for span in spans {
                    for offset in [span.start, span.end] {
                        assert_eq!(a.line_col(offset), b.line_col(offset), "{d:?}");
                        let line = a.line_col(offset).line;
                        assert_eq!(a.line(line), b.line(line), "{d:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn one_file_is_its_own_findings_and_those_across_files() {
        let schema = schema();
        let mut linter = Linter::new(&schema, FEATURES);
        let mut layers = layers(false);
        let mut lints = Vec::new();
        for layer in &mut layers {
            for entry in &mut layer.entries {
                lints.push(linter.lint_rule(&mut [entry]));
            }
        }
        let across = check_layers(&layers.iter().collect::<Vec<_>>(), &|a: &str, b: &str| {
            a.cmp(b)
        });
        let expected = whole(self::layers(false), &[]);
        for lint in &lints {
            let want: Vec<&Diagnostic> = expected
                .diagnostics
                .iter()
                .filter(|d| d.path == lint.path)
                .collect();
            let got = across.of(&lint.path, Some(lint));
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "{}", lint.path);
        }
    }
}
