//! [`IncrementalCheck`]: `check`'s findings kept up to date as files change, file by file.

use super::{
    add_config_findings, comparator_for, entry_of, gather, gather_each, gather_settings,
    list_layer, CheckOptions, PathLabels,
};
use crate::config::{self, Config, LoadedConfig};
use crate::error::Result;
use crate::files::{FileStamp, Files};
use crate::loader::Layer;
use crate::loader::{Escape, PackageSource};
use crate::session::Session;
use pi_rules_core::lint::{
    self, Content, Entry, LayerInput, Link, NestedInput, Report, SchemaInfo,
};
use pi_rules_core::settings::SETTINGS_FILE_NAMES;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `check`'s findings kept up to date as files change, for the language server: each rule
/// file's own findings, those across the layers, and each settings file's, kept apart
/// ([`lint::FileLint`], [`lint::LayerFindings`]). A change to one file re-reads and re-checks
/// that file alone, and runs the checks across the layers again only when what they read of it
/// changed: that it exists, its kind, link, escape or name, or its size where another layer has
/// the same name. A settings file's change re-reads the settings files.
///
/// A nested rule directory (`packages/api/.pi/rules`, below the project directory) is taken in
/// when one of its files changes (the editor opens it): it is listed, with the nested
/// directories above it (one `stat` a level, no walk of the repository), its rule files are
/// checked on their own as `check` checks them, and the checks across its files run as
/// `check`'s do (names; a nested rule that replaces a rule of the same name, `PR1006`). The
/// checks that need the walk of the repository (a glob that matches no file, `PR1004`) are
/// `check`'s alone.
///
/// pi-rules' configuration files are read with the rest: their findings are theirs, and their
/// `[check]` decides what every finding becomes. A change to one reads them again; when what
/// they say changed (`[rules] scoped`, `[check]`), everything is checked again.
///
/// The findings of a file are those of [`check`](super::check) on the same files and editor
/// buffers, but for the findings on files `export` wrote, which are not in a layer, and those
/// that need the walk. Their file
/// ids ([`lint::Diagnostic::file_id`]) are the sessions' table's: give every session that
/// updates one check the same table ([`Session::with_file_ids`](crate::session::Session::with_file_ids)).
#[derive(Debug)]
pub struct IncrementalCheck {
    schema: SchemaInfo,
    display: PathLabels,
    /// The layers, package first, their rules checked ([`Content::Checked`]).
    layers: Vec<LayerState>,
    /// The own findings of each path with a rule file read, by label.
    rules: HashMap<String, lint::FileLint>,
    across: lint::LayerFindings,
    settings: Vec<lint::FileLint>,
    /// Where the embedded package rules have copies on disk (the editor's view of them).
    embedded_copies: Option<PathBuf>,
    /// What was read at each layer entry's path (by label) that an update took in: a change
    /// that leaves it as it was checks nothing again.
    stamps: HashMap<String, Stamp>,
    /// Scopes are on for pi (`[rules] scoped`), as the check was made.
    scoped: bool,
    /// pi-rules' configuration as read for the check: its `[check]` decides what each finding
    /// becomes, and its files' findings are theirs.
    config: LoadedConfig,
    /// The configuration files' findings, by label.
    config_findings: HashMap<String, Vec<lint::Diagnostic>>,
    /// The project root (real), that `[[check.per-path]]` globs are relative to, and the
    /// working directory as given and real, to place a path given through the former.
    root: PathBuf,
    cwd: (PathBuf, PathBuf),
    /// The nested rule directories taken in so far, by their `.pi/rules` directory.
    nested: Vec<NestedState>,
    /// The own findings of each nested rule file read, by label.
    nested_rules: HashMap<String, lint::FileLint>,
    /// What the checks across the nested directories found, by label.
    nested_across: HashMap<String, Vec<lint::Diagnostic>>,
}

/// A nested rule directory as listed.
#[derive(Debug)]
struct NestedState {
    /// Its `.pi/rules` directory.
    rules: PathBuf,
    input: NestedInput,
}

/// What was read at a path: the editor's text, or the file's stamp on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stamp {
    Editor(Arc<str>),
    /// The stamp of the entry itself (`lstat`), and of what a link leads to (`stat`), or `None`
    /// when it leads nowhere.
    Disk(FileStamp, Option<FileStamp>),
}

impl Stamp {
    /// What is at `path` now: `None` when nothing is.
    fn of(files: &Files, path: &Path) -> Option<Stamp> {
        if let Some(text) = files.overlay().get(path) {
            return Some(Stamp::Editor(Arc::clone(text)));
        }
        let entry = FileStamp::of(&files.symlink_metadata(path)?);
        let target = files.metadata(path).map(|m| FileStamp::of(&m));
        Some(Stamp::Disk(entry, target))
    }
}

/// One layer as listed, and the directory it was listed from (`None`: the embedded rules).
#[derive(Debug)]
struct LayerState {
    dir: Option<PathBuf>,
    input: LayerInput,
}

