//! pi-rules' own configuration: `<project root>/.pi/pi-rules.toml` and
//! `$HOME/.pi/agent/pi-rules.toml`, read through the session's [`Files`](crate::files::Files)
//! (bounded, 1 MiB). The project file overrides the user file key by key; each key's value
//! remembers where it came from ([`ConfigSource`]), and every problem of either file is a
//! [`ConfigFinding`] with its file, line and column, which `check` reports.
//!
//! The keys (`pi-rules schema --config` prints them as a JSON schema, [`json_schema`]):
//! - `[rules] scoped` (bool, default false): whether pi's block honours rule scopes;
//! - `[check] ignore = [codes]`, `[check.severity] CODE = "error" | "warning" | "info" | "off"`,
//!   `[[check.per-path]] paths = [globs]` with `ignore` and `severity` for the files the globs
//!   match (relative to the project root);
//! - `[export] targets = ["agents-md", ...]` (or one comma-separated string), `layers =
//!   ["package" | "user" | "project", ...]` (default the project layer), `settings = "project" |
//!   "all"`, `set = { KEY = VALUE, ... }`: what a bare `pi-rules export` does.
//!
//! Modules: `file.rs` reads one file into what it sets and its findings, `globs.rs` compiles the
//! globs of a per-path entry, `apply.rs` applies `[check]` to a lint report, `schema.rs` is the
//! JSON schema. All of it is data: nothing is printed here.

mod apply;
mod file;
mod globs;
mod schema;

pub use apply::Relative;
pub use schema::json_schema;

use crate::files::bounded::MAX_SETTINGS_BYTES;
use crate::notes::Note;
use crate::session::Session;
use indexmap::IndexMap;
use pi_rules_core::layer::Layer;
use pi_rules_core::lint::{Code, Severity};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The configuration file's name, in `<project root>/.pi` and in `$HOME/.pi/agent`.
pub const CONFIG_FILE_NAME: &str = "pi-rules.toml";

/// The most bytes read of a configuration file (as of a settings file): 1 MiB.
pub const MAX_CONFIG_BYTES: u64 = MAX_SETTINGS_BYTES;

/// Where a value of the configuration came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigSource {
    /// No file set it.
    Default,
    /// `$HOME/.pi/agent/pi-rules.toml`.
    User,
    /// `<project root>/.pi/pi-rules.toml`.
    Project,
}

impl ConfigSource {
    /// `default`, `user` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigSource::Default => "default",
            ConfigSource::User => "user",
            ConfigSource::Project => "project",
        }
    }
}

/// A severity as the configuration file names it: one of `check`'s, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Error,
    Warning,
    Info,
    /// The finding is not reported.
    Off,
}

impl Level {
    /// The names the file may use, in order.
    pub const NAMES: [&'static str; 4] = ["error", "warning", "info", "off"];

    /// The level named `name` (exactly, lower case).
    pub fn parse(name: &str) -> Option<Level> {
        match name {
            "error" => Some(Level::Error),
            "warning" => Some(Level::Warning),
            "info" => Some(Level::Info),
            "off" => Some(Level::Off),
            _ => None,
        }
    }

    /// `error`, `warning`, `info` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "info",
            Level::Off => "off",
        }
    }

    /// The severity a finding gets; `None` for `off`.
    pub fn severity(self) -> Option<Severity> {
        match self {
            Level::Error => Some(Severity::Error),
            Level::Warning => Some(Severity::Warning),
            Level::Info => Some(Severity::Info),
            Level::Off => None,
        }
    }
}

/// The effective configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    pub rules: RulesConfig,
    pub check: CheckConfig,
    pub export: ExportConfig,
}

/// `[rules]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RulesConfig {
    /// Whether pi's block honours rule scopes (`paths:`, `agents:`, nested `.pi/rules`).
    pub scoped: bool,
}

/// `[check]`: what `check` reports, and how seriously.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckConfig {
    /// Codes never reported.
    pub ignore: Vec<Code>,
    /// Each code's severity, in the file's order.
    pub severity: Vec<(Code, Level)>,
    /// Overrides for the files some globs match, in order: a later entry wins.
    pub per_path: Vec<PerPath>,
}

/// One `[[check.per-path]]` entry.
#[derive(Debug, Clone)]
pub struct PerPath {
    /// The globs as written, relative to the project root.
    pub paths: Vec<String>,
    pub ignore: Vec<Code>,
    pub severity: Vec<(Code, Level)>,
    /// The file the entry is in.
    pub source: ConfigSource,
    /// `paths`, compiled (the globs that compile).
    matcher: globset::GlobSet,
}

impl PartialEq for PerPath {
    fn eq(&self, other: &PerPath) -> bool {
        self.paths == other.paths
            && self.ignore == other.ignore
            && self.severity == other.severity
            && self.source == other.source
    }
}

impl Eq for PerPath {}

impl PerPath {
    /// Whether the entry's globs match `relative`, a path relative to the project root.
    pub fn matches(&self, relative: &Path) -> bool {
        self.matcher.is_match(relative)
    }
}

