//! `pi-rules`: assemble, explain and lint layered prompt rules.
//!
//! This file only parses arguments, sets up the output streams and maps results to exit codes;
//! the commands live in the library (`pi_rules::commands`).

use clap::Parser;
use pi_rules::commands::Cli;
use pi_rules::invocation::{process_env, Context, FreshSettings};
use pi_rules::output::{exit_for, note, StdStreams};
use pi_rules::terminal::escape;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut std_streams = StdStreams::new();
    let mut settings = FreshSettings;
    let env = process_env();
    let mut cx = Context {
        env: &env,
        color: cli.color,
        out: &mut std_streams.out,
        err: &mut std_streams.err,
        settings: &mut settings,
        exits_after: true,
    };
    let result = cli
        .command
        .run(&mut cx)
        .and_then(|exit| cx.flush().map(|()| exit));
    let exit = match result {
        Ok(exit) => exit,
        Err(err) => {
            let exit = exit_for(&err);
            if !err.is_broken_pipe() {
                // Messages can quote paths and values from hostile files.
                note(
                    cx.err,
                    format_args!("pi-rules: error: {}", escape(err.message())),
                );
            }
            exit
        }
    };
    let _ = std::io::Write::flush(cx.err);
    exit.into()
}
