//! `import`: other agents' instruction files as pi-rules rules. Pure: each file's path and
//! bytes in; the rule's text, where it goes, its name, and what to say about the file out.
//!
//! - [`locate`] tells a file's kind by its path, the directory its rules are for (`D` of
//!   `D/AGENTS.md` or `D/.cursor/rules/x.mdc`: a nested `D/.pi/rules` directory), and the rest
//!   of the rule's name.
//! - [`import`] reads the file as its agent reads it: the agent's frontmatter keys, with the
//!   values real files hold (comma-separated strings, block and flow lists, braces with commas,
//!   values that are not strict YAML; `header`); each glob in our meaning (`read_value`, per
//!   agent dialect). A rule the agent applied to some paths keeps them as its `paths:`; a rule it
//!   always applied has no scope; a rule it applied on request is imported unscoped, with a
//!   warning. What cannot be kept is a warning with its line, never a failure.
//! - [`name_rules`] names every rule of an import together (`names`).

mod header;
mod names;
#[cfg(test)]
mod tests;

use super::dialect::{read_value, Dialect};
use super::{owned, section};
use crate::notes::Note;
use pi_rules_core::rule_scope;
use std::collections::{HashMap, HashSet};
use std::fmt;

pub use header::MAX_LINES;
pub use names::stem;

/// What kind of file an import reads, by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`, `.github/copilot-instructions.md`, `.goosehints`,
    /// `.cursorrules`, `.windsurfrules`, a `.clinerules` file: read whole, the text outside any
    /// pi-rules section (a frontmatter included: those agents read it as text).
    Plain,
    /// `.cursor/rules/**/*.mdc` (or `.md`): `globs:`, `alwaysApply:`.
    Cursor,
    /// `.windsurf/rules/**/*.md`: `trigger:`, `globs:`.
    Windsurf,
    /// `.clinerules/**/*.md`: `paths:`, a YAML list.
    Cline,
    /// `.kiro/steering/**/*.md`: `inclusion:`, `fileMatchPattern:`.
    Kiro,
    /// `.claude/rules/**/*.md`: `paths:`.
    ClaudeRule,
    /// `.github/instructions/**/*.instructions.md`: `applyTo:`.
    Copilot,
}

/// The frontmatter keys with which some agent scopes a rule: in another agent's file they are
/// said to be left out.
const SCOPE_KEYS: &[&str] = &[
    "globs",
    "glob",
    "paths",
    "applyTo",
    "fileMatchPattern",
    "alwaysApply",
    "trigger",
    "inclusion",
];

impl SourceKind {
    /// The agent, as messages name it.
    pub fn agent(self) -> &'static str {
        match self {
            SourceKind::Plain => "its agent",
            SourceKind::Cursor => "Cursor",
            SourceKind::Windsurf => "Windsurf",
            SourceKind::Cline => "Cline",
            SourceKind::Kiro => "Kiro",
            SourceKind::ClaudeRule => "Claude Code",
            SourceKind::Copilot => "Copilot",
        }
    }

    /// How the agent reads a glob.
    fn dialect(self) -> Dialect {
        match self {
            SourceKind::Cursor | SourceKind::Plain => Dialect::Cursor,
            SourceKind::Windsurf => Dialect::Windsurf,
            SourceKind::Cline => Dialect::Cline,
            SourceKind::Kiro => Dialect::Kiro,
            SourceKind::ClaudeRule => Dialect::Claude,
            SourceKind::Copilot => Dialect::Copilot,
        }
    }

    /// The keys of [`SCOPE_KEYS`] this agent reads.
    fn own_keys(self) -> &'static [&'static str] {
        match self {
            SourceKind::Plain => &[],
            SourceKind::Cursor => &["globs", "alwaysApply"],
            SourceKind::Windsurf => &["trigger", "globs"],
            SourceKind::Cline | SourceKind::ClaudeRule => &["paths"],
            SourceKind::Kiro => &["inclusion", "fileMatchPattern"],
            SourceKind::Copilot => &["applyTo"],
        }
    }
}

/// A source file, by its path: its kind, the directory its rules are for, the rest of the
/// rule's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub kind: SourceKind,
    /// How many leading components of the path are the directory `D` the rules are for (`0`:
    /// the directory the path is relative to).
    pub dir: usize,
    /// The rest of the rule's name ([`stem`]); subfolders of a rules directory are part of it
    /// (`.cursor/rules/web/react.mdc` is `web-react`; Cursor's `NAME/RULE.md` is `NAME`).
    pub stem: String,
}

