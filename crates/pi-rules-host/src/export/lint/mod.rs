//! What `check` says about the instruction files of a project, those `export` wrote and those
//! written by hand, as each agent reads them:
//! - a file that holds more than its agent reads (PR901, `export-over-limit`), with the same
//!   limits `export` warns about (below, [`findings`]);
//! - rule text that reaches one agent from two files (PR902, [`copies`]);
//! - a file an agent reads in place of an exported one (PR903, [`hidden()`]);
//! - text inside an HTML comment of a rule exported to Claude Code, which strips comments
//!   (PR904, [`comments`]);
//! - `AGENTS.md` files from the root down to a directory that hold more than Codex joins
//!   (PR905, [`chain`]).
//!
//! Everything but [`findings`] is pure: the files come in as [`AgentFile`]s (text, and a path
//! from the project root), the findings go out as [`Diagnostic`]s whose `path` is that path and
//! whose span is into that text, so `export` can call the same functions on the bytes it is about
//! to write. `check` finds the files with the walk it already makes ([`is_agent_file`]) and reads
//! them bounded by [`super::MAX_TARGET_BYTES`].

pub mod chain;
pub mod comments;
pub mod copies;
pub mod hidden;
pub mod planned;
#[cfg(test)]
mod tests;

use super::{is_present, locate, read, targets, Target};
use pi_rules_core::lint::{Code, Diagnostic};
use std::path::Path;

pub use chain::chains_over_limit;
pub use comments::{claude_exported, exported_comments, rule_comments};
pub use copies::read_twice;
pub use hidden::hidden;

/// One instruction file of a project, as an agent reads it.
#[derive(Debug, Clone, Copy)]
pub struct AgentFile<'a> {
    /// From the project root, `/` between its parts (`packages/api/AGENTS.md`).
    pub path: &'a str,
    pub text: &'a str,
}

/// The file name Gemini CLI reads when `.gemini/settings.json` does not name others.
pub const GEMINI_DEFAULT: &str = "GEMINI.md";

/// Whether `check` must read the file at `path` (from the project root) for these findings: an
/// `AGENTS.md`, `AGENTS.override.md`, `CLAUDE.md` or `GEMINI.md` anywhere, a file Gemini CLI
/// reads by `gemini_names`, a target's file, and the scoped rule files of `.claude/rules`,
/// `.github/instructions` and `.clinerules`.
pub fn is_agent_file(path: &str, gemini_names: &[String]) -> bool {
    let name = file_name(path);
    matches!(
        name,
        "AGENTS.md" | "AGENTS.override.md" | "CLAUDE.md" | "GEMINI.md"
    ) || gemini_names.iter().any(|n| n == name)
        || (path.starts_with('.')
            && (Target::ALL.iter().any(|t| t.path() == path)
                || (path.starts_with(".claude/rules/") && path.ends_with(".md"))
                || (path.starts_with(".github/instructions/")
                    && path.ends_with(".instructions.md"))
                || path.starts_with(".clinerules/")))
}

/// The file names Gemini CLI reads, from the text of `.gemini/settings.json` (`None` when there
/// is none): `context.fileName`, a string or a list of strings, else `GEMINI.md`. Gemini CLI
/// takes its settings as JSON with comments (Gemini CLI docs, "Configuration": `context.fileName`
/// names "the context file(s)", `GEMINI.md` by default). A file that cannot be read as that gives
/// the default. Names with a `/` are left out: a name is looked for in every directory.
pub fn gemini_names(settings: Option<&str>) -> Vec<String> {
    let default = || vec![GEMINI_DEFAULT.to_owned()];
    let Some(text) = settings else {
        return default();
    };
    use pi_rules_core::value::Value;
    let Ok(document) = pi_rules_core::settings::jsonc::parse(text) else {
        return default();
    };
    let file_name = match &document.value {
        Value::Object(top) => match top.get("context") {
            Some(Value::Object(context)) => context.get("fileName"),
            _ => None,
        },
        _ => None,
    };
    let names: Vec<String> = match file_name {
        Some(Value::String(name)) => vec![name.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(name) => Some(name.clone()),
                _ => None,
            })
            .collect(),
        _ => return default(),
    };
    let names: Vec<String> = names
        .into_iter()
        .filter(|n| !n.is_empty() && !n.contains('/'))
        .take(64)
        .collect();
    if names.is_empty() {
        default()
    } else {
        names
    }
}

