//! `pi-rules import`: other agents' instruction files as pi-rules rules, the way in for a team
//! that has rules already. The conversion is the host's ([`pi_rules_host::export::import`]).

use crate::invocation::{Context, PlaceArgs, TargetArgs};
use crate::output::{note, output, Exit};
use crate::terminal::escape;
use pi_rules_core::rule_scope;
use pi_rules_host::authoring::next_free;
use pi_rules_host::bail;
use pi_rules_host::error::{Error, Result};
use pi_rules_host::export::import::{self as host, SourceKind};
use pi_rules_host::writing::WriteError;
use std::path::PathBuf;

/// Turn other agents' instruction files (CLAUDE.md, AGENTS.md, Cursor rules, ...) into rules.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules import CLAUDE.md --project                  # .pi/rules/90-claude.md
  pi-rules import .cursor/rules/*.mdc --project        # one rule per Cursor rule

What each file gives: AGENTS.md, CLAUDE.md, GEMINI.md, .github/copilot-instructions.md and
.goosehints, the text outside any pi-rules section; .cursor/rules/*.mdc, .windsurf/rules/*.md,
.clinerules/*.md, .kiro/steering/*.md, .claude/rules/*.md and
.github/instructions/*.instructions.md, the body without the agent's frontmatter.

A rule that the agent applied to some paths only keeps them as its `paths:` frontmatter: Cursor's
`globs:`, Windsurf's `globs:` (with `trigger: glob`), Kiro's `fileMatchPattern:` (with
`inclusion: fileMatch`), Cline's and Claude Code's `paths:`, Copilot's `applyTo:`. Each glob keeps
its meaning: Claude Code, Cline and Copilot match a glob without `/` at the project root only, so
`*.md` is written `/*.md` (pi-rules' globs, as .gitignore's, match `*.md` at any depth); a note
says so. pi honours `paths:` when `[rules] scoped = true` is in .pi/pi-rules.toml; other agents'
files (`export`) always do. A rule the agent applied on request only (Cursor's description-only
rules, Windsurf's `model_decision` and `manual`, Kiro's `manual` and `auto`) is imported with a
warning: it applies to every request then.

Each rule is named as `new` names one: the next free prefix of the layer's range, then the
source file's name (`CLAUDE.md` becomes `90-claude.md` in the project layer). An existing file is
never replaced, and each path written is printed. The source files are left as they are: after
an import, `pi-rules export claude` keeps CLAUDE.md's text and adds the section below it, so
delete the hand-written text once the section holds it.")]
pub struct Args {
    /// The files to import.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// The most of a file that is imported.
const MAX_IMPORT_BYTES: u64 = 1024 * 1024;

/// `pi-rules import`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let layers = args.place.read(cx.env)?;
    let target = args.target.layer();
    let (lo, hi) = target.prefix_range();
    // Read and convert every file first: one that cannot be imported stops the command before
    // anything is written.
    let mut rules: Vec<(String, String, String)> = Vec::new(); // (shown source, stem, text)
    let mut scoped_any = false;
    for file in &args.files {
        let shown = escape(&file.display().to_string()).into_owned();
        let parts: Vec<String> = file
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let kind: SourceKind = host::kind_of(&parts).ok_or_else(|| {
            Error::input(format!(
                "cannot import `{shown}`: {}",
                host::ImportError::UnknownKind
            ))
        })?;
        let bytes = match pi_rules_host::files::bounded::read_text(file, MAX_IMPORT_BYTES) {
            Ok(Some(text)) => text.into_bytes(),
            Ok(None) => bail!("cannot import `{shown}`: no such file"),
            Err(reason) => bail!("cannot import `{shown}`: {}", escape(&reason)),
        };
        let imported = host::import(kind, &bytes).map_err(|err| {
            Error::input(format!(
                "cannot import `{shown}`: {}",
                escape(&err.to_string())
            ))
        })?;
        if let Some(kept) = &imported.kept {
            note(
                cx.err,
                format_args!("pi-rules: note: `{shown}`: {}", escape(kept)),
            );
        }
        scoped_any |= !imported.paths.is_empty();
        for glob in &imported.paths {
            if let Err(err) = rule_scope::compile_glob(glob) {
                note(
                    cx.err,
                    format_args!(
                        "pi-rules: warning: `{shown}`: `{}` is not a glob pi-rules can use ({}); \
                         it is kept, and `pi-rules check` reports it",
                        escape(glob),
                        escape(&err.reason)
                    ),
                );
            }
        }
        if let Some(warning) = &imported.warning {
            note(
                cx.err,
                format_args!("pi-rules: warning: `{shown}`: {}", escape(warning)),
            );
        }
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
        rules.push((shown, host::stem(&name.unwrap_or_default()), imported.text));
    }
    if scoped_any
        && !pi_rules_host::config::Config::read(&layers.session)
            .config
            .scoped()
    {
        note(
            cx.err,
            format_args!(
                "pi-rules: note: scopes are off for pi in this project, so pi reads the kept \
                 `paths:` rules as any other until `[rules] scoped = true` is in \
                 .pi/pi-rules.toml"
            ),
        );
    }
    let mut used = layers.used_prefixes();
    let dir_path = layers.writable_dir(target)?;
    let dir = layers.open_layer(target).map_err(|e| {
        Error::input(format!(
            "cannot write to `{}`: {e:#}",
            escape(&dir_path.display().to_string())
        ))
    })?;
    for (shown, stem, text) in rules {
        let Some(prefix) = next_free(&used, lo, hi) else {
            bail!(
                "cannot import `{shown}`: every prefix from {lo:02} to {hi:02} of the {} \
                 layer is in use",
                target.as_str()
            );
        };
        used.push(prefix);
        let file_name = format!("{prefix:02}-{stem}.md");
        let dest = dir_path.join(&file_name);
        let shown_dest = escape(&dest.display().to_string()).into_owned();
        match dir.write(&file_name, text.as_bytes(), false) {
            Ok(()) => {}
            Err(WriteError::Exists) => bail!("`{shown_dest}` already exists; nothing replaced"),
            Err(err) => bail!("cannot write `{shown_dest}`: {err}"),
        }
        output(writeln!(cx.out, "{shown_dest}"))?;
    }
    Ok(Exit::Success)
}