/// What an [`IncrementalCheck::update`] checked again beyond the file itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Updated {
    /// The checks across the layers ran again: any rule file's findings may have changed.
    pub across: bool,
    /// The settings files were read and checked again.
    pub settings: bool,
    /// Everything was gathered and checked again.
    pub all: bool,
}

impl IncrementalCheck {
    /// Gathers and checks everything, as [`check`](super::check) does.
    pub fn new(opts: &CheckOptions<'_>) -> Result<IncrementalCheck> {
        let session = opts.session;
        let config = Config::read(session);
        let scoped = config.config.scoped();
        let schema = SchemaInfo::from_schema(&session.schema);
        let mut dirs: Vec<Option<PathBuf>> = vec![match &opts.package {
            PackageSource::Embedded(_) => None,
            PackageSource::Dir(dir) => Some(session.cwd.join(dir)),
        }];
        if let Some(home) = &session.home {
            dirs.push(Some(home.join(".pi").join("agent").join("rules")));
        }
        dirs.push(Some(session.cwd.join(".pi").join("rules")));
        let mut rules = HashMap::new();
        let listed: Vec<&PathBuf> = dirs.iter().flatten().collect();
        let shared = (1..listed.len()).any(|i| listed[..i].contains(&listed[i]));
        let mut linter = lint::Linter::new(&schema, lint::FEATURES).scoped(scoped);
        let (mut layers, settings) = if shared {
            gather(opts)?
        } else {
            gather_each(opts, &mut |_, entry| {
                if lint::is_rule_name(&entry.name) && matches!(entry.content, Content::Bytes(_)) {
                    let found = linter.lint_rule(&mut [entry]);
                    rules.insert(found.path.to_string(), found);
                }
            })?
        };
        if shared {
            // The copies at one path are checked together, in layer order.
            let mut at: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
            for (l, layer) in layers.iter().enumerate() {
                for (e, entry) in layer.entries.iter().enumerate() {
                    at.entry(entry.path.clone()).or_default().push((l, e));
                }
            }
            for (path, copies) in at {
                let mut taken: Vec<Entry> = copies
                    .iter()
                    .map(|&(l, e)| layers[l].entries[e].clone())
                    .collect();
                let mut refs: Vec<&mut Entry> = taken.iter_mut().collect();
                let found = linter.lint_rule(&mut refs);
                if found.files > 0 {
                    rules.insert(path, found);
                }
                for (&(l, e), entry) in copies.iter().zip(taken) {
                    layers[l].entries[e] = entry;
                }
            }
        }
        let settings = settings
            .iter()
            .map(|s| lint::lint_settings(&schema, s))
            .collect();
        let layers = dirs
            .into_iter()
            .zip(layers)
            .map(|(dir, input)| LayerState { dir, input })
            .collect();
        let mut state = IncrementalCheck {
            schema,
            display: PathLabels::new(&session.env),
            layers,
            rules,
            across: lint::LayerFindings::default(),
            settings,
            embedded_copies: None,
            stamps: HashMap::new(),
            scoped,
            config_findings: config_findings(&config, session),
            config,
            root: session.project_root(),
            cwd: (
                session.cwd.clone(),
                session.files().canonical_or_same(&session.cwd),
            ),
            nested: Vec::new(),
            nested_rules: HashMap::new(),
            nested_across: HashMap::new(),
        };
        state.check_across();
        Ok(state)
    }

    /// Shows the embedded package rules' findings on their copies in `dir` (the files an editor
    /// opens for them).
    pub fn with_embedded_copies(mut self, dir: Option<PathBuf>) -> IncrementalCheck {
        self.embedded_copies = dir;
        self
    }

    /// The report [`check`](super::check) gives, but for the findings on files `export` wrote.
    pub fn report(&self) -> Report {
        lint::combine(&self.across, self.rules.values(), &self.settings)
    }

    /// The findings on the file at `path`, in order, as [`check`](super::check)'s report has them:
    /// the configuration's `[check]` applied, and for a configuration file, its findings.
    pub fn findings_of(&self, path: &Path) -> Vec<lint::Diagnostic> {
        let (label, mut found) = self.unconfigured_findings_of(path);
        if let Some(theirs) = self.config_findings.get(&label) {
            found.extend(theirs.iter().cloned());
        }
        let check = &self.config.config.check;
        if !check.is_default() && !found.is_empty() {
            let relative = self.relative_to_root(path);
            found.retain_mut(|d| {
                match check.severity_of(d.code, d.severity, relative.as_deref()) {
                    Some(severity) => {
                        d.severity = severity;
                        true
                    }
                    None => false,
                }
            });
        }
        found
    }

    /// `path` relative to the project root, for `[[check.per-path]]`: `None` outside it.
    fn relative_to_root(&self, path: &Path) -> Option<PathBuf> {
        if let Ok(relative) = path.strip_prefix(&self.root) {
            return Some(relative.to_path_buf());
        }
        let (given, real) = &self.cwd;
        let inside = path.strip_prefix(given).ok()?;
        real.join(inside)
            .strip_prefix(&self.root)
            .ok()
            .map(Path::to_path_buf)
    }

