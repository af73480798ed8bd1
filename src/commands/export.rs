//! `pi-rules export`: the rules block written into the files other agents read (`AGENTS.md`,
//! `CLAUDE.md`, `.cursor/rules/pi-rules.mdc`, ...), checked for drift with `--check`. The work
//! is the host's ([`pi_rules_host::export`]); this is its command line and its printing.

use crate::invocation::{Context, ProjectArgs, SelectArgs, SelectDefaults};
use crate::output::{note, output, write_notes, Exit};
use crate::terminal::{escape, Paint};
use crate::unified_diff;
use pi_rules_host::assembly::{self, LayerOptions, ScopeOptions};
use pi_rules_host::config::Config;
use pi_rules_host::error::{Result, UsageError};
use pi_rules_host::export::{self as host, targets, Options, Target};
use pi_rules_host::selection::{LayerChoice, SettingsChain};
use std::path::PathBuf;

/// Write the rules block into the files other agents read (AGENTS.md, CLAUDE.md, Cursor, ...).
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Targets and the files they write (relative to the project root):
  agents-md  AGENTS.md                        managed section (Codex, pi, and others)
  claude     CLAUDE.md                        managed section (Claude Code)
  gemini     GEMINI.md                        managed section (Gemini CLI)
  copilot    .github/copilot-instructions.md  managed section (GitHub Copilot)
  goose      .goosehints                      managed section (goose)
  cursor     .cursor/rules/pi-rules.mdc       owned file, `alwaysApply: true` (Cursor)
  windsurf   .windsurf/rules/pi-rules.md      owned file, `trigger: always_on` (Windsurf)
  cline      .clinerules/pi-rules.md          owned file (Cline)
  kiro       .kiro/steering/pi-rules.md       owned file, `inclusion: always` (Kiro)

Examples:
  pi-rules export agents-md claude     # write (or refresh) AGENTS.md and CLAUDE.md
  pi-rules export                      # refresh every target the project already has
  pi-rules export --check              # in CI: exit 1, with a diff, when a file is stale
  pi-rules export claude --pointer     # CLAUDE.md imports AGENTS.md instead of a copy

In a managed section, pi-rules owns only the lines between its begin and end markers; the rest
of the file stays byte for byte. An owned file is written whole, and carries a generated-by line;
a file at that path without it is not replaced (exit 3) unless --force. Without TARGET, export
refreshes the targets whose file already holds a section or is an owned file.

The content is the project layer's rules (.pi/rules) with the project settings file and the
schema defaults. The package rules are written for pi's orchestrator and its specialist agents
(delegate, do not edit), and stay out unless chosen: `--layers package,project`, or once for
the team in .pi/pi-rules.toml, `[export] layers = [\"package\", \"project\"]` (flags win over the
file). The user layer, the global settings file and the environment are one machine's, and stay
out of a team's files (--layers and --settings all bring them in). Rules that escape the project
are always refused, as with --confine. `assemble` and `explain` take --layers, --settings and
--set too: with --confine and the same flags (--layers project --settings project for export's
defaults) they print, and explain line by line, the block export writes.

Writes go to a temporary file and a rename, never through a link that leaves the project; a
file whose bytes are already right is not touched. Exit status: 0 done (or, with --check, every
file fresh), 1 with --check when a file is stale or missing, 2 usage, 3 a file that cannot be
written (broken markers, a file not written by pi-rules, a link out of the project, read-only).")]
pub struct Args {
    /// The targets to write (see below); none: those the project already has.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// A package rules directory instead of the embedded rules [env: PI_RULES_PACKAGE_DIR].
    #[arg(long, value_name = "DIR")]
    pub package_dir: Option<PathBuf>,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Peer-to-peer messaging is running (the `coms_active` feature predicate).
    #[arg(long)]
    pub coms_active: bool,
    /// Write nothing; exit 1, with a diff per file, when a file is not what export would write.
    #[arg(long, conflicts_with = "dry_run")]
    pub check: bool,
    /// Write nothing; print the diff of each file export would change.
    #[arg(long)]
    pub dry_run: bool,
    /// CLAUDE.md and GEMINI.md import AGENTS.md instead of holding a copy; exports agents-md too.
    #[arg(long)]
    pub pointer: bool,
    /// Replace an owned target's file that pi-rules did not write.
    #[arg(long)]
    pub force: bool,
    /// Warn when a file holds more than N bytes, instead of its agent's own limit.
    #[arg(long, value_name = "N")]
    pub max_bytes: Option<u64>,
    /// Lines of context around each change in a diff.
    #[arg(long, short = 'U', value_name = "N", default_value_t = unified_diff::DEFAULT_CONTEXT)]
    pub context: usize,
}

