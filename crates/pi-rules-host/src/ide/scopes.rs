//! A rule's scope in the editor: completion of `agents:` (the known agents not yet listed) and
//! of `paths:` (the directories of the scope's directory, as `dir/**`), and hover on an item
//! (how many files a glob matches and the first few; whether an agent is known).
//!
//! Globs are relative to the scope's directory ([`scope_dir`]): the working directory for the
//! rules of the three layers, `D` for a nested rule `D/.pi/rules/NAME.md`. The directory is
//! walked through the session's `Files`, bounded ([`MAX_WALK_ENTRIES`], [`MAX_WALK_DEPTH`]),
//! leaving out hidden entries, `node_modules` and `target`; links are not followed.
//! `.gitignore` is not read.

use super::complete::{Completion, CompletionKind};
use super::hover::{code, HoverInfo};
use super::scan::{self, clamp, extend_forward};
use super::{DocumentKind, IdeContext};
use crate::files::Files;
use pi_rules_core::frontmatter;
use pi_rules_core::rule_scope::{self, ScopeMatcherBuilder, KNOWN_AGENTS};
use rustix::fs::FileType;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A walk of a scope's directory stops after this many entries.
pub const MAX_WALK_ENTRIES: usize = 2_000;
/// A walk finds entries at most this many parts deep (`a/b/c` is three).
pub const MAX_WALK_DEPTH: usize = 6;

/// A glob's hover looks at most this many files (the repository as `check` walks it).
pub const HOVER_WALK_FILES: usize = 100_000;
/// A glob's hover lists at most this many of the files it matches.
pub const HOVER_FILES: usize = 5;

/// Which key of the scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Paths,
    Agents,
}

/// The directory the scope of the rule document at `path` belongs to: the working directory for
/// a rule of a layer, `D` for a nested rule `D/.pi/rules/NAME.md` below it; `None` for anything
/// else.
pub fn scope_dir(ctx: &IdeContext, kind: &DocumentKind, path: &Path) -> Option<PathBuf> {
    let cwd = &ctx.session.cwd;
    match kind {
        DocumentKind::Rule { .. } => return Some(cwd.clone()),
        DocumentKind::NestedRule { dir, .. } => return Some(dir.clone()),
        _ => {}
    }
    let name = path.file_name()?.to_str()?;
    if !crate::loader::is_rule_name(name) {
        return None;
    }
    let rules = path.parent()?;
    let pi = rules.parent()?;
    if rules.file_name()? != "rules" || pi.file_name()? != ".pi" {
        return None;
    }
    let dir = pi.parent()?;
    (dir != cwd && dir.starts_with(cwd)).then(|| dir.to_path_buf())
}

/// The completions of a `paths:` or `agents:` item at `offset` of the rule document `text` at
/// `path`; `None` when `offset` is not on such an item (the other completions apply).
pub fn scope_completions(
    ctx: &IdeContext,
    kind: &DocumentKind,
    path: &Path,
    text: &str,
    offset: usize,
) -> Option<Vec<Completion>> {
    let dir = scope_dir(ctx, kind, path)?;
    let offset = clamp(text, offset);
    let (key, item_start) = item_at(text, offset)?;
    let end = extend_forward(text, offset, |b| {
        !matches!(b, b',' | b'"' | b'\'' | b']' | b' ' | b'\t' | b'\r' | b'\n')
    });
    let replace = item_start..end;
    let typed = &text[item_start..offset];
    Some(match key {
        Key::Agents => agent_completions(text, typed, replace),
        Key::Paths => path_completions(ctx.session.files(), &dir, typed, replace),
    })
}

/// The hover on a `paths:` or `agents:` item at `offset` of the rule document `text` at
/// `path`.
pub fn scope_hover(
    ctx: &IdeContext,
    kind: &DocumentKind,
    path: &Path,
    text: &str,
    offset: usize,
) -> Option<HoverInfo> {
    let dir = scope_dir(ctx, kind, path)?;
    let offset = clamp(text, offset);
    let fm = frontmatter::split(text);
    let scope = rule_scope::parse(text, &fm);
    let on = |span: &Range<usize>| span.start <= offset && offset < span.end;
    if let Some(item) = scope
        .paths
        .iter()
        .flat_map(|d| &d.items)
        .find(|i| on(&i.span))
    {
        return Some(HoverInfo {
            range: item.span.clone(),
            markdown: glob_words(ctx, &dir, item.text),
        });
    }
    let item = scope
        .agents
        .iter()
        .flat_map(|d| &d.items)
        .find(|i| on(&i.span))?;
    Some(HoverInfo {
        range: item.span.clone(),
        markdown: agent_words(item.text),
    })
}

