//! Whole-report benchmarks for `explain` and `assemble` on a large generated project layer:
//! 10,000 rule files of about 3.7 KB, each with a table, a block and a stray closer (37 MB).
//! The layer is written once to a temporary directory; each iteration reads it, assembles and
//! writes the report to a sink, as the command does.
//!
//! Run with `cargo bench -p pi-rules --bench explain`.

use pi_rules::commands::{assemble, explain};
use pi_rules::invocation::{Context, FreshSettings, LayerArgs, OutputFormat, ProjectArgs};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const FILES: usize = 10_000;

fn layer() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, project) = DIR.get_or_init(|| {
        let root = tempfile::tempdir().expect("tempdir");
        let project = root.path().join("project");
        let rules = project.join(".pi/rules");
        std::fs::create_dir_all(&rules).expect("layer");
        let row = "| a | b |\n|---|---|\n| {{IF:dco}}x{{/IF}} | y |\n";
        let body = format!("Rule text.\n{}\n{{{{/IF}}}}\n", row.repeat(80));
        for i in 0..FILES {
            std::fs::write(rules.join(format!("90-f{i:05}.md")), &body).expect("rule");
        }
        (root, project)
    });
    project
}

fn args() -> LayerArgs {
    LayerArgs {
        project: ProjectArgs {
            cwd: Some(layer().to_path_buf()),
            keys: None,
        },
        ..LayerArgs::default()
    }
}

fn context<'a>(
    out: &'a mut std::io::Sink,
    err: &'a mut std::io::Sink,
    settings: &'a mut FreshSettings,
) -> Context<'a> {
    Context {
        env: Box::leak(Box::new(pi_rules::invocation::process_env())),
        out,
        err,
        color: pi_rules::terminal::ColorChoice::Never,
        settings,
        exits_after: false,
    }
}

#[divan::bench(args = [OutputFormat::Json, OutputFormat::Text], sample_count = 5)]
fn explain_10k_files(bencher: divan::Bencher, format: OutputFormat) {
    let args = explain::Args {
        layers: args(),
        format,
        ..explain::Args::default()
    };
    bencher.bench(|| {
        let (mut out, mut err, mut settings) = (std::io::sink(), std::io::sink(), FreshSettings);
        explain::run(&args, &mut context(&mut out, &mut err, &mut settings)).expect("explain")
    });
}

#[divan::bench(sample_count = 5)]
fn assemble_json_10k_files(bencher: divan::Bencher) {
    let args = assemble::Args {
        layers: args(),
        format: OutputFormat::Json,
        raw: false,
        ..assemble::Args::default()
    };
    bencher.bench(|| {
        let (mut out, mut err, mut settings) = (std::io::sink(), std::io::sink(), FreshSettings);
        assemble::run(&args, &mut context(&mut out, &mut err, &mut settings)).expect("assemble")
    });
}

fn main() {
    divan::main();
}