/// The last place where `want` is a run of `path`'s directories (not its file name).
fn find_dirs(path: &[&str], want: &[&str]) -> Option<usize> {
    let dirs = &path[..path.len().saturating_sub(1)];
    (0..dirs.len().saturating_sub(want.len() - 1))
        .rev()
        .find(|&i| dirs[i..].starts_with(want))
}

/// The stem of a rule in a rules directory: the path below it, joined with `-`.
fn stem_below(below: &[&str]) -> String {
    let (name, folders) = below.split_last().unwrap_or((&"", &[]));
    let mut parts: Vec<String> = folders.iter().map(|f| stem(f)).collect();
    let own = stem(name);
    // Cursor's rule folders: `.cursor/rules/NAME/RULE.md`.
    if own != "rule" || parts.is_empty() {
        parts.push(own);
    }
    stem(&parts.join("-"))
}

/// The kind of the file at `path` (`/`-separated components, relative to the project
/// directory or as given), where its rules go, and its rule's stem; `None` for a file that is
/// none of the agents' files.
pub fn locate(path: &[&str]) -> Option<Located> {
    let (&name, _) = path.split_last()?;
    let lower = name.to_ascii_lowercase();
    let rules_dirs: [(&[&str], SourceKind, &[&str]); 6] = [
        (
            &[".github", "instructions"],
            SourceKind::Copilot,
            &[".instructions.md"],
        ),
        (&[".claude", "rules"], SourceKind::ClaudeRule, &[".md"]),
        (&[".cursor", "rules"], SourceKind::Cursor, &[".mdc", ".md"]),
        (&[".windsurf", "rules"], SourceKind::Windsurf, &[".md"]),
        (&[".kiro", "steering"], SourceKind::Kiro, &[".md"]),
        (&[".clinerules"], SourceKind::Cline, &[".md", ".txt"]),
    ];
    for (dirs, kind, extensions) in rules_dirs {
        if !extensions.iter().any(|ext| lower.ends_with(ext)) {
            continue;
        }
        if let Some(at) = find_dirs(path, dirs) {
            return Some(Located {
                kind,
                dir: at,
                stem: stem_below(&path[at + dirs.len()..]),
            });
        }
    }
    let parent = |want: &str| path.len() >= 2 && path[path.len() - 2] == want;
    let dir = match name {
        "AGENTS.md" | "AGENTS.override.md" | "CLAUDE.md" | "CLAUDE.local.md" | "GEMINI.md"
        | ".goosehints" | ".cursorrules" | ".windsurfrules" | ".clinerules" => {
            if name == "CLAUDE.md" && parent(".claude") {
                path.len() - 2
            } else {
                path.len() - 1
            }
        }
        "copilot-instructions.md" if parent(".github") => path.len() - 2,
        _ => return None,
    };
    Some(Located {
        kind: SourceKind::Plain,
        dir,
        stem: stem(name),
    })
}

/// Why a file gives no rule: it is skipped, with a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// The file is one that `export` wrote.
    Generated,
    /// Its pi-rules markers are broken.
    Markers(section::MarkerError),
    /// Nothing is left once the section or frontmatter is taken out.
    Empty,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::Generated => f.write_str(
                "it was written by `pi-rules export`: its rules are already pi-rules rules",
            ),
            Skip::Markers(err) => write!(f, "{err}"),
            Skip::Empty => {
                f.write_str("it holds no text outside pi-rules' section or the frontmatter")
            }
        }
    }
}

/// A file turned into a rule's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The rule's text: a `paths:` frontmatter when the agent applied it to some paths, then
    /// the file's text; ends with one line break.
    pub text: String,
    /// The globs of that `paths:`, in pi-rules' meaning (empty: the rule has no scope).
    pub paths: Vec<String>,
    /// What to say about the file: warnings for what could not be kept, notes; each message
    /// starts with `line N: ` where it has a line.
    pub notes: Vec<Note>,
}

/// What an agent's frontmatter said about where the rule applies.
enum Scope {
    /// Everywhere.
    Always,
    /// To the files matching these globs (ours).
    Paths(Vec<String>),
}

