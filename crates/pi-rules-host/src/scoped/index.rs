//! One project's path-scoped rules, held for a host that asks for the rules of touched files
//! over and over: their globs compiled once into one set, each rule's text assembled alone once
//! per settings, and nested directories loaded once each.
//!
//! The index is as fresh as the layer directories' stamps (a rule added, removed or renamed
//! changes its directory's); a host rebuilds it when it assembles the block anew (`serve` does on
//! every `assemble`), which also picks up rules edited in place.

use super::{load_nested, nested_dirs, place, relative_to, Query};
use crate::files::{FileStamp, Files};
use crate::loader::{self, Layer, Policy, RuleFile};
use crate::session::Session;
use pi_rules_core::rule_scope::{self, ScopeMatcher, ScopeMatcherBuilder};
use pi_rules_core::{assemble as engine, frontmatter, Features, Scope, Settings};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A rule the files of a query bring in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    pub name: String,
    pub layer: Layer,
    /// The rule's file; `None` for an embedded package rule.
    pub path: Option<PathBuf>,
    /// The directory its scope belongs to.
    pub dir: PathBuf,
    /// The file of the query that brought it, as given.
    pub file: String,
    /// The glob that matched; `None` for a nested rule with no `paths:`.
    pub glob: Option<String>,
    /// The rule assembled alone, with the query's settings.
    pub text: String,
}

/// The answer for one query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathRules {
    pub rules: Vec<Matched>,
    /// What the user should hear (a nested directory outside the project).
    pub notes: Vec<String>,
}

/// One path-scoped rule of a set.
#[derive(Debug)]
struct Entry {
    name: String,
    layer: Layer,
    path: Option<PathBuf>,
    globs: Vec<String>,
    agents: Vec<String>,
    /// Nested rules with no `paths:` apply to their whole directory.
    whole_dir: bool,
    text: String,
    /// The text assembled alone, with [`Index::settings`].
    assembled: Option<String>,
}

/// A set of rules with one directory as their scope: the working directory's, or a nested one.
#[derive(Debug, Default)]
struct RuleSet {
    entries: Vec<Entry>,
    matcher: ScopeMatcher,
}

impl RuleSet {
    fn new(files: impl IntoIterator<Item = RuleFile>, nested: bool) -> RuleSet {
        let mut set = RuleSet::default();
        let mut builder = ScopeMatcherBuilder::new();
        for file in files {
            let text = file.text.as_ref();
            let fm = frontmatter::split(text);
            let scope = rule_scope::parse(text, &fm);
            if !nested && !scope.has_paths() {
                continue;
            }
            let at = set.entries.len();
            let globs: Vec<String> = scope.globs().map(str::to_owned).collect();
            for (i, glob) in globs.iter().enumerate() {
                // A glob that cannot be used matches nothing; `check` reports it.
                let _ = builder.add(at, i, glob);
            }
            let agents = scope.agent_names().map(str::to_owned).collect();
            set.entries.push(Entry {
                name: file.name,
                layer: file.layer,
                path: file.path,
                whole_dir: globs.is_empty(),
                globs,
                agents,
                text: file.text.into_owned(),
                assembled: None,
            });
        }
        set.matcher = builder.build();
        set
    }
}

/// A nested directory's rules, with the stamp of its `.pi/rules` when loaded.
#[derive(Debug)]
struct Nested {
    stamp: Option<FileStamp>,
    set: RuleSet,
}

/// The path-scoped rules of one project (see the module docs).
#[derive(Debug)]
pub struct Index {
    cwd: PathBuf,
    package_dir: Option<PathBuf>,
    confine: bool,
    /// The layer directories and their stamps when read.
    stamps: Vec<(PathBuf, Option<FileStamp>)>,
    root: RuleSet,
    nested: HashMap<PathBuf, Nested>,
    settings: Option<(Settings, Features, String)>,
}

fn stamp(files: &Files, path: &Path) -> Option<FileStamp> {
    files.stat(path).ok().map(|m| FileStamp::of(&m))
}

impl Index {
    /// Reads the layers of `session` (as an assembly would, with `package_dir` and `policy`) and
    /// indexes their path-scoped rules.
    pub fn build(session: &Session, package_dir: Option<&Path>, policy: &Policy) -> Index {
        let files = session.files();
        let dirs = session.layer_dirs(package_dir);
        let mut watched = vec![dirs.project.clone()];
        watched.extend(dirs.user.clone());
        if let loader::PackageSource::Dir(dir) = &dirs.package {
            watched.push(dir.clone());
        }
        // Stamped before reading: a change while reading makes the next call rebuild.
        let stamps = watched
            .into_iter()
            .map(|dir| {
                let s = stamp(files, &dir);
                (dir, s)
            })
            .collect();
        let loaded = loader::load_with(&dirs, policy);
        Index {
            cwd: session.cwd.clone(),
            package_dir: package_dir.map(Path::to_path_buf),
            confine: policy.confine,
            stamps,
            root: RuleSet::new(loaded.files, false),
            nested: HashMap::new(),
            settings: None,
        }
    }

