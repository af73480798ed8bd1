//! `pi-rules`: assemble, explain and lint layered prompt rules.
//!
//! This file only parses arguments, sets up the output streams and maps results to exit codes;
//! the commands live in the library (`pi_rules::commands`).

use clap::Parser;
use pi_rules::commands::Cli;
use pi_rules::invocation::{process_env, Context, FreshSettings};
use pi_rules::output::{exit_for, note, Exit, StdStreams};
use pi_rules::terminal::{escape, escape_keeping_sgr, ColorChoice};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    let mut std_streams = if cli.command.writes_json() && std::io::stdout().is_terminal() {
        StdStreams::json_on_terminal()
    } else {
        StdStreams::new()
    };
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
    let _ = cx.err.flush();
    exit.into()
}

/// Prints clap's message for a command line it refused, or its help or version, and gives the
/// exit code. An error quotes the command line, which may hold anything: it is printed with
/// clap's colours but no other control character.
fn usage_error(err: clap::Error) -> ExitCode {
    if !err.use_stderr() {
        err.exit()
    }
    let rendered = err.render();
    let text = if ColorChoice::Auto.enabled(std::io::stderr().is_terminal()) {
        rendered.ansi().to_string()
    } else {
        rendered.to_string()
    };
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(escape_keeping_sgr(&text).as_bytes());
    let _ = stderr.flush();
    Exit::Usage.into()
}
