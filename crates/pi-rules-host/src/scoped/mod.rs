//! Scoped rules: which rules an agent sees while it works on some files.
//!
//! A rule is scoped by its frontmatter (`paths:`, `agents:`; [`pi_rules_core::rule_scope`]) and
//! by where it lives: a `.pi/rules/` directory below the project directory (a *nested*
//! directory, `packages/api/.pi/rules/`) holds rules for that subtree only, whose `paths:` are
//! relative to it, and whose names replace the root's rules of the same name there.
//!
//! [`apply`] narrows a loaded set of rules to a [`Query`] (an agent, and the files it works on),
//! and says of every scoped rule why it is in or out ([`ScopeReport`]). [`Index`] keeps one
//! project's scoped rules with their globs compiled into one set, for a host that asks for the
//! rules of touched files again and again (`serve`'s `rules_for_paths`).
//!
//! Nested directories are found for the files of a query only, by asking each directory between
//! a file and the project directory whether it holds `.pi/rules` (one `stat` a level); nothing
//! walks the repository here.

mod index;

pub use index::{Index, Matched, PathRules};

use crate::files::Files;
use crate::loader::{self, Layer, LayerDirs, Loaded, PackageSource, Policy, RuleFile};
use crate::session::Session;
use pi_rules_core::frontmatter;
use pi_rules_core::rule_scope::{self, RuleScope, ScopeMatcherBuilder};
use std::path::{Component, Path, PathBuf};

/// The agent pi-rules assembles pi's block for.
pub const PI: &str = "pi";

/// At most this many paths are taken from one query; the rest are ignored.
pub const MAX_PATHS: usize = 256;

/// What an assembly is for: an agent, and the files it works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The agent (`pi`, `claude`, ...), lowercase.
    pub agent: String,
    /// The files, relative to the working directory or absolute.
    pub paths: Vec<PathBuf>,
}

impl Default for Query {
    fn default() -> Self {
        Query {
            agent: PI.to_owned(),
            paths: Vec::new(),
        }
    }
}

/// Why a scoped rule is in or out of an assembly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// `agents:` does not name the query's agent.
    NotForAgent,
    /// The rule has `paths:` and the query names no file.
    NoFile,
    /// The rule has `paths:` and none of the query's files matches them.
    NoGlobMatched,
    /// A glob matched a file: (the glob, the file as the query gave it).
    GlobMatched { glob: String, path: String },
    /// A nested rule, and a file of the query is in its directory (its `paths:`, if any,
    /// matched too: see `glob`).
    InDirectory { path: String, glob: Option<String> },
    /// A nested rule, and no file of the query is in its directory (or none there matched its
    /// globs).
    OutsideDirectory,
    /// The rule has only `agents:`, and they name the query's agent.
    ForAgent,
    /// A nested rule of the same name replaces it for every file of the query.
    ReplacedBy { path: PathBuf },
}

impl Why {
    /// A short tag for machines: `not-for-agent`, `no-file`, `no-glob-matched`, `glob-matched`,
    /// `in-directory`, `outside-directory`, `for-agent`, `replaced`.
    pub fn tag(&self) -> &'static str {
        match self {
            Why::NotForAgent => "not-for-agent",
            Why::NoFile => "no-file",
            Why::NoGlobMatched => "no-glob-matched",
            Why::GlobMatched { .. } => "glob-matched",
            Why::InDirectory { .. } => "in-directory",
            Why::OutsideDirectory => "outside-directory",
            Why::ForAgent => "for-agent",
            Why::ReplacedBy { .. } => "replaced",
        }
    }

    /// The reason in words, quoting globs, files and paths through `quote` (the front end's
    /// escaper, or none).
    pub fn describe(&self, agent: &str, quote: &dyn Fn(&str) -> String) -> String {
        match self {
            Why::NotForAgent => format!("`agents:` does not name {}", quote(agent)),
            Why::NoFile => "it has `paths:` and no file was given (--path)".to_owned(),
            Why::NoGlobMatched => "no glob of `paths:` matches a given file".to_owned(),
            Why::GlobMatched { glob, path } => {
                format!("`{}` matches `{}`", quote(glob), quote(path))
            }
            Why::InDirectory { path, glob: None } => {
                format!("`{}` is in its directory", quote(path))
            }
            Why::InDirectory {
                path,
                glob: Some(glob),
            } => format!(
                "`{}` is in its directory and `{}` matches it",
                quote(path),
                quote(glob)
            ),
            Why::OutsideDirectory => {
                "no given file is in its directory (or none there matches its globs)".to_owned()
            }
            Why::ForAgent => format!("`agents:` names {}", quote(agent)),
            Why::ReplacedBy { path } => format!(
                "replaced by the nested rule `{}`",
                quote(&path.display().to_string())
            ),
        }
    }
}

