//! `pi-rules completions`: shell completion scripts, generated from the clap definitions.

use super::Cli;
use crate::invocation::Context;
use crate::output::{output, Exit};
use clap::CommandFactory;
use clap_complete::Shell;
use pi_rules_host::error::Result;

/// Print a completion script for a shell.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules completions bash > ~/.local/share/bash-completion/completions/pi-rules
  pi-rules completions zsh > \"${fpath[1]}/_pi-rules\"
  pi-rules completions fish > ~/.config/fish/completions/pi-rules.fish
  pi-rules completions powershell >> $PROFILE")]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `pi-rules completions`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "pi-rules", &mut script);
    output(cx.out.write_all(&script))?;
    Ok(Exit::Success)
}
