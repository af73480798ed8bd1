//! What one command invocation is given: the arguments several commands share (where the
//! project is, which schema, which package layer, what the host says), the streams it writes to,
//! and where its settings come from. The commands flatten the shared arguments into their own,
//! and `serve` builds them from request parameters.

use crate::output::{output, write_notes};
use crate::terminal::ColorChoice;
use clap::Args;
use pi_rules_core::rule_scope;
use pi_rules_core::settings::Schema;
use pi_rules_core::Observer;
use pi_rules_host::assembly::{self, LayerOptions, Run};
use pi_rules_host::authoring::Layers;
use pi_rules_host::env::Env;
use pi_rules_host::error::UsageError;
use pi_rules_host::loader::Layer;
use pi_rules_host::selection::{LayerChoice, Selection, SettingsChain};
use pi_rules_host::session::{Session, SettingsRead};
pub use pi_rules_host::settings_source::{FreshSettings, SettingsOverrides, SettingsSource};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// The host's view of this process: its working directory, and its environment variables read
/// as the host asks for them. The one place that reads the process environment for the host.
pub fn process_env() -> Env {
    Env::new(std::env::current_dir(), |name| std::env::var_os(name))
}

/// Like [`process_env`], with the variables copied once into a map: for `serve`, which looks up
/// the same variables (`HOME`, every schema key's) on every request, from an environment that no
/// one else can change while it runs. A map lookup costs a fraction of `getenv`'s scan of the
/// whole environment.
pub fn process_env_snapshot() -> Env {
    // Hashed with foldhash: a request looks up every schema key's variable, and std's hasher
    // costs more than the rest of a lookup for names this short.
    let vars: foldhash::HashMap<String, std::ffi::OsString> = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value)))
        .collect();
    Env::new(std::env::current_dir(), move |name| vars.get(name).cloned())
}

/// What a command runs with.
pub struct Context<'a> {
    /// The process as the host sees it (see [`process_env`]).
    pub env: &'a Env,
    /// Standard output: the command's result. Failures are
    /// output errors (see [`crate::output::output`]).
    pub out: &'a mut dyn Write,
    /// Standard error: diagnostics, best-effort (see [`note`](crate::output::note)).
    pub err: &'a mut dyn Write,
    /// `--color`, for `out` (see [`Context::color_out`]).
    pub color: ColorChoice,
    /// Where settings come from: the files now, or `serve`'s cache.
    pub settings: &'a mut dyn SettingsSource,
    /// The process exits when the command returns (`main`; not `serve`), so what the command
    /// built need not be freed: see [`Context::release`].
    pub exits_after: bool,
}

impl Context<'_> {
    /// Whether to colour `out`: asked of the terminal only when a command wants to know.
    pub fn color_out(&self) -> bool {
        match self.color {
            ColorChoice::Never => false,
            choice => choice.enabled(std::io::stdout().is_terminal()),
        }
    }

    /// Frees `value`, or leaves it to the process's exit when [`Context::exits_after`] says it
    /// is near: the system takes all of a process's memory back at once, where freeing a run's
    /// many small pieces one by one is work of its own (about 16k instructions after
    /// `assemble`, a twentieth of what the command adds to start-up, and a `brk` to trim the
    /// heap). Only for plain data: a value whose drop does more than free memory (flushing a
    /// file, releasing a lock) must be dropped.
    pub fn release<T>(&self, value: T) {
        if self.exits_after {
            std::mem::forget(value);
        } else {
            drop(value);
        }
    }

    /// Reads the settings for `session` from [`Context::settings`], writing their notes to
    /// `err`.
    pub fn read_settings(&mut self, session: &Session) -> SettingsRead {
        let mut read = self.settings.read(session);
        write_notes(self.err, &std::mem::take(&mut read.notes));
        read
    }

    /// Flushes both streams: stderr first, best-effort, then stdout, whose failure is an
    /// output error (see [`crate::output::output`]).
    pub fn flush(&mut self) -> pi_rules_host::error::Result<()> {
        let _ = self.err.flush();
        output(self.out.flush())
    }
}

