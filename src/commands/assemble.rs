//! `pi-rules assemble`: the rules block, as text or as JSON with the per-file report.

use crate::invocation::Context;
use crate::invocation::{run_selected, LayerArgs, OutputFormat, SelectArgs, SelectDefaults};
use crate::output::{output, write_file_text, Exit};
use crate::terminal::escape;
use pi_rules_host::error::Result;

/// Assemble the rules block from the package, user and project layers.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules assemble                       # embedded package rules + ~/.pi + ./.pi
  pi-rules assemble --cwd ~/src/app --coms-active
  pi-rules assemble --format json | jq .files
  pi-rules assemble --layers project --settings project --confine   # what export writes

Text output is the block without its two leading newlines; warnings go to stderr as
`rule assembly: MESSAGE`. JSON output has `block` (exact, leading \"\\n\\n\" included), `warnings`,
`files` (per name: layer, path, status, shadowed) and `stats`. On a terminal, control characters
in the text block are shown escaped (--raw for the bytes); on a pipe the block is exact.

--layers, --settings and --set choose the layers and settings as `pi-rules export` does, with
the same meaning; with them and --confine, the block is the one export writes.")]
pub struct Args {
    #[command(flatten)]
    pub layers: LayerArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
    /// On a terminal, print the block's bytes as they are, control characters included (by
    /// default they are shown escaped there; on a pipe the bytes are always exact).
    #[arg(long)]
    pub raw: bool,
}

/// The version of the JSON form, documented in `docs/assemble-json.md`.
pub use crate::report::assemble::FORMAT_VERSION;

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let run = run_selected(
        &args.layers.project,
        args.layers.options(),
        &args.select,
        SelectDefaults::HOST,
        cx,
        &mut (),
    )?;
    match args.format {
        OutputFormat::Text => {
            for warning in run.warning_messages() {
                // Written piece by piece: a file of stray closers has one warning per marker.
                // Failures are ignored, as for every diagnostic (see `note`).
                let _ = cx.err.write_all(b"rule assembly: ");
                let _ = cx.err.write_all(warning.prefix().as_bytes());
                let _ = cx.err.write_all(escape(warning.subject()).as_bytes());
                let _ = cx.err.write_all(b"\n");
            }
            write_file_text(cx.out, cx.err, run.block.text().as_bytes(), args.raw)?;
        }
        OutputFormat::Json => output(crate::report::assemble::write_json(&run, cx.out))?,
    }
    cx.release(run);
    Ok(Exit::Success)
}
