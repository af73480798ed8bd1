//! `import`: another agent's instruction file as a pi-rules rule. Pure: the file's path and
//! bytes in, the rule's text and what to say about it out.
//!
//! A rule the agent applied to some paths keeps that scope as the rule's `paths:` frontmatter
//! (see [`crate::authoring::scope_header`]). Globs mean what they meant to the agent: pi-rules'
//! globs are gitignore-style, where a glob with no `/` (`*.md`) matches at any depth; Claude
//! Code, Cline and Copilot match such a glob at the project root only, so it is written anchored
//! (`/*.md`). Cursor, Windsurf and Kiro globs are kept as written.

use super::{owned, section};
use crate::authoring::{scope_header, split_globs};
use std::fmt;

/// What kind of file an import reads, by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`, `.github/copilot-instructions.md`, `.goosehints`:
    /// the text outside any pi-rules section.
    Plain,
    /// `.cursor/rules/*.mdc`.
    Cursor,
    /// `.windsurf/rules/*.md`.
    Windsurf,
    /// `.clinerules/*.md`.
    Cline,
    /// `.kiro/steering/*.md`.
    Kiro,
    /// `.claude/rules/**/*.md`: Claude Code's rules, scoped by `paths:`.
    ClaudeRule,
    /// `.github/instructions/**/*.instructions.md`: Copilot's instructions, scoped by `applyTo:`.
    Copilot,
}

/// Why a file cannot be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportError {
    /// The path is none of the files `import` knows.
    UnknownKind,
    /// The file is one that `export` wrote.
    Generated,
    /// Its pi-rules markers are broken.
    Markers(section::MarkerError),
    /// Nothing is left once the section or frontmatter is taken out.
    Empty,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::UnknownKind => f.write_str(
                "it is not an agent's instruction file that import knows (AGENTS.md, CLAUDE.md, \
                 GEMINI.md, .github/copilot-instructions.md, .goosehints, .cursor/rules/*.mdc, \
                 .windsurf/rules/*.md, .clinerules/*.md, .kiro/steering/*.md, \
                 .claude/rules/*.md, .github/instructions/*.instructions.md)",
            ),
            ImportError::Generated => f.write_str(
                "it was written by `pi-rules export`: its rules are already pi-rules rules",
            ),
            ImportError::Markers(err) => write!(f, "{err}"),
            ImportError::Empty => {
                f.write_str("it holds no text outside pi-rules' section or the frontmatter")
            }
        }
    }
}

impl std::error::Error for ImportError {}

/// The kind of the file at `path` (`/`-separated components, as given).
pub fn kind_of(path: &[&str]) -> Option<SourceKind> {
    let (name, dirs) = path.split_last()?;
    let parent = |want: &[&str]| dirs.ends_with(want);
    // Claude Code and Copilot read their rule directories recursively.
    let below = |want: &[&str]| dirs.windows(want.len()).any(|w| w == want);
    if name.ends_with(".instructions.md") && below(&[".github", "instructions"]) {
        return Some(SourceKind::Copilot);
    }
    if name.ends_with(".md") && below(&[".claude", "rules"]) {
        return Some(SourceKind::ClaudeRule);
    }
    match *name {
        "AGENTS.md" | "AGENTS.override.md" | "CLAUDE.md" | "GEMINI.md" | ".goosehints" => {
            return Some(SourceKind::Plain)
        }
        "copilot-instructions.md" if parent(&[".github"]) => return Some(SourceKind::Plain),
        _ => {}
    }
    if name.ends_with(".mdc") && parent(&[".cursor", "rules"]) {
        Some(SourceKind::Cursor)
    } else if !name.ends_with(".md") {
        None
    } else if parent(&[".windsurf", "rules"]) {
        Some(SourceKind::Windsurf)
    } else if parent(&[".clinerules"]) {
        Some(SourceKind::Cline)
    } else if parent(&[".kiro", "steering"]) {
        Some(SourceKind::Kiro)
    } else if parent(&[".claude"]) && *name == "CLAUDE.md" {
        Some(SourceKind::Plain)
    } else {
        None
    }
}

