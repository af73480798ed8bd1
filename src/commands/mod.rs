//! The command line: one module per command, each with its clap arguments beside its code, as
//! cargo's `src/bin/cargo/commands/` does. What several commands share lives below them:
//! [`crate::invocation`] (shared arguments), [`pi_rules_host::assembly`] (one assembly run),
//! [`crate::output`] (streams and exit codes) and [`crate::terminal`] (escaping and colour).
//! No command imports another.

pub mod assemble;
pub mod check;
pub mod completions;
pub mod config;
pub mod diff;
pub mod docs;
pub mod eval;
pub mod explain;
pub mod export;
pub mod import;
pub mod lsp;
pub mod man;
pub mod new;
pub mod override_rule;
pub mod render;
pub mod schema;
pub mod serve;
pub mod settings;
pub mod show;
pub mod watch;

use crate::invocation::Context;
use crate::output::Exit;
use crate::terminal::ColorChoice;
use clap::{Parser, Subcommand};
use pi_rules_host::error::Result;

pub use crate::output::{exit_for, output};

const AFTER_HELP: &str = "\
Exit codes:
  0  success (for `check`: no errors; for `diff`: no difference)
  1  `check` found errors (or warnings, with --strict); `diff` found a difference; `export
     --check` found a stale file
  2  usage error: unknown flag, bad value, missing argument, unknown rule or settings key
  3  input error: an unreadable file, an invalid schema, a directory that cannot be used, a
     file that `override` or `new` would replace
  4  output error: a write to stdout failed (a full disk, /dev/full); a broken pipe exits 4
     quietly. Any /dev/null is a working stdout

Environment:
  HOME                   the user layer is $HOME/.pi/agent/rules, global settings $HOME/.pi
  PI_RULES_PACKAGE_DIR   a directory that replaces the embedded package rules
  PI_SUBAGENT_CHILD=1    subagent: no rules block at all
  NO_COLOR               no colour (CLICOLOR_FORCE=1 forces it; TERM=dumb turns it off)";

/// Build the rules block of an orchestrator's system prompt from layered markdown files, and see
/// why each rule and block is in or out.
#[derive(Parser, Debug)]
#[command(name = "pi-rules", version = env!("PI_RULES_VERSION"), after_help = AFTER_HELP, propagate_version = true)]
pub struct Cli {
    /// When to colour human-readable output.
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    Assemble(assemble::Args),
    Settings(settings::Args),
    Render(render::Args),
    Explain(explain::Args),
    Check(check::Args),
    Eval(eval::Args),
    Serve(serve::Args),
    Lsp(lsp::Args),
    Show(show::Args),
    #[command(name = "override")]
    Override(override_rule::Args),
    New(new::Args),
    Diff(diff::Args),
    Watch(watch::Args),
    Export(export::Args),
    Import(import::Args),
    Schema(schema::Args),
    Completions(completions::Args),
    Man(man::Args),
    Docs(docs::Args),
    Config(config::Args),
}

impl Command {
    /// Whether the command writes JSON to stdout: a `--format` of JSON or SARIF, or a JSON
    /// line protocol. `lsp` is left out: it escapes each message itself, before counting its
    /// length.
    pub fn writes_json(&self) -> bool {
        use crate::invocation::OutputFormat::Json;
        match self {
            Command::Assemble(args) => args.format == Json,
            Command::Settings(args) => args.format == Json,
            Command::Explain(args) => args.format == Json,
            Command::Schema(args) => args.format == Json || args.config,
            Command::Show(args) => args.format == Json,
            Command::Check(args) => {
                matches!(
                    args.format,
                    check::CheckFormat::Json | check::CheckFormat::Sarif
                )
            }
            Command::Eval(_) | Command::Serve(_) => true,
            Command::Config(args) => args.format == Json,
            Command::Import(args) => args.format == Json,
            _ => false,
        }
    }

    /// Runs the command in `cx`.
    pub fn run(self, cx: &mut Context<'_>) -> Result<Exit> {
        match self {
            Command::Assemble(args) => apart(assemble::run, &args, cx),
            Command::Settings(args) => apart(settings::run, &args, cx),
            Command::Render(args) => apart(render::run, &args, cx),
            Command::Explain(args) => apart(explain::run, &args, cx),
            Command::Check(args) => apart(check::run, &args, cx),
            Command::Eval(args) => apart(eval::run, &args, cx),
            Command::Serve(args) => apart(serve::run, &args, cx),
            Command::Lsp(args) => apart(lsp::run, &args, cx),
            Command::Show(args) => apart(show::run, &args, cx),
            Command::Override(args) => apart(override_rule::run, &args, cx),
            Command::New(args) => apart(new::run, &args, cx),
            Command::Diff(args) => apart(diff::run, &args, cx),
            Command::Watch(args) => apart(watch::run, &args, cx),
            Command::Export(args) => apart(export::run, &args, cx),
            Command::Import(args) => apart(import::run, &args, cx),
            Command::Schema(args) => apart(schema::run, &args, cx),
            Command::Completions(args) => apart(completions::run, &args, cx),
            Command::Man(args) => apart(man::run, &args, cx),
            Command::Docs(args) => apart(docs::run, &args, cx),
            Command::Config(args) => apart(config::run, &args, cx),
        }
    }
}

/// Calls one command's `run` in a function of its own. Inlined into [`Command::run`], every
/// command's code would share one large function, and a command would touch pages of the others'
/// code as it runs; a process that starts for one command should load only that one's code.
#[inline(never)]
fn apart<A>(
    run: fn(&A, &mut Context<'_>) -> Result<Exit>,
    args: &A,
    cx: &mut Context<'_>,
) -> Result<Exit> {
    run(args, cx)
}