/// `[export]`, for `export`: the team's choice, so that a bare `pi-rules export` and
/// `export --check` repeat it. Flags on the command line win over each key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportConfig {
    /// The targets a bare `export` writes (names as on the command line); empty when the files
    /// do not say (export then refreshes the targets the project has).
    pub targets: Vec<String>,
    /// The layers `export` writes for other agents: the project layer unless the file says.
    pub layers: Vec<Layer>,
    /// How much of the settings chain export reads (`--settings`); `None`: export's default.
    pub settings: Option<ExportSettings>,
    /// Settings values as `--set` gives them, `KEY=JSON` each, in the file's order.
    pub set: Vec<String>,
}

/// `[export] settings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportSettings {
    /// The project settings file and the schema defaults.
    Project,
    /// The whole chain: project file, global file, environment, defaults.
    All,
}

impl ExportSettings {
    /// The name in the file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ExportSettings::Project => "project",
            ExportSettings::All => "all",
        }
    }
}

impl Default for ExportConfig {
    fn default() -> ExportConfig {
        ExportConfig {
            targets: Vec::new(),
            layers: vec![Layer::Project],
            settings: None,
            set: Vec::new(),
        }
    }
}

impl Config {
    /// Whether pi's block honours rule scopes: `[rules] scoped`. What every command asks.
    pub fn scoped(&self) -> bool {
        self.rules.scoped
    }

    /// Reads the user file and the project file of `session` (through its `Files`) and puts
    /// them together: missing files give the defaults, a broken file its findings and the
    /// defaults (or the other file's values) for what it could not give.
    pub fn read(session: &Session) -> LoadedConfig {
        let mut files = Vec::with_capacity(2);
        if let Some(path) = user_config_path(session) {
            files.push(read_file(session, ConfigSource::User, path));
        }
        files.push(read_file(
            session,
            ConfigSource::Project,
            project_config_path(session),
        ));
        LoadedConfig::merge(files)
    }
}

/// `$HOME/.pi/agent/pi-rules.toml`, when there is a `$HOME`.
pub fn user_config_path(session: &Session) -> Option<PathBuf> {
    let home = session.home.as_ref()?;
    Some(home.join(".pi").join("agent").join(CONFIG_FILE_NAME))
}

/// `<project root>/.pi/pi-rules.toml`: the project root is the session's (the repository root
/// when started below it, the working directory outside a repository).
pub fn project_config_path(session: &Session) -> PathBuf {
    session.project_root().join(".pi").join(CONFIG_FILE_NAME)
}

/// One configuration file as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Which file it is: [`ConfigSource::User`] or [`ConfigSource::Project`].
    pub source: ConfigSource,
    pub path: PathBuf,
    pub state: FileState,
    /// The text, when it was read (for line and column of its findings).
    pub text: Option<String>,
}

/// What became of a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// There is none: nothing to read.
    Missing,
    /// Read; `findings` of the run's findings are on it.
    Read { findings: usize },
    /// Not TOML: none of it is used.
    Invalid,
    /// It exists but cannot be used: too large, not a regular file, unreadable.
    Unreadable { reason: String },
}

impl FileState {
    /// `missing`, `read`, `read; N findings`, `not TOML`, or `unreadable: REASON` (raw).
    pub fn describe(&self) -> String {
        match self {
            FileState::Missing => "missing".to_owned(),
            FileState::Read { findings: 0 } => "read".to_owned(),
            FileState::Read { findings: 1 } => "read; 1 finding".to_owned(),
            FileState::Read { findings } => format!("read; {findings} findings"),
            FileState::Invalid => "not TOML, ignored".to_owned(),
            FileState::Unreadable { reason } => format!("unreadable: {reason}"),
        }
    }
}

/// One problem in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFinding {
    /// The file it is in.
    pub path: PathBuf,
    /// Which file that is.
    pub source: ConfigSource,
    pub code: Code,
    /// Byte range in the file's text; `None` for the file as a whole (unreadable).
    pub span: Option<Range<usize>>,
    /// 1-based line and column (in characters) of the span's start; 1:1 without a span.
    pub line: usize,
    pub column: usize,
    /// Raw: a front end escapes it where it prints.
    pub message: String,
    pub help: Option<String>,
}

/// The configuration with where each value came from, the files and their findings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedConfig {
    pub config: Config,
    /// Every key's source, in the file's order of keys: `rules.scoped`, `check.ignore`,
    /// `check.severity.CODE` (one per code set), `check.per-path`, `export.targets`,
    /// `export.layers`, `export.settings`, `export.set`. A key
    /// missing here has its default.
    pub sources: IndexMap<String, ConfigSource>,
    /// The user file (when there is a `$HOME`), then the project file.
    pub files: Vec<ConfigFile>,
    /// The findings of both files, the user file's first, each file's in position order.
    pub findings: Vec<ConfigFinding>,
}

/// The keys whose values [`LoadedConfig::sources`] gives, in order (`check.severity` stands for
/// its codes).
pub const KEYS: [&str; 8] = [
    "rules.scoped",
    "check.ignore",
    "check.severity",
    "check.per-path",
    "export.targets",
    "export.layers",
    "export.settings",
    "export.set",
];

