//! Import then export, through the binary: for each project of the import corpus
//! (`tests/fixtures/import-corpus/`) and each agent whose files it holds, the agent's files are
//! imported (`pi-rules import --project`), taken out, and exported again for that agent
//! (`pi-rules export TARGET`). Then every rule's text comes back, every path scope comes back
//! as one that the agent matches on the same files (each side read with a model of that agent's
//! own matcher, written here from the facts of issue 35, not with pi-rules' dialect code), every
//! always-on rule comes back always on, and a second export changes nothing.

use crate::common::{code, files_below, stderr, stdout, World};
use crate::import::corpus_projects;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// How an agent matches a pattern against a path relative to the project root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    /// Claude Code: braces expanded, one trailing `/**` stripped, then gitignore-style (the
    /// `ignore` package), case ignored; a path matches when it or a folder above it does.
    Claude,
    /// Copilot CLI (`globset`), and Cursor and Windsurf as approximated the same way: a pattern
    /// without a slash matches the file name at any depth, one with a slash the whole path;
    /// case-sensitive; `*` does not cross `/`.
    NameAnyDepth,
    /// Kiro (minimatch) and Cline (picomatch): the whole path, case-sensitive.
    WholePath,
    /// No globs: files read whole, in the directory they lie in.
    Plain,
}

/// An agent whose files a corpus project may hold, and the export target that writes them.
struct Agent {
    target: &'static str,
    model: Model,
    /// The frontmatter key its scoped files give globs in.
    key: &'static str,
    /// Whether a project file (relative, `/`-separated) is one of this agent's.
    owns: fn(&str) -> bool,
}

fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

const AGENTS: &[Agent] = &[
    Agent {
        target: "claude",
        model: Model::Claude,
        key: "paths",
        owns: |p| {
            (p.starts_with(".claude/rules/") && p.ends_with(".md")) || name_of(p) == "CLAUDE.md"
        },
    },
    Agent {
        target: "copilot",
        model: Model::NameAnyDepth,
        key: "applyTo",
        owns: |p| {
            (p.starts_with(".github/instructions/") && p.ends_with(".instructions.md"))
                || p == ".github/copilot-instructions.md"
        },
    },
    Agent {
        target: "cursor",
        model: Model::NameAnyDepth,
        key: "globs",
        owns: |p| p.starts_with(".cursor/rules/") || p == ".cursorrules",
    },
    Agent {
        target: "windsurf",
        model: Model::NameAnyDepth,
        key: "globs",
        owns: |p| p.starts_with(".windsurf/rules/") || p == ".windsurfrules",
    },
    Agent {
        target: "kiro",
        model: Model::WholePath,
        key: "fileMatchPattern",
        owns: |p| p.starts_with(".kiro/steering/"),
    },
    Agent {
        target: "cline",
        model: Model::WholePath,
        key: "paths",
        owns: |p| p.starts_with(".clinerules/") || p == ".clinerules",
    },
    Agent {
        target: "agents-md",
        model: Model::Plain,
        key: "",
        owns: |p| name_of(p) == "AGENTS.md",
    },
    Agent {
        target: "gemini",
        model: Model::Plain,
        key: "",
        owns: |p| name_of(p) == "GEMINI.md",
    },
    Agent {
        target: "goose",
        model: Model::Plain,
        key: "",
        owns: |p| name_of(p) == ".goosehints",
    },
];

/// Whether the file is one its agent reads whole (no frontmatter of scope).
fn plain(path: &str) -> bool {
    matches!(
        name_of(path),
        "AGENTS.md"
            | "CLAUDE.md"
            | "GEMINI.md"
            | "copilot-instructions.md"
            | ".goosehints"
            | ".cursorrules"
            | ".windsurfrules"
            | ".clinerules"
    )
}

fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    files_below(dir)
        .into_iter()
        .map(|f| {
            let bytes = fs::read(dir.join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

// ---- Reading the agents' files, as simply as the test can. ----

/// A frontmatter: its entries (key, inline value, block-list items), and the text after it.
struct Front<'a> {
    entries: Vec<(String, String, Vec<String>)>,
    body: &'a str,
}

/// The first `---` block of `text` (a byte-order mark and CRLF allowed), if it has one.
fn front(text: &str) -> Option<Front<'_>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut at = first.len();
    let mut entries: Vec<(String, String, Vec<String>)> = Vec::new();
    for line in lines {
        at += line.len();
        let l = line.trim_end();
        if l == "---" {
            return Some(Front {
                entries,
                body: &text[at..],
            });
        }
        let t = l.trim_start();
        if let Some(item) = t
            .strip_prefix("- ")
            .or(if t == "-" { Some("") } else { None })
        {
            if l.starts_with([' ', '\t', '-']) {
                if let Some(last) = entries.last_mut() {
                    last.2.push(item.trim().to_owned());
                }
                continue;
            }
        }
        if let Some((key, value)) = l.split_once(':') {
            if !key.starts_with([' ', '\t']) {
                entries.push((key.trim().to_owned(), value.trim().to_owned(), Vec::new()));
            }
        }
    }
    None
}

fn strip_quotes(s: &str) -> String {
    s.trim().trim_matches(['"', '\'']).trim().to_owned()
}

/// A one-line value split on the commas (and blanks) outside `{}` and `[]`, each piece without
/// quotes.
fn split_value(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut current) = (0usize, String::new());
    for c in value.chars() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c == ' ' || c == '\t') {
            out.push(strip_quotes(&current));
            current.clear();
        } else {
            current.push(c);
        }
    }
    out.push(strip_quotes(&current));
    out.retain(|p| !p.is_empty());
    out
}

/// The patterns of `key` in a frontmatter (the last entry of that key): a flow list or a
/// one-line string split on commas outside braces, or the items of a block list.
fn patterns_of(front: &Front<'_>, key: &str) -> Vec<String> {
    let Some((_, inline, items)) = front.entries.iter().rev().find(|e| e.0 == key) else {
        return Vec::new();
    };
    if inline.is_empty() {
        return items.iter().map(|i| strip_quotes(i)).collect();
    }
    let inline = inline
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(inline);
    split_value(inline)
}

/// `{a,b}` expanded (no nesting needed for the corpus's globs).
fn expand(p: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (p.find('{'), p.find('}')) else {
        return vec![p.to_owned()];
    };
    if close < open {
        return vec![p.to_owned()];
    }
    p[open + 1..close]
        .split(',')
        .flat_map(|alt| expand(&format!("{}{alt}{}", &p[..open], &p[close + 1..])))
        .collect()
}

fn globset(p: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(p)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// Whether `model` reading `patterns` applies the rule to `path`.
fn matcher(model: Model, patterns: &[String]) -> Box<dyn Fn(&str) -> bool> {
    match model {
        Model::Claude => {
            let mut builder = ignore::gitignore::GitignoreBuilder::new("/");
            builder.case_insensitive(true).unwrap();
            for p in patterns {
                for e in expand(p) {
                    let e = e.strip_suffix("/**").unwrap_or(&e);
                    builder.add_line(None, e).unwrap();
                }
            }
            let gi = builder.build().unwrap();
            Box::new(move |path| {
                gi.matched_path_or_any_parents(format!("/{path}"), false)
                    .is_ignore()
            })
        }
        Model::NameAnyDepth | Model::WholePath => {
            let always = model == Model::NameAnyDepth
                && patterns
                    .iter()
                    .any(|p| matches!(p.as_str(), "*" | "**" | "**/*"));
            let by_name = model == Model::NameAnyDepth;
            let ms: Vec<(bool, globset::GlobMatcher)> = patterns
                .iter()
                .filter_map(|p| globset(p).map(|m| (by_name && !p.contains('/'), m)))
                .collect();
            Box::new(move |path| {
                always
                    || ms
                        .iter()
                        .any(|(name, m)| m.is_match(if *name { name_of(path) } else { path }))
            })
        }
        Model::Plain => Box::new(|_| false),
    }
}

/// Where an agent applies a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    /// Every request.
    Always,
    /// Files below a directory (a nested file read whole).
    Dir(String),
    /// The files its patterns match.
    Patterns(Vec<String>),
}

