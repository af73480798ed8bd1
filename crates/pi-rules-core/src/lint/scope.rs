//! Checks on the scope of a rule (`paths:`, `agents:`, see [`crate::rule_scope`]) and on nested
//! rule directories (`packages/api/.pi/rules`): codes `PR1001` to `PR1008`.
//!
//! A rule file's own checks (`check`) need only its text: globs that cannot be used, a scope
//! past its bounds, unknown agents, globs some agent's format cannot hold, and, with scopes off
//! for pi, the keys that have no effect there yet. The checks across files need what the host
//! found: the nested directories (`check_nested`), and which globs matched no file of the
//! repository (`matches_nothing`), which the host learns by walking it once with all the
//! globs of the rules the linter hands it ([`ScopedRule`]).

use super::codes::Code;
use super::conditions::Context;
use super::diagnostic::{excerpt, file, FileDiagnostics, FilePath};
use super::files::is_rule_name;
use super::{Content, LayerInput};
use crate::layer::Layer;
use crate::rule_scope::{self, Decl, ProblemKind, RuleScope, MAX_ITEMS, MAX_ITEM_LEN};
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// The fix every "no effect in pi yet" finding gives.
const TURN_ON: &str = "turn scopes on with `[rules] scoped = true` in `.pi/pi-rules.toml`";

/// How an agent's rule format holds a rule's globs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobList {
    /// One value, cut at every comma: a glob cannot hold a comma.
    CommaSeparated,
    /// One value, cut at the commas outside `{}` and `[]`: a comma inside a brace stays.
    CommaSeparatedOutsideBraces,
    /// A list, one glob an item: any glob fits.
    List,
    /// One pattern: any glob fits.
    Single,
}

/// One agent's rule format, as far as globs go.
#[derive(Debug, Clone, Copy)]
pub struct AgentGlobs {
    /// The agent's name, as `agents:` writes it.
    pub agent: &'static str,
    /// How its documentation names it.
    pub display: &'static str,
    /// The frontmatter key that holds the globs.
    pub key: &'static str,
    pub list: GlobList,
}

/// The agents whose rule formats scope a rule with globs. Facts as each agent's documentation
/// gave them (December 2026); one source per row.
pub const AGENT_GLOBS: &[AgentGlobs] = &[
    // https://cursor.com/docs/context/rules (`.cursor/rules/*.mdc`): `globs` is one value of
    // comma-separated patterns (`globs: *.ts, *.tsx`), written so by Cursor's own rule editor.
    AgentGlobs {
        agent: "cursor",
        display: "Cursor",
        key: "globs",
        list: GlobList::CommaSeparated,
    },
    // https://docs.github.com/en/copilot/how-tos/configure-custom-instructions (path-specific
    // `.github/instructions/*.instructions.md`): `applyTo` is one string of comma-separated
    // patterns (`"**/*.ts,**/*.tsx"`); its examples keep braces whole (`"**/*.{ts,tsx}"`).
    AgentGlobs {
        agent: "copilot",
        display: "Copilot",
        key: "applyTo",
        list: GlobList::CommaSeparatedOutsideBraces,
    },
    // https://docs.windsurf.com/windsurf/cascade/memories (rules, activation mode "Glob"):
    // `trigger: glob` with `globs` holding comma-separated patterns (`*.js, src/**/*.ts`).
    AgentGlobs {
        agent: "windsurf",
        display: "Windsurf",
        key: "globs",
        list: GlobList::CommaSeparated,
    },
    // https://kiro.dev/docs/steering/ (inclusion modes): `inclusion: fileMatch` with one
    // `fileMatchPattern` string (`"components/**/*.tsx"`).
    AgentGlobs {
        agent: "kiro",
        display: "Kiro",
        key: "fileMatchPattern",
        list: GlobList::Single,
    },
    // https://code.claude.com/docs/en/memory (path-specific rules in `.claude/rules/`): `paths`
    // is a YAML list of globs, braces allowed (`"src/**/*.{ts,tsx}"`).
    AgentGlobs {
        agent: "claude",
        display: "Claude Code",
        key: "paths",
        list: GlobList::List,
    },
    // https://docs.cline.bot/features/cline-rules/conditional-rules: `paths` is an array of
    // globs (picomatch), `{a,b}` among the documented syntax.
    AgentGlobs {
        agent: "cline",
        display: "Cline",
        key: "paths",
        list: GlobList::List,
    },
];

