//! What scopes did to an assembly (`pi_rules_host::scoped::ScopeReport`), as JSON (a member of
//! `assemble`'s and `explain`'s JSON forms) and as text (`explain`'s last section).

use crate::terminal::escape;
use pi_rules_host::scoped::{PathRules, ScopeReport, ScopedRule};
use serde::Serialize;
use std::io::{self, Write};

/// The JSON form: `{"agent", "paths", "nested_dirs", "rules": [...]}`.
#[derive(Serialize)]
pub struct ScopeJson<'a> {
    agent: &'a str,
    paths: &'a [String],
    nested_dirs: Vec<std::borrow::Cow<'a, str>>,
    rules: Vec<RuleJson<'a>>,
}

#[derive(Serialize)]
struct RuleJson<'a> {
    name: &'a str,
    layer: &'a str,
    path: Option<std::borrow::Cow<'a, str>>,
    dir: std::borrow::Cow<'a, str>,
    nested: bool,
    paths: &'a [String],
    agents: &'a [String],
    applies: bool,
    why: &'static str,
    reason: String,
}

impl<'a> ScopeJson<'a> {
    pub fn new(report: &'a ScopeReport) -> ScopeJson<'a> {
        ScopeJson {
            agent: &report.agent,
            paths: &report.paths,
            nested_dirs: report
                .nested_dirs
                .iter()
                .map(|d| d.to_string_lossy())
                .collect(),
            rules: report
                .rules
                .iter()
                .map(|rule| RuleJson {
                    name: &rule.name,
                    layer: rule.layer.as_str(),
                    path: rule.path.as_ref().map(|p| p.to_string_lossy()),
                    dir: rule.dir.to_string_lossy(),
                    nested: rule.nested,
                    paths: &rule.globs,
                    agents: &rule.agents,
                    applies: rule.applies,
                    why: rule.why.tag(),
                    reason: rule.why.describe(&report.agent, &|s| s.to_owned()),
                })
                .collect(),
        }
    }
}

/// `explain`'s scope section: the agent and files, then each scoped rule, in or out, and why.
pub fn write_text(report: &ScopeReport, out: &mut dyn Write) -> io::Result<()> {
    let quote = |s: &str| escape(s).into_owned();
    write!(out, "scopes for agent {}", quote(&report.agent))?;
    if report.paths.is_empty() {
        writeln!(out, ", no file given")?;
    } else {
        let files: Vec<String> = report.paths.iter().map(|p| quote(p)).collect();
        writeln!(out, ", files {}", files.join(", "))?;
    }
    for dir in &report.nested_dirs {
        writeln!(out, "  nested {}", quote(&dir.display().to_string()))?;
    }
    if report.rules.is_empty() {
        return writeln!(out, "  no scoped rule");
    }
    for rule in &report.rules {
        writeln!(
            out,
            "  {} {}{}: {}",
            if rule.applies { "in " } else { "out" },
            quote(&label(rule)),
            scope_words(rule, &quote),
            rule.why.describe(&report.agent, &quote)
        )?;
    }
    Ok(())
}

/// The rule's file (its name for an embedded rule).
fn label(rule: &ScopedRule) -> String {
    match &rule.path {
        Some(path) => path.display().to_string(),
        None => format!("{} ({})", rule.name, rule.layer.as_str()),
    }
}

/// ` [paths: a, b; agents: c]`, or nothing for a rule with neither.
fn scope_words(rule: &ScopedRule, quote: &dyn Fn(&str) -> String) -> String {
    let mut parts = Vec::new();
    if !rule.globs.is_empty() {
        let globs: Vec<String> = rule.globs.iter().map(|g| quote(g)).collect();
        parts.push(format!("paths: {}", globs.join(", ")));
    }
    if !rule.agents.is_empty() {
        let agents: Vec<String> = rule.agents.iter().map(|a| quote(a)).collect();
        parts.push(format!("agents: {}", agents.join(", ")));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" [{}]", parts.join("; "))
    }
}

/// `serve`'s `rules_for_paths` result: `{"scoped", "rules": [...], "notes", "elapsed_us"}`
/// (`docs/serve.md`).
pub fn write_path_rules(scoped: bool, answer: &PathRules, elapsed_us: u128, body: &mut Vec<u8>) {
    #[derive(Serialize)]
    struct Answer<'a> {
        scoped: bool,
        rules: Vec<Rule<'a>>,
        notes: &'a [String],
        elapsed_us: u128,
    }
    #[derive(Serialize)]
    struct Rule<'a> {
        name: &'a str,
        layer: &'a str,
        path: Option<std::borrow::Cow<'a, str>>,
        dir: std::borrow::Cow<'a, str>,
        matched: MatchedJson<'a>,
        text: &'a str,
    }
    #[derive(Serialize)]
    struct MatchedJson<'a> {
        path: &'a str,
        glob: Option<&'a str>,
    }
    let answer = Answer {
        scoped,
        rules: answer
            .rules
            .iter()
            .map(|m| Rule {
                name: &m.name,
                layer: m.layer.as_str(),
                path: m.path.as_ref().map(|p| p.to_string_lossy()),
                dir: m.dir.to_string_lossy(),
                matched: MatchedJson {
                    path: &m.file,
                    glob: m.glob.as_deref(),
                },
                text: &m.text,
            })
            .collect(),
        notes: &answer.notes,
        elapsed_us,
    };
    // Serialising plain data into a buffer cannot fail.
    let _ = serde_json::to_writer(&mut *body, &answer);
}
