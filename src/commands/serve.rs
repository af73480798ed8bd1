//! `pi-rules serve`: the commands as JSON-RPC 2.0 methods on stdin and stdout (see
//! [`crate::serve`]).

use crate::invocation::{process_env_snapshot, Context};
use crate::output::Exit;
use crate::serve::LineServer;
use pi_rules_host::error::Result;
use std::time::Duration;

/// Serve the commands as JSON-RPC 2.0 methods over stdin and stdout, one message per line.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = r#"Examples:
  echo '{"jsonrpc":"2.0","id":1,"method":"assemble","params":{"cwd":"."}}' | pi-rules serve
  echo '{"jsonrpc":"2.0","id":2,"method":"version"}' | pi-rules serve

Methods: assemble, explain, check, settings, render, eval, version. A method's result is what
the command prints with --format json; `pi-rules docs serve` describes the protocol. Lines are
split on LF only. Rule files are read on every request; settings files are re-checked, and a
working directory's repository root looked for again, at most every --settings-ttl seconds, so a
settings change or a new or removed .git can take that long to show. EOF ends the server."#)]
pub struct Args {
    /// How long resolved settings and a working directory's repository root are trusted before
    /// the settings files' times are checked and the root is looked for again.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub settings_ttl: u64,
}

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let mut server = LineServer::new(
        process_env_snapshot(),
        Duration::from_secs(args.settings_ttl),
    );
    let stdin = std::io::stdin();
    server.serve(stdin.lock(), &mut *cx.out)?;
    Ok(Exit::Success)
}