    /// Whether the index was built for this place and the layer directories are as they were.
    pub fn is_fresh(&self, session: &Session, package_dir: Option<&Path>, confine: bool) -> bool {
        self.cwd == session.cwd
            && self.package_dir.as_deref() == package_dir
            && self.confine == confine
            && self
                .stamps
                .iter()
                .all(|(dir, s)| stamp(session.files(), dir) == *s)
    }

    /// How many path-scoped rules the project's layers hold.
    pub fn len(&self) -> usize {
        self.root.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.root.entries.is_empty()
    }

    /// The path-scoped rules that `query`'s files bring in, each once, in name order, assembled
    /// alone with `scope`'s settings; rules whose text assembles to nothing are left out. A
    /// nested rule replaces a rule of the same name for the files in its directory.
    pub fn rules_for(
        &mut self,
        session: &Session,
        policy: &Policy,
        query: &Query,
        scope: &Scope<'_>,
    ) -> PathRules {
        let same = self.settings.as_ref().is_some_and(|(s, f, r)| {
            s == scope.settings && f == scope.features && r == scope.review_loop_max_cycles
        });
        if !same {
            for entry in self.root.entries.iter_mut() {
                entry.assembled = None;
            }
            for nested in self.nested.values_mut() {
                for entry in nested.set.entries.iter_mut() {
                    entry.assembled = None;
                }
            }
            self.settings = Some((
                scope.settings.clone(),
                scope.features.clone(),
                scope.review_loop_max_cycles.to_owned(),
            ));
        }
        let cwd = session.cwd.as_path();
        let physical = session.files().canonical(cwd);
        let placed = place(&query.paths, cwd, physical.as_deref());
        let mut answer = PathRules::default();
        // (set: None for the root, else the nested directory; entry; file; glob)
        let mut hits: Vec<(Option<PathBuf>, usize, usize, Option<usize>)> = Vec::new();
        let (mut scratch, mut out) = (Vec::new(), Vec::new());

        let dirs = nested_dirs(session.files(), &placed, cwd);
        for dir in &dirs {
            let rules = dir.join(".pi").join("rules");
            let now = stamp(session.files(), &rules);
            let fresh = self.nested.get(dir).is_some_and(|n| n.stamp == now);
            if !fresh {
                let Some(loaded) = load_nested(session, dir, policy, &mut answer.notes) else {
                    self.nested.remove(dir);
                    continue;
                };
                self.nested.insert(
                    dir.clone(),
                    Nested {
                        stamp: now,
                        set: RuleSet::new(loaded.files, true),
                    },
                );
            }
        }
        for (f, file) in placed.iter().enumerate() {
            // Deepest nested directory first: its names hide shallower ones' and the root's.
            let mut hidden: Vec<&str> = Vec::new();
            for dir in dirs.iter().rev() {
                let Some(rel) = relative_to(&file.absolute, dir) else {
                    continue;
                };
                let Some(nested) = self.nested.get(dir) else {
                    continue;
                };
                nested
                    .set
                    .matcher
                    .matches_into(&rel, &mut scratch, &mut out);
                for (e, entry) in nested.set.entries.iter().enumerate() {
                    if hidden.contains(&entry.name.as_str()) {
                        continue;
                    }
                    let glob = out.iter().find(|(r, _)| *r == e).map(|&(_, g)| g);
                    if entry.whole_dir || glob.is_some() {
                        hidden.push(entry.name.as_str());
                        hits.push((Some(dir.clone()), e, f, glob));
                    }
                }
            }
            let Some(rel) = file.relative.as_deref() else {
                continue;
            };
            self.root.matcher.matches_into(rel, &mut scratch, &mut out);
            for &(e, g) in &out {
                if !hidden.contains(&self.root.entries[e].name.as_str()) {
                    hits.push((None, e, f, Some(g)));
                }
            }
        }

        let mut seen: Vec<(Option<&Path>, usize)> = Vec::new();
        let mut chosen: Vec<(Option<PathBuf>, usize, usize, Option<usize>)> = Vec::new();
        for hit in &hits {
            if seen.contains(&(hit.0.as_deref(), hit.1)) {
                continue;
            }
            seen.push((hit.0.as_deref(), hit.1));
            chosen.push(hit.clone());
        }
        for (dir, e, f, glob) in chosen {
            let set = match &dir {
                None => &mut self.root,
                Some(dir) => match self.nested.get_mut(dir) {
                    Some(nested) => &mut nested.set,
                    None => continue,
                },
            };
            let entry = &mut set.entries[e];
            if !entry.agents.is_empty()
                && !entry
                    .agents
                    .iter()
                    .any(|a| a.eq_ignore_ascii_case(&query.agent))
            {
                continue;
            }
            let text = entry
                .assembled
                .get_or_insert_with(|| engine::assemble(&[entry.text.as_str()], scope).text);
            if text.is_empty() {
                continue;
            }
            answer.rules.push(Matched {
                name: entry.name.clone(),
                layer: entry.layer,
                path: entry.path.clone(),
                dir: dir.clone().unwrap_or_else(|| self.cwd.clone()),
                file: placed[f].given.clone(),
                glob: glob.map(|g| entry.globs[g].clone()),
                text: text.clone(),
            });
        }
        loader::sort_by_name(&mut answer.rules, |m| m.name.as_str());
        answer
    }
}