impl LoadedConfig {
    /// Where `key` (one of [`KEYS`], or `check.severity.CODE`) came from.
    pub fn source(&self, key: &str) -> ConfigSource {
        self.sources
            .get(key)
            .copied()
            .unwrap_or(ConfigSource::Default)
    }

    /// The file of `source`, when it was looked for.
    pub fn file(&self, source: ConfigSource) -> Option<&ConfigFile> {
        self.files.iter().find(|f| f.source == source)
    }

    /// What a command that does not report the findings itself says of them: one warning per
    /// finding, naming the file, line and column, with its code and help (raw).
    pub fn notes(&self) -> Vec<Note> {
        self.findings
            .iter()
            .map(|f| {
                let mut text = format!(
                    "{}:{}:{}: {} [{}]",
                    f.path.display(),
                    f.line,
                    f.column,
                    f.message,
                    f.code.id()
                );
                if let Some(help) = &f.help {
                    text.push_str("; ");
                    text.push_str(help);
                }
                Note::warning(text)
            })
            .collect()
    }

    /// Puts the files together, the later overriding the earlier key by key.
    fn merge(read: Vec<(ConfigFile, file::Settings, Vec<ConfigFinding>)>) -> LoadedConfig {
        let mut config = Config::default();
        let mut sources = IndexMap::new();
        let mut files = Vec::with_capacity(read.len());
        let mut findings = Vec::new();
        for (file, set, found) in read {
            let source = file.source;
            let mut take = |key: &str| {
                sources.insert(key.to_owned(), source);
            };
            if let Some(scoped) = set.scoped {
                config.rules.scoped = scoped;
                take("rules.scoped");
            }
            if let Some(ignore) = set.ignore {
                config.check.ignore = ignore;
                take("check.ignore");
            }
            for (code, level) in set.severity {
                match config.check.severity.iter_mut().find(|(c, _)| *c == code) {
                    Some(slot) => slot.1 = level,
                    None => config.check.severity.push((code, level)),
                }
                take(&format!("check.severity.{}", code.id()));
            }
            if let Some(per_path) = set.per_path {
                config.check.per_path = per_path;
                take("check.per-path");
            }
            if let Some(targets) = set.targets {
                config.export.targets = targets;
                take("export.targets");
            }
            if let Some(layers) = set.layers {
                config.export.layers = layers;
                take("export.layers");
            }
            if let Some(settings) = set.export_settings {
                config.export.settings = Some(settings);
                take("export.settings");
            }
            if let Some(set) = set.set {
                config.export.set = set;
                take("export.set");
            }
            files.push(file);
            findings.extend(found);
        }
        LoadedConfig {
            config,
            sources,
            files,
            findings,
        }
    }
}

/// Reads the file at `path` (bounded) and what it sets.
fn read_file(
    session: &Session,
    source: ConfigSource,
    path: PathBuf,
) -> (ConfigFile, file::Settings, Vec<ConfigFinding>) {
    let whole_file = |code: Code, message: String| ConfigFinding {
        path: path.clone(),
        source,
        code,
        span: None,
        line: 1,
        column: 1,
        message,
        help: None,
    };
    let unreadable = |source, reason: String| {
        let finding = whole_file(
            Code::ConfigUnreadable,
            format!("configuration file is not read: {reason}"),
        );
        let file = ConfigFile {
            source,
            path: path.clone(),
            state: FileState::Unreadable { reason },
            text: None,
        };
        (file, file::Settings::default(), vec![finding])
    };
    // A project's configuration stays in the project: a cloned project whose file is a link
    // to a file of the machine's is not read (its text could reach a report through a finding).
    if source == ConfigSource::Project {
        let root = session.files().canonical_or_same(&session.project_root());
        if let Some(real) = session.files().real_path(&path) {
            if !real.starts_with(&root) {
                return unreadable(
                    source,
                    format!(
                        "it is a link to `{}`, outside the project `{}`; the project's \
                         configuration is read only from inside the project",
                        real.display(),
                        root.display()
                    ),
                );
            }
        }
    }
    match session.files().read_text(&path, MAX_CONFIG_BYTES) {
        Ok(None) => {
            // A link that leads nowhere reads as missing; say so, as for a settings file.
            let dangling = !session.files().overlay().contains(&path)
                && session.files().symlink_metadata(&path).is_some();
            if dangling {
                return unreadable(source, "it is a link that leads nowhere".to_owned());
            }
            let file = ConfigFile {
                source,
                path,
                state: FileState::Missing,
                text: None,
            };
            (file, file::Settings::default(), Vec::new())
        }
        Err(reason) => unreadable(source, reason),
        Ok(Some(text)) => {
            let (set, found, parsed) = file::read(&text, &path, source, &session.schema);
            let state = if parsed {
                FileState::Read {
                    findings: found.len(),
                }
            } else {
                FileState::Invalid
            };
            let file = ConfigFile {
                source,
                path,
                state,
                text: Some(text),
            };
            (file, set, found)
        }
    }
}

#[cfg(test)]
mod tests;