/// Imports the file of `kind` holding `bytes`.
pub fn import(kind: SourceKind, bytes: &[u8]) -> Result<Imported, Skip> {
    if owned::is_ours(bytes) || owned::is_ours(bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes))
    {
        return Err(Skip::Generated);
    }
    let whole = String::from_utf8_lossy(bytes);
    let whole = whole.strip_prefix('\u{feff}').unwrap_or(&whole);
    let mut notes = Vec::new();
    let (scope, body) = if kind == SourceKind::Plain {
        let outside = section::outside(whole.as_bytes()).map_err(Skip::Markers)?;
        let body = String::from_utf8_lossy(&outside).into_owned();
        if header::split(&body).is_some() {
            notes.push(Note::info(
                "line 1: its `---` block is kept as text of the rule: the agents that read this \
                 file read it as text",
            ));
        }
        (Scope::Always, body)
    } else {
        match header::split(whole) {
            Some(head) => {
                if head.dropped > 0 {
                    notes.push(Note::warning(format!(
                        "its frontmatter has more than {MAX_LINES} lines; the last {} are not read",
                        head.dropped
                    )));
                }
                let scope = scope_of(kind, &head, &mut notes);
                (scope, whole[head.body_start..].to_owned())
            }
            None => (no_header_scope(kind, &mut notes), whole.to_owned()),
        }
    };
    let body = body.trim_start_matches(['\n', '\r']).trim_end();
    if body.is_empty() {
        return Err(Skip::Empty);
    }
    let (text, paths) = match scope {
        Scope::Paths(globs) => (format!("{}{body}\n", paths_header(&globs)), globs),
        // A text that opens with `---` would be read as a frontmatter: an empty one goes first.
        Scope::Always if body.starts_with("---") => (format!("---\n\n---\n{body}\n"), Vec::new()),
        Scope::Always => (format!("{body}\n"), Vec::new()),
    };
    Ok(Imported { text, paths, notes })
}

/// `paths:` as a frontmatter: one glob on the key's line, several as a YAML list; each quoted,
/// so that a comma, a `#` or a leading `*` is part of it.
pub fn paths_header(globs: &[String]) -> String {
    let quoted = |glob: &String| {
        let q = if glob.contains('"') && !glob.contains('\'') {
            '\''
        } else {
            '"'
        };
        format!("{q}{glob}{q}")
    };
    match globs {
        [one] => format!("---\npaths: {}\n---\n", quoted(one)),
        _ => {
            let mut out = String::from("---\npaths:\n");
            for glob in globs {
                out.push_str(&format!("  - {}\n", quoted(glob)));
            }
            out.push_str("---\n");
            out
        }
    }
}

/// The scope of a file with no frontmatter.
fn no_header_scope(kind: SourceKind, notes: &mut Vec<Note>) -> Scope {
    match kind {
        SourceKind::Cursor => on_request(notes, None, "Cursor applied it when you asked for it"),
        SourceKind::Copilot => on_request(
            notes,
            None,
            "Copilot applied it only when you attached it (it has no `applyTo:`)",
        ),
        _ => Scope::Always,
    }
}

/// A rule its agent applied on request only: imported for every request, with a warning.
fn on_request(notes: &mut Vec<Note>, line: Option<usize>, why: &str) -> Scope {
    notes.push(Note::warning(format!(
        "{}{why}; it is imported as a rule for every request, everywhere",
        at(line)
    )));
    Scope::Always
}

/// `line N: `, or nothing.
fn at(line: Option<usize>) -> String {
    line.map_or_else(String::new, |n| format!("line {n}: "))
}

