//! Rule text that reaches one agent from two files (PR902, `export-read-twice`).
//!
//! Which files each agent reads together, and where each fact is from:
//! - Copilot (CLI 1.0.102, measured for issue 35 with a recording model server): the root's
//!   `.github/copilot-instructions.md`, every `AGENTS.md`, `CLAUDE.md` and `GEMINI.md` (nested
//!   ones too), `.github/instructions/*.instructions.md` (its own scoped files), and
//!   `.claude/rules/*.md` honouring `paths:`, where a pattern with a leading `/` matches nothing
//!   (so a file whose patterns all start with `/` never reaches it). It leaves out a file byte for
//!   byte the same as one it has read, and nothing else. It follows an `@AGENTS.md` line, not
//!   `@./AGENTS.md`.
//! - Cline (3.0.65, measured for issue 35): every file of `.clinerules/`, and `AGENTS.md`.
//! - Claude Code (2.1.332, measured for issue 35; Claude Code docs, "Manage Claude's memory"):
//!   `CLAUDE.md` from the root down to the directory it works in, `AGENTS.md` in a directory
//!   only when it has no `CLAUDE.md`, `.claude/rules/**/*.md`, and the files an `@path` line
//!   imports (`@AGENTS.md` and `@./AGENTS.md` alike).
//! - Codex (0.171.0, measured for issue 35; Codex docs, "AGENTS.md", discovery): the
//!   `AGENTS.md` of each directory from the repository root down to its working directory, or
//!   `AGENTS.override.md` where there is one; no imports.
//! - Gemini CLI (0.61.0, measured for issue 35; Gemini CLI docs, "Configuration" and "Memory
//!   Import Processor"): every file named `GEMINI.md`, or as `context.fileName` in
//!   `.gemini/settings.json` says, in the working directory, above it and below it; and what an
//!   `@path` line imports.
//!
//! A "rule" here is a paragraph (lines between blank lines) of at least [`MIN_PARAGRAPH`]
//! characters once spaces and line breaks are made one space, that is not a heading line alone;
//! and the text of a managed section as a whole. Each file's pieces are made once, and each set
//! of files an agent reads together is one pass over its pieces with a hash map: linear in the
//! text read, times the depth of the deepest directory chain.

use super::{chain_of, dir_of, file_name, import_of, join, lines, resolve_import, AgentFile};
use crate::export::{owned, section};
use pi_rules_core::lint::{Code, Diagnostic};
use pi_rules_core::span::line_col;
use pi_rules_core::{frontmatter, rule_scope};
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// A paragraph shorter than this, once normalised, is not compared: short lines (`---`, "See
/// below.") repeat by chance.
pub const MIN_PARAGRAPH: usize = 24;

/// One piece of a file that is compared.
struct Unit {
    /// The normalised text (a section's, with a `\u{1}` before it).
    key: String,
    span: Range<usize>,
    /// A paragraph (else a whole section): what the finding counts.
    paragraph: bool,
}

/// How an agent treats an `@path` line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Imports {
    None,
    All,
    /// Not a path that starts with `./` (Copilot).
    NotDotSlash,
}

/// One file an agent reads: directly, or through an import line of another file.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Read {
    file: usize,
    /// The importing file and its import line.
    via: Option<(usize, Range<usize>)>,
}

/// The files one agent reads together, directly.
struct ReadSet {
    agent: &'static str,
    imports: Imports,
    files: Vec<usize>,
}

/// A pair of reads of one agent that share rules: the first place of the first shared one in
/// each, and how many paragraphs they share.
struct Pair {
    agent: &'static str,
    first: (Read, Range<usize>),
    second: (Read, Range<usize>),
    paragraphs: usize,
}

