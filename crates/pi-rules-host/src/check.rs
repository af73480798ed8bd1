//! `pi-rules check`'s work: gathers the lint input from disk and runs the core linter. The front
//! ends render the report.
//!
//! Gathering lists the three layer directories with every entry, ignored ones included (so that
//! `x.MD` or a directory named `x.md` can be reported), reads rule files bounded to 131073 bytes
//! (a FIFO or socket is never opened), notes where project-layer links point, and reads the
//! settings files in `<repo root>/.pi` and `$HOME/.pi` through [`Session`]. The editor buffers of
//! the session's overlay ([`crate::source`]) stand in for the files at their paths, as they do for
//! the loader. The checks themselves live in [`pi_rules_core::lint`].
//!
//! [`IncrementalCheck`] keeps the same findings up to date as files change, for the language
//! server: a change to one file checks that file again, not every layer.
//!
//! Exit status: [`CheckStatus::Clean`] (0) when there is no error, and no warning under
//! `--strict`; [`CheckStatus::Failed`] (1) otherwise. Usage errors (2) are the caller's.

use crate::bounded;
use crate::env::Env;
use crate::error::Result;
use crate::loader::{
    self, comparator_for, Escape, FailureReason, Layer, PackageSource, Policy, RawRead,
};
use crate::session::Session;
use crate::source::{self, Overlay};
use pi_rules_core::lint::{
    self, Content, Entry, LayerInput, Link, Report, SchemaInfo, SettingsInput, Severity,
};
use pi_rules_core::settings::SettingsFile;
use pi_rules_core::settings::SETTINGS_FILE_NAMES;
use rustix::fs::FileType;
use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `pi-rules check` runs on.
pub struct CheckOptions<'a> {
    /// The working directory, `$HOME` and the settings schema.
    pub session: &'a Session,
    /// The package layer: the embedded rules, or `--package-dir`.
    pub package: PackageSource,
    /// Warnings fail the check too.
    pub strict: bool,
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    /// No errors (and, with `--strict`, no warnings): exit code 0.
    Clean,
    /// Errors, or warnings with `--strict`: exit code 1.
    Failed,
}

impl CheckStatus {
    /// The process exit code: 0 or 1.
    pub fn exit_code(self) -> u8 {
        match self {
            CheckStatus::Clean => 0,
            CheckStatus::Failed => 1,
        }
    }

    /// The status for `report`.
    pub fn of(report: &Report, strict: bool) -> CheckStatus {
        let failing =
            report.count(Severity::Error) > 0 || (strict && report.count(Severity::Warning) > 0);
        if failing {
            CheckStatus::Failed
        } else {
            CheckStatus::Clean
        }
    }
}

/// The long explanation of a code (by id such as `PR101`, or name such as
/// `unknown-setting-key`), as `check --explain CODE` prints it; `None` for an unknown code.
pub fn explain_code(code: &str) -> Option<&'static str> {
    lint::explain(code)
}

/// Gathers the input and lints it, without rendering. Each rule file is checked as soon as it
/// is read, while its text is still in the cache; the checks on the layers as a whole and on
/// the settings files come after.
pub fn check(opts: &CheckOptions<'_>) -> Result<Report> {
    let schema = SchemaInfo::from_schema(&opts.session.schema);
    let mut linter = lint::Linter::new(&schema, lint::FEATURES);
    let (layers, settings) = gather_each(opts, &mut |entry| linter.check_rule(entry))?;
    // Lint sorts the names several times.
    let collate = comparator_for(
        layers
            .iter()
            .flat_map(|layer| &layer.entries)
            .map(|entry| entry.name.as_str()),
    );
    let mut report = linter.finish(&layers, &settings, &collate);
    // The files `export` wrote for other agents, against the limits those agents apply.
    let session = opts.session;
    (report.diagnostics).extend(crate::export::lint::findings(
        &session.project_root(),
        &session.cwd,
    ));
    Ok(report)
}

/// Reads the three layers and the settings files.
pub fn gather(opts: &CheckOptions<'_>) -> Result<(Vec<LayerInput>, Vec<SettingsInput>)> {
    gather_each(opts, &mut |_| {})
}

/// What [`gather_each`] hands each entry to as soon as it is listed (and read, for a rule).
type EachEntry<'e> = dyn FnMut(&mut Entry) + 'e;