/// The scope the agent of `kind` reads in `head`.
fn scope_of(kind: SourceKind, head: &header::Header<'_>, notes: &mut Vec<Note>) -> Scope {
    let entries = head.entries();
    let get = |key: &str| entries.iter().rev().find(|e| e.key == key);
    // Keys of other agents: said, and left out.
    let mut seen = HashSet::new();
    for entry in &entries {
        if SCOPE_KEYS.contains(&entry.key)
            && !kind.own_keys().contains(&entry.key)
            && seen.insert(entry.key)
        {
            notes.push(Note::warning(format!(
                "line {}: `{}:` is not a key {} reads (another agent's); left out",
                entry.line,
                entry.key,
                kind.agent()
            )));
        }
    }
    let agent = kind.agent();
    let scalar = |key: &str| get(key).map(|e| (e.line, e.value.scalar()));
    match kind {
        SourceKind::Plain => Scope::Always,
        SourceKind::Cursor => {
            let always = scalar("alwaysApply").is_some_and(|(_, v)| v.eq_ignore_ascii_case("true"));
            match get("globs") {
                _ if always => Scope::Always,
                Some(globs) if !globs.value.is_empty() => paths(kind, globs, notes),
                globs => on_request(
                    notes,
                    globs.map(|g| g.line),
                    "Cursor applied it when the model or you asked for it",
                ),
            }
        }
        SourceKind::Windsurf => match scalar("trigger") {
            Some((line, trigger)) if trigger == "glob" => match get("globs") {
                Some(globs) if !globs.value.is_empty() => paths(kind, globs, notes),
                _ => on_request(
                    notes,
                    Some(line),
                    "Windsurf applied it to files matching a pattern that the file does not give",
                ),
            },
            Some((line, trigger)) if trigger == "model_decision" || trigger == "manual" => {
                on_request(
                    notes,
                    Some(line),
                    &format!("Windsurf applied it on request (`trigger: {trigger}`)"),
                )
            }
            Some((line, trigger)) if !(trigger.is_empty() || trigger == "always_on") => {
                notes.push(Note::warning(format!(
                    "line {line}: `trigger: {trigger}` is not one Windsurf knows; imported as \
                     a rule for every request, as `always_on`"
                )));
                Scope::Always
            }
            _ => Scope::Always,
        },
        SourceKind::Kiro => match scalar("inclusion") {
            Some((line, inclusion)) if inclusion == "fileMatch" => match get("fileMatchPattern") {
                Some(pattern) if !pattern.value.is_empty() => paths(kind, pattern, notes),
                _ => on_request(
                    notes,
                    Some(line),
                    "Kiro applied it to files matching a pattern that the file does not give",
                ),
            },
            Some((line, inclusion)) if inclusion == "manual" => {
                on_request(notes, Some(line), "Kiro applied it when you asked for it")
            }
            Some((line, inclusion)) if inclusion == "auto" => on_request(
                notes,
                Some(line),
                "Kiro applied it when the model found its description relevant",
            ),
            _ => Scope::Always,
        },
        SourceKind::Cline => match get("paths") {
            None => Scope::Always,
            Some(entry) => match &entry.value {
                header::Value::List(_) => paths(kind, entry, notes),
                header::Value::Line(value) if value.trim().is_empty() => Scope::Always,
                header::Value::Line(value) if value.trim_start().starts_with('[') => {
                    paths(kind, entry, notes)
                }
                header::Value::Line(_) => {
                    notes.push(Note::warning(format!(
                        "line {}: Cline reads `paths:` as a YAML list only; as a string it \
                         applied the rule everywhere, and so does the imported rule",
                        entry.line
                    )));
                    Scope::Always
                }
            },
        },
        SourceKind::ClaudeRule => match get("paths") {
            Some(entry) if !entry.value.is_empty() => paths(kind, entry, notes),
            _ => Scope::Always,
        },
        SourceKind::Copilot => match get("applyTo") {
            Some(entry) if !entry.value.is_empty() => paths(kind, entry, notes),
            entry => on_request(
                notes,
                entry.map(|e| e.line),
                &format!("{agent} applied it only when you attached it (it has no `applyTo:`)"),
            ),
        },
    }
}

/// The globs every file matches: a rule scoped by one of them is unscoped.
fn matches_everything(glob: &str) -> bool {
    matches!(
        glob,
        "*" | "**" | "**/*" | "/**" | "/**/*" | "./**" | "**/**"
    )
}