fn applies(model: Model, scope: &Scope) -> Box<dyn Fn(&str) -> bool + '_> {
    match scope {
        Scope::Always => Box::new(|_| true),
        Scope::Dir(d) => Box::new(move |p: &str| p.starts_with(&format!("{d}/"))),
        Scope::Patterns(ps) => matcher(model, ps),
    }
}

/// A text without what export adds (the generated-by line, the section markers), its
/// whitespace runs as one space, a byte-order mark and CRs aside.
fn normalised(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .filter(|l| {
            let l = l.trim();
            !(l.starts_with("<!-- Generated by pi-rules")
                || l.starts_with("<!-- pi-rules:begin")
                || l.starts_with("<!-- pi-rules:end"))
        })
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The directory an exported or original file's rules are for: a plain file's own, the
/// directory that holds `.clinerules/`, else the root.
fn dir_of(path: &str) -> String {
    let parent = |p: &str| {
        p.rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_owned())
    };
    if plain(path) {
        let d = parent(path);
        let d = if d == ".claude" || d == ".github" {
            ""
        } else {
            d.strip_suffix("/.claude").unwrap_or(&d)
        };
        return d.to_owned();
    }
    if let Some(i) = path.find(".clinerules/") {
        return path[..i].trim_end_matches('/').to_owned();
    }
    String::new()
}

/// What the corpus file says its rule is (`Expect:`): `None` for a file with nothing to import.
fn expectation(text: &str) -> Option<Option<Vec<String>>> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Expect: "))?;
    Some(match line.trim() {
        "always" => None,
        globs => Some(globs.split(" | ").map(str::to_owned).collect()),
    })
}

/// One rule of the original files: its source, normalised text, and scope as its agent reads it.
struct Original {
    source: String,
    text: String,
    scope: Scope,
    /// Negations the agent read that no scope of ours keeps (said by import).
    negated: bool,
}

fn originals(agent: &Agent, root: &Path, files: &[String]) -> Vec<Original> {
    let mut out = Vec::new();
    for file in files {
        let bytes = fs::read(root.join(file)).unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        // The corpus says whether a file has a rule, and whether its agent applied it to paths
        // or always (its `alwaysApply:`, `trigger:`, `inclusion:`, on-request forms).
        let Some(expect) = expectation(&text) else {
            continue;
        };
        let (body, scope, negated) = if plain(file) {
            let dir = dir_of(file);
            let scope = if dir.is_empty() {
                Scope::Always
            } else {
                Scope::Dir(dir)
            };
            (text.as_str(), scope, false)
        } else {
            let fm = front(&text);
            let body = fm.as_ref().map_or(text.as_str(), |f| f.body);
            match (expect, fm) {
                (Some(_), Some(fm)) => {
                    let all = patterns_of(&fm, agent.key);
                    let negated = all.iter().any(|p| p.starts_with('!'));
                    let kept: Vec<String> =
                        all.into_iter().filter(|p| !p.starts_with('!')).collect();
                    (body, Scope::Patterns(kept), negated)
                }
                _ => (body, Scope::Always, false),
            }
        };
        out.push(Original {
            source: file.clone(),
            text: normalised(body),
            scope,
            negated,
        });
    }
    out
}

/// One exported file, as its agent reads it: the scope of what it holds, and its text.
struct Exported {
    path: String,
    scope: Scope,
    text: String,
}

fn exported(agent: &Agent, path: &str, bytes: &[u8]) -> Exported {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let dir = dir_of(path);
    let unscoped = if dir.is_empty() {
        Scope::Always
    } else {
        Scope::Dir(dir)
    };
    if plain(path) || agent.model == Model::Plain {
        return Exported {
            path: path.to_owned(),
            scope: unscoped,
            text: normalised(&text),
        };
    }
    match front(&text) {
        Some(fm) => {
            let patterns = patterns_of(&fm, agent.key);
            let scope = if patterns.is_empty() {
                unscoped
            } else {
                Scope::Patterns(patterns)
            };
            Exported {
                path: path.to_owned(),
                scope,
                text: normalised(fm.body),
            }
        }
        None => Exported {
            path: path.to_owned(),
            scope: unscoped,
            text: normalised(&text),
        },
    }
}

