//! `import`: another agent's instruction file as a pi-rules rule. Pure: the file's path and
//! bytes in, the rule's text and what to warn about out.

use super::{owned, section};
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
                 .windsurf/rules/*.md, .clinerules/*.md, .kiro/steering/*.md)",
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
    /// The rule's text: ends with one line break.
    pub text: String,
    /// Why the rule may apply more widely than it did (a rule scoped to paths or to requests).
    pub warning: Option<String>,
}

/// The `key: value` lines of a leading frontmatter.
fn frontmatter_keys(bytes: &[u8]) -> Vec<(String, String)> {
    let body = owned::after_frontmatter(bytes);
    if body.len() == bytes.len() {
        return Vec::new();
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len() - body.len()]);
    head.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            Some((
                key.trim().to_owned(),
                value.trim().trim_matches(['"', '\'']).to_owned(),
            ))
        })
        .collect()
}

/// Imports the file of `kind` holding `bytes`.
pub fn import(kind: SourceKind, bytes: &[u8]) -> Result<Imported, ImportError> {
    if owned::is_ours(bytes) {
        return Err(ImportError::Generated);
    }
    let keys = frontmatter_keys(bytes);
    let key = |name: &str| {
        keys.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let (body, scope) = match kind {
        SourceKind::Plain => (section::outside(bytes).map_err(ImportError::Markers)?, None),
        SourceKind::Cursor => {
            let always = key("alwaysApply") == Some("true");
            let globs = key("globs").filter(|g| !g.is_empty());
            let scope = match (always, globs) {
                (true, _) => None,
                (false, Some(globs)) => {
                    Some(format!("Cursor applied it to files matching `{globs}`"))
                }
                (false, None) => {
                    Some("Cursor applied it when the model or you asked for it".to_owned())
                }
            };
            (owned::after_frontmatter(bytes).to_vec(), scope)
        }
        SourceKind::Windsurf => {
            let scope = match key("trigger") {
                Some("glob") => Some(format!(
                    "Windsurf applied it to files matching `{}`",
                    key("globs").unwrap_or("")
                )),
                Some(trigger @ ("model_decision" | "manual")) => Some(format!(
                    "Windsurf applied it on request (`trigger: {trigger}`)"
                )),
                _ => None,
            };
            (owned::after_frontmatter(bytes).to_vec(), scope)
        }
        SourceKind::Cline => {
            let scope = key("paths").map(|p| format!("Cline applied it to files matching `{p}`"));
            (owned::after_frontmatter(bytes).to_vec(), scope)
        }
        SourceKind::Kiro => {
            let scope = match key("inclusion") {
                Some("fileMatch") => Some(format!(
                    "Kiro applied it to files matching `{}`",
                    key("fileMatchPattern").unwrap_or("")
                )),
                Some("manual") => Some("Kiro applied it when you asked for it".to_owned()),
                _ => None,
            };
            (owned::after_frontmatter(bytes).to_vec(), scope)
        }
    };
    let text = String::from_utf8_lossy(&body);
    let text = text.trim_start_matches(['\n', '\r']).trim_end();
    if text.is_empty() {
        return Err(ImportError::Empty);
    }
    Ok(Imported {
        text: format!("{text}\n"),
        warning: scope
            .map(|scope| format!("{scope}; pi-rules rules apply to every request, everywhere")),
    })
}

/// The rest of a rule name for the source file `name`: lower case, letters, digits and `-`
/// (`CLAUDE.md` is `claude`, `.goosehints` is `goosehints`, `Style Guide.mdc` is
/// `style-guide`).
pub fn stem(name: &str) -> String {
    let base = name.trim_start_matches('.');
    let base = base
        .strip_suffix(".mdc")
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
        assert_eq!(kind("README.md"), None);
    }

    #[test]
    fn bodies_without_sections_or_frontmatter_and_scope_warnings() {
        let claude =
            b"# Team\n\nUse tabs.\n\n<!-- pi-rules:begin x -->\ngen\n<!-- pi-rules:end -->\n";
        let got = import(SourceKind::Plain, claude).unwrap();
        assert_eq!(got.text, "# Team\n\nUse tabs.\n");
        assert_eq!(got.warning, None);
        let cursor = b"---\ndescription: d\nglobs: src/**/*.ts\nalwaysApply: false\n---\n# TS\n";
        let got = import(SourceKind::Cursor, cursor).unwrap();
        assert_eq!(got.text, "# TS\n");
        assert!(got.warning.unwrap().contains("`src/**/*.ts`"));
        let always = b"---\nglobs: x\nalwaysApply: true\n---\nA\n";
        assert_eq!(import(SourceKind::Cursor, always).unwrap().warning, None);
        let windsurf = b"---\ntrigger: glob\nglobs: \"*.py\"\n---\nPy\n";
        assert!(import(SourceKind::Windsurf, windsurf)
            .unwrap()
            .warning
            .unwrap()
            .contains("*.py"));
        let kiro = b"---\r\ninclusion: fileMatch\r\nfileMatchPattern: \"*.rs\"\r\n---\r\nRust\r\n";
        let got = import(SourceKind::Kiro, kiro).unwrap();
        assert_eq!(got.text, "Rust\n");
        assert!(got.warning.unwrap().contains("everywhere"));
        assert_eq!(import(SourceKind::Cline, b"plain\n").unwrap().warning, None);
        assert_eq!(import(SourceKind::Plain, b"\n\n"), Err(ImportError::Empty));
        let generated = owned::render("", "x");
        assert_eq!(
            import(SourceKind::Cline, &generated),
            Err(ImportError::Generated)
        );
    }

    #[test]
    fn stems_and_prefixes() {
        assert_eq!(stem("CLAUDE.md"), "claude");
        assert_eq!(stem(".goosehints"), "goosehints");
        assert_eq!(stem("Style Guide.mdc"), "style-guide");
        assert_eq!(stem("copilot-instructions.md"), "copilot-instructions");
        assert_eq!(stem("!!!.md"), "imported");
    }
}
