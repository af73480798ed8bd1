//! The instruction files of other agents that `check` reads for what [`crate::export::lint`]
//! says about them (PR902-PR905): found by the walk `check` makes anyway (each path it hands on
//! is tried with [`lint::is_agent_file`]), with a few `stat`s at the project root and on the way
//! down to the working directory where the walk does not go, and read through the session's
//! [`Files`] bounded by [`MAX_TARGET_BYTES`] each, [`MAX_FILES`] files at most.

use super::PathLabels;
use crate::export::lint::{self, AgentFile};
use crate::export::{Target, MAX_TARGET_BYTES};
use crate::files::Files;
use crate::session::Session;
use pi_rules_core::lint::{Content, Diagnostic, Entry, Report};
use pi_rules_core::FileId;
use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;

/// At most this many instruction files are read.
pub const MAX_FILES: usize = 10_000;

/// The file names read in each directory from the root down to the working directory, when the
/// walk starts below the root.
const CHAIN_NAMES: [&str; 4] = ["AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "GEMINI.md"];

/// The directories of scoped rule files at the root, listed when the walk does not cover them.
const RULE_DIRS: [&str; 4] = [
    ".claude/rules",
    ".claude/rules/pi-rules",
    ".clinerules",
    ".github/instructions",
];

/// A rule file of `.pi/rules` (the project's or a nested one) that holds an HTML comment.
struct CommentedRule {
    shown: String,
    file_id: Option<FileId>,
    text: String,
}

/// What `check` gathers for [`crate::export::lint`] as it goes.
pub(super) struct Exported {
    root: PathBuf,
    /// The walked directory (the working directory) from the root, `/`-separated, `""` for the
    /// root itself; `None` when it is not under the root.
    prefix: Option<String>,
    gemini_names: Vec<String>,
    /// The files to read, from the root.
    paths: BTreeSet<String>,
    walked: bool,
    rules: Vec<CommentedRule>,
}

impl Exported {
    /// Reads `.gemini/settings.json` at the project root, for the names Gemini CLI reads.
    pub(super) fn new(session: &Session) -> Exported {
        let files = session.files();
        let root = session.project_root();
        let cwd = files.canonical_or_same(&session.cwd);
        let prefix = cwd.strip_prefix(&root).ok().and_then(|p| {
            let text = p.to_str()?;
            Some(text.trim_matches('/').to_owned())
        });
        let settings = files
            .read_text(&root.join(".gemini").join("settings.json"), 1 << 20)
            .ok()
            .flatten();
        Exported {
            gemini_names: lint::gemini_names(settings.as_deref()),
            root,
            prefix,
            paths: BTreeSet::new(),
            walked: false,
            rules: Vec::new(),
        }
    }

    /// Keeps a rule file of `.pi/rules` that holds an HTML comment, before the linter takes its
    /// bytes.
    pub(super) fn rule(&mut self, entry: &Entry) {
        let Content::Bytes(bytes) = &entry.content else {
            return;
        };
        if !bytes.windows(4).any(|w| w == b"<!--") {
            return;
        }
        if let Ok(text) = std::str::from_utf8(bytes) {
            self.rules.push(CommentedRule {
                shown: entry.path.clone(),
                file_id: entry.file_id,
                text: text.to_owned(),
            });
        }
    }

    /// A file the walk of the working directory found (its path from there).
    pub(super) fn walked(&mut self, relative: &str) {
        let Some(prefix) = &self.prefix else {
            return;
        };
        // Most files are none of these: asked first of the path as it comes, without making
        // the path from the root (the names it matches by are the same from either).
        if self.paths.len() >= MAX_FILES || !lint::is_agent_file(relative, &self.gemini_names) {
            return;
        }
        let path = if prefix.is_empty() {
            relative.to_owned()
        } else {
            format!("{prefix}/{relative}")
        };
        if lint::is_agent_file(&path, &self.gemini_names) {
            self.paths.insert(path);
        }
    }

    /// The walk ran (every file under the working directory was handed to [`Self::walked`]).
    pub(super) fn walk_done(&mut self) {
        self.walked = true;
    }

    /// Reads the files, and adds what [`crate::export::lint`] finds in them to `report`.
    pub(super) fn finish(mut self, session: &Session, report: &mut Report) {
        let files = session.files();
        self.probe(files);
        let display = PathLabels::new(&session.env);
        let mut read: Vec<(String, String)> = Vec::with_capacity(self.paths.len());
        for path in std::mem::take(&mut self.paths) {
            let full = self.root.join(&path);
            if let Ok(Some(text)) = files.read_text(&full, MAX_TARGET_BYTES) {
                read.push((path, text));
            }
        }
        let agent_files: Vec<AgentFile<'_>> = read
            .iter()
            .map(|(path, text)| AgentFile { path, text })
            .collect();
        let mut reported = HashSet::new();
        if lint::claude_exported(&agent_files) {
            for rule in &self.rules {
                let mut found = lint::rule_comments(&rule.shown, &rule.text);
                for d in &mut found {
                    d.file_id = rule.file_id;
                    if let Some(span) = d.span.clone() {
                        reported.insert(lint::comments::normalise(&rule.text[span]));
                    }
                }
                if !found.is_empty() {
                    report.add_findings(&rule.shown, &rule.text, found);
                }
            }
        }
        let found = lint::project_findings(&agent_files, &self.gemini_names, &reported);
        // Grouped by file, in the order of the files.
        for file in &agent_files {
            let mine: Vec<Diagnostic> = found
                .iter()
                .filter(|d| d.path.as_str() == file.path)
                .cloned()
                .collect();
            if mine.is_empty() {
                continue;
            }
            let full = self.root.join(file.path);
            let shown = display.path(&full);
            let id = files.id(&full);
            let mine = mine
                .into_iter()
                .map(|mut d| {
                    d.path = shown.as_str().into();
                    d.file_id = Some(id);
                    d
                })
                .collect();
            report.add_findings(&shown, file.text, mine);
        }
    }

    /// Adds the files the walk did not see: the targets' files and the chain's names on the
    /// way from the root down to the working directory, and the root's scoped rule directories
    /// when the walk did not start there.
    fn probe(&mut self, files: &Files) {
        let covered = self.walked && self.prefix.as_deref() == Some("");
        let mut candidates: Vec<String> = Target::ALL.iter().map(|t| t.path().to_owned()).collect();
        let below = self.prefix.clone().unwrap_or_default();
        for dir in lint_chain(&below) {
            for name in CHAIN_NAMES
                .iter()
                .copied()
                .chain(self.gemini_names.iter().map(String::as_str))
            {
                candidates.push(if dir.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir}/{name}")
                });
            }
        }
        if !covered {
            for dir in RULE_DIRS {
                let listing = files.list_dir(&self.root.join(dir), |_| true);
                for item in listing.entries.into_iter().flatten() {
                    candidates.push(format!("{dir}/{}", item.name));
                }
            }
        }
        for path in candidates {
            if self.paths.len() >= MAX_FILES || self.paths.contains(&path) {
                continue;
            }
            if !lint::is_agent_file(&path, &self.gemini_names) {
                continue;
            }
            if files
                .metadata(&self.root.join(&path))
                .is_some_and(|m| m.is_file())
            {
                self.paths.insert(path);
            }
        }
    }
}

/// The directories from the root down to `dir` (`""` first).
fn lint_chain(dir: &str) -> Vec<&str> {
    let mut chain = vec![""];
    if dir.is_empty() {
        return chain;
    }
    chain.extend(dir.match_indices('/').map(|(at, _)| &dir[..at]));
    chain.push(dir);
    chain
}