/// Paths to compare two scopes on: the project's files, and for every part of the patterns an
/// instance of it (`*.ts` gives `x.ts`, braces each alternative), in folders of up to three
/// such parts.
fn paths_for(project_files: &[String], scopes: &[&Scope]) -> Vec<String> {
    let mut parts: BTreeSet<String> = ["other", "Src", "x.txt"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for scope in scopes {
        let ps: Vec<String> = match scope {
            Scope::Patterns(ps) => ps.clone(),
            Scope::Dir(d) => vec![d.clone()],
            Scope::Always => Vec::new(),
        };
        for p in ps {
            for e in expand(&p) {
                for part in e.split('/') {
                    if part.is_empty() || part == "**" {
                        continue;
                    }
                    parts.insert(part.replace('*', "x").replace('?', "q"));
                }
            }
        }
    }
    let parts: Vec<String> = parts.into_iter().collect();
    let mut dirs: Vec<String> = vec![String::new()];
    let mut level = dirs.clone();
    for _ in 0..3 {
        level = level
            .iter()
            .flat_map(|d| parts.iter().map(move |p| format!("{d}{p}/")))
            .collect();
        dirs.extend(level.iter().cloned());
    }
    let mut paths: Vec<String> = dirs
        .iter()
        .flat_map(|d| parts.iter().map(move |f| format!("{d}{f}")))
        .collect();
    paths.extend(project_files.iter().cloned());
    // A path is a file or a folder, not both: what names a folder of another path is left out.
    let folders: BTreeSet<&str> = paths
        .iter()
        .flat_map(|p| p.match_indices('/').map(move |(i, _)| &p[..i]))
        .collect();
    paths
        .iter()
        .filter(|p| !folders.contains(p.as_str()))
        .cloned()
        .collect()
}

/// Whether the agent applies the two scopes alike on `paths`: `Ok(false)` when they agree
/// everywhere, `Ok(true)` when `b` also matches some paths inside a folder that `a` names as a
/// file (a glob of ours matches everything below what it names, and none names files only:
/// `**/Dockerfile*`, `Makefile`, which agents without folder meaning read as files only), else
/// the first path where they differ.
fn differs(model: Model, a: &Scope, b: &Scope, paths: &[String]) -> Result<bool, String> {
    let (fa, fb) = (applies(model, a), applies(model, b));
    let in_named_folder = |p: &str| p.match_indices('/').any(|(i, _)| fa(&p[..i]));
    let mut widened = false;
    for p in paths {
        let (was, is) = (fa(p), fb(p));
        if was == is {
            continue;
        }
        if is && in_named_folder(p) {
            widened = true;
            continue;
        }
        return Err(format!("{p}: {was} before, {is} after"));
    }
    Ok(widened)
}

/// Counts of what one round trip checked.
#[derive(Default, Debug)]
struct Counts {
    always: usize,
    scoped: usize,
    nested: usize,
    /// Scopes that came back matching the files inside folders named by the agent's pattern too.
    widened: usize,
    /// Of those, the ones import did not warn of.
    widened_unsaid: usize,
}

/// Imports `agent`'s files of `project`, removes them, exports for the agent, and checks what
/// came back. Returns what it checked, or `None` when the project holds none of its files.
fn round_trip(project: &Path, agent: &Agent) -> Option<Counts> {
    let name = project.file_name().unwrap().to_string_lossy().into_owned();
    let w = World::new();
    for f in files_below(project) {
        let dest = w.project.join(&f);
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::copy(project.join(&f), dest).unwrap();
    }
    let all_files = files_below(&w.project);
    let files: Vec<String> = all_files
        .iter()
        .filter(|f| (agent.owns)(f))
        .cloned()
        .collect();
    if files.is_empty() {
        return None;
    }
    let what = format!("{name} × {}", agent.target);
    let originals = originals(agent, &w.project, &files);
    let mut args = vec!["import", "--project"];
    args.extend(files.iter().map(String::as_str));
    let out = w.run(&args);
    assert_eq!(code(&out), 0, "{what}: import: {}", stderr(&out));
    let import_said = stderr(&out);
    for f in &files {
        fs::remove_file(w.project.join(f)).unwrap();
    }
    let before = snapshot(&w.project);
    let out = w.run(&["export", agent.target]);
    assert_eq!(code(&out), 0, "{what}: export: {}", stderr(&out));
    let after = snapshot(&w.project);
    let written: Vec<Exported> = after
        .iter()
        .filter(|(p, b)| before.get(*p) != Some(b))
        .map(|(p, b)| exported(agent, p, b))
        .collect();
    assert!(!written.is_empty(), "{what}: nothing exported");
    let mut counts = Counts::default();
    for orig in &originals {
        let hits: Vec<&Exported> = written
            .iter()
            .filter(|e| !orig.text.is_empty() && e.text.contains(&orig.text))
            .collect();
        // (a) The text comes back.
        assert!(
            !hits.is_empty(),
            "{what}: the text of {} is in no exported file: {:?}\nwritten: {:?}",
            orig.source,
            orig.text,
            written.iter().map(|e| &e.path).collect::<Vec<_>>()
        );
        match &orig.scope {
            // (c) An always-on rule comes back always on.
            Scope::Always => {
                assert!(
                    hits.iter().any(|e| e.scope == Scope::Always),
                    "{what}: {} was always on; it came back in {:?}",
                    orig.source,
                    hits.iter().map(|e| (&e.path, &e.scope)).collect::<Vec<_>>()
                );
                counts.always += 1;
            }
            // (b) A scope comes back as one the agent matches on the same files.
            scope => {
                let model = match agent.model {
                    Model::Plain => Model::NameAnyDepth,
                    m => m,
                };
                // Import says where our glob reads wider than the agent's pattern.
                let said = import_said.lines().any(|l| {
                    l.contains(&format!("`{}`", orig.source))
                        && l.contains("also matches the files in the folders it names")
                });
                let mut off = Vec::new();
                let mut widened = false;
                let good = hits.iter().any(|e| {
                    let paths = paths_for(&all_files, &[scope, &e.scope]);
                    match differs(model, scope, &e.scope, &paths) {
                        Ok(wider) => {
                            widened = wider;
                            true
                        }
                        Err(d) => {
                            off.push(format!("{}: {:?}: {d}", e.path, e.scope));
                            false
                        }
                    }
                });
                // ... and nowhere always on.
                assert!(
                    hits.iter().all(|e| e.scope != Scope::Always),
                    "{what}: {} was scoped; it also came back always on in {:?}",
                    orig.source,
                    hits.iter().map(|e| &e.path).collect::<Vec<_>>()
                );
                counts.widened += usize::from(widened);
                counts.widened_unsaid += usize::from(widened && !said);
                assert!(
                    good,
                    "{what}: the scope of {} ({scope:?}{}) came back otherwise: {off:?}",
                    orig.source,
                    if orig.negated {
                        ", negations left out"
                    } else {
                        ""
                    }
                );
                if matches!(scope, Scope::Dir(_)) {
                    counts.nested += 1;
                } else {
                    counts.scoped += 1;
                }
            }
        }
    }
    // (d) A second export changes nothing, and `export --check` agrees.
    let out = w.run(&["export", agent.target]);
    assert_eq!(code(&out), 0, "{what}: second export: {}", stderr(&out));
    assert!(
        snapshot(&w.project) == after,
        "{what}: the second export changed files"
    );
    let out = w.run(&["export", "--check", agent.target]);
    assert_eq!(
        code(&out),
        0,
        "{what}: export --check: {}{}",
        stdout(&out),
        stderr(&out)
    );
    Some(counts)
}

/// Import then export gives back equivalent files, for every agent of every corpus project.
#[test]
fn import_then_export_gives_each_agent_its_rules_and_scopes_back() {
    let mut table = Vec::new();
    for project in corpus_projects() {
        for agent in AGENTS {
            if let Some(counts) = round_trip(&project, agent) {
                table.push((
                    project.file_name().unwrap().to_string_lossy().into_owned(),
                    agent.target,
                    counts,
                ));
            }
        }
    }
    for (project, target, counts) in &table {
        println!("{project:22} {target:10} {counts:?}");
    }
    let scoped: usize = table.iter().map(|t| t.2.scoped).sum();
    let always: usize = table.iter().map(|t| t.2.always).sum();
    let nested: usize = table.iter().map(|t| t.2.nested).sum();
    // Every agent of the corpus was tried, with scopes for each that has a glob form.
    let targets: BTreeSet<&str> = table.iter().map(|t| t.1).collect();
    assert!(targets.len() >= 8, "{targets:?}");
    for t in ["claude", "copilot", "cursor", "windsurf", "kiro", "cline"] {
        assert!(
            table.iter().any(|r| r.1 == t && r.2.scoped > 0),
            "{t}: no scope round-tripped: {table:?}"
        );
    }
    assert!(
        scoped > 200 && scoped + always > 302 && nested >= 3,
        "{table:?}"
    );
}

/// Agent patterns of each construct: slashless, anchored, a folder's contents, braces, `**`,
/// a character class, a last wildcard part.
const GENERATED: &[&str] = &[
    "*.ts",
    "Makefile",
    "src/api/**",
    "src/**/*.ts",
    "*.{ts,md}",
    "{src,lib}/**",
    "**/*.md",
    "**/generated/**",
    "[ab]*.md",
    "lib/*.rs",
    "docs/**/*.{md,txt}",
    "src/api",
];

/// A rule file in `target`'s own syntax, scoped by `patterns`.
fn generated_rule(target: &str, patterns: &[&str], text: &str) -> (String, String) {
    let list = |key: &str| {
        let mut s = format!("{key}:\n");
        for p in patterns {
            s.push_str(&format!("  - \"{p}\"\n"));
        }
        s
    };
    let joined = patterns.join(",");
    let (dir, ext, head) = match target {
        "claude" => (".claude/rules", "md", list("paths")),
        "copilot" => (
            ".github/instructions",
            "instructions.md",
            format!("applyTo: \"{joined}\"\n"),
        ),
        "cursor" => (
            ".cursor/rules",
            "mdc",
            format!("globs: {joined}\nalwaysApply: false\n"),
        ),
        "windsurf" => (
            ".windsurf/rules",
            "md",
            format!("trigger: glob\nglobs: {joined}\n"),
        ),
        "kiro" => (
            ".kiro/steering",
            "md",
            format!("inclusion: fileMatch\n{}", list("fileMatchPattern")),
        ),
        "cline" => (".clinerules", "md", list("paths")),
        _ => unreachable!(),
    };
    let name = text.to_lowercase().replace(' ', "-");
    (
        format!("{dir}/{name}.{ext}"),
        format!("---\n{head}---\n{text}.\nExpect: paths\n"),
    )
}

/// Generated projects: for each agent with a glob form, a rule per construct in its own syntax,
/// one with every construct, one always on; each round-trips as the corpus does.
#[test]
fn generated_rules_of_each_construct_round_trip_for_each_agent() {
    for target in ["claude", "copilot", "cursor", "windsurf", "kiro", "cline"] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join(format!("generated-{target}"));
        let mut files: Vec<(String, String)> = GENERATED
            .iter()
            .enumerate()
            .map(|(i, p)| generated_rule(target, &[p], &format!("Construct {i}")))
            .collect();
        files.push(generated_rule(target, GENERATED, "Every construct"));
        for (path, text) in &files {
            let dest = project.join(path);
            fs::create_dir_all(dest.parent().unwrap()).unwrap();
            fs::write(dest, text).unwrap();
        }
        // Files the scopes are compared on.
        for f in [
            "src/api/x.ts",
            "lib/a.rs",
            "docs/a/b.txt",
            "a.md",
            "pkg/generated/x",
        ] {
            let dest = project.join(f);
            fs::create_dir_all(dest.parent().unwrap()).unwrap();
            fs::write(dest, "").unwrap();
        }
        let agent = AGENTS.iter().find(|a| a.target == target).unwrap();
        let counts = round_trip(&project, agent).unwrap();
        assert_eq!(counts.scoped, GENERATED.len() + 1, "{target}: {counts:?}");
        // Where a scope comes back wider (inside a folder the agent's pattern names as a file),
        // import said so, but for a name at any depth (`Makefile`: its rule and the rule with
        // every construct).
        assert!(counts.widened_unsaid <= 2, "{target}: {counts:?}");
    }
}
