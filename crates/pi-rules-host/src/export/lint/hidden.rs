//! A file that an agent reads in place of a file `export` wrote (PR903, `export-hidden`):
//! - Codex reads `AGENTS.override.md` instead of `AGENTS.md` in the same directory (Codex docs,
//!   "AGENTS.md", discovery: "If an `AGENTS.override.md` exists, Codex uses it instead");
//! - Claude Code reads `AGENTS.md` only in a directory without a `CLAUDE.md` (measured with
//!   Claude Code 2.1.332 for issue 35), so a `CLAUDE.md` that pi-rules did not write (no managed
//!   section) and that does not import `AGENTS.md` hides an exported `AGENTS.md` from it.

use super::{dir_of, file_name, import_of, join, lines, resolve_import, AgentFile};
use crate::export::section;
use pi_rules_core::lint::{Code, Diagnostic};
use std::collections::HashMap;

/// The PR903 findings of `files`, each on the file that hides an exported one.
pub fn hidden(files: &[AgentFile<'_>]) -> Vec<Diagnostic> {
    let by_path: HashMap<&str, &AgentFile<'_>> = files.iter().map(|f| (f.path, f)).collect();
    let mut found = Vec::new();
    for file in files {
        let name = file_name(file.path);
        if name != "AGENTS.md" || !has_section(file.text) {
            continue;
        }
        let dir = dir_of(file.path);
        if let Some(over) = by_path.get(join(dir, "AGENTS.override.md").as_str()) {
            let mut d = Diagnostic::new(Code::ExportHidden, over.path, None);
            d.message(format!(
                "Codex reads `{}` instead of `{}`, which pi-rules exported: the exported rules \
                 never reach Codex here",
                over.path, file.path
            ))
            .help(format!(
                "move what `{}` says into the rules or into `{}` outside pi-rules' section, \
                 then delete it",
                over.path, file.path
            ));
            found.push(d);
        }
        let Some(claude) = by_path.get(join(dir, "CLAUDE.md").as_str()) else {
            continue;
        };
        // `claude` exported beside `agents-md`: its rules are in `.claude/CLAUDE.md` and
        // `.claude/rules`, and Claude Code reads no `AGENTS.md` then (export's `wanted`).
        if by_path
            .get(crate::export::CLAUDE_DOT_PATH)
            .is_some_and(|f| has_section(f.text))
        {
            continue;
        }
        if has_section(claude.text) || imports(claude, file.path) {
            continue;
        }
        let mut d = Diagnostic::new(Code::ExportHidden, claude.path, None);
        d.message(format!(
            "Claude Code reads `{}`, which pi-rules did not write, and not `{}` beside it: the \
             rules exported there never reach Claude Code",
            claude.path, file.path
        ))
        .note("Claude Code reads `AGENTS.md` only in a directory without a `CLAUDE.md`")
        .help(format!(
            "export the `claude` target too (`pi-rules export claude`), or add the line \
             `@AGENTS.md` to `{}`",
            claude.path
        ));
        found.push(d);
    }
    found
}

/// Whether `text` holds a managed section (broken markers count: export wrote there).
fn has_section(text: &str) -> bool {
    matches!(section::find(text.as_bytes()), Ok(Some(_)) | Err(_))
}

/// Whether `file` has an import line of the file at `path`.
fn imports(file: &AgentFile<'_>, path: &str) -> bool {
    lines(file.text).any(|(_, line)| {
        import_of(line)
            .and_then(|i| resolve_import(file.path, i))
            .as_deref()
            == Some(path)
    })
}
