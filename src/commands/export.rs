//! `pi-rules export`: the rules block written into the files other agents read (`AGENTS.md`,
//! `CLAUDE.md`, `.cursor/rules/pi-rules.mdc`, ...), checked for drift with `--check`. The work
//! is the host's ([`pi_rules_host::export`]); this is its command line and its printing.

use crate::invocation::OutputFormat;
use crate::invocation::{Context, ProjectArgs, SelectArgs, SelectDefaults};
use crate::output::{note, output, write_notes, Exit};
use crate::terminal::{escape, Paint};
use crate::unified_diff;
use pi_rules_host::assembly::{self, LayerOptions, ScopeOptions};
use pi_rules_host::config::{Config, ExportSettings};
use pi_rules_host::error::{Result, UsageError};
use pi_rules_host::export::lint::planned::{after_export, Finding};
use pi_rules_host::export::model::{self, Model, WalkOptions};
use pi_rules_host::export::{self as host, targets, user, Options, Target};
use pi_rules_host::selection::{LayerChoice, Selection, SettingsChain};
use pi_rules_host::session::Session;
use std::path::PathBuf;

/// Write the rules block into the files other agents read (AGENTS.md, CLAUDE.md, Cursor, ...).
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Targets and the files they write (relative to the project root):
  agents-md  AGENTS.md                        managed section (Codex, opencode, Qwen, Kilo, ...)
  claude     CLAUDE.md                        managed section (Claude Code)
  gemini     GEMINI.md                        managed section (Gemini CLI)
  copilot    .github/copilot-instructions.md  managed section (GitHub Copilot)
  goose      .goosehints                      managed section (goose)
  cursor     .cursor/rules/pi-rules.mdc       owned file, `alwaysApply: true` (Cursor)
  windsurf   .windsurf/rules/pi-rules.md      owned file, `trigger: always_on` (Windsurf)
  cline      .clinerules/pi-rules.md          owned file (Cline)
  kiro       .kiro/steering/pi-rules.md       owned file, `inclusion: always` (Kiro)

Scoped rules (`paths:`, or a nested .pi/rules directory D) go where each agent looks for
scoped instructions: .claude/rules/pi-rules/NAME.md (`paths:`), .cursor/rules/pi-rules-NAME.mdc
(`globs:`), .github/instructions/pi-rules-NAME.instructions.md (`applyTo:`),
.kiro/steering/pi-rules-NAME.md (`fileMatch`), .windsurf/rules/pi-rules-NAME.md (`trigger:
glob`), .clinerules/pi-rules-NAME.md (`paths:`; D/.clinerules for D); for AGENTS.md, GEMINI.md
and .goosehints a subsection of the root file headed with its globs, or a section in
D/AGENTS.md (D/GEMINI.md, D/.goosehints). `agents:` is applied per target. A file export wrote
earlier that is no longer made is deleted (--check names it). `pi-rules docs export` has the
forms and their sources.

Examples:
  pi-rules export agents-md claude     # write (or refresh) AGENTS.md and CLAUDE.md
  pi-rules export                      # [export] targets, else every target the project has
  pi-rules export --check              # in CI: exit 1, with a diff, when a file is stale
  pi-rules export --remove             # take out everything export wrote, and nothing else
  pi-rules export --user claude        # the user layer into ~/.claude/CLAUDE.md

In a managed section, pi-rules owns only the lines between its begin and end markers; the rest
of the file stays byte for byte. An owned file is written whole, and carries a generated-by line;
a file at that path without it is not replaced (exit 3) unless --force. Without TARGET, export
writes `[export] targets` of .pi/pi-rules.toml, else refreshes the targets whose file already
holds a section or is an owned file.

One copy per agent: with agents-md exported, every agent that reads AGENTS.md takes the rules
from it (its subsections and D/AGENTS.md): Claude Code's go into .claude/CLAUDE.md (which
Copilot does not read) and .claude/rules/pi-rules, and none into CLAUDE.md; Gemini CLI gets
`AGENTS.md` (and `GEMINI.md`) named in `context.fileName` of .gemini/settings.json, the other
keys kept, and no GEMINI.md; copilot-instructions.md holds one line pointing to AGENTS.md; no
.github/instructions or .clinerules file is written (Copilot and Cline read AGENTS.md). The
files of the other layout are taken out (--check names them). --pointer instead makes CLAUDE.md
and GEMINI.md import AGENTS.md (`@./AGENTS.md`) and keeps each target's own forms: Copilot
follows that import too, and then reads the rules twice.