/// A project or nested rule with globs that the host tries on the repository's files.
#[derive(Debug, Clone)]
pub struct ScopedRule {
    /// The rule file, as the report shows it.
    pub path: FilePath,
    /// The directory its globs are relative to, from the project directory, `/` between its
    /// parts: empty for the project directory's own `.pi/rules`.
    pub dir: String,
    /// Its usable globs, in order.
    pub globs: Vec<ScopeGlob>,
}

/// One usable glob of a [`ScopedRule`].
#[derive(Debug, Clone)]
pub struct ScopeGlob {
    pub text: String,
    /// Byte range in the rule file.
    pub span: Range<usize>,
}

/// A `.pi/rules` directory below the project directory, as the host listed it.
#[derive(Debug, Clone)]
pub struct NestedInput {
    /// The directory its rules are for, from the project directory, `/` between its parts
    /// (`packages/api`).
    pub dir: String,
    /// Its `.pi/rules` directory, as the report shows it.
    pub label: String,
    /// Its entries, listed and read as a project layer's (kind [`Layer::Project`]).
    pub layer: LayerInput,
}

/// Checks the scope of one rule file: `scope` as [`rule_scope::parse`] read it from `text`.
/// The spans of the globs a scope can use are pushed to `usable`.
pub(crate) fn check(
    cx: &Context<'_>,
    text: &str,
    scope: &RuleScope<'_>,
    out: &mut FileDiagnostics,
    usable: &mut Vec<Range<usize>>,
) {
    for problem in &scope.problems {
        over_bounds(text, problem.kind, problem.span.clone(), out);
    }
    if let Some(paths) = &scope.paths {
        for item in &paths.items {
            match rule_scope::compile_glob(item.text) {
                Ok(()) => {
                    usable.push(item.span.clone());
                    check_portable(item.text, item.span.clone(), out);
                }
                Err(err) => {
                    if let Some(d) = out.report(Code::InvalidGlob, Some(item.span.clone())) {
                        d.message(format!(
                            "glob `{}` cannot be used: {}",
                            excerpt(item.text, 60),
                            err.reason
                        ))
                        .label("not used")
                        .help("correct the glob, or delete it");
                        if item.text.trim_start().starts_with('!') {
                            d.note(NO_AGENT_NEGATES);
                        }
                    }
                }
            }
        }
    }
    if let Some(agents) = &scope.agents {
        for item in &agents.items {
            if rule_scope::is_known_agent(item.text) {
                continue;
            }
            if let Some(d) = out.report(Code::UnknownAgent, Some(item.span.clone())) {
                let help = match rule_scope::suggest_agent(item.text) {
                    Some(known) => format!("did you mean `{known}`?"),
                    None => format!("known agents: {}", rule_scope::KNOWN_AGENTS.join(", ")),
                };
                d.message(format!("unknown agent `{}`", excerpt(item.text, 40)))
                    .label("matches no agent")
                    .help(help);
            }
        }
    }
    if !cx.scoped {
        if let Some(paths) = scope.paths.as_ref().filter(|d| !d.items.is_empty()) {
            no_effect(
                text,
                "paths",
                paths,
                "pi puts this rule in every prompt",
                out,
            );
        }
        // A rule for `pi` among others is in pi's block either way.
        if let Some(agents) = scope.agents.as_ref().filter(|d| !d.items.is_empty()) {
            if !agents
                .items
                .iter()
                .any(|i| i.text.eq_ignore_ascii_case("pi"))
            {
                let label = "pi puts this rule in its prompt although it names other agents";
                no_effect(text, "agents", agents, label, out);
            }
        }
    }
}

