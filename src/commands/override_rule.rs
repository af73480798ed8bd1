//! `pi-rules override`: copy the rule that wins below a layer into that layer, to edit it there.

use crate::invocation::Context;
use crate::invocation::{PlaceArgs, TargetArgs};
use crate::output::{note, output, Exit};
use crate::terminal::escape;
use pi_rules_host::authoring::OverrideError;
use pi_rules_host::bail;
use pi_rules_host::error::Result;

/// Copy a rule into the user or project layer, byte for byte, to edit it there.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules override 40-critical-rules --user       # start from the package copy
  pi-rules override critical-rules --project       # start from the user copy if there is one
  \"$EDITOR\" \"$(pi-rules override 10-agent-routing --user)\"
  pi-rules override critical-rules --dir packages/api   # for packages/api only

A file in a higher layer replaces the lower file of the same name whole; there is no merge. So an
override starts as an exact copy of the copy that wins below the target layer: for --user the
package copy, for --project the user copy when there is one, else the package copy. With --dir
DIR, it starts from the copy that wins in the three layers. The path written is printed on
stdout.

The write is atomic (a temporary file in the same directory, then a rename), the layer directory
is created if needed, and an existing file is never replaced without --force. A layer directory
that is, or lies under, a link leading out of the project (for --user, out of $HOME) is refused
with exit 3, and nothing is written.")]
pub struct Args {
    /// The rule: `40-critical-rules.md`, `40-critical-rules` or `critical-rules`.
    pub name: String,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Copy the rule into DIR/.pi/rules, a nested rule directory (DIR is a directory below the
    /// project directory): the copy there replaces the rule for the files under DIR. Scopes
    /// take effect in pi with `[rules] scoped = true` in .pi/pi-rules.toml.
    #[arg(long, value_name = "DIR", group = "TargetArgs")]
    pub dir: Option<std::path::PathBuf>,
    /// Replace the copy already in the target layer.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// `pi-rules override`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let layers = args.place.read(cx.env)?;
    let target = args.target.layer();
    let done = match &args.dir {
        Some(dir) => layers.override_into_nested(&args.name, &layers.nested_dir(dir)?, args.force),
        None => layers.override_rule(&args.name, target, args.force),
    };
    let done = match done {
        Ok(done) => done,
        Err(OverrideError::Exists { dest, from }) => bail!(
            "`{}` already exists; pass --force to replace it with the {} copy",
            dest.display(),
            from.as_str()
        ),
        Err(OverrideError::Failed(err)) => return Err(err),
    };
    for skipped in &done.notes {
        note(
            cx.err,
            format_args!("pi-rules: {}", escape(&skipped.to_string())),
        );
    }
    let name = done.dest.file_name().unwrap_or_default().to_string_lossy();
    if done.masked {
        note(
            cx.err,
            format_args!(
                "pi-rules: note: the {} copy is a link to an empty device (it masks `{}`), \
                 so the new copy is empty",
                done.from.as_str(),
                escape(&name)
            ),
        );
    }
    if let Some(higher) = &done.still_shadowed_by {
        note(
            cx.err,
            format_args!(
                "pi-rules: note: the {} copy `{}` still wins over the new {} copy",
                higher.layer.as_str(),
                escape(&higher.display_path(&name)),
                target.as_str()
            ),
        );
    }
    output(writeln!(
        cx.out,
        "{}",
        escape(&done.dest.display().to_string())
    ))?;
    Ok(Exit::Success)
}
