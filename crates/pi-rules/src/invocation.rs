//! What one command invocation is given: the arguments several commands share (where the
//! project is, which schema, which package layer, what the host says), the streams it writes to,
//! and where its settings come from. The commands flatten the shared arguments into their own,
//! and `serve` builds them from request parameters.

use crate::output::output;
use crate::session::{Session, SettingsRead};
use clap::Args;
use pi_rules_core::settings::Resolved;
use std::io::Write;
use std::path::PathBuf;

/// Where a command's resolved settings come from.
pub trait SettingsSource {
    /// The settings for `session`'s working directory, and what became of each settings file;
    /// why a file or value is ignored goes to `err`.
    fn read(&mut self, session: &Session, err: &mut dyn Write) -> SettingsRead;

    /// Just the resolved settings.
    fn resolve(&mut self, session: &Session, err: &mut dyn Write) -> Resolved {
        self.read(session, err).resolved
    }
}

/// Settings read afresh from the files and the environment: one-shot commands.
#[derive(Debug, Default, Clone, Copy)]
pub struct FreshSettings;

impl SettingsSource for FreshSettings {
    fn read(&mut self, session: &Session, err: &mut dyn Write) -> SettingsRead {
        session.resolve_noting(err)
    }
}

/// What a command runs with.
pub struct Context<'a> {
    /// Standard output: the command's result. Failures are
    /// [`OutputError`](crate::output::OutputError)s.
    pub out: &'a mut dyn Write,
    /// Standard error: diagnostics, best-effort (see [`note`](crate::output::note)).
    pub err: &'a mut dyn Write,
    /// Whether `out` may be coloured.
    pub color_out: bool,
    /// Whether `err` may be coloured.
    pub color_err: bool,
    /// Where settings come from: the files now, or `serve`'s cache.
    pub settings: &'a mut dyn SettingsSource,
}

impl Context<'_> {
    /// Flushes both streams: stderr first, best-effort, then stdout, whose failure is an
    /// [`OutputError`](crate::output::OutputError).
    pub fn flush(&mut self) -> anyhow::Result<()> {
        let _ = self.err.flush();
        output(self.out.flush())
    }
}

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
    /// For untrusted projects: a project rule that resolves outside the project, or a rule that
    /// is a special file (/proc, /sys, a device), is treated as unreadable [env:
    /// PI_RULES_CONFINE=1].
    #[arg(long)]
    pub confine: bool,
}

/// The environment variable that turns `--confine` on.
pub const CONFINE_ENV: &str = "PI_RULES_CONFINE";

impl LayerArgs {
    /// Whether confinement is on: `--confine`, or `PI_RULES_CONFINE=1`.
    pub fn confined(&self) -> bool {
        self.confine || std::env::var_os(CONFINE_ENV).is_some_and(|v| v == "1")
    }
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