    /// [`IncrementalCheck::findings_of`] before the configuration has its say, with the path's
    /// label.
    fn unconfigured_findings_of(&self, path: &Path) -> (String, Vec<lint::Diagnostic>) {
        let embedded = path
            .parent()
            .zip(path.file_name().and_then(|n| n.to_str()))
            .filter(|(dir, _)| self.embedded_copies.as_deref() == Some(*dir))
            .filter(|_| self.layers.first().is_some_and(|l| l.dir.is_none()));
        let label = match embedded {
            Some((_, name)) => format!("<embedded>/{name}"),
            None => self.display.path(path),
        };
        if let Some(own) = self.nested_rules.get(&label) {
            let mut found = own.diagnostics.clone();
            let across = self.nested_across.get(&label).into_iter().flatten();
            // Its `lint-ignore:` silences the checks across files too.
            found.extend(across.filter(|d| !own.ignored.contains(&d.code)).cloned());
            // As a whole check orders one file's findings: whole-file ones first, then by
            // position, each in the order found.
            found.sort_by_key(|d| d.span.as_ref().map_or((0, 0), |s| (1, s.start)));
            return (label, found);
        }
        if let Some(across) = self.nested_across.get(&label) {
            let found = across.clone();
            return (label, found);
        }
        let mut found = self.across.of(&label, self.rules.get(&label));
        for settings in &self.settings {
            let theirs = settings.diagnostics.iter().filter(|d| d.path == label);
            found.extend(theirs.cloned());
        }
        (label, found)
    }

    /// Whether the nested rule directory `rules` (`<project>/D/.pi/rules`) is taken in: a
    /// change to one of its files is checked; a change in one that is not takes it in.
    pub fn has_nested(&self, rules: &Path) -> bool {
        self.nested.iter().any(|n| n.rules == rules)
    }

    /// Takes in a change to the file at `path` (its text in the editor, or on disk; made or
    /// removed), with `opts.session`'s editor buffers, and checks again what reads it.
    pub fn update(&mut self, opts: &CheckOptions<'_>, path: &Path) -> Result<Updated> {
        let session = opts.session;
        if self.is_config(session, path) {
            return self.update_config(opts);
        }
        let name = path.file_name().map(|n| n.to_str());
        let parent = path.parent();
        let is_settings = |dir: Option<PathBuf>| dir.is_some() && dir.as_deref() == parent;
        if name.is_some_and(|n| n.is_some_and(|n| SETTINGS_FILE_NAMES.contains(&n)))
            && (is_settings(Some(session.project_settings_dir()))
                || is_settings(session.global_settings_dir()))
        {
            let inputs = gather_settings(session, &self.display);
            let schema = &self.schema;
            self.settings = inputs
                .iter()
                .map(|s| lint::lint_settings(schema, s))
                .collect();
            return Ok(Updated {
                settings: true,
                ..Updated::default()
            });
        }
        let layers: Vec<usize> = (self.layers.iter().enumerate())
            .filter(|(_, l)| l.dir.is_some() && l.dir.as_deref() == parent)
            .map(|(i, _)| i)
            .collect();
        let (Some(Some(name)), &[index]) = (name, &layers[..]) else {
            if layers.is_empty() {
                return match parent.and_then(|p| nested_dir(&session.cwd, p)) {
                    Some(dir) => self.update_nested(opts, path, dir),
                    None => Ok(Updated::default()),
                };
            }
            return self.rebuild(opts);
        };
        if self.layers[index].input.problem.is_some() {
            return self.rebuild(opts);
        }
        let files = session.files();
        let label = self.display.path(path);
        let stamp = Stamp::of(files, path);
        if stamp.is_some() && self.stamps.get(&label) == stamp.as_ref() {
            return Ok(Updated::default());
        }
        match stamp {
            Some(stamp) => self.stamps.insert(label.clone(), stamp),
            None => self.stamps.remove(&label),
        };
        let listed = files.list_entry(path);
        let kind = self.layers[index].input.kind;
        let policy = session.policy(false);
        let new = listed.and_then(|l| entry_of(kind, l, None, &policy, files, &self.display));
        let entries = &self.layers[index].input.entries;
        let old = entries.iter().position(|e| e.path == label);
        // The sizes of the other copies of the name.
        let others: Vec<usize> = (self.layers.iter().enumerate())
            .filter(|&(i, _)| i != index)
            .flat_map(|(_, l)| l.input.entries.iter().filter(|e| e.name == name))
            .filter_map(|e| size_of(&e.content))
            .collect();
        let same_across = match (old.map(|i| &entries[i]), &new) {
            (Some(old), Some(new)) => across_key(old, &others) == across_key(new, &others),
            (None, None) => true,
            _ => false,
        };
        self.rules.remove(&label);
        let new = new.map(|mut entry| {
            self.lint_one(&mut entry);
            entry
        });
        let entries = &mut self.layers[index].input.entries;
        replace_entry(entries, old, new);
        if !same_across {
            self.check_across();
        }
        Ok(Updated {
            across: !same_across,
            ..Updated::default()
        })
    }

