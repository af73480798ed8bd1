//! `pi-rules man`: the manual page in roff, generated from the clap definitions.

use super::Cli;
use crate::invocation::Context;
use crate::output::{output, Exit, UsageError};
use crate::terminal::escape;
use clap::CommandFactory;
use pi_rules_host::error::Result;

/// Print the manual page (roff), for pi-rules or one of its commands.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules man | man -l -
  pi-rules man > ~/.local/share/man/man1/pi-rules.1
  pi-rules man diff > ~/.local/share/man/man1/pi-rules-diff.1")]
pub struct Args {
    /// A command whose page to print (`pi-rules-COMMAND(1)`) [default: the main page].
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// `pi-rules man`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let mut root = Cli::command();
    root.build();
    let page = match &args.command {
        None => root,
        Some(name) => {
            let Some(sub) = root.find_subcommand(name) else {
                let names: Vec<&str> = root.get_subcommands().map(|c| c.get_name()).collect();
                return Err(UsageError(format!(
                    "no command is named `{}`; the commands are {}",
                    escape(name),
                    names.join(", ")
                ))
                .into());
            };
            let full = format!("pi-rules-{}", sub.get_name());
            sub.clone().name(full.clone()).bin_name(full)
        }
    };
    let mut roff = Vec::new();
    output(clap_mangen::Man::new(page).render(&mut roff))?;
    output(cx.out.write_all(&roff))?;
    Ok(Exit::Success)
}
