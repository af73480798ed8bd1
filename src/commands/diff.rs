//! `pi-rules diff`: what a settings change, the `coms_active` feature, or edits since a saved
//! block do to the rules block, as a unified diff.

use crate::invocation::{
    Context, LayerArgs, ProjectArgs, ScopeArgs, SettingsOverrides, SettingsSource,
};
use crate::output::{note, output, write_notes, Exit};
use crate::terminal::{escape, Paint};
use crate::unified_diff;
use pi_rules_host::assembly;
use pi_rules_host::bail;
use pi_rules_host::error::Result;
use pi_rules_host::files::bounded::MAX_PROMPT_BYTES;
use pi_rules_host::session::SettingsRead;
use std::io::Read as _;
use std::path::PathBuf;

/// Show how the rules block changes with other settings, or since a saved block.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(
    group(clap::ArgGroup::new("change").multiple(true).required(true)
        .args(["set", "coms_active", "no_coms_active", "against"])),
    after_help = "\
Examples:
  pi-rules diff --set review_loop_enforcement=true
  pi-rules diff --set commit_trailer=Assisted-by --set dco=true
  pi-rules diff --coms-active                     # what the coms protocol adds
  pi-rules assemble > before.md                   # ...edit rules or settings...
  pi-rules diff --against before.md

The first block is the one `assemble` prints now (coms_active off), or FILE with --against; the
second is the block now with the --set values and the feature as given. Each VALUE is read as
JSON when it parses (true, 5, [\"a\"], \"text\"), else as a string, and is checked as a settings
file value would be. --no-coms-active compares a block with coms_active on against one with it
off.

Exit status: 0 when the blocks are the same, 1 when they differ (as `diff` and `git diff
--exit-code`), 2 for an unknown key or a rejected value, 3 for an unreadable FILE.")]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// A package rules directory instead of the embedded rules [env: PI_RULES_PACKAGE_DIR].
    #[arg(long, value_name = "DIR")]
    pub package_dir: Option<PathBuf>,
    /// Refuse rules that escape the project or are special files, as `assemble --confine`
    /// [env: PI_RULES_CONFINE=1].
    #[arg(long)]
    pub confine: bool,
    /// Set KEY to VALUE in the second block, above every settings file (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Turn the coms_active feature on in the second block.
    #[arg(long, conflicts_with = "no_coms_active")]
    pub coms_active: bool,
    /// Turn the coms_active feature off in the second block (and on in the first).
    #[arg(long)]
    pub no_coms_active: bool,
    /// Compare with a block saved earlier (`pi-rules assemble > FILE`); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Lines of context around each change.
    #[arg(long, short = 'U', value_name = "N", default_value_t = unified_diff::DEFAULT_CONTEXT)]
    pub context: usize,
}

/// `pi-rules diff`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let session = args.project.session(cx.env)?;
    let mut overrides = SettingsOverrides::parse(&session.schema, &args.set)?;
    let layers = |coms_active: bool| {
        LayerArgs {
            project: args.project.clone(),
            package_dir: args.package_dir.clone(),
            coms_active,
            confine: args.confine,
            scope: args.scope.clone(),
        }
        .options()
    };
    let base = cx.read_settings(&session);

    let (old_label, old, session) = match &args.against {
        Some(path) => {
            let shown = path.display().to_string();
            (shown, read_saved(path)?, session)
        }
        None => {
            let run = assembly::run(
                session,
                &layers(args.no_coms_active),
                SettingsRead {
                    resolved: base.resolved.clone(),
                    files: Vec::new(),
                    notes: Vec::new(),
                },
                &mut (),
            )?;
            write_notes(cx.err, &run.notes);
            let label = if args.no_coms_active {
                "now, coms_active on".to_owned()
            } else {
                "now".to_owned()
            };
            let text = run.block.text().to_owned();
            (label, text, run.session)
        }
    };

    let mut new_settings = if overrides.is_empty() {
        base
    } else {
        overrides.read(&session)
    };
    // The settings' notes were written when they were first read.
    new_settings.notes.clear();
    let new_run = assembly::run(session, &layers(args.coms_active), new_settings, &mut ())?;
    // Without `--against`, the second run's notes (a missing package directory, escaping
    // rules) would repeat the first's.
    if args.against.is_some() {
        write_notes(cx.err, &new_run.notes);
    }
    let mut changes = overrides.describe();
    if args.coms_active {
        changes.push("coms_active on".to_owned());
    } else if args.no_coms_active {
        changes.push("coms_active off".to_owned());
    }
    let new_label = if changes.is_empty() {
        "now".to_owned()
    } else {
        format!("now with {}", changes.join(", "))
    };
    for warning in new_run.warning_messages() {
        note(
            cx.err,
            format_args!("rule assembly: {}", escape(&warning.to_string())),
        );
    }
    let paint = Paint { on: cx.color_out() };
    let differs = output(unified_diff::write(
        cx.out,
        (&old_label, &old),
        (&new_label, new_run.block.text()),
        args.context,
        paint,
    ))?;
    Ok(if differs {
        Exit::Findings
    } else {
        Exit::Success
    })
}

/// A saved block, `-` for stdin; at most [`MAX_PROMPT_BYTES`].
fn read_saved(path: &std::path::Path) -> Result<String> {
    let shown = escape(&path.display().to_string()).into_owned();
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_PROMPT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|err| anyhow::anyhow!("cannot read stdin: {err}"))?;
        if bytes.len() as u64 > MAX_PROMPT_BYTES {
            bail!("stdin is over the {MAX_PROMPT_BYTES}-byte limit");
        }
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    match pi_rules_host::files::bounded::read_text(path, MAX_PROMPT_BYTES) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => bail!(
            "cannot read `{shown}`: no such file; save a block with `pi-rules assemble > {shown}`"
        ),
        Err(reason) => bail!("cannot read `{shown}`: {}", escape(&reason)),
    }
}