    /// Whether `path` is one of the two configuration files.
    fn is_config(&self, session: &Session, path: &Path) -> bool {
        if path
            .file_name()
            .is_none_or(|n| n != config::CONFIG_FILE_NAME)
        {
            return false;
        }
        let label = self.display.path(path);
        let project = config::project_config_path(session);
        let user = config::user_config_path(session);
        [Some(project), user]
            .into_iter()
            .flatten()
            .any(|file| file == path || self.display.path(&file) == label)
    }

    /// A configuration file changed: read again (the editor's text of both files), its findings
    /// kept; when what the configuration says changed (`[rules] scoped`, `[check]`), everything
    /// is checked again with it.
    fn update_config(&mut self, opts: &CheckOptions<'_>) -> Result<Updated> {
        let session = opts.session;
        let loaded = Config::read(session);
        if loaded.config != self.config.config {
            return self.rebuild(opts);
        }
        self.config_findings = config_findings(&loaded, session);
        self.config = loaded;
        Ok(Updated {
            settings: true,
            ..Updated::default()
        })
    }

    /// Checks `entry` on its own, if it is a rule that was read, and keeps its findings.
    fn lint_one(&mut self, entry: &mut Entry) {
        if let Some(found) = lint_rule(&self.schema, self.scoped, entry) {
            self.rules.insert(found.path.to_string(), found);
        }
    }

    /// [`IncrementalCheck::update`] for a file of the nested rule directory `dir` (from the
    /// project directory, `packages/api`): the directory is taken in the first time, else the
    /// file is read and checked again, and the checks across the nested directories run again
    /// when what they read of it changed (that it exists, its kind, link, escape or name).
    fn update_nested(
        &mut self,
        opts: &CheckOptions<'_>,
        path: &Path,
        dir: String,
    ) -> Result<Updated> {
        let session = opts.session;
        let files = session.files();
        let Some(rules) = path.parent() else {
            return Ok(Updated::default());
        };
        let label = self.display.path(path);
        let stamp = Stamp::of(files, path);
        let known = self.nested.iter().position(|n| n.rules == rules);
        let index = match known {
            Some(i) if self.nested[i].input.layer.problem.is_none() => i,
            _ => {
                // New, or listed with a problem: listed (again), with the directories above it.
                if let Some(i) = known {
                    let gone = self.nested.remove(i);
                    for entry in &gone.input.layer.entries {
                        self.nested_rules.remove(&entry.path);
                        self.stamps.remove(&entry.path);
                    }
                }
                self.take_in_nested(session, &dir);
                match stamp {
                    Some(stamp) => self.stamps.insert(label, stamp),
                    None => self.stamps.remove(&label),
                };
                self.check_nested();
                return Ok(Updated {
                    across: true,
                    ..Updated::default()
                });
            }
        };
        if stamp.is_some() && self.stamps.get(&label) == stamp.as_ref() {
            return Ok(Updated::default());
        }
        match stamp {
            Some(stamp) => self.stamps.insert(label.clone(), stamp),
            None => self.stamps.remove(&label),
        };
        let policy = session.policy(false);
        let listed = files.list_entry(path);
        let new =
            listed.and_then(|l| entry_of(Layer::Project, l, None, &policy, files, &self.display));
        let entries = &self.nested[index].input.layer.entries;
        let old = entries.iter().position(|e| e.path == label);
        let same_across = match (old.map(|i| &entries[i]), &new) {
            (Some(old), Some(new)) => across_key(old, &[]) == across_key(new, &[]),
            (None, None) => true,
            _ => false,
        };
        self.nested_rules.remove(&label);
        let new = new.map(|mut entry| {
            if let Some(found) = lint_rule(&self.schema, self.scoped, &mut entry) {
                self.nested_rules.insert(found.path.to_string(), found);
            }
            entry
        });
        let entries = &mut self.nested[index].input.layer.entries;
        replace_entry(entries, old, new);
        if !same_across {
            self.check_nested();
        }
        Ok(Updated {
            across: !same_across,
            ..Updated::default()
        })
    }

    /// Lists the nested rule directory of `dir` (from the project directory) and those of the
    /// directories between it and the project directory that have one and are not taken in yet
    /// (one `stat` each), checking their rule files on their own.
    fn take_in_nested(&mut self, session: &Session, dir: &str) {
        let files = session.files();
        let policy = session.policy(false);
        let parts: Vec<&str> = dir.split('/').collect();
        for depth in 1..=parts.len() {
            let up = parts[..depth].join("/");
            let rules = session.cwd.join(&up).join(".pi").join("rules");
            if self.nested.iter().any(|n| n.rules == rules) {
                continue;
            }
            // The directory of the file itself is listed whatever it is (a problem is a finding);
            // one above only when it is there.
            if depth < parts.len() && !files.metadata(&rules).is_some_and(|m| m.is_dir()) {
                continue;
            }
            let (schema, scoped) = (&self.schema, self.scoped);
            let found = &mut self.nested_rules;
            let layer = list_layer(
                Layer::Project,
                &rules,
                false,
                &policy,
                files,
                &self.display,
                &mut |_, entry| {
                    if let Some(lint) = lint_rule(schema, scoped, entry) {
                        found.insert(lint.path.to_string(), lint);
                    }
                },
            );
            self.nested.push(NestedState {
                input: NestedInput {
                    label: self.display.path(&rules),
                    dir: up,
                    layer,
                },
                rules,
            });
        }
    }

