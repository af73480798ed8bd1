//! `pi-rules lsp`: the Language Server Protocol over stdin and stdout (see [`crate::lsp`]).

use crate::invocation::{process_env_snapshot, Context};
use crate::lsp::server::Ending;
use crate::output::Exit;
use pi_rules_host::error::Result;

/// Run a language server (LSP) on stdin and stdout, for editors.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = r#"The editor starts it; it is not run by hand. In Neovim (0.7 or later), for a buffer:
  vim.lsp.buf_attach_client(0, vim.lsp.start_client({ name = 'pi-rules',
    cmd = { 'pi-rules', 'lsp' }, root_dir = vim.fn.getcwd() }))
VS Code and its forks have the pi-rules extension (Marketplace, Open VSX); the README shows
set-ups for Neovim, Helix and other clients.

It serves the rule files of every layer seen from a workspace folder (<folder>/.pi/rules/*.md,
$HOME/.pi/agent/rules/*.md, the package directory, the cached copies of the embedded package
rules) and the two settings files; other documents are ignored. The editor's unsaved text is what
is read, by the check and by every query, and a change to any open document re-checks the open
rule files of its workspace.

Features: diagnostics (every `pi-rules check` finding, pushed on open, on save and after a pause
in typing); quick fixes (`check --fix`'s repairs); "Override in the project" / "in the user
layer" on a package or user rule (as `pi-rules override`); hover (a key's schema, its value now
and where that comes from, whether the block is kept); completion (keys, values, features,
closers); inlay hints (kept or dropped after each opener); document symbols (the blocks); go to
definition and references (the other layers' copies of a rule, the settings line that sets a
key; embedded package rules are written read-only under $XDG_CACHE_HOME/pi-rules/VERSION/package).

initializationOptions (each as the CLI flag of the same name): packageDir (string), comsActive
(boolean), confine (boolean), strict (boolean: warnings as errors).

Commands (workspace/executeCommand): pi-rules.server.override, {name, layer: "project"|"user",
folder}, behind the override actions.

stdio is the only transport. `--stdio`, which editor clients such as vscode-languageclient add,
is accepted and changes nothing; any other argument is refused.

Positions are UTF-8 when the editor offers it, else UTF-16. A message over 16 MiB is refused
with an error. Exit code 0 after `shutdown` then `exit`; 1 when `exit` comes without `shutdown`
or stdin ends."#
)]
pub struct Args {
    /// Speak the protocol on stdin and stdout: the only transport, so this changes nothing.
    /// Accepted because editor clients (vscode-languageclient) add it.
    #[arg(long)]
    pub stdio: bool,
}

pub fn run(_args: &Args, _cx: &mut Context<'_>) -> Result<Exit> {
    Ok(match crate::lsp::run_stdio(process_env_snapshot()) {
        Ending::Clean => Exit::Success,
        Ending::Unclean => Exit::Findings,
    })
}