/// [`gather`], handing each entry to `each` as soon as it is listed and read, before it joins
/// its layer. The layers are listed in the order package, user, project.
fn gather_each(
    opts: &CheckOptions<'_>,
    each: &mut EachEntry<'_>,
) -> Result<(Vec<LayerInput>, Vec<SettingsInput>)> {
    let session = opts.session;
    let display = PathLabels::new(&opts.session.env);
    let policy = session.policy(false);
    let overlay = session.env.overlay();

    let package = match &opts.package {
        PackageSource::Embedded(rules) => {
            let mut entries = Vec::with_capacity(rules.len());
            for (name, text) in rules.iter() {
                let content = Content::Bytes(text.as_bytes().to_vec());
                let mut entry = Entry::new(*name, format!("<embedded>/{name}"), content);
                each(&mut entry);
                entries.push(entry);
            }
            LayerInput::new(Layer::Package, entries)
        }
        // A package directory is asked for by name, so its absence is a problem too.
        PackageSource::Dir(dir) => {
            list_layer(Layer::Package, dir, true, &policy, overlay, &display, each)
        }
    };
    let mut layers = vec![package];
    if let Some(home) = &session.home {
        let dir = home.join(".pi").join("agent").join("rules");
        layers.push(list_layer(
            Layer::User,
            &dir,
            false,
            &policy,
            overlay,
            &display,
            each,
        ));
    }
    let dir = session.cwd.join(".pi").join("rules");
    layers.push(list_layer(
        Layer::Project,
        &dir,
        false,
        &policy,
        overlay,
        &display,
        each,
    ));

    let settings = gather_settings(session, &display);
    Ok((layers, settings))
}

/// `check`'s findings kept up to date as files change, for the language server: each rule
/// file's own findings, those across the layers, and each settings file's, kept apart
/// ([`lint::FileLint`], [`lint::LayerFindings`]). A change to one file re-reads and re-checks
/// that file alone, and runs the checks across the layers again only when what they read of it
/// changed: that it exists, its kind, link, escape or name, or its size where another layer has
/// the same name. A settings file's change re-reads the settings files.
///
/// The findings of a file are those of [`check`] on the same files and editor buffers, but for
/// the findings on files `export` wrote, which are not in a layer.
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
}

/// What was read at a path: the editor's text, or the file's stamp on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stamp {
    Editor(Arc<str>),
    /// The entry's `lstat`, and the `stat` of what a link leads to (kind, size, modification
    /// time, inode and device each), or `None` when it leads nowhere.
    Disk(DiskStamp, Option<DiskStamp>),
}

type DiskStamp = (u32, u64, i64, i64, u64, u64);

