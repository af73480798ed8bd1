//! `pi-rules show`: one rule file byte for byte, the copy that wins or the one in a given layer;
//! on a terminal, with what could drive the terminal escaped.

use crate::invocation::{LayerName, PlaceArgs};
use crate::output::{note, write_file_text, Exit, UsageError};
use crate::terminal::escape;
use pi_rules_host::bail;
use pi_rules_host::error::Result;
use pi_rules_host::loader::{EscapingRule, Layer, Pick};

/// Print a rule file as it is on disk (or in the binary), frontmatter and markers included.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules show 40-critical-rules                  # the copy that wins
  pi-rules show critical-rules --layer package     # the shipped text, even when overridden
  pi-rules show 90-team.md --cwd ~/src/app

NAME is a rule's file name, with or without `.md`, or the name without its numeric prefix when
only one rule has it. Nothing is assembled, so `{{IF:…}}` markers and the frontmatter are shown
as written. Embedded package rules come from the binary.

On a pipe or into a file the bytes are printed exactly. On a terminal, what could drive it is
shown escaped, as the other commands show text from files: escape sequences, BEL, backspace,
carriage returns, other control characters, C1 and bidirectional controls (`\\x1b`, `\\r`,
`\\u{202e}`), and bytes that are not UTF-8 (`\\xNN`); line breaks and tabs stay as they are, and a
note on stderr says how many were escaped. --raw prints the bytes on a terminal too.

A copy that is, or links to, a special file (`/proc/self/environ`, a device) or that resolves
outside the project is shown with a warning on stderr, as `assemble` warns; with --confine it is
refused as `assemble --confine` refuses it.")]
pub struct Args {
    /// The rule: `40-critical-rules.md`, `40-critical-rules` or `critical-rules`.
    pub name: String,
    /// Show this layer's copy instead of the one that wins.
    #[arg(long, value_enum, value_name = "LAYER")]
    pub layer: Option<LayerName>,
    /// Print the bytes exactly on a terminal too (they always are on a pipe or into a file).
    #[arg(long)]
    pub raw: bool,
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// `pi-rules show`.
pub fn run(args: &Args, cx: &mut crate::invocation::Context<'_>) -> Result<Exit> {
    let layers = args.place.read(cx.env)?;
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
                        "`{}` has no copy in the {} layer; it is in the {} layer",
                        escape(name),
                        layer.as_str(),
                        present.join(" and ")
                    ))
                    .into());
                }
            }
        }
        None => match &report.outcome {
            Pick::Taken {
                winner,
                fell_back_from,
                ..
            } => {
                for failure in fell_back_from {
                    note(
                        cx.err,
                        format_args!(
                            "pi-rules: note: the {} copy `{}` cannot be used ({}); showing the {} copy, which wins",
                            failure.candidate.layer.as_str(),
                            escape(&failure.candidate.display_path(name)),
                            escape(&failure.reason.to_string()),
                            winner.layer.as_str()
                        ),
                    );
                }
                winner
            }
            Pick::Oversized { winner, .. } => winner,
            Pick::Unreadable { failures } => {
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
    if let Some(escaped) = copy.escape {
        // The loader's own words, as `assemble` prints them for the same file.
        let escaped = EscapingRule {
            name: name.to_owned(),
            candidate: candidate.clone(),
            escape: escaped,
            refused: false,
        };
        note(
            cx.err,
            format_args!("pi-rules: warning: {}", escape(&escaped.to_string())),
        );
    }
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
    // `show` runs only as a process of its own, so its output is the process's stdout.
    write_file_text(cx.out, cx.err, &copy.bytes, args.raw)?;
    Ok(Exit::Success)
}
