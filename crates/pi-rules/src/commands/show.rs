//! `pi-rules show`: one rule file byte for byte, the copy that wins or the one in a given layer.

use crate::authoring::{LayerName, Layers, PlaceArgs};
use crate::loader::{Layer, Outcome};
use crate::output::{note, output, Exit, UsageError};
use crate::terminal::escape;
use anyhow::{bail, Result};

/// Print a rule file as it is on disk (or in the binary), frontmatter and markers included.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules show 40-critical-rules                  # the copy that wins
  pi-rules show critical-rules --layer package     # the shipped text, even when overridden
  pi-rules show 90-team.md --cwd ~/src/app

NAME is a rule's file name, with or without `.md`, or the name without its numeric prefix when
only one rule has it. The bytes are printed exactly; nothing is assembled, so `{{IF:…}}` markers
and the frontmatter are shown as written. Embedded package rules come from the binary.")]
pub struct Args {
    /// The rule: `40-critical-rules.md`, `40-critical-rules` or `critical-rules`.
    pub name: String,
    /// Show this layer's copy instead of the one that wins.
    #[arg(long, value_enum, value_name = "LAYER")]
    pub layer: Option<LayerName>,
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// `pi-rules show`.
pub fn run(args: &Args, cx: &mut crate::invocation::Context<'_>) -> Result<Exit> {
    let layers = Layers::read(&args.place)?;
    let report = layers.find(&args.name)?;
    let name = report.name.as_str();
    let candidate = match args.layer {
        Some(layer) => {
            let layer = Layer::from(layer);
            match report.candidates.iter().find(|c| c.layer == layer) {
                Some(candidate) => candidate,
                None => {
                    let present: Vec<&str> =
                        report.candidates.iter().map(|c| c.layer.as_str()).collect();
                    return Err(UsageError(format!(
                        "`{}` has no copy in the {layer} layer; it is in the {} layer",
                        escape(name),
                        present.join(" and ")
                    ))
                    .into());
                }
            }
        }
        None => match &report.outcome {
            Outcome::Taken {
                winner,
                fell_back_from,
                ..
            } => {
                for failure in fell_back_from {
                    note(
                        cx.err,
                        format_args!(
                            "pi-rules: note: the {} copy `{}` cannot be used ({}); showing the {} copy, which wins",
                            failure.candidate.layer,
                            escape(&failure.candidate.display_path(name)),
                            escape(&failure.reason.to_string()),
                            winner.layer
                        ),
                    );
                }
                winner
            }
            Outcome::Oversized { winner, .. } => winner,
            Outcome::Unreadable { failures } => {
                let reasons: Vec<String> = failures
                    .iter()
                    .map(|f| {
                        format!(
                            "`{}`: {}",
                            escape(&f.candidate.display_path(name)),
                            escape(&f.reason.to_string())
                        )
                    })
                    .collect();
                bail!(
                    "no copy of `{}` can be read: {}",
                    escape(name),
                    reasons.join("; ")
                );
            }
        },
    };
    let shown = escape(&candidate.display_path(name)).into_owned();
    let copy = match layers.read_copy(name, candidate) {
        Ok(copy) => copy,
        Err(unusable) => bail!("cannot show `{shown}`: {}", escape(&unusable.reason)),
    };
    if copy.masked {
        note(
            cx.err,
            format_args!(
                "pi-rules: note: `{shown}` is a link to an empty device: it masks the lower copies \
                 of `{}`; pass --layer to see one of them",
                escape(name)
            ),
        );
    }
    output(cx.out.write_all(&copy.bytes))?;
    Ok(Exit::Success)
}