impl Stamp {
    /// What is at `path` now: `None` when nothing is.
    fn of(overlay: &Overlay, path: &Path) -> Option<Stamp> {
        if let Some(text) = overlay.get(path) {
            return Some(Stamp::Editor(Arc::clone(text)));
        }
        use std::os::unix::fs::MetadataExt as _;
        let disk = |m: fs::Metadata| {
            (
                m.mode(),
                m.size(),
                m.mtime(),
                m.mtime_nsec(),
                m.ino(),
                m.dev(),
            )
        };
        let entry = fs::symlink_metadata(path).ok().map(disk)?;
        let target = fs::metadata(path).ok().map(disk);
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
    /// Gathers and checks everything, as [`check`] does.
    pub fn new(opts: &CheckOptions<'_>) -> Result<IncrementalCheck> {
        let session = opts.session;
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
        let mut linter = lint::Linter::new(&schema, lint::FEATURES);
        let (mut layers, settings) = if shared {
            gather(opts)?
        } else {
            gather_each(opts, &mut |entry| {
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

    /// The report [`check`] gives, but for the findings on files `export` wrote.
    pub fn report(&self) -> Report {
        lint::combine(&self.across, self.rules.values(), &self.settings)
    }

    /// The findings on the file at `path`, in order, as [`check`]'s report has them.
    pub fn findings_of(&self, path: &Path) -> Vec<lint::Diagnostic> {
        let embedded = path
            .parent()
            .zip(path.file_name().and_then(|n| n.to_str()))
            .filter(|(dir, _)| self.embedded_copies.as_deref() == Some(*dir))
            .filter(|_| self.layers.first().is_some_and(|l| l.dir.is_none()));
        let label = match embedded {
            Some((_, name)) => format!("<embedded>/{name}"),
            None => self.display.path(path),
        };
        let mut found = self.across.of(&label, self.rules.get(&label));
        for settings in &self.settings {
            let theirs = settings.diagnostics.iter().filter(|d| d.path == label);
            found.extend(theirs.cloned());
        }
        found
    }

    /// Takes in a change to the file at `path` (its text in the editor, or on disk; made or
    /// removed), with `opts.session`'s editor buffers, and checks again what reads it.
    pub fn update(&mut self, opts: &CheckOptions<'_>, path: &Path) -> Result<Updated> {
        let session = opts.session;
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
                return Ok(Updated::default());
            }
            return self.rebuild(opts);
        };
        if self.layers[index].input.problem.is_some() {
            return self.rebuild(opts);
        }
        let overlay = session.env.overlay();
        let label = self.display.path(path);
        let stamp = Stamp::of(overlay, path);
        if stamp.is_some() && self.stamps.get(&label) == stamp.as_ref() {
            return Ok(Updated::default());
        }
        match stamp {
            Some(stamp) => self.stamps.insert(label.clone(), stamp),
            None => self.stamps.remove(&label),
        };
        let listed = match overlay.get(path).filter(|_| lint::is_rule_name(name)) {
            Some(text) => Some(loader::Listed {
                name: name.to_owned(),
                invalid_name: false,
                path: path.to_path_buf(),
                file_type: Ok(FileType::RegularFile),
                overlay: Some(Arc::clone(text)),
            }),
            None => rustix::fs::lstat(path).ok().map(|stat| loader::Listed {
                name: name.to_owned(),
                invalid_name: false,
                path: path.to_path_buf(),
                file_type: Ok(FileType::from_raw_mode(stat.st_mode)),
                overlay: None,
            }),
        };
        let kind = self.layers[index].input.kind;
        let policy = session.policy(false);
        let new = listed.and_then(|l| entry_of(kind, l, None, &policy, overlay, &self.display));
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
        match (old, new) {
            (Some(i), Some(entry)) => entries[i] = entry,
            (None, Some(entry)) => entries.push(entry),
            (Some(i), None) => {
                entries.remove(i);
            }
            (None, None) => {}
        }
        if !same_across {
            self.check_across();
        }
        Ok(Updated {
            across: !same_across,
            ..Updated::default()
        })
    }

    /// Checks `entry` on its own, if it is a rule that was read, and keeps its findings.
    fn lint_one(&mut self, entry: &mut Entry) {
        if lint::is_rule_name(&entry.name) && matches!(entry.content, Content::Bytes(_)) {
            let mut linter = lint::Linter::new(&self.schema, lint::FEATURES);
            let found = linter.lint_rule(&mut [entry]);
            self.rules.insert(found.path.to_string(), found);
        }
    }

    fn rebuild(&mut self, opts: &CheckOptions<'_>) -> Result<Updated> {
        let embedded_copies = self.embedded_copies.take();
        *self = IncrementalCheck::new(opts)?.with_embedded_copies(embedded_copies);
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
    }
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

/// Reads the settings files: the project's and the global one, each once, and a settings file
/// name that is a link leading nowhere.
fn gather_settings(session: &Session, display: &PathLabels) -> Vec<SettingsInput> {
    let overlay = session.env.overlay();
    let (project, global) = session.settings_files();
    // The project settings file must stay inside the directory it was looked for in: the
    // repository root (or the working directory outside a repository).
    let settings_root = canonical(session.repo_root().unwrap_or(&session.cwd));
    let mut settings: Vec<SettingsInput> = Vec::new();
    for (found, is_project) in [(Some(project), true), (global, false)] {
        let Some(found) = found else { continue };
        let dir = found.path.parent().map(Path::to_path_buf);
        if found.file.is_present() {
            let path = display.path(&found.path);
            if settings.iter().any(|s| s.path == path) {
                continue;
            }
            let escape = is_project
                .then(|| real_path(overlay, &found.path))
                .flatten()
                .filter(|real| !real.starts_with(&settings_root))
                .map(|real| Escape::OutsideProject {
                    real,
                    root: settings_root.clone(),
                });
            settings.push(SettingsInput {
                path,
                text: found.text.unwrap_or_default(),
                file: found.file,
                ignored_json: found.ignored_json.as_deref().map(|p| display.path(p)),
                escape,
            });
        }
        // A settings file name that is a link leading nowhere counts as missing for the
        // loader, silently; say so.
        for name in pi_rules_core::settings::SETTINGS_FILE_NAMES {
            let Some(path) = dir.as_ref().map(|d| d.join(name)) else {
                continue;
            };
            if overlay.contains(&path) {
                continue;
            }
            let (Ok(_), Err(err)) = (fs::symlink_metadata(&path), fs::metadata(&path)) else {
                continue;
            };
            let shown = display.path(&path);
            if settings.iter().any(|s| s.path == shown) {
                continue;
            }
            let reason =
                format!("it is a link that leads nowhere ({err}), so it counts as missing");
            settings.push(SettingsInput {
                path: shown,
                text: String::new(),
                file: SettingsFile::unreadable(reason),
                ignored_json: None,
                escape: None,
            });
        }
    }
    settings
}

/// Where the file at `path` really is: for an editor buffer, its directory's real path joined
/// with its name; else the path resolved, `None` when it cannot be.
fn real_path(overlay: &Overlay, path: &Path) -> Option<PathBuf> {
    if overlay.contains(path) {
        Some(source::real_path(path))
    } else {
        fs::canonicalize(path).ok()
    }
}

/// `path` resolved, or as it is when it cannot be.
fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Paths for messages: relative to the process's directory when under it, else as they are.
#[derive(Debug)]
struct PathLabels {
    base: Option<PathBuf>,
}

impl PathLabels {
    /// Labels relative to the front end's working directory (the process's, for the CLI and
    /// `serve`), not the session's.
    fn new(env: &Env) -> Self {
        PathLabels {
            base: env.cwd().ok().map(Path::to_path_buf),
        }
    }

    fn path(&self, path: &Path) -> String {
        let relative = self
            .base
            .as_deref()
            .and_then(|base| path.strip_prefix(base).ok())
            .filter(|p| !p.as_os_str().is_empty());
        relative.unwrap_or(path).display().to_string()
    }
}

/// Lists one layer directory, every entry included, with the loader's listing
/// ([`loader::list_dir`]). A missing directory is an empty layer, and a problem when it was asked
/// for by name (`required`); a directory that cannot be listed is an empty layer with a problem.
/// Each entry goes to `each` as soon as it is listed and read.
///
/// A rule name in `overlay` whose parent is `dir` is an entry too, a regular file with the
/// overlay's text, in place of what is on disk under that name.
#[allow(clippy::too_many_arguments)]
fn list_layer(
    kind: Layer,
    dir: &Path,
    required: bool,
    policy: &Policy,
    overlay: &Overlay,
    display: &PathLabels,
    each: &mut EachEntry<'_>,
) -> LayerInput {
    let listing = loader::list_dir(dir, overlay, |_| true);
    // The directory held open, to read its entries by name, as the loader does.
    let (open, problem) = match listing.dir {
        Ok(open) => (Some(open), None),
        Err(errno) => {
            let err = io::Error::from(errno);
            let problem =
                layer_problem(dir, &err, required).map(|reason| (display.path(dir), reason));
            (None, problem)
        }
    };
    let mut entries = Vec::new();
    for item in listing.entries {
        let Ok(listed) = item else { continue };
        if let Some(mut entry) = entry_of(kind, listed, open.as_ref(), policy, overlay, display) {
            each(&mut entry);
            entries.push(entry);
        }
    }
    LayerInput {
        kind,
        entries,
        problem,
    }
}

/// One listed entry of a `kind` layer as the linter sees it: a rule read (from `open`, the
/// directory held open, when there is one), where a link points and where the file really is;
/// `None` when its type could not be told.
fn entry_of(
    kind: Layer,
    listed: loader::Listed,
    open: Option<&bounded::Directory>,
    policy: &Policy,
    overlay: &Overlay,
    display: &PathLabels,
) -> Option<Entry> {
    let layer = kind;
    let Ok(file_type) = listed.file_type else {
        return None;
    };
    let path = listed.path;
    let name = listed.name;
    if listed.invalid_name {
        let mut entry = Entry::new(name, display.path(&path), Content::NotRead);
        entry.invalid_name = true;
        return Some(entry);
    }
    let is_symlink = file_type == FileType::Symlink;
    let link = is_symlink.then(|| Link {
        target: fs::read_link(&path)
            .unwrap_or_default()
            .display()
            .to_string(),
    });
    let rule = lint::is_rule_name(&name);
    // Where a rule that was opened really is comes from its open descriptor, as the loader
    // finds it (`None` here when it was not opened).
    let (content, opened) = if !rule {
        let content = if file_type == FileType::Directory {
            Content::Directory
        } else {
            Content::NotRead
        };
        (content, None)
    } else if file_type == FileType::Directory {
        (Content::Directory, None)
    } else if !matches!(file_type, FileType::RegularFile | FileType::Symlink) {
        let kind = bounded::raw_kind_name(file_type).to_owned();
        (Content::Special { kind }, None)
    } else {
        content_of(loader::read_raw_in(
            overlay, &path, is_symlink, open, layer, policy,
        ))
    };
    // Where any other rule really is: links on the file and on the directories above it
    // followed (for an editor buffer, its directory's).
    let escape = opened.unwrap_or_else(|| match &listed.overlay {
        Some(_) => policy.escape(layer, &source::real_path(&path), None),
        None => rule
            .then(|| fs::canonicalize(&path).ok())
            .flatten()
            .and_then(|real| policy.escape(layer, &real, fs::metadata(&real).ok().as_ref())),
    });
    Some(Entry {
        name,
        path: display.path(&path),
        link,
        escape,
        invalid_name: false,
        content,
    })
}

/// Why a layer directory that could not be listed is a problem; `None` when it simply does not
/// exist and was not asked for.
fn layer_problem(dir: &Path, err: &io::Error, required: bool) -> Option<String> {
    if err.kind() == io::ErrorKind::NotFound {
        return match fs::symlink_metadata(dir) {
            Ok(_) => Some("it is a link that leads nowhere".to_owned()),
            Err(_) if required => Some("it does not exist".to_owned()),
            Err(_) => None,
        };
    }
    if err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        return Some("it is a link loop".to_owned());
    }
    match fs::metadata(dir) {
        Ok(metadata) if !metadata.is_dir() => Some(format!(
            "it is a {}, not a directory",
            bounded::kind_name(&metadata.file_type())
        )),
        _ => Some(format!("it cannot be listed: {err}")),
    }
}

/// What the linter is told of a rule entry read with the loader's own bounded read
/// ([`loader::read_raw_checked`] or [`loader::read_raw_in`]), the bytes kept undecoded so that
/// invalid UTF-8 can be located; when it was read, also how it escapes, judged from the open
/// file (`policy` never confines here, so nothing is refused).
fn content_of((raw, escape): (RawRead, Option<Escape>)) -> (Content, Option<Option<Escape>>) {
    let content = match raw {
        // Read, so it was opened and judged.
        RawRead::Bytes { bytes, .. } => return (Content::Bytes(bytes), Some(escape)),
        RawRead::Oversized { size, .. } => Content::Oversized { size },
        RawRead::Failed(FailureReason::Directory) => Content::Directory,
        RawRead::Failed(FailureReason::Special(kind)) => Content::Special {
            kind: kind.as_str().to_owned(),
        },
        RawRead::Failed(FailureReason::Stat(err)) if err.kind == io::ErrorKind::NotFound => {
            Content::Unreadable {
                reason: "it is a dangling link".to_owned(),
            }
        }
        RawRead::Failed(reason) => Content::Unreadable {
            reason: reason.to_string(),
        },
    };
    (content, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project and a home with a user layer, in a temporary directory.
    fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let (root, home) = (base.join("p"), base.join("home"));
        fs::create_dir_all(root.join(".pi/rules")).unwrap();
        fs::create_dir_all(home.join(".pi/agent/rules")).unwrap();
        (tmp, root, home)
    }

    fn session(root: &Path, home: &Path, overlay: &Overlay) -> Session {
        let env = Env::from_vars(root.to_path_buf(), [("HOME", home.as_os_str())])
            .with_overlay(std::sync::Arc::new(overlay.clone()));
        Session::new(&env, None, None).unwrap()
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
        let s = session(&root, &home, &overlay);
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
            let s = session(&root, &home, &overlay);
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

    #[test]
    fn status_table() {
        assert_eq!(CheckStatus::Clean.exit_code(), 0);
        assert_eq!(CheckStatus::Failed.exit_code(), 1);
        assert!(explain_code("PR101").is_some());
        assert!(explain_code("nope").is_none());
    }
}