/// Which key's item `offset` is in, and where the item starts: on the key's line after its
/// colon (after the last `,` or `[`), or on a `- ` list line under a key with an empty value.
fn item_at(text: &str, offset: usize) -> Option<(Key, usize)> {
    let header = scan::header_region(text)?;
    let line_start = scan::line_start(text, offset);
    if line_start < header.start || line_start > header.end {
        return None;
    }
    let before = &text[line_start..offset];
    let trimmed = before.trim_start();
    let indent = before.len() - trimmed.len();
    if let Some((key, rest)) = key_and_rest(trimmed) {
        let rest_start = line_start + indent + (trimmed.len() - rest.len());
        let cut = rest.rfind([',', '[']).map_or(0, |i| i + 1);
        return Some((key, item_start(text, rest_start + cut, offset)));
    }
    let after_dash = trimmed.strip_prefix('-')?;
    if !after_dash.starts_with([' ', '\t']) {
        return None;
    }
    let key = list_owner(text, header.start, line_start)?;
    let dash = line_start + indent + 1;
    Some((key, item_start(text, dash, offset)))
}

/// `paths` or `agents` at the start of `line` followed by `:`, and what follows the colon.
fn key_and_rest(line: &str) -> Option<(Key, &str)> {
    let (key, rest) = if let Some(rest) = line.strip_prefix("paths") {
        (Key::Paths, rest)
    } else {
        (Key::Agents, line.strip_prefix("agents")?)
    };
    let rest = rest.trim_start_matches([' ', '\t']).strip_prefix(':')?;
    Some((key, rest))
}

/// Past the spaces and an opening quote from `from`, but not past `offset`.
fn item_start(text: &str, from: usize, offset: usize) -> usize {
    let mut at = from;
    let bytes = text.as_bytes();
    while at < offset && matches!(bytes[at], b' ' | b'\t') {
        at += 1;
    }
    if at < offset && matches!(bytes[at], b'"' | b'\'') {
        at += 1;
    }
    at
}

/// The key whose list the list line starting at `line_start` belongs to: the nearest line above
/// that is neither a list line, blank, nor a comment, when it is `paths:` or `agents:` with
/// nothing after the colon.
fn list_owner(text: &str, header_start: usize, line_start: usize) -> Option<Key> {
    let above = text.get(header_start..line_start)?;
    for line in above.lines().rev() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('-') {
            continue;
        }
        let (key, rest) = key_and_rest(line)?;
        let rest = rest.trim();
        return (rest.is_empty() || rest.starts_with('#')).then_some(key);
    }
    None
}

/// The known agents that start with `typed` (ASCII case ignored) and that the header does not
/// list yet (the item being typed aside).
fn agent_completions(text: &str, typed: &str, replace: Range<usize>) -> Vec<Completion> {
    let fm = frontmatter::split(text);
    let scope = rule_scope::parse(text, &fm);
    let listed: Vec<&str> = scope
        .agents
        .iter()
        .flat_map(|d| &d.items)
        .filter(|i| i.span.end < replace.start || i.span.start > replace.end)
        .map(|i| i.text)
        .collect();
    let typed = typed.to_ascii_lowercase();
    KNOWN_AGENTS
        .iter()
        .filter(|agent| agent.starts_with(&typed))
        .filter(|agent| !listed.iter().any(|l| l.eq_ignore_ascii_case(agent)))
        .map(|agent| Completion {
            label: (*agent).to_owned(),
            kind: CompletionKind::Agent,
            detail: Some(if *agent == crate::scoped::PI {
                "agent: pi, which pi-rules assembles for".to_owned()
            } else {
                "agent".to_owned()
            }),
            documentation: None,
            replace: replace.clone(),
            insert: (*agent).to_owned(),
        })
        .collect()
}

/// The directories of `dir` as `sub/**`, those that start with `typed` (a leading `./` or `/`
/// kept in what is inserted), shallowest first.
fn path_completions(
    files: &Files,
    dir: &Path,
    typed: &str,
    replace: Range<usize>,
) -> Vec<Completion> {
    let lead_len = if typed.starts_with("./") {
        2
    } else {
        usize::from(typed.starts_with('/'))
    };
    let (lead, rest) = typed.split_at(lead_len);
    let walk = walk(files, dir);
    walk.dirs
        .iter()
        .map(|d| format!("{d}/**"))
        .filter(|glob| glob.starts_with(rest))
        .map(|glob| Completion {
            label: glob.clone(),
            kind: CompletionKind::Path,
            detail: Some("directory".to_owned()),
            documentation: None,
            replace: replace.clone(),
            insert: format!("{lead}{glob}"),
        })
        .collect()
}

