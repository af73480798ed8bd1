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

Methods: assemble, explain, check, settings, render, eval, version, rules_for_paths. A method's
result is what the command prints with --format json; `pi-rules docs serve` describes the
protocol. Lines are split on LF only. Rule and settings files are looked at on every request, so
an edit shows at the next one; `assemble` with `have` answers {"unchanged":true} when nothing it
read has changed. A working directory's repository root is looked for again at most every
--settings-ttl seconds, so a new or removed .git can take that long to show. EOF ends the
server."#)]
pub struct Args {
    /// How long a working directory's repository root (where its settings file is) is trusted
    /// before it is looked for again. Settings files themselves are looked at on every request.
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
