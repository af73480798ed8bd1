//! What `check` would say (PR902-PR905) about the instruction files of a project as they will
//! be once a planned export is written: the files export writes or keeps, with the bytes it
//! would write, and the files beside them that it does not touch (hand-written ones too), read
//! from disk. `export` prints these among its warnings, `export --check` and `--dry-run` too.
//!
//! Only findings that concern a file the export writes or keeps are given: one on such a file,
//! or one whose message names it (a copy of an exported rule in a hand-written file, a file
//! that hides an exported one, a chain that holds one). What concerns hand-written files alone
//! is `check`'s.
//!
//! The files looked at: those of the plan, those the export's walk found (`candidates`: nested
//! `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`, `pi-rules*` files), and, in the root and in every
//! directory of those, the names an agent reads there (`AGENTS.md`, `AGENTS.override.md`,
//! `CLAUDE.md`, `GEMINI.md` and Gemini CLI's other names), and the files of the root's scoped
//! rule directories. A few `stat`s per directory: no second walk.

use super::{dir_of, gemini_names, is_agent_file, join, project_findings, AgentFile};
use crate::export::{Planned, MAX_TARGET_BYTES};
use crate::files::Files;
use pi_rules_core::lint::{Code, Diagnostic};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

/// At most this many files are read besides the plan's.
const MAX_READ: usize = 10_000;

/// The names read in each directory that holds a file of the plan or the walk.
const DIR_NAMES: [&str; 4] = ["AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "GEMINI.md"];

/// The root's directories of scoped rule files that agents read beside the exported ones.
const RULE_DIRS: [&str; 4] = [
    ".claude/rules",
    ".claude/rules/pi-rules",
    ".clinerules",
    ".github/instructions",
];

/// One finding about the files after the export, as `export` shows it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub code: Code,
    /// From the project root, `/`-separated.
    pub path: String,
    /// 1-based; `None` for a finding on a whole file.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    /// A file the finding names (or is on) is not one this export writes or keeps: a
    /// hand-written file, which the user can change.
    pub hand_written: bool,
    /// `path:line:column: message`, as a warning line shows it (raw: the front end escapes it).
    pub located: String,
}

impl Finding {
    /// A rule that reaches an agent twice (PR902) from a hand-written file and another: `export
    /// --check` fails on one, as CI is where it must be seen. A copy between files that the
    /// export writes alone is the export's own doing, which the user cannot mend by exporting
    /// again: a warning only.
    pub fn fails_check(&self) -> bool {
        self.code == Code::ExportReadTwice && self.hand_written
    }
}

/// The findings of PR902-PR905 on the project under the canonical `root` as it will be once
/// `planned` is written, `candidates` being the files the export's walk found (from the root).
pub fn after_export(
    files: &Files,
    root: &Path,
    planned: &[Planned],
    candidates: &[String],
) -> Vec<Finding> {
    let settings = files
        .read_text(&root.join(".gemini").join("settings.json"), 1 << 20)
        .ok()
        .flatten();
    let names = gemini_names(settings.as_deref());
    // The plan's files as they will be; `None` for one that goes.
    let mut texts: BTreeMap<String, Option<String>> = BTreeMap::new();
    for p in planned {
        let text = match &p.change {
            Some(change) => change
                .new
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned()),
            None => read(files, root, &p.located.shown),
        };
        texts.insert(p.located.shown.clone(), text);
    }
    let exported: HashSet<String> = texts
        .iter()
        .filter(|(_, t)| t.is_some())
        .map(|(p, _)| p.clone())
        .collect();
    // The others: the walk's, and what an agent reads beside them.
    let mut others: BTreeSet<String> = candidates.iter().cloned().collect();
    let mut dirs: BTreeSet<&str> = BTreeSet::from([""]);
    for path in texts.keys().chain(candidates) {
        let dir = dir_of(path);
        if !dir.split('/').any(|part| part.starts_with('.')) {
            dirs.insert(dir);
        }
    }
    for dir in dirs {
        for name in DIR_NAMES
            .iter()
            .copied()
            .chain(names.iter().map(String::as_str))
        {
            others.insert(join(dir, name));
        }
    }
    for dir in RULE_DIRS {
        let listing = files.list_dir(&root.join(dir), |_| true);
        for item in listing.entries.into_iter().flatten() {
            others.insert(format!("{dir}/{}", item.name));
        }
    }
    let mut read_count = 0;
    for path in others {
        if texts.contains_key(&path) || !is_agent_file(&path, &names) || read_count >= MAX_READ {
            continue;
        }
        if let Some(text) = read(files, root, &path) {
            read_count += 1;
            texts.insert(path, Some(text));
        }
    }
    let agent_files: Vec<AgentFile<'_>> = texts
        .iter()
        .filter_map(|(path, text)| {
            Some(AgentFile {
                path,
                text: text.as_deref()?,
            })
        })
        .filter(|f| is_agent_file(f.path, &names))
        .collect();
    let found = project_findings(&agent_files, &names, &HashSet::new());
    found
        .iter()
        .filter(|d| concerns(d, &exported))
        .map(|d| finding(d, &agent_files, &exported))
        .collect()
}

/// Whether `d` is on a file of `exported`, or names one.
fn concerns(d: &Diagnostic, exported: &HashSet<String>) -> bool {
    if exported.contains(d.path.as_str()) {
        return true;
    }
    let message = d.message.to_string();
    exported
        .iter()
        .any(|path| message.contains(&format!("`{path}`")))
}

fn finding(d: &Diagnostic, files: &[AgentFile<'_>], exported: &HashSet<String>) -> Finding {
    let text = files
        .iter()
        .find(|f| f.path == d.path.as_str())
        .map(|f| f.text);
    let at = match (text, &d.span) {
        (Some(text), Some(span)) => Some(pi_rules_core::span::line_col(text, span.start)),
        _ => None,
    };
    let message = d.message.to_string();
    let hand_written = files.iter().any(|f| {
        !exported.contains(f.path)
            && (f.path == d.path.as_str() || message.contains(&format!("`{}`", f.path)))
    });
    Finding {
        hand_written,
        code: d.code,
        path: d.path.as_str().to_owned(),
        line: at.as_ref().map(|a| a.line),
        column: at.as_ref().map(|a| a.column),
        message,
        located: super::located_message(d, files),
    }
}

/// The text of the regular file `path` (from `root`), `None` when there is none or it cannot be
/// read.
fn read(files: &Files, root: &Path, path: &str) -> Option<String> {
    files
        .read_text(&root.join(path), MAX_TARGET_BYTES)
        .ok()
        .flatten()
}