/// What a glob matches in `dir`, or why it cannot be used.
fn glob_words(ctx: &IdeContext, dir: &Path, glob: &str) -> String {
    let mut md = format!("**{}** (glob of `paths:`)\n\n", code(glob));
    let mut builder = ScopeMatcherBuilder::new();
    if let Err(err) = builder.add(0, 0, glob) {
        let _ = write!(md, "**Not a valid glob:** {}", err.reason);
        return md;
    }
    let matcher = builder.build();
    // The files `check` tries globs on: `.gitignore` honoured, so that hover and PR1004 agree.
    let limits = crate::check::walk::Limits {
        max_files: HOVER_WALK_FILES,
        ..Default::default()
    };
    let mut shown: Vec<String> = Vec::new();
    let mut count = 0usize;
    let walked = crate::check::walk::walk(dir, limits, |file| {
        if matcher.is_match(file) {
            count += 1;
            if shown.len() < HOVER_FILES {
                shown.push(file.to_owned());
            }
        }
    });
    let place = if dir == ctx.session.cwd {
        "the project directory".to_owned()
    } else {
        match dir.strip_prefix(&ctx.session.cwd) {
            Ok(rel) => code(&rel.to_string_lossy()),
            Err(_) => code(&dir.to_string_lossy()),
        }
    };
    match count {
        0 => {
            let _ = write!(md, "Matches no file in {place}.");
        }
        n => {
            let _ = write!(
                md,
                "Matches {n} file{} in {place}:",
                if n == 1 { "" } else { "s" }
            );
            for file in &shown {
                let _ = write!(md, "\n- {}", code(file));
            }
            if n > HOVER_FILES {
                let _ = write!(md, "\n- and {} more", n - HOVER_FILES);
            }
        }
    }
    if walked.truncated {
        let _ = write!(
            md,
            "\n\nOnly the first {HOVER_WALK_FILES} files were looked at: there may be more."
        );
    }
    md
}

/// Whether an agent name is known, with a "did you mean" when it is not.
fn agent_words(name: &str) -> String {
    if rule_scope::is_known_agent(name) {
        let lower = name.to_ascii_lowercase();
        if lower == crate::scoped::PI {
            return format!(
                "{} (agent): pi, the agent pi-rules assembles the rules block for",
                code(&lower)
            );
        }
        return format!("{} (agent): a known agent", code(&lower));
    }
    let mut md = format!("{}: unknown agent", code(name));
    if let Some(near) = rule_scope::suggest_agent(name) {
        let _ = write!(md, " (did you mean {}?)", code(near));
    }
    md
}

/// What a bounded walk of a directory found, relative to it with `/` between parts, shallowest
/// first and by name within a directory.
#[derive(Debug, Default)]
struct Walk {
    dirs: Vec<String>,
    files: Vec<String>,
    /// The walk stopped at [`MAX_WALK_ENTRIES`] or left out directories past
    /// [`MAX_WALK_DEPTH`].
    truncated: bool,
}

/// Walks `root` breadth first through `files`, bounded; hidden entries, `node_modules` and
/// `target` are left out, links are listed as files and not followed.
fn walk(files: &Files, root: &Path) -> Walk {
    let mut out = Walk::default();
    let mut queue: VecDeque<(PathBuf, String, usize)> = VecDeque::new();
    queue.push_back((root.to_path_buf(), String::new(), 0));
    let mut seen = 0usize;
    let keep = |name: &str| !name.starts_with('.') && name != "node_modules" && name != "target";
    while let Some((dir, rel, depth)) = queue.pop_front() {
        let listing = files.list_dir(&dir, keep);
        let mut entries: Vec<(String, bool)> = listing
            .entries
            .into_iter()
            .flatten()
            .filter(|e| !e.invalid_name)
            .filter_map(|e| match e.file_type {
                Ok(FileType::Directory) => Some((e.name, true)),
                Ok(FileType::RegularFile | FileType::Symlink) => Some((e.name, false)),
                _ => None,
            })
            .collect();
        entries.sort();
        for (name, is_dir) in entries {
            if seen == MAX_WALK_ENTRIES {
                out.truncated = true;
                return out;
            }
            seen += 1;
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if is_dir {
                if depth + 1 < MAX_WALK_DEPTH {
                    queue.push_back((dir.join(&name), path.clone(), depth + 1));
                } else {
                    out.truncated = true;
                }
                out.dirs.push(path);
            } else {
                out.files.push(path);
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "scopes_tests.rs"]
mod tests;