The content is the project layer's rules (.pi/rules) with the project settings file and the
schema defaults. The package rules are written for pi's orchestrator and its specialist agents
(delegate, do not edit), and stay out unless chosen: `--layers package,project`, or once for
the team in .pi/pi-rules.toml, `[export] layers = [\"package\", \"project\"]`; `[export]
settings` and `set` are --settings and --set (flags win over the file). The user layer, the
global settings file and the environment are one machine's, and stay out of a team's files
(--layers and --settings all bring them in). Rules that escape the project are always refused,
as with --confine. `assemble` and `explain` take --layers, --settings and --set too: with
--confine and the same flags (--layers project --settings project for export's defaults) they
print, and explain line by line, the block export writes.

--user writes the user layer alone into each agent's per-user file, under $HOME only:
agents-md $CODEX_HOME/AGENTS.md or ~/.codex/AGENTS.md, claude ~/.claude/CLAUDE.md, gemini
~/.gemini/GEMINI.md, copilot ~/.copilot/copilot-instructions.md, kiro
~/.kiro/steering/pi-rules.md; the other targets have none (exit 2).

Export warns, as `pi-rules check` does, of what agents make of the files as they will be
(--check and --dry-run too, before anything is written), hand-written files beside them
included: a rule an agent reads twice (PR902, naming the agent and the files), a file an agent
reads in place of an exported one (PR903: AGENTS.override.md; a CLAUDE.md pi-rules did not
write, beside an exported AGENTS.md), a comment Claude Code strips (PR904), the AGENTS.md files
from the root down to a directory over Codex's 32 KiB (PR905), a file over its agent's limit
(PR901). `pi-rules check --explain CODE` says more. --check fails on a rule read twice from a
hand-written file and another (delete the copy); the other findings are warnings.

Writes go to temporary files, synced together, then renamed, never through a link that leaves
the project; a file whose bytes are already right is not touched. Exit status: 0 done (or, with
--check, every file fresh), 1 with --check when a file is stale, missing or to be deleted, or a
rule would reach an agent twice from a hand-written file, 2 usage, 3 a file that cannot be
written (broken markers, a file not written by pi-rules, a link out of the project,
read-only).")]
pub struct Args {
    /// The targets to write (see below; `a,b` is taken too); none: `[export] targets` of the
    /// configuration, else those the project already has.
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
    /// CLAUDE.md and GEMINI.md import AGENTS.md (`@./AGENTS.md`) instead of holding a copy,
    /// each target keeping its own forms; exports agents-md too. Copilot follows the import
    /// as well (two copies for it).
    #[arg(long)]
    pub pointer: bool,
    /// Replace an owned target's file that pi-rules did not write.
    #[arg(long)]
    pub force: bool,
    /// Take out every section and file pi-rules wrote for the targets (every target when none
    /// is named), and nothing else: the text around a section stays as it was.
    #[arg(long, conflicts_with_all = ["pointer", "force"])]
    pub remove: bool,
    /// Write the user layer alone into each agent's per-user file (~/.claude/CLAUDE.md,
    /// ~/.codex/AGENTS.md, ~/.gemini/GEMINI.md), and nothing into the project.
    #[arg(long, conflicts_with_all = ["pointer"])]
    pub user: bool,
    /// Warn when a file holds more than N bytes, instead of its agent's own limit.
    #[arg(long, value_name = "N")]
    pub max_bytes: Option<u64>,
    /// Lines of context around each change in a diff.
    #[arg(long, short = 'U', value_name = "N", default_value_t = unified_diff::DEFAULT_CONTEXT)]
    pub context: usize,
    /// `json`: what was done to each file, as one JSON object on stdout (`files`: `path`,
    /// `target`, `action`: `written`, `deleted`, `stale`, `missing`, `kept`; `warnings`:
    /// `code`, `path`, `line`, `column` (null for a whole file), `message`).
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

/// The targets named, in table order, each once.
fn parse_targets(names: &[String], pointer: bool) -> Result<Vec<Target>, UsageError> {
    let mut targets = Vec::new();
    for name in names.iter().flat_map(|n| n.split(',')) {
        let Some(target) = Target::from_name(name.trim()) else {
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
    if args.user {
        return run_user(args, &given, cx);
    }
    let session = args.project.session(cx.env)?;
    let root = session.project_root();
    if args.remove {
        let targets = if given.is_empty() {
            Target::ALL.to_vec()
        } else {
            given
        };
        let candidates = model::walk_candidates(&root, Default::default());
        let planned = host::plan_remove(&root, &targets, &candidates)?;
        return finish(args, cx, &planned);
    }
    // `[export]` in pi-rules' configuration fills what the flags leave open.
    let config = Config::read(&session);
    write_notes(cx.err, &config.notes());
    let file = &config.config.export;
    let defaults = SelectDefaults {
        layers: Some(LayerChoice::of(&file.layers)),
        settings: match file.settings {
            Some(ExportSettings::All) => SettingsChain::All,
            Some(ExportSettings::Project) | None => SettingsChain::Project,
        },
    };
    // `[export] set` first, so that `--set` of the same key wins.
    let mut select = args.select.clone();
    select.set = file.set.iter().chain(&args.select.set).cloned().collect();
    let selection = select.selection(&session.schema, defaults)?;
    // `[export] targets` when none is named.
    let given = if given.is_empty() && !file.targets.is_empty() {
        parse_targets(&file.targets, args.pointer)?
    } else {
        given
    };
    let run = assemble(args, session, &selection, cx)?;
    let export = Options {
        pointer: args.pointer,
        force: args.force,
        max_bytes: args.max_bytes,
    };
    // Without targets, those present are refreshed.
    let targets = if given.is_empty() {
        let present = host::present(&root, &export)?;
        if present.is_empty() {
            return Err(UsageError(format!(
                "no target given, and the project `{}` has no exported file to refresh; name \
                 one or more targets: {}",
                escape(&root.display().to_string()),
                targets::names()
            ))
            .into());
        }
        present
    } else {
        given
    };
    for warning in run.warning_messages() {
        note(
            cx.err,
            format_args!("rule assembly: {}", escape(&warning.to_string())),
        );
    }
    let model = Model::build(&run, &root, WalkOptions::default());
    for text in &model.notes {
        note(cx.err, format_args!("pi-rules: warning: {}", escape(text)));
    }
    let (planned, warnings) = host::plan_model(&root, &targets, &model, &export)?;
    for text in &warnings {
        note(cx.err, format_args!("pi-rules: warning: {}", escape(text)));
    }
    for p in &planned {
        if let Some(warning) = &p.over_limit {
            note(
                cx.err,
                format_args!("pi-rules: warning[PR901]: {}", escape(warning)),
            );
        }
    }
    // What `check` will say of the files as they will be (PR902-PR905).
    let found = after_export(run.session.files(), &root, &planned, &model.candidates);
    for f in &found {
        note(
            cx.err,
            format_args!("pi-rules: warning[{}]: {}", f.code.id(), escape(&f.located)),
        );
    }
    finish_with(args, cx, &planned, &found)
}

/// `--check`, `--dry-run`, or the writes, and what is printed of them.
fn finish(args: &Args, cx: &mut Context<'_>, planned: &[host::Planned]) -> Result<Exit> {
    finish_with(args, cx, planned, &[])
}

/// [`finish`], with what `check` will say of the files (`found`): in `--format json`'s
/// `warnings`, and, for a rule an agent would read twice, a failed `--check`.
fn finish_with(
    args: &Args,
    cx: &mut Context<'_>,
    planned: &[host::Planned],
    found: &[Finding],
) -> Result<Exit> {
    let json = args.format == OutputFormat::Json;
    let warnings = || {
        let over = planned.iter().filter_map(|p| {
            let message = p.over_limit.as_ref()?;
            Some(serde_json::json!({
                "code": "PR901", "path": p.located.shown, "line": null, "column": null,
                "message": message,
            }))
        });
        let found = found.iter().map(|f| {
            serde_json::json!({
                "code": f.code.id(), "path": f.path, "line": f.line, "column": f.column,
                "message": f.message,
            })
        });
        serde_json::Value::Array(over.chain(found).collect())
    };
    let copies = found.iter().filter(|f| f.fails_check()).count();
    if args.check || args.dry_run {
        let paint = Paint { on: cx.color_out() };
        let mut stale = Vec::new();
        for (p, change) in planned.iter().filter_map(|p| Some((p, p.change.as_ref()?))) {
            let path = &p.located.shown;
            if !json {
                let old_label = match change.old {
                    Some(_) => format!("a/{path}"),
                    None => "/dev/null".to_owned(),
                };
                let new_label = match change.new {
                    Some(_) => format!("b/{path}"),
                    None => "/dev/null".to_owned(),
                };
                let old = String::from_utf8_lossy(change.old.as_deref().unwrap_or_default());
                let new = String::from_utf8_lossy(change.new.as_deref().unwrap_or_default());
                output(unified_diff::write(
                    cx.out,
                    (&old_label, &old),
                    (&new_label, &new),
                    args.context,
                    paint,
                ))?;
            }
            stale.push(match change.new {
                Some(_) => escape(path).into_owned(),
                None => format!("{} (to be deleted)", escape(path)),
            });
        }
        if json {
            let files: Vec<serde_json::Value> = planned
                .iter()
                .map(|p| {
                    let action = match &p.change {
                        None => "kept",
                        Some(c) if c.new.is_none() => "deleted",
                        Some(c) if c.old.is_none() => "missing",
                        Some(_) => "stale",
                    };
                    json_file(&p.located.shown, p.target, action)
                })
                .collect();
            output(writeln!(
                cx.out,
                "{}",
                serde_json::json!({
                    "format": 1, "check": true, "files": files, "warnings": warnings(),
                })
            ))?;
        }
        if args.check && copies > 0 {
            note(
                cx.err,
                format_args!(
                    "pi-rules: {copies} rule text{} would reach an agent twice, from a \
                     hand-written file and another (PR902 above): keep each rule in one of the \
                     files that agent reads",
                    if copies == 1 { "" } else { "s" }
                ),
            );
        }
        if !args.check || (stale.is_empty() && copies == 0) {
            return Ok(Exit::Success);
        }
        if stale.is_empty() {
            return Ok(Exit::Findings);
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
    let applied = host::apply(planned)?;
    if json {
        let mut files: Vec<serde_json::Value> = applied
            .iter()
            .map(|a| {
                let action = if a.deleted { "deleted" } else { "written" };
                json_file(&a.path, a.target, action)
            })
            .collect();
        files.extend(
            planned
                .iter()
                .filter(|p| !p.changes())
                .map(|p| json_file(&p.located.shown, p.target, "kept")),
        );
        output(writeln!(
            cx.out,
            "{}",
            serde_json::json!({
                "format": 1, "check": false, "files": files, "warnings": warnings(),
            })
        ))?;
        return Ok(Exit::Success);
    }
    for a in applied {
        if a.deleted {
            output(writeln!(cx.out, "{} (deleted)", escape(&a.path)))?;
        } else {
            output(writeln!(cx.out, "{}", escape(&a.path)))?;
        }
    }
    Ok(Exit::Success)
}

fn json_file(path: &str, target: Target, action: &str) -> serde_json::Value {
    serde_json::json!({ "path": path, "target": target.name(), "action": action })
}

/// The assembly of the layers and settings `selection` chooses, its notes written: what
/// `export` and `export --user` write. pi's own scopes play no part in it (`[rules] scoped` is
/// pi's; other agents' files carry every scope in their own forms).
fn assemble(
    args: &Args,
    session: Session,
    selection: &Selection,
    cx: &mut Context<'_>,
) -> Result<assembly::Run> {
    let settings = selection.read_settings(&session, cx.settings);
    let options = LayerOptions {
        package_dir: args.package_dir.clone(),
        coms_active: args.coms_active,
        confine: true,
        export_layers: selection.layers,
        scope: ScopeOptions {
            scoped_in_pi: Some(false),
            ..ScopeOptions::default()
        },
    };
    let run = assembly::run(session, &options, settings, &mut ())?;
    write_notes(cx.err, &run.notes);
    Ok(run)
}

/// `pi-rules export --user`: the user layer alone, into each agent's per-user file.
fn run_user(args: &Args, given: &[Target], cx: &mut Context<'_>) -> Result<Exit> {
    let session = args.project.session(cx.env)?;
    let home = session.home.clone();
    let targets = if given.is_empty() {
        user::TARGETS.to_vec()
    } else {
        given.to_vec()
    };
    for &target in &targets {
        if user::file(target, cx.env).is_none() {
            return Err(UsageError(format!(
                "`{target}` has no per-user file that export --user could write; the targets \
                 with one are {}",
                user::TARGETS.map(Target::name).join(", ")
            ))
            .into());
        }
    }
    let selection = args.select.selection(
        &session.schema,
        SelectDefaults {
            layers: Some(LayerChoice {
                package: false,
                user: true,
                project: false,
            }),
            settings: SettingsChain::Project,
        },
    )?;
    let run = assemble(args, session, &selection, cx)?;
    let export = Options {
        pointer: false,
        force: args.force,
        max_bytes: args.max_bytes,
    };
    let planned = if args.remove {
        user::plan_remove(home.as_deref(), &targets, cx.env)?
    } else {
        // The user layer's unscoped rules: no walk, as nested directories are the project's.
        let walk = WalkOptions {
            walk: false,
            ..WalkOptions::default()
        };
        let model = Model::build(&run, &run.session.project_root(), walk);
        let scoped = model.scoped.len();
        if scoped > 0 {
            note(
                cx.err,
                format_args!(
                    "pi-rules: warning: {scoped} rule{} of the user layer with `paths:` left out: \
                     a per-user file applies to every project",
                    if scoped == 1 { "" } else { "s" }
                ),
            );
        }
        user::plan(home.as_deref(), &targets, &model, &export, cx.env)?
    };
    finish(args, cx, &planned)
}