/// A file turned into a rule's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The rule's text, with a `paths:` frontmatter when the agent applied it to some paths:
    /// ends with one line break.
    pub text: String,
    /// The globs of that `paths:`, in pi-rules' meaning (empty: the rule has no scope).
    pub paths: Vec<String>,
    /// How the agent's scope was kept, when it was: the agent's globs, and any that were
    /// rewritten to keep their meaning.
    pub kept: Option<String>,
    /// Why the rule may apply more widely than it did (a rule the agent applied on request).
    pub warning: Option<String>,
}

/// The lines of a leading frontmatter, between its fences (none without one).
fn header_lines(bytes: &[u8]) -> Vec<String> {
    let body = owned::after_frontmatter(bytes);
    if body.len() == bytes.len() {
        return Vec::new();
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len() - body.len()]);
    let mut lines: Vec<String> = head
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect();
    // The fences.
    lines.remove(0);
    lines.pop();
    lines
}

/// A value of YAML's plain or quoted form, unquoted: `"a\"b"` is `a"b`, `'it''s'` is `it's`,
/// and a plain value loses a ` #` comment.
fn unquote(value: &str) -> String {
    let value = value.trim();
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        let inner = &value[1..value.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.extend(chars.next()),
                c => out.push(c),
            }
        }
        return out;
    }
    if value.len() >= 2 && value.starts_with('\'') && value.ends_with('\'') {
        return value[1..value.len() - 1].replace("''", "'");
    }
    let plain = match value.find(" #") {
        Some(at) => &value[..at],
        None => value,
    };
    plain.trim().to_owned()
}

/// The frontmatter of an agent's rule file, read as those files are written: `key: value`
/// lines, with lists either on the key's line (`[a, b]`, or comma-separated) or as `- item`
/// lines below an empty key.
struct Header {
    lines: Vec<String>,
}

impl Header {
    fn of(bytes: &[u8]) -> Header {
        Header {
            lines: header_lines(bytes),
        }
    }

    /// The index of the line that sets `key` (the last one), and its raw value.
    fn find(&self, key: &str) -> Option<(usize, &str)> {
        self.lines.iter().enumerate().rev().find_map(|(i, line)| {
            let (k, v) = line.split_once(':')?;
            (!line.starts_with([' ', '\t', '-']) && k.trim() == key).then_some((i, v.trim()))
        })
    }

    /// The value of `key`, unquoted.
    fn scalar(&self, key: &str) -> Option<String> {
        self.find(key).map(|(_, v)| unquote(v))
    }

    /// The items of `key`: a flow list, a comma-separated value, or `- item` lines; braces and
    /// brackets keep their commas (`*.{ts,tsx}` is one glob). `None` when the key is absent.
    fn list(&self, key: &str) -> Option<Vec<String>> {
        let (at, value) = self.find(key)?;
        if let Some(flow) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            return Some(
                split_globs(flow)
                    .iter()
                    .map(|item| unquote(item))
                    .filter(|item| !item.is_empty())
                    .collect(),
            );
        }
        if !value.is_empty() {
            // One quoted string holds the comma-separated globs (`"a,b"`); otherwise each item
            // may be quoted on its own (`"a", "b"`).
            let items = split_globs(value);
            let items = match items.as_slice() {
                [one] => split_globs(&unquote(one)),
                _ => items,
            };
            return Some(
                items
                    .iter()
                    .map(|item| unquote(item))
                    .filter(|item| !item.is_empty())
                    .collect(),
            );
        }
        let mut items = Vec::new();
        for line in &self.lines[at + 1..] {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let Some(item) = trimmed.strip_prefix('-') else {
                break;
            };
            let item = unquote(item);
            if !item.is_empty() {
                items.push(item);
            }
        }
        Some(items)
    }
}

/// What an agent's globs mean when they hold no `/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Globs {
    /// As pi-rules' (gitignore's): `*.md` matches at any depth.
    AnyDepth,
    /// At the project root only (Claude Code, Cline, Copilot: picomatch and minimatch without
    /// `matchBase`): `*.md` is pi-rules' `/*.md`.
    Root,
}

/// `glob` in pi-rules' meaning: a leading `./` dropped, and a glob that the agent matched at the
/// root only anchored with a leading `/`.
fn translate(glob: &str, meaning: Globs) -> String {
    let glob = glob.strip_prefix("./").unwrap_or(glob);
    let core = glob.trim_end_matches('/');
    let anchor = meaning == Globs::Root
        && !core.is_empty()
        && !core.contains('/')
        && !core.starts_with("**");
    if anchor {
        format!("/{glob}")
    } else {
        glob.to_owned()
    }
}

