//! Text inside an HTML comment of a rule exported to Claude Code (PR904,
//! `export-comment-dropped`). Claude Code takes HTML comments out of its memory files before the
//! model sees them, and keeps those inside code blocks (measured with Claude Code 2.1.332 for
//! issue 35: the export's markers never reached the model; Claude Code docs, "Manage Claude's
//! memory"). pi-rules' own markers and generated-by line go with no loss; any other comment with
//! text in it is a rule Claude Code never reads. The comments are found as `check`'s PR512 finds
//! them ([`pi_rules_core::lint::html_comments`]: closed, with more than blanks, outside code).

use super::{file_name, AgentFile};
use crate::export::{owned, section};
use pi_rules_core::lint::{html_comments, Code, Diagnostic};
use pi_rules_core::{frontmatter, rule_scope};
use std::collections::HashSet;
use std::ops::Range;

/// The directory of the files `export` writes for Claude Code's scoped rules.
const CLAUDE_RULES: &str = ".claude/rules/pi-rules/";

/// Whether `files` hold an export for Claude Code: a managed section in the root's `CLAUDE.md`,
/// or a file of `.claude/rules/pi-rules/` that pi-rules wrote.
pub fn claude_exported(files: &[AgentFile<'_>]) -> bool {
    files.iter().any(|f| claude_part(f).is_some())
}

/// The part of an exported file that Claude Code reads and pi-rules wrote: a `CLAUDE.md`'s
/// managed section (inside its markers), or what follows the generated-by line of a file of
/// `.claude/rules/pi-rules/`; `None` for any other file.
fn claude_part(file: &AgentFile<'_>) -> Option<Range<usize>> {
    let bytes = file.text.as_bytes();
    if file_name(file.path) == "CLAUDE.md" && !file.path.starts_with('.') {
        return section::find(bytes).ok().flatten().map(|found| found.inner);
    }
    if file.path.starts_with(CLAUDE_RULES) && file.path.ends_with(".md") && owned::is_ours(bytes) {
        let body = bytes.len() - owned::after_frontmatter(bytes).len();
        return Some(body..bytes.len());
    }
    None
}

/// The PR904 findings of one rule file of `.pi/rules` (its `path` as the report shows it): each
/// comment of its body, when the rule is for Claude Code (`agents:` leaves it out, or names it).
/// The caller knows the rule is exported to Claude Code ([`claude_exported`]).
pub fn rule_comments(path: &str, text: &str) -> Vec<Diagnostic> {
    if !text.contains("<!--") {
        return Vec::new();
    }
    let fm = frontmatter::split(text);
    if !rule_scope::parse(text, &fm).is_for_agent("claude") {
        return Vec::new();
    }
    html_comments(text, fm.body_start)
        .into_iter()
        .map(|span| {
            let mut d = Diagnostic::new(Code::ExportCommentDropped, path, Some(span.clone()));
            d.message(format!(
                "this rule is exported to Claude Code, which strips HTML comments: \"{}\" never \
                 reaches it",
                excerpt(&text[span])
            ))
            .label("Claude Code never reads this")
            .help("make the text visible (delete `<!--` and `-->`), or delete the comment");
            d
        })
        .collect()
}

/// The PR904 findings of an exported file that Claude Code reads (see `claude_part`): each
/// comment in the part pi-rules wrote whose normalised text is not in `reported` (those already
/// reported on the rule file they come from). Nothing for any other file.
pub fn exported_comments(file: &AgentFile<'_>, reported: &HashSet<String>) -> Vec<Diagnostic> {
    let Some(part) = claude_part(file) else {
        return Vec::new();
    };
    if !file.text[part.clone()].contains("<!--") {
        return Vec::new();
    }
    html_comments(file.text, part.start)
        .into_iter()
        .filter(|span| span.end <= part.end)
        .filter(|span| {
            let comment = &file.text[span.clone()];
            !comment.starts_with(owned::GENERATED)
                && !comment.starts_with(section::BEGIN)
                && !comment.starts_with(section::END)
                && !reported.contains(&normalise(comment))
        })
        .map(|span| {
            let mut d = Diagnostic::new(Code::ExportCommentDropped, file.path, Some(span.clone()));
            d.message(format!(
                "Claude Code strips HTML comments from `{}`: \"{}\" never reaches it",
                file_name(file.path),
                excerpt(&file.text[span])
            ))
            .label("Claude Code never reads this")
            .help(
                "make the text visible in the rule it comes from (or delete the comment), then \
                 run `pi-rules export` again",
            );
            d
        })
        .collect()
}

/// A comment's text with its words one space apart, to know it again in another file.
pub fn normalise(comment: &str) -> String {
    comment.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a comment says, for a message: its text between the markers, words one space apart, cut
/// after 60 characters.
fn excerpt(comment: &str) -> String {
    let inner = comment
        .strip_prefix("<!--")
        .and_then(|c| c.strip_suffix("-->"))
        .unwrap_or(comment);
    let words = normalise(inner);
    match words.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &words[..at]),
        None => words,
    }
}
