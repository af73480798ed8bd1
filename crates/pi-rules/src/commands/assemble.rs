//! `pi-rules assemble`: the rules block, as text or as JSON with the per-file report.

use crate::assembly::{self, Run};
use crate::invocation::Context;
use crate::invocation::{LayerArgs, OutputFormat};
use crate::output::{note, output, Exit};
use crate::terminal::escape;
use anyhow::Result;
use serde_json::{json, Value as Json};

/// Assemble the rules block from the package, user and project layers.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules assemble                       # embedded package rules + ~/.pi + ./.pi
  pi-rules assemble --cwd ~/src/app --coms-active
  pi-rules assemble --format json | jq .files

Text output is the block without its two leading newlines; warnings go to stderr as
`rule assembly: MESSAGE`. JSON output has `block` (exact, leading \"\\n\\n\" included), `warnings`,
`files` (per name: layer, path, status, shadowed) and `stats`.")]
pub struct Args {
    #[command(flatten)]
    pub layers: LayerArgs,
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let run = assembly::run_args(&args.layers, cx, &mut ())?;
    let warnings: Vec<String> = run
        .assembly
        .iter()
        .flat_map(|a| a.warnings.iter().map(|w| w.to_string()))
        .collect();
    match args.format {
        OutputFormat::Text => {
            for warning in &warnings {
                note(cx.err, format_args!("rule assembly: {}", escape(warning)));
            }
            let text = run.block.strip_prefix("\n\n").unwrap_or(&run.block);
            output(cx.out.write_all(text.as_bytes()))?;
        }
        OutputFormat::Json => {
            let value = report(&run, &warnings);
            output(writeln!(cx.out, "{value}"))?;
        }
    }
    Ok(Exit::Success)
}

fn report(run: &Run, warnings: &[String]) -> Json {
    let files = run.loaded.as_ref().map_or_else(Vec::new, |loaded| {
        assembly::name_entries(loaded, run.assembly.as_ref())
            .map(|entry| {
                let name = &entry.report.name;
                let winner = entry.report.winner();
                let shadowed: Vec<String> =
                    entry.shadowed().map(|c| c.display_path(name)).collect();
                json!({
                    "name": name,
                    "layer": winner.map(|w| w.layer.as_str()),
                    "path": winner.map(|w| w.display_path(name)),
                    "status": entry.status(),
                    "shadowed": shadowed,
                })
            })
            .collect()
    });
    let loaded_files = run.loaded.as_ref().map_or(0, |l| l.files.len());
    let bytes: usize = run
        .loaded
        .as_ref()
        .map_or(0, |l| l.files.iter().map(|f| f.text.len()).sum());
    let notes = run.loaded.as_ref().map_or(&[][..], |l| &l.notes[..]);
    json!({
        "block": run.block,
        "warnings": warnings,
        "files": files,
        "notes": notes,
        "stats": {
            "files": loaded_files,
            "bytes": bytes,
            "read_us": run.read_micros,
            "assemble_us": run.assemble_micros,
        },
    })
}
