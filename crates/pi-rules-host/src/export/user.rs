//! `export --user`: the user layer alone, into the file each agent reads for one person on
//! every project, under `$HOME` and nowhere else. A target whose agent has no such file is a
//! usage error (the command says which have one).

use super::model::Model;
use super::{
    locate_bound, plan_removal, plan_wanted, read, Content, ExportError, Form, Options, Planned,
    Target, Wanted,
};
use crate::env::Env;
use crate::writing::Bound;
use std::path::{Path, PathBuf};

/// The targets with a per-user file, in table order.
pub const TARGETS: [Target; 5] = [
    Target::AgentsMd,
    Target::Claude,
    Target::Gemini,
    Target::Copilot,
    Target::Kiro,
];

/// The per-user file of `target`, relative to `$HOME` (`/`-separated), or absolute when an
/// environment variable puts it elsewhere (`CODEX_HOME`). `None`: the agent has none.
pub fn file(target: Target, env: &Env) -> Option<PathBuf> {
    let relative = match target {
        // Codex reads global guidance from `AGENTS.md` in its home, `$CODEX_HOME` or
        // `~/.codex` (https://developers.openai.com/codex/guides/agents-md, "Global scope").
        Target::AgentsMd => match env.var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
            Some(home) => return Some(PathBuf::from(home).join("AGENTS.md")),
            None => ".codex/AGENTS.md",
        },
        // User memory, `~/.claude/CLAUDE.md`, "personal preferences for all projects" (Claude
        // Code docs, "Manage Claude's memory", memory types).
        Target::Claude => ".claude/CLAUDE.md",
        // The global context file `~/.gemini/GEMINI.md`, read before the project's (Gemini CLI
        // docs, "Provide context with GEMINI.md files", context hierarchy).
        Target::Gemini => ".gemini/GEMINI.md",
        // "$HOME/.copilot/copilot-instructions.md: user-level instructions that apply across
        // repositories" (GitHub docs, "Adding custom instructions for GitHub Copilot CLI").
        Target::Copilot => ".copilot/copilot-instructions.md",
        // Global steering, `~/.kiro/steering/`, with the same inclusion modes as a
        // workspace's (https://kiro.dev/docs/steering/, "Global steering").
        Target::Kiro => ".kiro/steering/pi-rules.md",
        // Cursor keeps user rules in its settings, not in a file; Windsurf's global rules
        // file, Cline's global rules folder and goose's global hints are not written (their
        // places were not confirmed against the agents' documentation here).
        Target::Cursor | Target::Windsurf | Target::Cline | Target::Goose => return None,
    };
    Some(PathBuf::from(relative))
}

/// `$HOME` canonical, and `target`'s file relative to it; refused when it lies outside.
fn placed(
    home: Option<&Path>,
    target: Target,
    env: &Env,
) -> Result<(PathBuf, String), ExportError> {
    let refused = |reason: String| ExportError::Refused {
        path: target.name().to_owned(),
        reason,
    };
    let Some(home) = home else {
        return Err(refused(
            "`HOME` is not set: there is no per-user file to write".to_owned(),
        ));
    };
    let root = std::fs::canonicalize(home)
        .map_err(|e| refused(format!("cannot resolve the home directory: {e}")))?;
    let Some(file) = file(target, env) else {
        return Err(refused("the agent has no per-user file".to_owned()));
    };
    let relative = if file.is_absolute() {
        let parent = file.parent().unwrap_or(Path::new("/"));
        let real = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        match real.strip_prefix(&root) {
            Ok(rest) => rest.join("AGENTS.md"),
            Err(_) => {
                return Err(refused(format!(
                    "`{}` is outside the home directory `{}`; export --user writes only there",
                    file.display(),
                    root.display()
                )))
            }
        }
    } else {
        file
    };
    Ok((root, relative.to_string_lossy().into_owned()))
}

/// Plans each target's per-user file holding its unscoped block of `model` (`agents:` applied;
/// a managed section, or Kiro's owned steering file). A per-user file applies to every
/// project, so a rule with `paths:` has no place in it and stays out. Nothing is written.
pub fn plan(
    home: Option<&Path>,
    targets: &[Target],
    model: &Model,
    options: &Options,
    env: &Env,
) -> Result<Vec<Planned>, ExportError> {
    let mut planned = Vec::new();
    for &target in targets {
        let block = model.block(target);
        let (root, path) = placed(home, target, env)?;
        let content = match target.form() {
            Form::Section => Content::Section(block.to_owned()),
            Form::Owned { frontmatter } => Content::Owned {
                frontmatter: frontmatter.to_owned(),
                text: block.to_owned(),
            },
        };
        let wanted = Wanted {
            path: path.clone(),
            target,
            main: true,
            content,
        };
        let located = locate_bound(Bound::Home, &root, &path)?;
        let old = read(&located)?;
        planned.push(plan_wanted(located, old, &wanted, options)?);
    }
    Ok(planned)
}

/// Plans taking out of each target's per-user file what `export --user` wrote there.
pub fn plan_remove(
    home: Option<&Path>,
    targets: &[Target],
    env: &Env,
) -> Result<Vec<Planned>, ExportError> {
    let mut planned = Vec::new();
    for &target in targets {
        let (root, path) = placed(home, target, env)?;
        let section = target.form() == Form::Section;
        if let Some(p) = plan_removal(Bound::Home, &root, &path, target, section)? {
            planned.push(p);
        }
    }
    Ok(planned)
}