/// The PR902 findings of `files`: once for each pair of files, naming every agent that reads
/// both, at the first rule that reaches it from both, on the file read second (at its import
/// line when it was imported).
/// `gemini_names` are the file names Gemini CLI reads ([`super::gemini_names`]).
pub fn read_twice(files: &[AgentFile<'_>], gemini_names: &[String]) -> Vec<Diagnostic> {
    let units: Vec<Vec<Unit>> = files.iter().map(|f| units(f.text)).collect();
    let index: HashMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.path, i)).collect();
    let mut pairs: Vec<Pair> = Vec::new();
    let mut seen = HashMap::new();
    for (number, set) in read_sets(files, gemini_names).iter().enumerate() {
        let reads = expand(set, files, &index);
        compare((number, set.agent), &reads, &units, &mut pairs, &mut seen);
    }
    // One finding for a pair of reads, naming every agent that makes it.
    let mut grouped: Vec<(Vec<&'static str>, &Pair)> = Vec::new();
    let mut at: HashMap<(&Read, &Read), usize> = HashMap::new();
    for pair in &pairs {
        match at.get(&(&pair.first.0, &pair.second.0)) {
            Some(&i) => {
                if !grouped[i].0.contains(&pair.agent) {
                    grouped[i].0.push(pair.agent);
                }
            }
            None => {
                at.insert((&pair.first.0, &pair.second.0), grouped.len());
                grouped.push((vec![pair.agent], pair));
            }
        }
    }
    grouped
        .iter()
        .map(|(agents, pair)| diagnostic(agents, pair, files))
        .collect()
}

/// The files each agent reads together.
fn read_sets(files: &[AgentFile<'_>], gemini_names: &[String]) -> Vec<ReadSet> {
    let mut sets = Vec::new();
    // Copilot: one set, byte-identical files once.
    let mut texts: HashSet<&str> = HashSet::new();
    let copilot = (0..files.len())
        .filter(|&i| copilot_reads(&files[i]) && texts.insert(files[i].text))
        .collect();
    sets.push(ReadSet {
        agent: "Copilot",
        imports: Imports::NotDotSlash,
        files: copilot,
    });
    // Cline: `.clinerules/` and the root's `AGENTS.md`.
    let cline = (0..files.len())
        .filter(|&i| files[i].path.starts_with(".clinerules/") || files[i].path == "AGENTS.md")
        .collect();
    sets.push(ReadSet {
        agent: "Cline",
        imports: Imports::None,
        files: cline,
    });
    let by_path: HashMap<&str, usize> =
        files.iter().enumerate().map(|(i, f)| (f.path, i)).collect();
    // Claude Code: per deepest directory, its chain of `CLAUDE.md` (else `AGENTS.md`), and
    // `.claude/rules`. With a `.claude/CLAUDE.md` (read as the root's memory), it reads no
    // `AGENTS.md`, the root's nor a nested one after a read there (measured with Claude Code
    // 2.1.332 in tests/agents, with and without a root `CLAUDE.md`).
    let dot_claude = by_path.get(crate::export::CLAUDE_DOT_PATH).copied();
    let claude_rules: Vec<usize> = (0..files.len())
        .filter(|&i| is_claude_rule(files[i].path))
        .chain(dot_claude)
        .collect();
    let claude_leaves = leaves(files, &["CLAUDE.md", "AGENTS.md"]);
    if claude_leaves.is_empty() && !claude_rules.is_empty() {
        sets.push(ReadSet {
            agent: "Claude Code",
            imports: Imports::All,
            files: claude_rules.clone(),
        });
    }
    for leaf in claude_leaves {
        let mut chain: Vec<usize> = chain_of(leaf)
            .filter_map(|dir| {
                let claude = by_path.get(join(dir, "CLAUDE.md").as_str()).copied();
                claude.or_else(|| {
                    dot_claude
                        .is_none()
                        .then(|| by_path.get(join(dir, "AGENTS.md").as_str()).copied())
                        .flatten()
                })
            })
            .collect();
        chain.extend(&claude_rules);
        sets.push(ReadSet {
            agent: "Claude Code",
            imports: Imports::All,
            files: chain,
        });
    }
    // Codex: per deepest directory, its chain of `AGENTS.override.md` (else `AGENTS.md`).
    for leaf in leaves(files, &["AGENTS.md", "AGENTS.override.md"]) {
        let chain = chain_of(leaf)
            .filter_map(|dir| {
                let over = by_path
                    .get(join(dir, "AGENTS.override.md").as_str())
                    .copied();
                over.or_else(|| by_path.get(join(dir, "AGENTS.md").as_str()).copied())
            })
            .collect();
        sets.push(ReadSet {
            agent: "Codex",
            imports: Imports::None,
            files: chain,
        });
    }
    // Gemini CLI: every file of its names.
    let gemini = (0..files.len())
        .filter(|&i| {
            let name = file_name(files[i].path);
            gemini_names.iter().any(|n| n == name) && !files[i].path.starts_with('.')
        })
        .collect();
    sets.push(ReadSet {
        agent: "Gemini CLI",
        imports: Imports::All,
        files: gemini,
    });
    sets
}

/// Whether Copilot reads `file` with the others.
fn copilot_reads(file: &AgentFile<'_>) -> bool {
    let path = file.path;
    path == ".github/copilot-instructions.md"
        || (path.starts_with(".github/instructions/") && path.ends_with(".instructions.md"))
        || (matches!(file_name(path), "AGENTS.md" | "CLAUDE.md" | "GEMINI.md")
            && !path.starts_with('.'))
        || (is_claude_rule(path) && !anchored_only(file.text))
}

/// A file of `.claude/rules`.
fn is_claude_rule(path: &str) -> bool {
    path.starts_with(".claude/rules/") && path.ends_with(".md")
}

/// Whether a rule file's `paths:` has patterns and all start with `/`: Copilot matches nothing
/// with them.
fn anchored_only(text: &str) -> bool {
    let fm = frontmatter::split(text);
    let scope = rule_scope::parse(text, &fm);
    scope.has_paths() && scope.globs().all(|g| g.trim().starts_with('/'))
}

/// The directories that hold one of `names` and none of whose subdirectories do: the chain to
/// each holds every shorter chain.
fn leaves<'a>(files: &[AgentFile<'a>], names: &[&str]) -> Vec<&'a str> {
    let dirs: HashSet<&str> = files
        .iter()
        .filter(|f| names.contains(&file_name(f.path)) && !f.path.starts_with('.'))
        .map(|f| dir_of(f.path))
        .collect();
    let mut inner: HashSet<&str> = HashSet::new();
    for dir in &dirs {
        let mut up = chain_of(dir).collect::<Vec<_>>();
        up.pop();
        inner.extend(up);
    }
    let mut leaves: Vec<&str> = dirs.into_iter().filter(|d| !inner.contains(d)).collect();
    leaves.sort_unstable();
    leaves
}