/// A `paths:` or `agents:` past [`MAX_ITEMS`] items, or an item over [`MAX_ITEM_LEN`] bytes.
fn over_bounds(text: &str, kind: ProblemKind, span: Range<usize>, out: &mut FileDiagnostics) {
    let span = trim_line(text, span);
    let Some(d) = out.report(Code::ScopeOverBounds, Some(span)) else {
        return;
    };
    match kind {
        ProblemKind::TooManyItems { dropped } => {
            d.message(format!(
                "this key has more than {MAX_ITEMS} items: the {dropped} after the first \
                 {MAX_ITEMS} are not used"
            ))
            .label("too many items")
            .help("use fewer, broader globs (`src/api/**`), or split the rule");
        }
        ProblemKind::ItemTooLong => {
            d.message(format!(
                "an item of more than {MAX_ITEM_LEN} bytes is not used"
            ))
            .label("too long")
            .help("shorten it, or delete it");
        }
    }
}

/// The "no effect in pi yet" warning on a key's line.
fn no_effect(text: &str, key: &str, decl: &Decl<'_>, label: &str, out: &mut FileDiagnostics) {
    let line = trim_line(text, decl.line.clone());
    if let Some(d) = out.report(Code::ScopeHasNoEffect, Some(line)) {
        d.message(format!(
            "`{key}:` has no effect in pi yet: scopes are off for this project"
        ))
        .label(label.to_owned())
        .note("`export` honours it in other agents' files")
        .help(TURN_ON);
    }
}

/// What the finding on a negated glob adds: no agent can say it either.
const NO_AGENT_NEGATES: &str = "no agent `export` writes for can take a negation as a scope \
     either (Copilot CLI reads `!p` as every file that `p` does not match)";

/// The agents that match every glob without regard to case, and where that is from: Claude Code
/// matches `paths:` case-insensitively (measured with Claude Code 2.1.332, issue 35), and Copilot
/// in VS Code matches `applyTo` so too (issue 35, from its sources).
const CASELESS: &str = "Claude Code and Copilot in VS Code";

/// The agents whose formats cannot hold `glob` as it is, or cannot match it as we do, when there
/// are any: a comma some agents cut at, a negated class (`[!x]`) that Claude Code matches
/// nothing with, upper-case letters where Claude Code and Copilot in VS Code ignore case.
fn check_portable(glob: &str, span: Range<usize>, out: &mut FileDiagnostics) {
    check_comma(glob, span.clone(), out);
    check_negated_class(glob, span.clone(), out);
    check_case(glob, span, out);
}

/// A negated character class (`[!x]`, `[^x]`): Claude Code expands the glob for the `ignore`
/// package, where such a class matches nothing (measured with Claude Code 2.1.332, issue 35).
fn check_negated_class(glob: &str, span: Range<usize>, out: &mut FileDiagnostics) {
    let Some(at) = glob.find("[!").or_else(|| glob.find("[^")) else {
        return;
    };
    let Some(d) = out.report(Code::GlobNotPortable, Some(span.clone())) else {
        return;
    };
    let class = span.start + at;
    d.message(format!(
        "glob `{}` has a negated class, which Claude Code's `paths` match nothing with: the rule \
         never reaches Claude Code for it",
        excerpt(glob, 60)
    ))
    .label("matches nothing in Claude Code")
    .secondary(class..class + 2, "negated class")
    .help("list the characters the class allows (`[abc]`) instead of those it leaves out");
}

/// Upper-case letters: we match case-sensitively, the agents of [`CASELESS`] do not, so there
/// the glob also matches the paths that differ from it only in case.
fn check_case(glob: &str, span: Range<usize>, out: &mut FileDiagnostics) {
    let Some(at) = glob.find(|c: char| c.is_uppercase()) else {
        return;
    };
    let Some(d) = out.report(Code::GlobNotPortable, Some(span.clone())) else {
        return;
    };
    let upper = span.start + at;
    let width = glob[at..].chars().next().map_or(1, char::len_utf8);
    d.message(format!(
        "glob `{}` tells upper from lower case, but {CASELESS} match globs without regard to \
         case: there it also matches paths that differ from it only in case",
        excerpt(glob, 60)
    ))
    .label("case-insensitive in those agents")
    .secondary(upper..upper + width, "upper case")
    .help(
        "nothing to do unless the repository holds paths that differ only in case; then name \
         them by a part that differs in more than case",
    );
}

