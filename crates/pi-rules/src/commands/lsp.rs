//! `pi-rules lsp`: the Language Server Protocol over stdin and stdout (see [`crate::lsp`]).

use crate::invocation::{process_env_snapshot, Context};
use crate::lsp::server::Ending;
use crate::output::Exit;
use pi_rules_host::error::Result;

/// Run a language server (LSP) on stdin and stdout, for editors.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = r#"The editor starts it; it is not run by hand. Example (Neovim 0.11):
  vim.lsp.config('pi_rules', { cmd = { 'pi-rules', 'lsp' }, filetypes = { 'markdown', 'json', 'jsonc' },
                               root_markers = { '.pi', '.git' } })
  vim.lsp.enable('pi_rules')

It serves the rule files of every layer seen from a workspace folder (<folder>/.pi/rules/*.md,
$HOME/.pi/agent/rules/*.md, the package directory) and the two settings files; other documents
are ignored. The editor's unsaved text is what is checked. Diagnostics are every `pi-rules
check` finding, pushed on open and after a pause in typing; quick fixes are `check --fix`'s
repairs; a package or user rule offers "Override in the project" / "in the user layer".

initializationOptions (each as the CLI flag of the same name): packageDir (string), comsActive
(boolean), confine (boolean), strict (boolean: warnings as errors).

Positions are UTF-8 when the editor offers it, else UTF-16. A message over 16 MiB is refused.
Exit code 0 after `shutdown` then `exit`; 1 when `exit` comes without `shutdown` or stdin ends."#
)]
pub struct Args {}

pub fn run(_args: &Args, _cx: &mut Context<'_>) -> Result<Exit> {
    Ok(match crate::lsp::run_stdio(process_env_snapshot()) {
        Ending::Clean => Exit::Success,
        Ending::Unclean => Exit::Findings,
    })
}