/// The reads of a set: each file, then the files its import lines name (one level), as the
/// agent follows them.
fn expand(set: &ReadSet, files: &[AgentFile<'_>], index: &HashMap<&str, usize>) -> Vec<Read> {
    let mut reads = Vec::with_capacity(set.files.len());
    for &file in &set.files {
        reads.push(Read { file, via: None });
        if set.imports == Imports::None {
            continue;
        }
        for (span, line) in lines(files[file].text) {
            let Some(import) = import_of(line) else {
                continue;
            };
            if set.imports == Imports::NotDotSlash && import.starts_with("./") {
                continue;
            }
            let Some(target) = resolve_import(files[file].path, import) else {
                continue;
            };
            if let Some(&imported) = index.get(target.as_str()) {
                if imported != file {
                    reads.push(Read {
                        file: imported,
                        via: Some((file, span)),
                    });
                }
            }
        }
    }
    reads
}

/// Finds the pieces that two reads of set number `set` share, adding a [`Pair`] for each new
/// pair of reads (`seen` keeps them across sets, so a pair found again in another agent's set
/// of the same agent, a longer chain, is neither reported nor counted twice).
fn compare(
    (set, agent): (usize, &'static str),
    reads: &[Read],
    units: &[Vec<Unit>],
    pairs: &mut Vec<Pair>,
    seen: &mut HashMap<(&'static str, Read, Read), (usize, usize)>,
) {
    let mut first: HashMap<&str, (usize, &Unit)> = HashMap::new();
    for (r, read) in reads.iter().enumerate() {
        for unit in &units[read.file] {
            let Some(&(earlier, earlier_unit)) = first.get(unit.key.as_str()) else {
                first.insert(&unit.key, (r, unit));
                continue;
            };
            let before = &reads[earlier];
            if before.file == read.file && before.via == read.via {
                // The same file says it twice: not two files.
                continue;
            }
            let key = (agent, before.clone(), read.clone());
            match seen.get(&key) {
                Some(&(at, found_in)) => {
                    if found_in == set && unit.paragraph {
                        pairs[at].paragraphs += 1;
                    }
                }
                None => {
                    seen.insert(key, (pairs.len(), set));
                    pairs.push(Pair {
                        agent,
                        first: (before.clone(), earlier_unit.span.clone()),
                        second: (read.clone(), unit.span.clone()),
                        paragraphs: usize::from(unit.paragraph),
                    });
                }
            }
        }
    }
}

/// The pieces of `text` that are compared.
fn units(text: &str) -> Vec<Unit> {
    let start = text.len() - owned::after_frontmatter(text.as_bytes()).len();
    let mut units = Vec::new();
    let mut paragraph: Option<(Range<usize>, Vec<&str>)> = None;
    let close = |paragraph: &mut Option<(Range<usize>, Vec<&str>)>, units: &mut Vec<Unit>| {
        let Some((span, parts)) = paragraph.take() else {
            return;
        };
        if parts.len() == 1 && parts[0].starts_with('#') {
            return;
        }
        let key = normalise(parts.iter().copied());
        if key.chars().count() >= MIN_PARAGRAPH {
            units.push(Unit {
                key,
                span,
                paragraph: true,
            });
        }
    };
    for (span, line) in lines(text) {
        if span.start < start {
            continue;
        }
        let trimmed = line.trim();
        let apart = trimmed.is_empty()
            || trimmed.starts_with(section::BEGIN)
            || trimmed.starts_with(section::END)
            || trimmed.starts_with(owned::GENERATED)
            || import_of(trimmed).is_some();
        if apart {
            close(&mut paragraph, &mut units);
            continue;
        }
        match &mut paragraph {
            Some((range, parts)) => {
                range.end = span.end;
                parts.push(trimmed);
            }
            None => paragraph = Some((span, vec![trimmed])),
        }
    }
    close(&mut paragraph, &mut units);
    if let Ok(Some(found)) = section::find(text.as_bytes()) {
        let inner = &text[found.inner.clone()];
        let words = lines(inner)
            .map(|(_, line)| line)
            .filter(|line| import_of(line).is_none());
        let key = normalise(words);
        if key.chars().count() >= MIN_PARAGRAPH {
            units.push(Unit {
                key: format!("\u{1}{key}"),
                span: found.inner.start..found.inner.start,
                paragraph: false,
            });
        }
    }
    units
}

/// The words of `parts`, one space between each.
fn normalise<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for word in parts.flat_map(str::split_whitespace) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// How a read is named in a message.
fn describe(read: &Read, files: &[AgentFile<'_>]) -> String {
    let path = files[read.file].path;
    match &read.via {
        None => format!("`{path}`"),
        Some((from, line)) => {
            let from = &files[*from];
            format!(
                "`{path}` (through `{}` in `{}`)",
                from.text[line.clone()].trim(),
                from.path
            )
        }
    }
}

/// The finding of one pair.
fn diagnostic(agents: &[&str], pair: &Pair, files: &[AgentFile<'_>]) -> Diagnostic {
    let (first, first_span) = &pair.first;
    let (second, second_span) = &pair.second;
    let (at_file, at_span) = match &second.via {
        Some((from, line)) => (*from, line.clone()),
        None => (second.file, second_span.clone()),
    };
    let first_file = &files[first.file];
    let line = line_col(first_file.text, first_span.start).line;
    let who = match agents {
        [one] => format!("{one} reads"),
        [init @ .., last] => format!("{} and {last} read", init.join(", ")),
        [] => "an agent reads".to_owned(),
    };
    let mut d = Diagnostic::new(Code::ExportReadTwice, files[at_file].path, Some(at_span));
    d.message(format!(
        "{who} the same rule text from {} and from {}",
        describe(first, files),
        describe(second, files)
    ))
    .label(format!("also in `{}` (line {line})", first_file.path));
    if pair.paragraphs > 1 {
        d.note(format!(
            "{} paragraphs reach {} from both",
            pair.paragraphs, pair.agent
        ));
    }
    d.help(
        "keep each rule in one of the files these agents read: export with `--pointer`, leave \
         out a target whose agent reads another of these files, or delete the hand-written copy",
    );
    d
}