/// Where settings come from: the project directory and the schema.
///
/// No argument group is made for these arguments (nor for [`LayerArgs`]): nothing refers to one,
/// and each would be built with every command line and checked with every parse.
#[derive(Args, Debug, Clone, Default)]
#[group(skip)]
pub struct ProjectArgs {
    /// The project directory: its .pi/rules is the project layer, and its repository root holds
    /// the project settings file [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// A settings schema to use instead of the embedded settings-keys.json.
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,
}

impl ProjectArgs {
    /// The session these arguments name: the project, its repository and the schema.
    pub fn session(&self, env: &Env) -> pi_rules_host::error::Result<Session> {
        Session::new(env, self.cwd.clone(), self.keys.as_deref())
    }
}

/// What the commands that read the rule layers need.
#[derive(Args, Debug, Clone, Default)]
#[group(skip)]
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
    #[command(flatten)]
    pub scope: ScopeArgs,
}

impl LayerArgs {
    /// The host's options for these arguments.
    pub fn options(&self) -> LayerOptions {
        LayerOptions {
            package_dir: self.package_dir.clone(),
            coms_active: self.coms_active,
            confine: self.confine,
            export_layers: None,
            scope: self.scope.options(),
        }
    }
}

/// `--path` and `--agent`: the block an agent sees while it works on some files.
#[derive(Args, Debug, Clone, Default)]
pub struct ScopeArgs {
    /// A file the agent works on (repeatable; relative to --cwd, or absolute): the rules whose
    /// `paths:` match it, and the rules of nested `.pi/rules` directories above it, join the
    /// block. For pi, only where `[rules] scoped = true` in .pi/pi-rules.toml.
    #[arg(long = "path", value_name = "FILE")]
    pub paths: Vec<PathBuf>,
    /// The agent the block is for (`pi`, `claude`, `cursor`, ...): rules whose `agents:` leave
    /// it out are left out. Agents other than pi always honour scopes [default: pi].
    #[arg(long, value_name = "NAME", value_parser = parse_agent)]
    pub agent: Option<String>,
}

impl ScopeArgs {
    /// The host's scope options; pi's comes from the project's configuration.
    pub fn options(&self) -> assembly::ScopeOptions {
        assembly::ScopeOptions {
            agent: self.agent.clone(),
            paths: self.paths.clone(),
            scoped_in_pi: None,
        }
    }
}

/// `--agent`'s value: a known agent, lowercase; else a usage error with a "did you mean".
fn parse_agent(name: &str) -> Result<String, String> {
    if rule_scope::is_known_agent(name) {
        return Ok(name.to_ascii_lowercase());
    }
    let hint = rule_scope::suggest_agent(name)
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    Err(format!(
        "unknown agent{hint}; known: {}",
        rule_scope::KNOWN_AGENTS.join(", ")
    ))
}

/// Where the layers are, for the commands that do not assemble.
#[derive(Args, Debug, Clone, Default)]
pub struct PlaceArgs {
    /// The project directory: its .pi/rules is the project layer [default: the current
    /// directory].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// A package rules directory instead of the embedded rules [env: PI_RULES_PACKAGE_DIR].
    #[arg(long, value_name = "DIR")]
    pub package_dir: Option<PathBuf>,
    /// Treat project rules that resolve outside the project, and rules that are special files,
    /// as unreadable, as `assemble --confine` does [env: PI_RULES_CONFINE=1].
    #[arg(long)]
    pub confine: bool,
}

impl PlaceArgs {
    /// Lists and reads the three layers these arguments name.
    pub fn read(&self, env: &Env) -> pi_rules_host::error::Result<Layers> {
        let session = Session::new(env, self.cwd.clone(), None)?;
        Ok(Layers::read(
            session,
            self.package_dir.as_deref(),
            self.confine,
        ))
    }
}

/// A layer named on the command line.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerName {
    /// The rules shipped with the tool (embedded, or --package-dir).
    Package,
    /// $HOME/.pi/agent/rules.
    User,
    // Given as `help` rather than as a doc comment, which rustdoc would read as an HTML tag.
    #[value(help = "<cwd>/.pi/rules.")]
    Project,
}

impl From<LayerName> for Layer {
    fn from(name: LayerName) -> Layer {
        match name {
            LayerName::Package => Layer::Package,
            LayerName::User => Layer::User,
            LayerName::Project => Layer::Project,
        }
    }
}

