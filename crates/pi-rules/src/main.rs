//! `pi-rules`: assemble, explain and lint layered prompt rules.
//!
//! This file only parses arguments and maps results to exit codes; the commands live in the
//! library (`pi_rules::commands`).

use clap::{Args, Parser, Subcommand, ValueEnum};
use pi_rules::commands::{self, Common, OutputFormat};
use pi_rules::report::Format;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Exit codes:
  0  success (for `check`: no errors)
  1  `check` found errors (or warnings, with --strict)
  2  usage error: unknown flag, bad value, missing argument
  3  input error: an unreadable file, an invalid schema, a directory that cannot be used
  4  output error: stdout closed or unwritable

Environment:
  HOME                   the user layer is $HOME/.pi/agent/rules, global settings $HOME/.pi
  PI_RULES_PACKAGE_DIR   a directory that replaces the embedded package rules
  PI_SUBAGENT_CHILD=1    subagent: no rules block at all
  NO_COLOR               no colour in `explain` and `check` output";

/// Build the rules block of an orchestrator's system prompt from layered markdown files, and see
/// why each rule and block is in or out.
#[derive(Parser, Debug)]
#[command(name = "pi-rules", version, after_help = AFTER_HELP, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Assemble the rules block from the package, user and project layers.
    #[command(after_help = "\
Examples:
  pi-rules assemble                       # embedded package rules + ~/.pi + ./.pi
  pi-rules assemble --cwd ~/src/app --coms-active
  pi-rules assemble --format json | jq .files

Text output is the block without its two leading newlines; warnings go to stderr as
`rule assembly: MESSAGE`. JSON output has `block` (exact, leading \"\\n\\n\" included), `warnings`,
`files` (per name: layer, path, status, shadowed) and `stats`.")]
    Assemble {
        #[command(flatten)]
        common: CommonArgs,
        #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
        format: TextOrJson,
    },
    /// Show resolved settings with the source of each value.
    #[command(after_help = "\
Examples:
  pi-rules settings                        # table of key, value, source
  pi-rules settings dco review_loop_max_cycles
  pi-rules settings --format json          # key -> value, in schema order

Sources, highest first: <repo root>/.pi/pi-config-settings.jsonc (or .json), then
$HOME/.pi/pi-config-settings.jsonc (or .json), then the key's environment variable, then the
schema default.")]
    Settings {
        #[command(flatten)]
        where_: SettingsArgs,
        /// Keys to show (default: all).
        #[arg(value_name = "KEY")]
        only: Vec<String>,
        #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
        format: TextOrJson,
    },
    /// Fill {{SETTINGS}} and {{SETTINGS:key,...}} in an agent prompt.
    #[command(after_help = "\
Examples:
  pi-rules render prompts/reviewer.md
  echo 'Config: {{SETTINGS:dco,commit_trailer}}' | pi-rules render

Unknown keys are dropped silently; keys without a value are omitted.")]
    Render {
        #[command(flatten)]
        where_: SettingsArgs,
        /// The prompt file (default: stdin).
        file: Option<PathBuf>,
    },
    /// Explain, per file and per block, what is in the rules block and why.
    #[command(after_help = "\
Examples:
  pi-rules explain
  pi-rules explain --cwd ~/src/app --format json

Token counts are estimates: one token per four bytes of UTF-8, rounded up.")]
    Explain {
        #[command(flatten)]
        common: CommonArgs,
        #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
        format: TextOrJson,
    },
    /// Lint rules and settings files in all three layers.
    #[command(after_help = "\
Examples:
  pi-rules check
  pi-rules check --format sarif > pi-rules.sarif
  pi-rules check --explain unknown-setting-key   # or: --explain PR101

Exit code 0 when there are no errors, 1 when there are (or warnings, with --strict).")]
    Check {
        #[command(flatten)]
        common: CommonArgs,
        #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
        format: CheckFormat,
        /// Fail on warnings too.
        #[arg(long)]
        strict: bool,
        /// Print the long description of a diagnostic code and exit.
        #[arg(long, value_name = "CODE")]
        explain: Option<String>,
    },
    /// Serve the engine over stdin/stdout: one JSON request per line, one response per line.
    #[command(after_help = r#"Examples:
  echo '{"rules": ["{{IF:dco}}sign{{/IF}}"], "settings": {"dco": true}}' | pi-rules eval
  echo '{"prompt": "{{SETTINGS}}", "settings": {"dco": false}}' | pi-rules eval

An assembly request has `rules`, `settings`, `known_keys` (default: the keys of `settings`),
`features` and `review_loop_max_cycles` (default 3); its response has `text`, `warnings` and
`files`. A render request has `prompt`, `settings` and `known_keys`; its response has `text`.
An invalid line gets {"error": "..."} and the stream goes on."#)]
    Eval,
}

/// Where settings come from: the project directory and the schema.
#[derive(Args, Debug)]
struct SettingsArgs {
    /// The project directory: its .pi/rules is the project layer, and its repository root holds
    /// the project settings file.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// A settings schema to use instead of the embedded settings-keys.json.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct CommonArgs {
    #[command(flatten)]
    where_: SettingsArgs,
    /// A package rules directory instead of the embedded rules [env: PI_RULES_PACKAGE_DIR].
    #[arg(long, value_name = "DIR")]
    package_dir: Option<PathBuf>,
    /// Peer-to-peer messaging is running (the `coms_active` feature predicate).
    #[arg(long)]
    coms_active: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TextOrJson {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CheckFormat {
    Human,
    Short,
    Json,
    Sarif,
}

impl From<TextOrJson> for OutputFormat {
    fn from(format: TextOrJson) -> Self {
        match format {
            TextOrJson::Text => OutputFormat::Text,
            TextOrJson::Json => OutputFormat::Json,
        }
    }
}

fn common(args: CommonArgs) -> Common {
    Common {
        cwd: args.where_.cwd,
        package_dir: args.package_dir,
        coms_active: args.coms_active,
        keys: args.where_.keys,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Command::Assemble { common: c, format } => {
            commands::assemble(&common(c), format.into(), &mut out)
        }
        Command::Settings {
            where_,
            only,
            format,
        } => commands::settings(where_.cwd, where_.keys, &only, format.into(), &mut out),
        Command::Render { where_, file } => {
            commands::render(where_.cwd, where_.keys, file, &mut out)
        }
        Command::Explain { common: c, format } => {
            commands::explain(&common(c), format.into(), &mut out)
        }
        Command::Check {
            common: c,
            format,
            strict,
            explain,
        } => {
            let format = match format {
                CheckFormat::Human => Format::Human,
                CheckFormat::Short => Format::Short,
                CheckFormat::Json => Format::Json,
                CheckFormat::Sarif => Format::Sarif,
            };
            commands::check(&common(c), format, strict, explain.as_deref(), &mut out)
        }
        Command::Eval => commands::eval(&mut out),
    };
    let _ = out.flush();
    match result {
        Ok(exit) => exit.into(),
        Err(err) => {
            let code = commands::exit_for(&err);
            eprintln!("pi-rules: error: {err:#}");
            code.into()
        }
    }
}