/// What an agent's frontmatter said about where the rule applies.
enum Scope {
    /// Everywhere.
    Always,
    /// To the files matching these globs, as the agent wrote them.
    Paths {
        agent: &'static str,
        globs: Vec<String>,
        meaning: Globs,
    },
    /// On request, or never: the rule is imported for every request, with this warning.
    Other(String),
}

/// Imports the file of `kind` holding `bytes`.
pub fn import(kind: SourceKind, bytes: &[u8]) -> Result<Imported, ImportError> {
    if owned::is_ours(bytes) {
        return Err(ImportError::Generated);
    }
    let header = Header::of(bytes);
    let paths = |agent, globs: Option<Vec<String>>, meaning| Scope::Paths {
        agent,
        globs: globs.unwrap_or_default(),
        meaning,
    };
    let scope = match kind {
        SourceKind::Plain => Scope::Always,
        SourceKind::Cursor => {
            let always = header.scalar("alwaysApply").as_deref() == Some("true");
            let globs = header.list("globs").filter(|g| !g.is_empty());
            match (always, globs) {
                (true, _) => Scope::Always,
                (false, Some(globs)) => paths("Cursor", Some(globs), Globs::AnyDepth),
                (false, None) => {
                    Scope::Other("Cursor applied it when the model or you asked for it".to_owned())
                }
            }
        }
        SourceKind::Windsurf => match header.scalar("trigger").as_deref() {
            Some("glob") => paths("Windsurf", header.list("globs"), Globs::AnyDepth),
            Some(trigger @ ("model_decision" | "manual")) => Scope::Other(format!(
                "Windsurf applied it on request (`trigger: {trigger}`)"
            )),
            _ => Scope::Always,
        },
        SourceKind::Cline => match header.list("paths") {
            Some(globs) if globs.is_empty() => {
                Scope::Other("Cline never applied it (`paths: []`)".to_owned())
            }
            globs @ Some(_) => paths("Cline", globs, Globs::Root),
            None => Scope::Always,
        },
        SourceKind::Kiro => match header.scalar("inclusion").as_deref() {
            Some("fileMatch") => paths("Kiro", header.list("fileMatchPattern"), Globs::AnyDepth),
            Some("manual") => Scope::Other("Kiro applied it when you asked for it".to_owned()),
            Some("auto") => Scope::Other(
                "Kiro applied it when the model found its description relevant".to_owned(),
            ),
            _ => Scope::Always,
        },
        SourceKind::ClaudeRule => {
            // `globs:` is the older spelling that Claude Code still reads.
            match header.list("paths").or_else(|| header.list("globs")) {
                Some(globs) if !globs.is_empty() => paths("Claude Code", Some(globs), Globs::Root),
                _ => Scope::Always,
            }
        }
        SourceKind::Copilot => match header.list("applyTo") {
            // `**` is Copilot's way of saying "every file".
            Some(globs) if globs.iter().any(|g| g == "**" || g == "**/*") => Scope::Always,
            Some(globs) if !globs.is_empty() => paths("Copilot", Some(globs), Globs::Root),
            _ => Scope::Other(
                "Copilot applied it only when you attached it (it has no `applyTo:`)".to_owned(),
            ),
        },
    };
    let body = match kind {
        SourceKind::Plain => section::outside(bytes).map_err(ImportError::Markers)?,
        _ => owned::after_frontmatter(bytes).to_vec(),
    };
    let text = String::from_utf8_lossy(&body);
    let text = text.trim_start_matches(['\n', '\r']).trim_end();
    if text.is_empty() {
        return Err(ImportError::Empty);
    }
    let mut imported = Imported {
        text: format!("{text}\n"),
        paths: Vec::new(),
        kept: None,
        warning: None,
    };
    match scope {
        Scope::Always => {}
        Scope::Other(why) => {
            imported.warning = Some(format!(
                "{why}; it is imported as a rule for every request, everywhere"
            ));
        }
        Scope::Paths { agent, globs, .. } if globs.is_empty() => {
            imported.warning = Some(format!(
                "{agent} applied it to files matching a pattern that the file does not give; \
                 it is imported as a rule for every request, everywhere"
            ));
        }
        Scope::Paths {
            agent,
            globs,
            meaning,
        } => {
            let ours: Vec<String> = globs.iter().map(|g| translate(g, meaning)).collect();
            let rewritten: Vec<String> = globs
                .iter()
                .zip(&ours)
                .filter(|(theirs, ours)| theirs != ours)
                .map(|(theirs, ours)| format!("`{theirs}` as `{ours}`"))
                .collect();
            let mut kept = format!(
                "{agent} applied it to files matching {}; kept as its `paths:`",
                backticked(&globs)
            );
            if !rewritten.is_empty() {
                kept.push_str(&format!(
                    " ({} written {}, as {agent} matches a glob without `/` at the project \
                     root only)",
                    if rewritten.len() == 1 { "one" } else { "some" },
                    rewritten.join(", ")
                ));
            }
            imported.text = format!("{}{}", scope_header(&ours, &[]), imported.text);
            imported.paths = ours;
            imported.kept = Some(kept);
        }
    }
    Ok(imported)
}

