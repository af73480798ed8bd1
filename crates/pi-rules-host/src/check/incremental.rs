//! [`IncrementalCheck`]: `check`'s findings kept up to date as files change, file by file.

use super::{
    comparator_for, entry_of, gather, gather_each, gather_settings, CheckOptions, PathLabels,
};
use crate::error::Result;
use crate::files::{FileStamp, Files};
use crate::loader::{Escape, PackageSource};
use pi_rules_core::lint::{self, Content, Entry, LayerInput, Link, Report, SchemaInfo};
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
/// The findings of a file are those of [`check`](super::check) on the same files and editor
/// buffers, but for the findings on files `export` wrote, which are not in a layer. Their file
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

    /// The findings on the file at `path`, in order, as [`check`](super::check)'s report has them.
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