/// The targets named, in table order, each once.
fn parse_targets(names: &[String], pointer: bool) -> Result<Vec<Target>, UsageError> {
    let mut targets = Vec::new();
    for name in names {
        let Some(target) = Target::from_name(name) else {
            return Err(UsageError(format!(
                "unknown target `{}`; the targets are {}",
                escape(name),
                targets::names()
            )));
        };
        targets.push(target);
    }
    with_pointer(targets, pointer)
}

fn with_pointer(mut targets: Vec<Target>, pointer: bool) -> Result<Vec<Target>, UsageError> {
    if pointer {
        targets.push(Target::AgentsMd);
    }
    targets.sort();
    targets.dedup();
    Ok(targets)
}

/// `pi-rules export`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let given = parse_targets(&args.targets, args.pointer)?;
    let session = args.project.session(cx.env)?;
    // `[export]` in pi-rules' configuration fills what the flags leave open.
    let config = Config::read(&session);
    write_notes(cx.err, &config.notes());
    let defaults = SelectDefaults {
        layers: Some(LayerChoice::of(&config.config.export.layers)),
        settings: SettingsChain::Project,
    };
    let selection = args.select.selection(&session.schema, defaults)?;
    let settings = selection.read_settings(&session, cx.settings);
    let options = LayerOptions {
        package_dir: args.package_dir.clone(),
        coms_active: args.coms_active,
        confine: true,
        export_layers: selection.layers,
        // The configuration was read above: pi's own scopes play no part in an export.
        scope: ScopeOptions {
            scoped_in_pi: Some(false),
            ..ScopeOptions::default()
        },
    };
    let run = assembly::run(session, &options, settings, &mut ())?;
    write_notes(cx.err, &run.notes);
    let root = run.session.project_root();
    let content = run.block.text();
    let export = Options {
        pointer: args.pointer,
        force: args.force,
        max_bytes: args.max_bytes,
    };
    // Without targets, those present are found and planned in one look at each file.
    let present = if args.targets.is_empty() {
        let planned = host::plan_present(&root, content, &export);
        if matches!(&planned, Ok(planned) if planned.is_empty()) {
            return Err(UsageError(format!(
                "no target given, and the project `{}` has no exported file to refresh; name \
                 one or more targets: {}",
                escape(&root.display().to_string()),
                targets::names()
            ))
            .into());
        }
        Some(planned)
    } else {
        None
    };
    for warning in run.warning_messages() {
        note(
            cx.err,
            format_args!("rule assembly: {}", escape(&warning.to_string())),
        );
    }
    let planned = match present {
        Some(planned) => planned?,
        None => host::plan(&root, &given, content, &export)?,
    };
    for p in &planned {
        if let Some(warning) = &p.over_limit {
            note(
                cx.err,
                format_args!("pi-rules: warning[PR901]: {}", escape(warning)),
            );
        }
    }
    if args.check || args.dry_run {
        let paint = Paint { on: cx.color_out() };
        let mut stale = Vec::new();
        for (p, change) in planned.iter().filter_map(|p| Some((p, p.change.as_ref()?))) {
            let path = p.located.target.path();
            let old_label = match change.old {
                Some(_) => format!("a/{path}"),
                None => "/dev/null".to_owned(),
            };
            let old = String::from_utf8_lossy(change.old.as_deref().unwrap_or_default());
            let new = String::from_utf8_lossy(&change.new);
            output(unified_diff::write(
                cx.out,
                (&old_label, &old),
                (&format!("b/{path}"), &new),
                args.context,
                paint,
            ))?;
            stale.push(escape(path).into_owned());
        }
        if !args.check {
            return Ok(Exit::Success);
        }
        if stale.is_empty() {
            return Ok(Exit::Success);
        }
        note(
            cx.err,
            format_args!(
                "pi-rules: {} not what `pi-rules export` writes: {}; run `pi-rules export` and \
                 commit the result",
                if stale.len() == 1 {
                    "a file is"
                } else {
                    "files are"
                },
                stale.join(", ")
            ),
        );
        return Ok(Exit::Findings);
    }
    let written = host::apply(&planned)?;
    for target in written {
        output(writeln!(cx.out, "{}", escape(target.path())))?;
    }
    Ok(Exit::Success)
}