/// Every finding of this module on `files` but PR901's: copies, hidden exports, Codex's chains,
/// and comments in the exported files that Claude Code reads (those whose text is in
/// `reported`, comments already reported on a rule file, are left out).
pub fn project_findings(
    files: &[AgentFile<'_>],
    gemini_names: &[String],
    reported: &std::collections::HashSet<String>,
) -> Vec<Diagnostic> {
    let mut found = read_twice(files, gemini_names);
    found.extend(hidden(files));
    found.extend(chains_over_limit(files));
    for file in files {
        found.extend(exported_comments(file, reported));
    }
    found
}

/// One finding of [`project_findings`] as `export` prints it among its warnings:
/// `path:line:column: message` (`path: message` for a finding on a whole file), the line and
/// column from the text of the file in `files` it is on. Raw: the front end escapes it.
pub fn located_message(d: &Diagnostic, files: &[AgentFile<'_>]) -> String {
    let text = files
        .iter()
        .find(|f| f.path == d.path.as_str())
        .map(|f| f.text);
    match (text, &d.span) {
        (Some(text), Some(span)) => {
            let at = pi_rules_core::span::line_col(text, span.start);
            format!(
                "{}:{}:{}: {}",
                d.path.as_str(),
                at.line,
                at.column,
                d.message
            )
        }
        _ => format!("{}: {}", d.path.as_str(), d.message),
    }
}

/// The last part of `path`.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The directory of `path` (`""` for the root).
pub(crate) fn dir_of(path: &str) -> &str {
    path.rfind('/').map_or("", |at| &path[..at])
}

/// `dir` joined with `name` (`name` alone for the root).
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The directories from the root down to `dir`, both included: `""`, `a`, `a/b`.
pub(crate) fn chain_of(dir: &str) -> impl Iterator<Item = &str> {
    std::iter::once("").chain(
        dir.match_indices('/')
            .map(move |(at, _)| &dir[..at])
            .chain((!dir.is_empty()).then_some(dir)),
    )
}

/// The lines of `text` with their byte ranges (without the line break).
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    let mut start = 0;
    text.split_inclusive('\n').map(move |raw| {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let range = start..start + line.len();
        start += raw.len();
        (range, line)
    })
}

/// The path an `@path` import line names (`@AGENTS.md`, `@./docs/x.md`), as written: the line
/// trimmed is `@` and a path with no blank in it.
pub(crate) fn import_of(line: &str) -> Option<&str> {
    let path = line.trim().strip_prefix('@')?;
    (!path.is_empty() && !path.contains(char::is_whitespace)).then_some(path)
}

/// The path from the root of the file that `import`, written in the file at `from`, names:
/// relative to that file's directory, `./` and `../` resolved; `None` for an absolute path, one
/// from `~`, or one that climbs out of the root.
pub(crate) fn resolve_import(from: &str, import: &str) -> Option<String> {
    if import.starts_with('/') || import.starts_with('~') {
        return None;
    }
    let mut parts: Vec<&str> = dir_of(from).split('/').filter(|p| !p.is_empty()).collect();
    for part in import.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// A finding for each exported file under the project `root` that its agent would cut. Paths
/// are shown relative to `cwd` when under it. A target that is not present, or that cannot be
/// read, gives nothing here (`export` itself reports a file it cannot use).
pub fn findings(root: &Path, cwd: &Path) -> Vec<Diagnostic> {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut found = Vec::new();
    for target in Target::ALL {
        let Ok(located) = locate(root, target) else {
            continue;
        };
        let Ok(Some(bytes)) = read(&located) else {
            continue;
        };
        if !is_present(target, &bytes) {
            continue;
        }
        let Some(message) = targets::over_limit(target, &bytes, None) else {
            continue;
        };
        let path = root.join(target.path());
        let shown = path.strip_prefix(&cwd).unwrap_or(&path);
        let mut diagnostic =
            Diagnostic::new(Code::ExportOverLimit, shown.display().to_string(), None);
        diagnostic.message(message).help(
            "shorten the rules, leave out what this agent does not need, or move hand-written \
             text out of the file, then run `pi-rules export`",
        );
        found.push(diagnostic);
    }
    found
}
