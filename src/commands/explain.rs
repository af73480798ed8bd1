//! `pi-rules explain`: per file and per conditional block, what is in the rules block and why.
//!
//! The decision recorder and the report model are the host's ([`pi_rules_host::explain`]); the
//! command runs the assembly with the recorder and writes the report in either form through
//! [`crate::report::explain`].

use crate::invocation::{
    run_selected, Context, LayerArgs, OutputFormat, SelectArgs, SelectDefaults,
};
use crate::output::{output, Exit};
use crate::report::explain as print;
use crate::terminal::Paint;
use pi_rules_host::error::Result;
use pi_rules_host::explain::{Explanation, Recorder};

/// Explain, per file and per block, what is in the rules block and why.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules explain
  pi-rules explain --cwd ~/src/app --format json
  pi-rules explain --layers project --settings project --confine   # export's block

Token counts are estimates: one token per four bytes of UTF-8, rounded up. Long values and
conditions are cut in the text form, with their length shown; the JSON form has every value in
full once, in `settings`.

--layers, --settings and --set choose the layers and settings as `pi-rules export` does, with
the same meaning; with them and --confine, explain explains every line export writes.")]
pub struct Args {
    #[command(flatten)]
    pub layers: LayerArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

/// The version of the JSON form, documented in `docs/explain-json.md`.
pub use crate::report::explain::FORMAT_VERSION;

/// `pi-rules explain`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let mut recorder = Recorder::default();
    let run = run_selected(
        &args.layers.project,
        args.layers.options(),
        &args.select,
        SelectDefaults::HOST,
        cx,
        &mut recorder,
    )?;
    let report = Explanation::new(&run, &recorder, args.layers.coms_active);
    match args.format {
        OutputFormat::Json => output(print::write_json(&report, cx.out))?,
        OutputFormat::Text => {
            let paint = Paint { on: cx.color_out() };
            output(print::write_text(&report, cx.out, paint))?
        }
    }
    // A large layer's texts and decisions are tens of thousands of allocations, scattered:
    // freeing them one by one just before exiting costs as much as a tenth of the run.
    cx.release(report);
    cx.release((run, recorder));
    Ok(Exit::Success)
}