/// One scoped rule and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopedRule {
    pub name: String,
    pub layer: Layer,
    /// The rule's file; `None` for an embedded package rule.
    pub path: Option<PathBuf>,
    /// The directory its scope belongs to: the working directory, or a nested directory.
    pub dir: PathBuf,
    /// Whether it lives in a nested `.pi/rules`.
    pub nested: bool,
    pub globs: Vec<String>,
    pub agents: Vec<String>,
    /// Whether it is in the assembly.
    pub applies: bool,
    pub why: Why,
}

/// What [`apply`] did: every scoped rule with its verdict, the nested directories it read, and
/// what the user should hear.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeReport {
    pub agent: String,
    /// The query's files, relative to the working directory where they are inside it.
    pub paths: Vec<String>,
    pub rules: Vec<ScopedRule>,
    /// Nested `.pi/rules` directories read, shallowest first.
    pub nested_dirs: Vec<PathBuf>,
    pub notes: Vec<String>,
}

/// A query file, placed: absolute and lexically normal, with its path relative to the working
/// directory when it is inside it.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    /// As the query gave it, for reports.
    pub given: String,
    pub absolute: PathBuf,
    /// Relative to the working directory, `/` between parts; `None` outside it.
    pub relative: Option<String>,
}

/// Places the query's paths against `cwd` (and its physical path, for absolute paths given
/// through it).
pub(crate) fn place(paths: &[PathBuf], cwd: &Path, physical: Option<&Path>) -> Vec<Placed> {
    paths
        .iter()
        .take(MAX_PATHS)
        .map(|given| {
            let absolute = normal(&cwd.join(given));
            let relative = relative_to(&absolute, cwd)
                .or_else(|| physical.and_then(|p| relative_to(&absolute, &normal(p))));
            Placed {
                given: given.to_string_lossy().into_owned(),
                absolute,
                relative,
            }
        })
        .collect()
}