    /// Runs the checks across the nested directories taken in: each one's names, and the
    /// nested rules that replace a rule of a directory above (of the project directory's layers,
    /// or of a nested directory) as `check` runs them.
    fn check_nested(&mut self) {
        self.nested_across.clear();
        if self.nested.is_empty() {
            return;
        }
        let mut linter = lint::Linter::new(&self.schema, lint::FEATURES).scoped(self.scoped);
        let mut mine: std::collections::HashSet<String> = std::collections::HashSet::new();
        for nested in &self.nested {
            mine.insert(nested.input.label.clone());
            mine.extend(nested.input.layer.entries.iter().map(|e| e.path.clone()));
            linter.add_nested(nested.input.clone());
        }
        let roots: Vec<LayerInput> = self.layers.iter().map(|l| l.input.clone()).collect();
        let collate = comparator_for(
            (roots
                .iter()
                .chain(self.nested.iter().map(|n| &n.input.layer)))
            .flat_map(|layer| &layer.entries)
            .map(|entry| entry.name.as_str()),
        );
        let report = linter.finish(&roots, &[], &collate);
        for d in report.diagnostics {
            if mine.contains(d.path.as_str()) {
                self.nested_across
                    .entry(d.path.to_string())
                    .or_default()
                    .push(d);
            }
        }
    }

    fn rebuild(&mut self, opts: &CheckOptions<'_>) -> Result<Updated> {
        let embedded_copies = self.embedded_copies.take();
        let nested: Vec<String> = self.nested.iter().map(|n| n.input.dir.clone()).collect();
        *self = IncrementalCheck::new(opts)?.with_embedded_copies(embedded_copies);
        // The nested directories taken in stay taken in.
        for dir in &nested {
            self.take_in_nested(opts.session, dir);
        }
        self.check_nested();
        Ok(Updated {
            across: true,
            settings: true,
            all: true,
        })
    }

    /// Runs the checks across the layers again.
    fn check_across(&mut self) {
        let inputs: Vec<&LayerInput> = self.layers.iter().map(|l| &l.input).collect();
        let collate = comparator_for(
            inputs
                .iter()
                .flat_map(|layer| &layer.entries)
                .map(|entry| entry.name.as_str()),
        );
        self.across = lint::check_layers(&inputs, &collate);
        if !self.nested.is_empty() {
            self.check_nested();
        }
    }
}

/// The findings of the configuration files in `loaded`, by label, as `check` reports them
/// before `[check]` applies.
fn config_findings(
    loaded: &LoadedConfig,
    session: &Session,
) -> HashMap<String, Vec<lint::Diagnostic>> {
    let mut report = Report::default();
    add_config_findings(&mut report, loaded, session);
    let mut by_label: HashMap<String, Vec<lint::Diagnostic>> = HashMap::new();
    for d in report.diagnostics {
        by_label.entry(d.path.to_string()).or_default().push(d);
    }
    by_label
}

/// Checks `entry` on its own, if it is a rule that was read.
fn lint_rule(schema: &SchemaInfo, scoped: bool, entry: &mut Entry) -> Option<lint::FileLint> {
    if !(lint::is_rule_name(&entry.name) && matches!(entry.content, Content::Bytes(_))) {
        return None;
    }
    let mut linter = lint::Linter::new(schema, lint::FEATURES).scoped(scoped);
    Some(linter.lint_rule(&mut [entry]))
}