/// `` `a`, `b` ``.
fn backticked(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rest of a rule name for the source file `name`: lower case, letters, digits and `-`
/// (`CLAUDE.md` is `claude`, `.goosehints` is `goosehints`, `Style Guide.mdc` is
/// `style-guide`, `python.instructions.md` is `python`).
pub fn stem(name: &str) -> String {
    let base = name.trim_start_matches('.');
    let base = base
        .strip_suffix(".instructions.md")
        .or_else(|| base.strip_suffix(".mdc"))
        .or_else(|| base.strip_suffix(".md"))
        .unwrap_or(base);
    let mut out = String::new();
    for c in base.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "imported".to_owned()
    } else {
        out.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_path() {
        let kind = |p: &str| kind_of(&p.split('/').collect::<Vec<_>>());
        assert_eq!(kind("CLAUDE.md"), Some(SourceKind::Plain));
        assert_eq!(kind("sub/AGENTS.md"), Some(SourceKind::Plain));
        assert_eq!(
            kind(".github/copilot-instructions.md"),
            Some(SourceKind::Plain)
        );
        assert_eq!(kind("copilot-instructions.md"), None);
        assert_eq!(kind("/p/.cursor/rules/a.mdc"), Some(SourceKind::Cursor));
        assert_eq!(kind(".cursor/rules/a.md"), None);
        assert_eq!(kind(".windsurf/rules/a.md"), Some(SourceKind::Windsurf));
        assert_eq!(kind(".clinerules/a.md"), Some(SourceKind::Cline));
        assert_eq!(kind(".kiro/steering/a.md"), Some(SourceKind::Kiro));
        assert_eq!(kind(".claude/rules/api.md"), Some(SourceKind::ClaudeRule));
        assert_eq!(
            kind("/p/.claude/rules/frontend/react.md"),
            Some(SourceKind::ClaudeRule)
        );
        assert_eq!(kind(".claude/CLAUDE.md"), Some(SourceKind::Plain));
        assert_eq!(kind(".claude/rules/a.txt"), None);
        assert_eq!(
            kind(".github/instructions/python.instructions.md"),
            Some(SourceKind::Copilot)
        );
        assert_eq!(
            kind(".github/instructions/web/react.instructions.md"),
            Some(SourceKind::Copilot)
        );
        assert_eq!(kind(".github/instructions/notes.md"), None);
        assert_eq!(kind("README.md"), None);
    }

    #[test]
    fn bodies_without_sections_or_frontmatter() {
        let claude =
            b"# Team\n\nUse tabs.\n\n<!-- pi-rules:begin x -->\ngen\n<!-- pi-rules:end -->\n";
        let got = import(SourceKind::Plain, claude).unwrap();
        assert_eq!(got.text, "# Team\n\nUse tabs.\n");
        assert_eq!((got.warning, got.kept, got.paths.len()), (None, None, 0));
        let always = b"---\ndescription: Always\nglobs:\nalwaysApply: true\n---\nA\n";
        let got = import(SourceKind::Cursor, always).unwrap();
        assert_eq!((got.text.as_str(), got.warning), ("A\n", None));
        let kiro = b"---\r\ninclusion: always\r\n---\r\nRust\r\n";
        assert_eq!(import(SourceKind::Kiro, kiro).unwrap().text, "Rust\n");
        assert_eq!(import(SourceKind::Cline, b"plain\n").unwrap().warning, None);
        assert_eq!(import(SourceKind::Plain, b"\n\n"), Err(ImportError::Empty));
        let generated = owned::render("", "x");
        assert_eq!(
            import(SourceKind::Cline, &generated),
            Err(ImportError::Generated)
        );
    }

    /// Real-looking files of each agent whose scope is a set of paths, and the rule each gives.
    #[test]
    fn path_scopes_become_the_rule_s_paths() {
        let cases: &[(SourceKind, &str, &str)] = &[
            // Cursor: an "auto attached" rule, globs comma-separated, unquoted.
            (
                SourceKind::Cursor,
                "---\ndescription: API handlers\nglobs: src/api/**/*.ts, src/api/**/*.tsx\nalwaysApply: false\n---\n# API\n\nValidate input.\n",
                "---\npaths: src/api/**/*.ts, src/api/**/*.tsx\n---\n# API\n\nValidate input.\n",
            ),
            // Cursor: one quoted string, no `alwaysApply`; a glob without `/` kept as written.
            (
                SourceKind::Cursor,
                "---\ndescription:\nglobs: \"*.sql,migrations/**\"\n---\nSQL\n",
                "---\npaths: *.sql, migrations/**\n---\nSQL\n",
            ),
            // Cursor: a YAML list, CRLF line ends.
            (
                SourceKind::Cursor,
                "---\r\nglobs:\r\n  - \"web/**\"\r\n  - 'docs/**/*.md'\r\nalwaysApply: false\r\n---\r\nWeb\r\n",
                "---\npaths: web/**, docs/**/*.md\n---\nWeb\n",
            ),
            // Windsurf: `trigger: glob`.
            (
                SourceKind::Windsurf,
                "---\ntrigger: glob\ndescription: Python style\nglobs: **/*.py\n---\nUse black.\n",
                "---\npaths: **/*.py\n---\nUse black.\n",
            ),
            // Kiro: `fileMatch`, one pattern, and a flow list with braces.
            (
                SourceKind::Kiro,
                "---\ninclusion: fileMatch\nfileMatchPattern: \"components/**/*.tsx\"\n---\nReact\n",
                "---\npaths: components/**/*.tsx\n---\nReact\n",
            ),
            (
                SourceKind::Kiro,
                "---\ninclusion: fileMatch\nfileMatchPattern: [\"app/api/**/*\", \"src/**/*.{ts,tsx}\"]\n---\nTS\n",
                "---\npaths:\n  - \"app/api/**/*\"\n  - \"src/**/*.{ts,tsx}\"\n---\nTS\n",
            ),
            // Cline: a list; `*.config.js` is at the root for Cline, anchored here.
            (
                SourceKind::Cline,
                "---\npaths:\n  - \"src/components/**\"\n  - \"*.config.js\"\n---\n# React\n",
                "---\npaths: src/components/**, /*.config.js\n---\n# React\n",
            ),
            // Claude Code: the documented list form, a brace glob, and a root-only glob.
            (
                SourceKind::ClaudeRule,
                "---\npaths:\n  - \"src/api/**/*.ts\"\n  - \"src/**/*.{ts,tsx}\"\n  - \"*.md\"\n---\n# API rules\n",
                "---\npaths:\n  - \"src/api/**/*.ts\"\n  - \"src/**/*.{ts,tsx}\"\n  - \"/*.md\"\n---\n# API rules\n",
            ),
            // Claude Code: one line; `**/` globs mean the same everywhere.
            (
                SourceKind::ClaudeRule,
                "---\npaths: **/*.go, ./go.mod\n---\nGo\n",
                "---\npaths: **/*.go, /go.mod\n---\nGo\n",
            ),
            // Copilot: `applyTo`, comma-separated without spaces.
            (
                SourceKind::Copilot,
                "---\napplyTo: \"**/*.cs,**/*.csproj\"\ndescription: C#\n---\nUse records.\n",
                "---\npaths: **/*.cs, **/*.csproj\n---\nUse records.\n",
            ),
            (
                SourceKind::Copilot,
                "---\napplyTo: '*.py'\n---\nPython at the root.\n",
                "---\npaths: /*.py\n---\nPython at the root.\n",
            ),
        ];
        for (kind, file, rule) in cases {
            let got = import(*kind, file.as_bytes()).unwrap();
            assert_eq!(got.text, *rule, "{kind:?}: {file:?}");
            assert_eq!(got.warning, None, "{file:?}");
            let kept = got.kept.unwrap();
            assert!(kept.contains("kept as its `paths:`"), "{kept}");
            let frontmatter = pi_rules_core::frontmatter::split(&got.text);
            assert!(frontmatter.header.is_some(), "{rule:?}");
        }
        // The note names the agent's globs and says which were rewritten, and why.
        let got = import(
            SourceKind::ClaudeRule,
            b"---\npaths:\n  - \"*.md\"\n  - \"docs/**\"\n---\nDocs\n",
        )
        .unwrap();
        assert_eq!(got.paths, ["/*.md", "docs/**"]);
        let kept = got.kept.unwrap();
        assert!(
            kept.starts_with("Claude Code applied it to files matching `*.md`, `docs/**`")
                && kept.contains("`*.md` as `/*.md`")
                && kept.contains("at the project root only"),
            "{kept}"
        );
        let got = import(SourceKind::Cursor, b"---\nglobs: *.md\n---\nDocs\n").unwrap();
        assert!(!got.kept.unwrap().contains(" as `"));
    }

    #[test]
    fn globs_with_commas_or_quotes_are_written_as_a_list() {
        let got = import(
            SourceKind::Cline,
            b"---\npaths:\n  - 'packages/{web,api}/**'\n  - 'it\"s/**'\n---\nX\n",
        )
        .unwrap();
        assert_eq!(
            got.text,
            "---\npaths:\n  - \"packages/{web,api}/**\"\n  - 'it\"s/**'\n---\nX\n"
        );
    }

    /// Scopes that are not paths: the rule is imported for every request, with a warning.
    #[test]
    fn scopes_that_are_not_paths_keep_the_warning() {
        let cases: &[(SourceKind, &str, &str)] = &[
            (
                SourceKind::Cursor,
                "---\ndescription: Database migrations\nglobs:\nalwaysApply: false\n---\nM\n",
                "when the model or you asked for it",
            ),
            (SourceKind::Cursor, "---\n---\nManual\n", "asked for it"),
            (
                SourceKind::Windsurf,
                "---\ntrigger: model_decision\ndescription: d\n---\nW\n",
                "`trigger: model_decision`",
            ),
            (
                SourceKind::Windsurf,
                "---\ntrigger: manual\n---\nW\n",
                "`trigger: manual`",
            ),
            (
                SourceKind::Windsurf,
                "---\ntrigger: glob\n---\nW\n",
                "a pattern that the file does not give",
            ),
            (
                SourceKind::Kiro,
                "---\ninclusion: manual\n---\nK\n",
                "when you asked for it",
            ),
            (
                SourceKind::Cline,
                "---\npaths: []\n---\nC\n",
                "never applied it",
            ),
            (
                SourceKind::Copilot,
                "---\ndescription: d\n---\nC\n",
                "no `applyTo:`",
            ),
        ];
        for (kind, file, why) in cases {
            let got = import(*kind, file.as_bytes()).unwrap();
            let warning = got.warning.unwrap_or_default();
            assert!(
                warning.contains(why) && warning.contains("every request, everywhere"),
                "{file:?}: {warning}"
            );
            assert!(!got.text.starts_with("---"), "{}", got.text);
            assert_eq!((got.kept, got.paths.len()), (None, 0));
        }
        // `windsurf` rules that are always on, and Copilot's "every file", have no scope.
        for (kind, file) in [
            (SourceKind::Windsurf, "---\ntrigger: always_on\n---\nW\n"),
            (SourceKind::Copilot, "---\napplyTo: \"**\"\n---\nC\n"),
            (SourceKind::ClaudeRule, "# No frontmatter\n"),
        ] {
            let got = import(kind, file.as_bytes()).unwrap();
            assert_eq!((got.warning, got.kept), (None, None), "{file:?}");
            assert!(!got.text.starts_with("---"), "{}", got.text);
        }
    }

    #[test]
    fn stems_and_prefixes() {
        assert_eq!(stem("CLAUDE.md"), "claude");
        assert_eq!(stem(".goosehints"), "goosehints");
        assert_eq!(stem("Style Guide.mdc"), "style-guide");
        assert_eq!(stem("copilot-instructions.md"), "copilot-instructions");
        assert_eq!(stem("!!!.md"), "imported");
        assert_eq!(stem("python.instructions.md"), "python");
    }
}