/// A comma: the agents whose formats cut a glob's value at commas.
fn check_comma(glob: &str, span: Range<usize>, out: &mut FileDiagnostics) {
    let Some(first) = glob.find(',') else {
        return;
    };
    let outside = comma_outside_braces(glob);
    let cut: Vec<&AgentGlobs> = AGENT_GLOBS
        .iter()
        .filter(|a| match a.list {
            GlobList::CommaSeparated => true,
            GlobList::CommaSeparatedOutsideBraces => outside,
            GlobList::List | GlobList::Single => false,
        })
        .collect();
    if cut.is_empty() {
        return;
    }
    let names: Vec<String> = cut
        .iter()
        .map(|a| format!("{}'s `{}`", a.display, a.key))
        .collect();
    let comma = span.start + first;
    let Some(d) = out.report(Code::GlobNotPortable, Some(span)) else {
        return;
    };
    d.message(format!(
        "glob `{}` cannot be written as one glob in {}: {}",
        excerpt(glob, 60),
        join_words(&names),
        if cut.len() == 1 {
            "it cuts its value at commas"
        } else {
            "they cut their value at commas"
        }
    ))
    .label("holds a comma")
    .secondary(comma..comma + 1, "cut here");
    match brace_alternatives(glob) {
        Some(alternatives) => {
            let list: Vec<String> = alternatives.iter().map(|g| format!("`{g}`")).collect();
            d.help(format!(
                "write it as separate globs for those agents: {}",
                list.join(", ")
            ));
        }
        None => {
            d.help("write it as separate globs without a comma for those agents");
        }
    }
}