/// The scope of `entry`, a value of globs in the agent's dialect.
fn paths(kind: SourceKind, entry: &header::Entry<'_>, notes: &mut Vec<Note>) -> Scope {
    let dialect = kind.dialect();
    let mut globs = Vec::new();
    let mut said = Vec::new();
    let mut read = |value: &str| {
        let (ours, warnings) = read_value(dialect, value);
        globs.extend(ours);
        said.extend(warnings);
    };
    match &entry.value {
        header::Value::Line(value) => read(value),
        header::Value::List(items) => read(
            &items
                .iter()
                .map(|item| format!("- {item}"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
    let line = entry.line;
    for warning in said {
        notes.push(Note::warning(format!("line {line}: {warning}")));
    }
    if globs.iter().any(|g| matches_everything(g)) {
        return Scope::Always;
    }
    if globs.len() > rule_scope::MAX_ITEMS {
        notes.push(Note::warning(format!(
            "line {line}: {} globs; the first {} are kept",
            globs.len(),
            rule_scope::MAX_ITEMS
        )));
        globs.truncate(rule_scope::MAX_ITEMS);
    }
    globs.retain(|glob| {
        let keep = glob.len() <= rule_scope::MAX_ITEM_LEN;
        if !keep {
            notes.push(Note::warning(format!(
                "line {line}: a glob of {} bytes, over pi-rules' {}-byte limit; left out",
                glob.len(),
                rule_scope::MAX_ITEM_LEN
            )));
        }
        keep
    });
    let mut seen = HashSet::new();
    globs.retain(|glob| seen.insert(glob.clone()));
    if globs.is_empty() {
        return on_request(
            notes,
            Some(line),
            &format!("{} gives no glob that pi-rules can keep", kind.agent()),
        );
    }
    for glob in &globs {
        if let Err(err) = rule_scope::compile_glob(glob) {
            notes.push(Note::warning(format!(
                "line {line}: `{glob}` is not a glob pi-rules can use ({}); it is kept, and \
                 `pi-rules check` reports it",
                err.reason
            )));
        }
    }
    Scope::Paths(globs)
}

/// A rule to name: the directory it goes to (`""` for the layer itself, else the nested
/// directory, `/`-separated), and its stem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToName<'a> {
    pub dir: &'a str,
    pub stem: &'a str,
}

/// The two-digit prefix of a rule file name.
fn prefix(name: &str) -> Option<u64> {
    let (digits, _) = crate::authoring::prefix_of(name)?;
    (digits.len() == 2).then(|| digits.parse().ok())?
}

/// File names for `rules`, in their order (the sources' order), all named together:
/// - `used` are the prefixes in use in every layer, `taken` every rule name there (the root's
///   rules are replaced by rules of the same name in a nested directory, and a lower layer's by
///   the project's: an imported rule never takes an existing name);
/// - `existing(dir)` lists the rule names of the nested directory `dir` (`""` is never asked);
/// - a nested directory's rules take prefixes that neither the layers nor the directories
///   above it use, nor the rules this import names there.
pub fn name_rules(
    rules: &[ToName<'_>],
    used: &[u64],
    taken: &HashSet<String>,
    range: (u64, u64),
    mut existing: impl FnMut(&str) -> Vec<String>,
) -> Vec<String> {
    // The directories, shallowest first, each with its rules in order.
    let mut order: Vec<&str> = Vec::new();
    let mut by_dir: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, rule) in rules.iter().enumerate() {
        by_dir
            .entry(rule.dir)
            .or_insert_with(|| {
                order.push(rule.dir);
                Vec::new()
            })
            .push(i);
    }
    order.sort_by_key(|dir| {
        if dir.is_empty() {
            0
        } else {
            dir.matches('/').count() + 1
        }
    });
    let chain = |dir: &str| -> Vec<String> {
        let mut out = vec![String::new()];
        let mut at = 0;
        while !dir.is_empty() {
            match dir[at..].find('/') {
                Some(i) => {
                    out.push(dir[..at + i].to_owned());
                    at += i + 1;
                }
                None => {
                    out.push(dir.to_owned());
                    break;
                }
            }
        }
        out
    };
    // Every name of each directory, existing or given, in lower case.
    let mut names_in: HashMap<String, HashSet<String>> = HashMap::new();
    names_in.insert(
        String::new(),
        taken.iter().map(|n| n.to_lowercase()).collect(),
    );
    let mut out = vec![String::new(); rules.len()];
    for dir in order {
        let mut in_chain: HashSet<String> = HashSet::new();
        let mut used_here: Vec<u64> = used.to_vec();
        for up in chain(dir) {
            let names = names_in.entry(up.clone()).or_insert_with(|| {
                existing(&up)
                    .into_iter()
                    .map(|n| n.to_lowercase())
                    .collect()
            });
            used_here.extend(names.iter().filter_map(|n| prefix(n)));
            in_chain.extend(names.iter().cloned());
        }
        let indices = &by_dir[dir];
        let stems: Vec<String> = indices.iter().map(|&i| rules[i].stem.to_owned()).collect();
        let before: HashSet<String> = in_chain.clone();
        let given = names::allocate(&stems, &used_here, range, &mut in_chain);
        let mine = names_in.entry(dir.to_owned()).or_default();
        mine.extend(in_chain.difference(&before).cloned());
        for (&i, name) in indices.iter().zip(given) {
            out[i] = name;
        }
    }
    out
}
