//! `pi-rules eval`: the engine's line protocol on stdin and stdout (see [`crate::eval`]).

use crate::eval::EvalError;
use crate::invocation::Context;
use crate::output::{output, Exit};
use pi_rules_host::error::Result;

/// Serve the engine over stdin/stdout: one JSON request per line, one response per line.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = r#"Examples:
  echo '{"rules": ["{{IF:dco}}sign{{/IF}}"], "settings": {"dco": true}}' | pi-rules eval
  echo '{"prompt": "{{SETTINGS}}", "settings": {"dco": false}}' | pi-rules eval

An assembly request has `rules`, `settings`, `known_keys` (default: the keys of `settings`),
`features` and `review_loop_max_cycles` (default 3); its response has `text`, `warnings` and
`files`. A render request has `prompt`, `settings` and `known_keys`; its response has `text`.
An invalid line gets {"error": "..."} and the stream goes on."#)]
pub struct Args {}

pub fn run(_args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let stdin = std::io::stdin();
    match crate::eval::serve(stdin.lock(), &mut *cx.out) {
        Ok(()) => Ok(Exit::Success),
        Err(EvalError::Write(err)) => output(Err(err)),
        // Reading stdin failed: an input error, not an output one.
        Err(err @ EvalError::Read(_)) => Err(anyhow::Error::from(err).into()),
    }
}