/// The directory whose nested rule directory `rules` is (`packages/api` for
/// `<project>/packages/api/.pi/rules`), from the project directory `project` with `/` between
/// its parts; `None` when `rules` is not a `.pi/rules` strictly below `project`, or not UTF-8.
pub fn nested_dir(project: &Path, rules: &Path) -> Option<String> {
    if rules.file_name()? != "rules" {
        return None;
    }
    let pi = rules.parent()?;
    if pi.file_name()? != ".pi" {
        return None;
    }
    let relative = pi.parent()?.strip_prefix(project).ok()?;
    let mut parts = Vec::new();
    for part in relative.components() {
        match part {
            std::path::Component::Normal(name) => parts.push(name.to_str()?),
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The size of a rule that was read.
fn size_of(content: &Content) -> Option<usize> {
    match content {
        Content::Bytes(bytes) => Some(bytes.len()),
        Content::Checked { len } => Some(*len),
        _ => None,
    }
}

/// What the checks across the layers read of an entry: all of it but a rule's text, and of a
/// rule's size, its class against the sizes of the other copies of its name (`others`): whether
/// it is empty, and on which side of a stub (a quarter of the other's size) each pair is; the
/// size itself only when a pair is a stub, whose finding says both sizes.
fn across_key<'e>(entry: &'e Entry, others: &[usize]) -> AcrossKey<'e> {
    let class = size_of(&entry.content).map(|len| {
        let sides: Vec<(bool, bool)> = others
            .iter()
            .map(|&other| (len * 4 < other, other * 4 < len))
            .collect();
        let stub = sides.iter().any(|&(a, b)| a || b);
        (len == 0, sides, stub.then_some(len))
    });
    let content = match &entry.content {
        Content::Bytes(_) | Content::Checked { .. } => None,
        other => Some(other),
    };
    (
        &entry.name,
        &entry.path,
        &entry.link,
        &entry.escape,
        entry.invalid_name,
        content,
        class,
    )
}

/// See [`across_key`].
type AcrossKey<'e> = (
    &'e str,
    &'e str,
    &'e Option<Link>,
    &'e Option<Escape>,
    bool,
    Option<&'e Content>,
    Option<SizeClass>,
);

/// Empty; for each other copy, whether this one is under a quarter of it and it under a quarter
/// of this one; the size when either is.
type SizeClass = (bool, Vec<(bool, bool)>, Option<usize>);