/// The layer `override` and `new` write to.
#[derive(Args, Debug, Clone, Copy, Default)]
#[group(required = true, multiple = false)]
pub struct TargetArgs {
    /// Write to the user layer, $HOME/.pi/agent/rules (all projects).
    #[arg(long)]
    pub user: bool,
    // As `help`, as `LayerName::Project`'s.
    #[arg(
        long,
        help = "Write to the project layer, <cwd>/.pi/rules (this project only)."
    )]
    pub project: bool,
}

impl TargetArgs {
    /// The layer chosen.
    pub fn layer(self) -> Layer {
        if self.project {
            Layer::Project
        } else {
            Layer::User
        }
    }
}

/// `--format` of the commands with a text and a JSON form.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// For people.
    #[default]
    Text,
    /// One JSON object, described by `pi-rules docs COMMAND-json`.
    Json,
}

/// The layers and settings an assembly reads, as `export` chooses them: `export`, `assemble` and
/// `explain` share these flags, so that the same flags give the same block.
#[derive(clap::Args, Debug, Clone, Default)]
#[group(skip)]
pub struct SelectArgs {
    /// Only these layers, comma-separated, e.g. `package,project`; PI_SUBAGENT_CHILD has no
    /// effect then [default: export project, or `[export] layers`; the others every layer].
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LAYERS")]
    pub layers: Vec<LayerName>,
    /// Which settings: `project` (the project settings file and the schema defaults) or `all`
    /// (also the global settings file and the environment) [default: export project; the
    /// others all].
    #[arg(long, value_enum, value_name = "WHICH")]
    pub settings: Option<SettingsChoice>,
    /// Set KEY to VALUE, above every settings file, as `diff --set` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// What a command reads when [`SelectArgs`] leave a choice open.
#[derive(Debug, Clone, Copy)]
pub struct SelectDefaults {
    /// `None`: every layer, as a host reads them.
    pub layers: Option<LayerChoice>,
    pub settings: SettingsChain,
}

impl SelectDefaults {
    /// `export`'s: what a team commits, the same on every machine.
    pub const EXPORT: SelectDefaults = SelectDefaults {
        layers: Some(LayerChoice::EXPORT),
        settings: SettingsChain::Project,
    };
    /// `assemble`'s and `explain`'s: what pi reads on this machine.
    pub const HOST: SelectDefaults = SelectDefaults {
        layers: None,
        settings: SettingsChain::All,
    };
}

impl SelectArgs {
    /// The host's selection for these flags, `defaults` filling what they leave open.
    pub fn selection(
        &self,
        schema: &Schema,
        defaults: SelectDefaults,
    ) -> Result<Selection, UsageError> {
        let layers = if self.layers.is_empty() {
            defaults.layers
        } else {
            Some(LayerChoice {
                package: self.layers.contains(&LayerName::Package),
                user: self.layers.contains(&LayerName::User),
                project: self.layers.contains(&LayerName::Project),
            })
        };
        let settings = match self.settings {
            None => defaults.settings,
            Some(SettingsChoice::Project) => SettingsChain::Project,
            Some(SettingsChoice::All) => SettingsChain::All,
        };
        Ok(Selection {
            layers,
            settings,
            overrides: SettingsOverrides::parse(schema, &self.set)?,
        })
    }
}

/// Reads the session of `project`, and runs the assembly of the layers and settings that
/// `select` (with `defaults`) chooses, writing the notes on the settings and the layers to
/// stderr. The one way `export`, `assemble` and `explain` assemble.
pub fn run_selected<O: Observer>(
    project: &ProjectArgs,
    mut options: LayerOptions,
    select: &SelectArgs,
    defaults: SelectDefaults,
    cx: &mut Context<'_>,
    observer: &mut O,
) -> pi_rules_host::error::Result<Run> {
    let session = project.session(cx.env)?;
    let selection = select.selection(&session.schema, defaults)?;
    let settings = selection.read_settings(&session, cx.settings);
    options.export_layers = selection.layers;
    let run = assembly::run(session, &options, settings, observer)?;
    write_notes(cx.err, &run.notes);
    Ok(run)
}

/// `--settings`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsChoice {
    /// The project settings file and the schema defaults.
    Project,
    /// The full chain: project file, global file, environment, defaults.
    All,
}