/// Whether `glob` has a comma outside `{}` and `[]`.
fn comma_outside_braces(glob: &str) -> bool {
    let mut depth = 0usize;
    for b in glob.bytes() {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// The globs that a glob with one `{a,b}` (no other brace, nothing nested, no escape) stands
/// for; `None` for anything else.
fn brace_alternatives(glob: &str) -> Option<Vec<String>> {
    if glob.contains('\\') || glob.contains('[') {
        return None;
    }
    let open = glob.find('{')?;
    let close = open + glob[open..].find('}')?;
    let (before, inner, after) = (&glob[..open], &glob[open + 1..close], &glob[close + 1..]);
    if inner.contains('{') || after.contains(['{', '}']) || before.contains('}') {
        return None;
    }
    let alternatives: Vec<String> = inner
        .split(',')
        .map(|part| format!("{before}{part}{after}"))
        .collect();
    (alternatives.len() > 1 && alternatives.len() <= 8).then_some(alternatives)
}

/// `a`, `a and b`, `a, b and c`.
fn join_words(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// `range` without a trailing `\r`.
fn trim_line(text: &str, range: Range<usize>) -> Range<usize> {
    if text.get(range.clone()).is_some_and(|l| l.ends_with('\r')) {
        range.start..range.end - 1
    } else {
        range
    }
}

/// Reports glob `glob` of `rule` as matching no file of the repository.
pub(crate) fn matches_nothing(
    rule: &ScopedRule,
    glob: usize,
    files: &mut IndexMap<FilePath, FileDiagnostics>,
) {
    let Some(item) = rule.globs.get(glob) else {
        return;
    };
    let out = file(files, &rule.path);
    let Some(d) = out.report(Code::GlobMatchesNothing, Some(item.span.clone())) else {
        return;
    };
    let place = if rule.dir.is_empty() {
        "the repository".to_owned()
    } else {
        format!("`{}`", excerpt(&rule.dir, 80))
    };
    d.message(format!(
        "glob `{}` matches no file of {place}",
        excerpt(&item.text, 60)
    ))
    .label("matches nothing")
    .note("files that `.gitignore` ignores are not counted")
    .help("correct the glob, or delete it if the files are gone");
}

/// The checks on nested rule directories: with scopes off, each directory has no effect in pi
/// yet; a nested rule that replaces a rule of the same name (of a nested directory above it,
/// else of the project directory's layers, `roots`) says which.
pub(crate) fn check_nested(
    scoped: bool,
    roots: &[&LayerInput],
    nested: &[NestedInput],
    files: &mut IndexMap<FilePath, FileDiagnostics>,
) {
    if nested.is_empty() {
        return;
    }
    // The copy of each name the project directory loads: the highest layer's.
    let mut root: HashMap<&str, (Layer, &str)> = HashMap::new();
    for layer in roots {
        for entry in layer
            .entries
            .iter()
            .filter(|e| is_candidate(&e.content, &e.name))
        {
            let slot = root
                .entry(entry.name.as_str())
                .or_insert((layer.kind, entry.path.as_str()));
            if layer.kind >= slot.0 {
                *slot = (layer.kind, entry.path.as_str());
            }
        }
    }
    // Each nested directory's names, by directory.
    let mut by_dir: HashMap<&str, (HashSet<&str>, &NestedInput)> = HashMap::new();
    for dir in nested {
        let names = dir
            .layer
            .entries
            .iter()
            .filter(|e| is_candidate(&e.content, &e.name))
            .map(|e| e.name.as_str())
            .collect();
        by_dir.insert(dir.dir.as_str(), (names, dir));
    }
    for dir in nested {
        if !scoped {
            let out = file(files, &dir.label);
            if let Some(d) = out.report(Code::NestedRulesHaveNoEffect, None) {
                d.message(format!(
                    "the rules in `{}` do not reach pi yet: scopes are off for this project",
                    excerpt(&dir.label, 80)
                ))
                .note("pi reads them only when it is started in that directory")
                .help(TURN_ON);
            }
        }
        for entry in dir
            .layer
            .entries
            .iter()
            .filter(|e| is_candidate(&e.content, &e.name))
        {
            let above = ancestors(&dir.dir).find_map(|up| {
                let (names, input) = by_dir.get(up)?;
                names.contains(entry.name.as_str()).then(|| {
                    let path = input
                        .layer
                        .entries
                        .iter()
                        .find(|e| e.name == entry.name)
                        .map_or(input.label.as_str(), |e| e.path.as_str());
                    format!("`{}` (nested directory `{up}`)", excerpt(path, 80))
                })
            });
            let replaced = above.or_else(|| {
                root.get(entry.name.as_str()).map(|(layer, path)| {
                    format!("`{}` ({} layer)", excerpt(path, 80), layer.as_str())
                })
            });
            let Some(replaced) = replaced else {
                continue;
            };
            let out = file(files, &entry.path);
            if let Some(d) = out.report(Code::NestedRuleReplaces, None) {
                d.message(format!(
                    "this rule replaces {replaced} for files in `{}`",
                    excerpt(&dir.dir, 80)
                ))
                .help("nothing to do if it is meant; otherwise give it a name of its own");
            }
        }
    }
}

/// Whether an entry is a rule the loader would take or stop at.
fn is_candidate(content: &Content, name: &str) -> bool {
    is_rule_name(name)
        && matches!(
            content,
            Content::Bytes(_) | Content::Checked { .. } | Content::Oversized { .. }
        )
}

/// The directories above `dir` (`a/b/c`: `a/b`, then `a`), nearest first: `dir` is a path
/// from the project directory with `/` between its parts, as [`ScopedRule::dir`] is.
pub fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let mut rest = dir;
    std::iter::from_fn(move || {
        let cut = rest.rfind('/')?;
        rest = &rest[..cut];
        Some(rest)
    })
}

#[cfg(test)]
mod tests;
