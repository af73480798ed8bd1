//! `pi-rules override`: copy the rule that wins below a layer into that layer, to edit it there.

use crate::invocation::Context;
use crate::invocation::{PlaceArgs, TargetArgs};
use crate::output::{note, output, Exit};
use crate::terminal::escape;
use pi_rules_host::bail;
use pi_rules_host::error::Result;
use pi_rules_host::writing::WriteError;

/// Copy a rule into the user or project layer, byte for byte, to edit it there.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules override 40-critical-rules --user       # start from the package copy
  pi-rules override critical-rules --project       # start from the user copy if there is one
  \"$EDITOR\" \"$(pi-rules override 10-agent-routing --user)\"

A file in a higher layer replaces the lower file of the same name whole; there is no merge. So an
override starts as an exact copy of the copy that wins below the target layer: for --user the
package copy, for --project the user copy when there is one, else the package copy. The path
written is printed on stdout.

The write is atomic (a temporary file in the same directory, then a rename), the layer directory
is created if needed, and an existing file is never replaced without --force. A layer directory
that is, or lies under, a link leading out of the project (for --user, out of $HOME) is refused
with exit 3, and nothing is written.")]
pub struct Args {
    /// The rule: `40-critical-rules.md`, `40-critical-rules` or `critical-rules`.
    pub name: String,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Replace the copy already in the target layer.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// `pi-rules override`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let layers = args.place.read(cx.env)?;
    let target_layer = args.target.layer();
    let target = target_layer.as_str();
    let report = layers.find(&args.name)?;
    let name = report.name.as_str();
    let shown_name = escape(name).into_owned();
    let below: Vec<_> = report
        .candidates
        .iter()
        .filter(|c| c.layer < target_layer)
        .collect();
    if below.is_empty() {
        bail!(
            "`{shown_name}` has no copy below the {target} layer to start from; \
             `pi-rules new` writes a new rule from a template"
        );
    }
    let mut source = None;
    for candidate in below {
        let path = escape(&candidate.display_path(name)).into_owned();
        match layers.read_copy(name, candidate) {
            Ok(copy) => {
                source = Some((candidate, copy));
                break;
            }
            Err(unusable) if unusable.oversized => {
                bail!("cannot copy `{path}`: {}", escape(&unusable.reason))
            }
            Err(unusable) => note(
                cx.err,
                format_args!(
                    "pi-rules: note: the {} copy `{path}` cannot be read ({}); trying the next lower layer",
                    candidate.layer.as_str(),
                    escape(&unusable.reason)
                ),
            ),
        }
    }
    let Some((candidate, copy)) = source else {
        bail!("no copy of `{shown_name}` below the {target} layer can be read");
    };
    let dest = layers.writable_dir(target_layer)?.join(name);
    let shown_dest = escape(&dest.display().to_string()).into_owned();
    let dir = layers
        .open_layer(target_layer)
        .map_err(|e| anyhow::anyhow!("cannot write `{shown_dest}`: {e:#}"))?;
    match dir.write(name, &copy.bytes, args.force) {
        Ok(()) => {}
        Err(WriteError::Exists) => bail!(
            "`{shown_dest}` already exists; pass --force to replace it with the {} copy",
            candidate.layer.as_str()
        ),
        Err(err) => bail!("cannot write `{shown_dest}`: {err}"),
    }
    if copy.masked {
        note(
            cx.err,
            format_args!(
                "pi-rules: note: the {} copy is a link to an empty device (it masks `{shown_name}`), \
                 so the new copy is empty",
                candidate.layer.as_str()
            ),
        );
    }
    if let Some(higher) = report.candidates.iter().find(|c| c.layer > target_layer) {
        note(
            cx.err,
            format_args!(
                "pi-rules: note: the {} copy `{}` still wins over the new {target} copy",
                higher.layer.as_str(),
                escape(&higher.display_path(name))
            ),
        );
    }
    output(writeln!(cx.out, "{shown_dest}"))?;
    Ok(Exit::Success)
}