/// `path` without `.` and with `..` taken lexically.
pub(crate) fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` relative to `dir` with `/` between its parts, when it is strictly inside it.
pub(crate) fn relative_to(path: &Path, dir: &Path) -> Option<String> {
    let rest = path.strip_prefix(dir).ok()?;
    let text = rest.to_string_lossy();
    (!text.is_empty()).then(|| text.into_owned())
}

/// The nested rule directories (`D/.pi/rules`) between each file and `cwd`, shallowest first,
/// each once: one `stat` per directory level.
pub(crate) fn nested_dirs(files: &Files, placed: &[Placed], cwd: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut asked: Vec<PathBuf> = Vec::new();
    for file in placed.iter().filter(|p| p.relative.is_some()) {
        let mut dir = file.absolute.parent();
        while let Some(d) = dir {
            if d == cwd || !d.starts_with(cwd) {
                break;
            }
            if asked.iter().any(|a| a == d) {
                // Everything above was asked for an earlier file.
                break;
            }
            asked.push(d.to_path_buf());
            if files.is_dir(&d.join(".pi").join("rules")) {
                found.push(d.to_path_buf());
            }
            dir = d.parent();
        }
    }
    found.sort_by_key(|d| d.components().count());
    found.dedup();
    found
}

/// Loads one nested directory `dir`'s `.pi/rules` as a project layer alone; refused (with a note)
/// when the directory really is outside the project root.
pub(crate) fn load_nested(
    session: &Session,
    dir: &Path,
    policy: &Policy,
    notes: &mut Vec<String>,
) -> Option<Loaded> {
    let rules = dir.join(".pi").join("rules");
    let files = session.files();
    if let (Some(root), Some(real)) = (&policy.project_root, files.canonical(&rules)) {
        if !real.starts_with(root) {
            notes.push(format!(
                "nested rules `{}` are not read: they are really at `{}`, outside the project",
                rules.display(),
                real.display()
            ));
            return None;
        }
    }
    let base = session.layer_dirs(None);
    let dirs = LayerDirs {
        package: PackageSource::Embedded(&[]),
        user: None,
        project: rules,
        files: base.files,
    };
    let mut loaded = loader::load_with(&dirs, policy);
    notes.append(&mut loaded.notes);
    Some(loaded)
}

/// Narrows `loaded` (the three layers, as loaded) to `query`: scoped rules that do not apply
/// leave it, and nested rules that apply join it, in name order. Unscoped rules stay.
pub fn apply(
    loaded: &mut Loaded,
    session: &Session,
    policy: &Policy,
    query: &Query,
) -> ScopeReport {
    let cwd = session.cwd.as_path();
    let physical = session.files().canonical(cwd);
    let placed = place(&query.paths, cwd, physical.as_deref());
    let mut report = ScopeReport {
        agent: query.agent.clone(),
        paths: placed
            .iter()
            .map(|p| p.relative.clone().unwrap_or_else(|| p.given.clone()))
            .collect(),
        ..ScopeReport::default()
    };
    let root: Vec<Option<&str>> = placed.iter().map(|p| p.relative.as_deref()).collect();
    let mut keep = vec![true; loaded.files.len()];
    for (i, file) in loaded.files.iter().enumerate() {
        if let Some(rule) = judge(file, cwd, false, &root, &query.agent, &placed) {
            keep[i] = rule.applies;
            report.rules.push(rule);
        }
    }

    // Nested directories, shallowest first; a deeper one's rule replaces a shallower one's.
    let mut extra: Vec<(RuleFile, loader::NameReport)> = Vec::new();
    let mut extra_dirs: Vec<PathBuf> = Vec::new();
    if !placed.is_empty() {
        for dir in nested_dirs(session.files(), &placed, cwd) {
            let Some(nested) = load_nested(session, &dir, policy, &mut report.notes) else {
                continue;
            };
            report.nested_dirs.push(dir.join(".pi").join("rules"));
            let inside: Vec<Option<String>> = placed
                .iter()
                .map(|p| relative_to(&p.absolute, &dir))
                .collect();
            let inside_refs: Vec<Option<&str>> = inside.iter().map(|p| p.as_deref()).collect();
            let mut taken = nested.names.iter().filter(|n| n.is_taken());
            for file in nested.files {
                let name_report = taken.next().cloned();
                let rule = judge(&file, &dir, true, &inside_refs, &query.agent, &placed)
                    .expect("a nested rule is always scoped");
                let applies = rule.applies;
                report.rules.push(rule);
                if let (true, Some(name_report)) = (applies, name_report) {
                    extra.push((file, name_report));
                    extra_dirs.push(dir.clone());
                }
            }
        }
    }

    // A nested rule replaces a rule of the same name when every file of the query is inside its
    // directory.
    let all_inside = |dir: &Path| placed.iter().all(|p| p.absolute.starts_with(dir));
    let mut replaced_extra = vec![false; extra.len()];
    for (i, ((file, _), dir)) in extra.iter().zip(&extra_dirs).enumerate() {
        if !all_inside(dir) {
            continue;
        }
        let by = file.path.clone().unwrap_or_default();
        for (k, root_file) in loaded.files.iter().enumerate() {
            if keep[k] && root_file.name == file.name {
                keep[k] = false;
                mark_replaced(&mut report, root_file, cwd, &by);
            }
        }
        // A shallower nested rule of the same name (found earlier) is replaced too.
        for j in 0..i {
            if extra[j].0.name == file.name && !replaced_extra[j] {
                replaced_extra[j] = true;
                mark_replaced(&mut report, &extra[j].0, &extra_dirs[j], &by);
            }
        }
    }

    // Out-of-scope rules leave both lists; `names` keeps the names whose file was not taken.
    let mut taken_index = 0;
    let mut k = 0;
    loaded.names.retain(|n| {
        if !n.is_taken() {
            return true;
        }
        let kept = keep[taken_index];
        taken_index += 1;
        kept
    });
    loaded.files.retain(|_| {
        let kept = keep[k];
        k += 1;
        kept
    });
    let mut added = false;
    for ((file, name), replaced) in extra.into_iter().zip(replaced_extra) {
        if !replaced {
            loaded.files.push(file);
            loaded.names.push(name);
            added = true;
        }
    }
    if added {
        // Stable sorts by the same key keep the taken names in step with the files.
        loader::sort_by_name(&mut loaded.files, |f| f.name.as_str());
        loader::sort_by_name(&mut loaded.names, |n| n.name.as_str());
    }
    loaded.fallback = loaded.files.is_empty();
    report
}

fn mark_replaced(report: &mut ScopeReport, file: &RuleFile, dir: &Path, by: &Path) {
    if let Some(rule) = report
        .rules
        .iter_mut()
        .find(|r| r.path == file.path && r.name == file.name && r.applies)
    {
        rule.applies = false;
        rule.why = Why::ReplacedBy {
            path: by.to_path_buf(),
        };
    } else {
        let (globs, agents) = scope_lists(&file.text);
        report.rules.push(ScopedRule {
            name: file.name.clone(),
            layer: file.layer,
            path: file.path.clone(),
            dir: dir.to_path_buf(),
            nested: false,
            globs,
            agents,
            applies: false,
            why: Why::ReplacedBy {
                path: by.to_path_buf(),
            },
        });
    }
}

/// A rule's globs and agents, as written.
pub fn scope_lists(text: &str) -> (Vec<String>, Vec<String>) {
    let fm = frontmatter::split(text);
    let scope = rule_scope::parse(text, &fm);
    (
        scope.globs().map(str::to_owned).collect(),
        scope.agent_names().map(str::to_owned).collect(),
    )
}

/// The verdict on one rule, `None` for a root rule with no scope. `relative[i]` is file `i` of
/// the query relative to `dir` (`None` when outside it).
fn judge(
    file: &RuleFile,
    dir: &Path,
    nested: bool,
    relative: &[Option<&str>],
    agent: &str,
    placed: &[Placed],
) -> Option<ScopedRule> {
    let text = file.text.as_ref();
    let fm = frontmatter::split(text);
    let scope: RuleScope<'_> = rule_scope::parse(text, &fm);
    if !nested && !scope.is_scoped() {
        return None;
    }
    let (applies, why) = verdict(&scope, nested, relative, agent, placed);
    Some(ScopedRule {
        name: file.name.clone(),
        layer: file.layer,
        path: file.path.clone(),
        dir: dir.to_path_buf(),
        nested,
        globs: scope.globs().map(str::to_owned).collect(),
        agents: scope.agent_names().map(str::to_owned).collect(),
        applies,
        why,
    })
}

fn verdict(
    scope: &RuleScope<'_>,
    nested: bool,
    relative: &[Option<&str>],
    agent: &str,
    placed: &[Placed],
) -> (bool, Why) {
    if !scope.is_for_agent(agent) {
        return (false, Why::NotForAgent);
    }
    let inside = || {
        relative
            .iter()
            .zip(placed)
            .filter_map(|(r, p)| Some((r.as_ref()?, p)))
    };
    if !scope.has_paths() {
        if nested {
            return match inside().next() {
                Some((_, p)) => (
                    true,
                    Why::InDirectory {
                        path: p.given.clone(),
                        glob: None,
                    },
                ),
                None => (false, Why::OutsideDirectory),
            };
        }
        return (true, Why::ForAgent);
    }
    if placed.is_empty() {
        return (false, Why::NoFile);
    }
    let mut builder = ScopeMatcherBuilder::new();
    let globs: Vec<&str> = scope.globs().collect();
    for (i, glob) in globs.iter().enumerate() {
        // A glob that cannot be used matches nothing; `check` reports it.
        let _ = builder.add(0, i, glob);
    }
    let matcher = builder.build();
    let (mut scratch, mut out) = (Vec::new(), Vec::new());
    for (rel, p) in inside() {
        matcher.matches_into(rel, &mut scratch, &mut out);
        if let Some(&(_, glob)) = out.first() {
            let glob = globs[glob].to_owned();
            let path = p.given.clone();
            return if nested {
                (
                    true,
                    Why::InDirectory {
                        path,
                        glob: Some(glob),
                    },
                )
            } else {
                (true, Why::GlobMatched { glob, path })
            };
        }
    }
    if nested && inside().next().is_none() {
        return (false, Why::OutsideDirectory);
    }
    (false, Why::NoGlobMatched)
}

#[cfg(test)]
mod tests;