/// Puts `new` where the entry at `old` was (pushed when there was none; the old one removed when
/// there is no new one).
fn replace_entry(entries: &mut Vec<Entry>, old: Option<usize>, new: Option<Entry>) {
    match (old, new) {
        (Some(i), Some(entry)) => entries[i] = entry,
        (None, Some(entry)) => entries.push(entry),
        (Some(i), None) => {
            entries.remove(i);
        }
        (None, None) => {}
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::super::check;
    use super::*;
    use crate::env::Env;
    use crate::files::{FileTable, Overlay};
    use crate::session::Session;
    use std::fs;

    /// A project and a home with a user layer, in a temporary directory.
    fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let (root, home) = (base.join("p"), base.join("home"));
        fs::create_dir_all(root.join(".pi/rules")).unwrap();
        fs::create_dir_all(home.join(".pi/agent/rules")).unwrap();
        (tmp, root, home)
    }

    /// A session on the project with `overlay`'s texts, numbering files with `ids`: the
    /// incremental check's runs and the whole checks it is compared with share one table.
    fn session(root: &Path, home: &Path, overlay: &Overlay, ids: &Arc<FileTable>) -> Session {
        let env = Env::from_vars(root.to_path_buf(), [("HOME", home.as_os_str())]);
        Session::new(&env, None, None)
            .unwrap()
            .with_overlay(Arc::new(overlay.clone()))
            .with_file_ids(Arc::clone(ids))
    }

    #[test]
    fn an_incremental_check_follows_every_change_as_a_whole_check_sees_it() {
        let (_tmp, root, home) = project();
        let rules = root.join(".pi/rules");
        let user = home.join(".pi/agent/rules");
        let settings = root.join(".pi/pi-config-settings.json");
        fs::write(rules.join("10-a.md"), "{{IF:nope}}\nproject a\n{{/IF}}\n").unwrap();
        fs::write(user.join("10-a.md"), "{{/IF}}\n".repeat(3)).unwrap();
        fs::write(user.join("20-b.md"), "a long user rule, ".repeat(10)).unwrap();
        fs::write(rules.join("5-c.md"), "fine\n").unwrap();
        fs::write(&settings, "{\"nope\": 1}\n").unwrap();
        let mut overlay = Overlay::new();
        fn opts(session: &Session) -> CheckOptions<'_> {
            CheckOptions {
                session,
                package: PackageSource::Embedded(&[("90-pkg.md", "package\n")]),
                strict: false,
            }
        }
        let ids = Arc::new(FileTable::default());
        let s = session(&root, &home, &overlay, &ids);
        let mut state = IncrementalCheck::new(&opts(&s)).unwrap();
        // Each step changes one file, in the editor or on disk.
        type Step<'a> = (&'a Path, Box<dyn Fn(&mut Overlay) + 'a>);
        let (a, b, c, d) = (
            rules.join("10-a.md"),
            rules.join("20-b.md"),
            rules.join("5-c.md"),
            rules.join("30-d.md"),
        );
        let steps: Vec<Step<'_>> = vec![
            // A keystroke: the same size class, nothing across files changes.
            (
                &a,
                Box::new(|o: &mut Overlay| o.insert(a.clone(), "{{IF:nope}}\nx\n")),
            ),
            // A stub over the user's copy: across files.
            (&b, Box::new(|o: &mut Overlay| o.insert(b.clone(), "stub"))),
            // Its `lint-ignore:` silences what the checks across the layers say of it.
            (
                &b,
                Box::new(|o: &mut Overlay| {
                    o.insert(b.clone(), "---\nlint-ignore: PR402\n---\nstub")
                }),
            ),
            (&b, Box::new(|o: &mut Overlay| o.insert(b.clone(), ""))),
            (
                &b,
                Box::new(|o: &mut Overlay| {
                    o.remove(&b);
                }),
            ),
            (
                &c,
                Box::new(|_: &mut Overlay| fs::write(&c, "{{/IF}}\n").unwrap()),
            ),
            (
                &d,
                Box::new(|_: &mut Overlay| fs::write(&d, "d\n").unwrap()),
            ),
            (&c, Box::new(|_: &mut Overlay| fs::remove_file(&c).unwrap())),
            (
                &a,
                Box::new(|o: &mut Overlay| {
                    o.remove(&a);
                }),
            ),
            (&a, Box::new(|_: &mut Overlay| fs::remove_file(&a).unwrap())),
            (
                &settings,
                Box::new(|_: &mut Overlay| {
                    fs::write(&settings, "{\"nope\": 2, \"nope\": 3}\n").unwrap()
                }),
            ),
        ];
        let mut across = 0;
        for (i, (path, step)) in steps.iter().enumerate() {
            step(&mut overlay);
            let s = session(&root, &home, &overlay, &ids);
            let updated = state.update(&opts(&s), path).unwrap();
            across += usize::from(updated.across);
            let whole = check(&opts(&s)).unwrap();
            assert_eq!(state.report().diagnostics, whole.diagnostics, "step {i}");
            for path in [&a, &b, &c, &d, &user.join("10-a.md"), &settings] {
                let label = PathLabels::new(&s.env).path(path);
                let want: Vec<_> = (whole.diagnostics.iter())
                    .filter(|d| d.path == label)
                    .cloned()
                    .collect();
                assert_eq!(state.findings_of(path), want, "step {i}: {label}");
            }
        }
        // The keystroke and the settings file's change did not check across files again.
        assert!((1..steps.len() - 1).contains(&across), "{across}");
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod scope_tests {
    use super::super::check;
    use super::*;
    use crate::env::Env;
    use crate::files::{FileTable, Overlay};
    use crate::session::Session;
    use std::fs;

    fn opts(session: &Session) -> CheckOptions<'_> {
        CheckOptions {
            session,
            package: PackageSource::Embedded(&[("90-pkg.md", "package\n")]),
            strict: false,
        }
    }

    #[test]
    fn a_nested_rule_file_is_checked_as_a_whole_check_checks_it() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let (root, home) = (base.join("p"), base.join("home"));
        let rules = root.join(".pi/rules");
        let above = root.join("packages/.pi/rules");
        let nested = root.join("packages/api/.pi/rules");
        for dir in [&rules, &above, &nested, &root.join("packages/api/src")] {
            fs::create_dir_all(dir).unwrap();
        }
        fs::write(root.join("packages/api/src/x.ts"), "x\n").unwrap();
        fs::write(rules.join("10-a.md"), "root a\n").unwrap();
        fs::write(above.join("20-b.md"), "above b\n").unwrap();
        let a = nested.join("10-a.md");
        let b = nested.join("20-b.md");
        let c = nested.join("30-c.md");
        let root_a = rules.join("10-a.md");
        fs::write(&a, "---\npaths: src/**, src/[\n---\nnested a\n").unwrap();
        fs::write(&b, "nested b\n").unwrap();
        let ids = Arc::new(FileTable::default());
        let session = |overlay: &Overlay| {
            let env = Env::from_vars(root.clone(), [("HOME", home.as_os_str())]);
            Session::new(&env, None, None)
                .unwrap()
                .with_overlay(Arc::new(overlay.clone()))
                .with_file_ids(Arc::clone(&ids))
        };
        let mut overlay = Overlay::new();
        let s = session(&overlay);
        let mut state = IncrementalCheck::new(&opts(&s)).unwrap();
        // Before any of its files changed, a nested directory is not read: no walk.
        assert!(state.findings_of(&a).is_empty());
        type Step<'a> = (&'a Path, Box<dyn Fn(&mut Overlay) + 'a>, bool);
        let steps: Vec<Step<'_>> = vec![
            // Opened: the directory is taken in.
            (&a, Box::new(|_: &mut Overlay| {}), true),
            // A keystroke: nothing across files changes.
            (
                &a,
                Box::new(|o: &mut Overlay| {
                    o.insert(a.clone(), "---\npaths: src/[, src/**\n---\nnested a!\n")
                }),
                false,
            ),
            // The root rule it replaced is gone: checked across files again.
            (
                &root_a,
                Box::new(|_: &mut Overlay| fs::remove_file(&root_a).unwrap()),
                true,
            ),
            // A new nested rule, unsaved.
            (
                &c,
                Box::new(|o: &mut Overlay| o.insert(c.clone(), "{{/IF}}\n")),
                true,
            ),
            // It silences what replacing the rule above says; a keystroke.
            (
                &b,
                Box::new(|o: &mut Overlay| {
                    o.insert(b.clone(), "---\nlint-ignore: PR1006\n---\nb\n")
                }),
                false,
            ),
            // Closed and removed.
            (
                &b,
                Box::new(|o: &mut Overlay| {
                    o.remove(&b);
                    fs::remove_file(&b).unwrap()
                }),
                true,
            ),
        ];
        for (i, (path, step, across)) in steps.iter().enumerate() {
            step(&mut overlay);
            let s = session(&overlay);
            let updated = state.update(&opts(&s), path).unwrap();
            assert_eq!(updated.across, *across, "step {i}");
            let whole = check(&opts(&s)).unwrap();
            for path in [&a, &b, &c] {
                let label = PathLabels::new(&s.env).path(path);
                // The globs that match no file need the walk: `check`'s alone.
                let want: Vec<_> = (whole.diagnostics.iter())
                    .filter(|d| d.path == label && d.code.id() != "PR1004")
                    .cloned()
                    .collect();
                assert_eq!(state.findings_of(path), want, "step {i}: {label}");
            }
            let codes = |path: &Path| -> Vec<&str> {
                state
                    .findings_of(path)
                    .iter()
                    .map(|d| d.code.id())
                    .collect()
            };
            assert!(codes(&a).contains(&"PR1001"), "step {i}: {:?}", codes(&a));
            // It replaces the root's 10-a.md until that is gone.
            assert_eq!(codes(&a).contains(&"PR1006"), i < 2, "step {i}");
            if i < 4 {
                assert!(codes(&b).contains(&"PR1006"), "step {i}: {:?}", codes(&b));
            }
            if i == 4 {
                assert!(!codes(&b).contains(&"PR1006"), "step {i}: {:?}", codes(&b));
            }
        }
    }

    /// The configuration file checked as it is typed, and `[check]` and `[rules] scoped`
    /// followed as `check` follows them.
    #[test]
    fn the_configuration_file_is_followed_as_a_whole_check_follows_it() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let (root, home) = (base.join("p"), base.join("home"));
        fs::create_dir_all(root.join(".pi/rules")).unwrap();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/x.ts"), "").unwrap();
        let rule = root.join(".pi/rules/10-a.md");
        fs::write(&rule, "---\npaths: src/**\n---\n{{IF:dcoo}}\nx\n{{/IF}}\n").unwrap();
        let toml = root.join(".pi/pi-rules.toml");
        fs::write(&toml, "[check]\nignore = [\"PR512\"]\n").unwrap();
        let ids = Arc::new(FileTable::default());
        let session = |overlay: &Overlay| {
            let env = Env::from_vars(root.clone(), [("HOME", home.as_os_str())]);
            Session::new(&env, None, None)
                .unwrap()
                .with_overlay(Arc::new(overlay.clone()))
                .with_file_ids(Arc::clone(&ids))
        };
        let mut overlay = Overlay::new();
        let s = session(&overlay);
        let mut state = IncrementalCheck::new(&opts(&s)).unwrap();
        let steps: &[(&str, bool)] = &[
            // An unknown key, typed: its finding, nothing else checked again.
            ("[check]\nignore = [\"PR512\"]\nnope = 1\n", false),
            // Not TOML: none of it is used, `ignore` is gone.
            ("[check\n", true),
            ("[check\n# still broken\n", false),
            // A severity changes what every finding becomes: everything again.
            ("[check.severity]\nPR101 = \"warning\"\n", true),
            ("[check.severity]\nPR101 = \"off\"\n", true),
            // Scopes on: `paths:` has an effect in pi, no PR1007.
            ("[rules]\nscoped = true\n", true),
        ];
        for (i, (text, all)) in steps.iter().enumerate() {
            overlay.insert(toml.clone(), *text);
            let s = session(&overlay);
            let updated = state.update(&opts(&s), &toml).unwrap();
            assert_eq!(updated.all, *all, "step {i}");
            let whole = check(&opts(&s)).unwrap();
            for path in [&rule, &toml] {
                let label = PathLabels::new(&s.env).path(path);
                let want: Vec<_> = (whole.diagnostics.iter())
                    .filter(|d| d.path == label)
                    .cloned()
                    .collect();
                assert_eq!(state.findings_of(path), want, "step {i}: {label}");
            }
            let codes: Vec<&str> = (state.findings_of(&toml).iter())
                .map(|d| d.code.id())
                .collect();
            let rule_codes: Vec<(&str, lint::Severity)> = (state.findings_of(&rule).iter())
                .map(|d| (d.code.id(), d.severity))
                .collect();
            match i {
                0 => assert_eq!(codes, ["PR752"], "{codes:?}"),
                1 | 2 => assert_eq!(codes, ["PR751"], "{codes:?}"),
                3 => assert!(rule_codes.contains(&("PR101", lint::Severity::Warning))),
                4 => assert!(!rule_codes.iter().any(|c| c.0 == "PR101")),
                _ => assert!(
                    !rule_codes.iter().any(|c| c.0 == "PR1007"),
                    "{rule_codes:?}"
                ),
            }
        }
    }
}
