//! The arguments several commands share: where the project is, which schema, which package
//! layer, and what the host says. The commands flatten these into their own arguments, and
//! `serve` builds them from request parameters.

use clap::Args;
use std::path::PathBuf;

/// Where settings come from: the project directory and the schema.
#[derive(Args, Debug, Clone, Default)]
pub struct ProjectArgs {
    /// The project directory: its .pi/rules is the project layer, and its repository root holds
    /// the project settings file [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// A settings schema to use instead of the embedded settings-keys.json.
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,
}

/// What the commands that read the rule layers need.
#[derive(Args, Debug, Clone, Default)]
pub struct LayerArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// A package rules directory instead of the embedded rules [env: PI_RULES_PACKAGE_DIR].
    #[arg(long, value_name = "DIR")]
    pub package_dir: Option<PathBuf>,
    /// Peer-to-peer messaging is running (the `coms_active` feature predicate).
    #[arg(long)]
    pub coms_active: bool,
}

/// `--format` of the commands with a text and a JSON form.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// For people.
    #[default]
    Text,
    /// One JSON object, documented in `docs/`.
    Json,
}
