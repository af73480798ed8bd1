//! What one command invocation is given: the arguments several commands share (where the
//! project is, which schema, which package layer, what the host says), the streams it writes to,
//! and where its settings come from. The commands flatten the shared arguments into their own,
//! and `serve` builds them from request parameters.

use crate::output::{output, UsageError};
use crate::session::{FoundSettingsFile, Session, SettingsRead};
use crate::terminal::{escape, ColorChoice};
use clap::Args;
use pi_rules_core::lint::suggest;
use pi_rules_core::settings::{Resolved, Schema, SettingsFile};
use pi_rules_core::value::Object;
use pi_rules_core::Value;
use std::io::{IsTerminal, Write};
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

/// Settings with some keys set as if a settings file above all others held them: `diff --set`.
///
/// The values are checked exactly as a settings file's are (they are parsed as one, see
/// [`SettingsOverrides::parse`]), and resolution runs on the project file with the overridden
/// keys put into it, so every key rule (agent lists, ports, cycle counts) applies unchanged. The
/// overridden keys resolve with the project file as their source.
#[derive(Debug, Clone, Default)]
pub struct SettingsOverrides {
    /// Key and raw value, in the order given; a later one for the same key wins.
    values: Vec<(String, Value)>,
}

impl SettingsOverrides {
    /// Reads `KEY=VALUE` pairs against `schema`. VALUE is JSON when it parses as JSON, else a
    /// string (`--set commit_trailer=Assisted-by`). An unknown key, or a value its key's check
    /// rejects, is a [`UsageError`] naming it.
    pub fn parse(schema: &Schema, pairs: &[String]) -> Result<SettingsOverrides, UsageError> {
        let mut values: Vec<(String, Value)> = Vec::with_capacity(pairs.len());
        for pair in pairs {
            let Some((key, text)) = pair.split_once('=') else {
                return Err(UsageError(format!(
                    "`--set {}` needs the form KEY=VALUE, e.g. `--set dco=true`",
                    escape(pair)
                )));
            };
            let key = key.trim();
            if !schema.contains(key) {
                let hint = match suggest::closest(key, schema.names()) {
                    Some(near) => format!("; did you mean `{near}`?"),
                    None => "; `pi-rules schema` lists the keys".to_owned(),
                };
                return Err(UsageError(format!(
                    "unknown settings key `{}` in `--set`{hint}",
                    escape(key)
                )));
            }
            let raw: serde_json::Value = serde_json::from_str(text)
                .unwrap_or_else(|_| serde_json::Value::String(text.to_owned()));
            let mut one = Object::new();
            one.insert(key, Value::from(raw));
            let file = SettingsFile::parse(schema, &object_json(&one));
            if let Some(rejected) = file.rejected().first() {
                return Err(UsageError(format!(
                    "`--set {}`: the value is rejected: {}",
                    escape(pair),
                    escape(&rejected.reason.to_string())
                )));
            }
            values.retain(|(k, _)| k != key);
            values.extend(one.iter().map(|(k, v)| (k.to_owned(), v.clone())));
        }
        Ok(SettingsOverrides { values })
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The overrides as `key=value` (value as JSON), for labels.
    pub fn describe(&self) -> Vec<String> {
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={}", v.to_json().unwrap_or_default()))
            .collect()
    }

    /// The project file with the overridden keys put in it (all of the file ignored when it is
    /// not an object, as resolution would ignore it).
    fn project_file(&self, schema: &Schema, project: &SettingsFile) -> SettingsFile {
        let mut merged = match project.raw() {
            Value::Object(raw) if project.problem().is_none() => raw.clone(),
            _ => Object::new(),
        };
        for (key, value) in &self.values {
            merged.insert(key.as_str(), value.clone());
        }
        SettingsFile::parse(schema, &object_json(&merged))
    }
}

/// An object as JSON text.
fn object_json(object: &Object) -> String {
    Value::Object(object.clone())
        .to_json()
        .unwrap_or_else(|| "{}".to_owned())
}

impl SettingsSource for SettingsOverrides {
    fn read(&mut self, session: &Session, err: &mut dyn Write) -> SettingsRead {
        let mut read = session.resolve_noting(err);
        let (project, global) = session.settings_files();
        let project = FoundSettingsFile {
            file: self.project_file(&session.schema, &project.file),
            ..project
        };
        read.resolved = session.resolve_files(&project, global.as_ref());
        read
    }
}

/// What a command runs with.
pub struct Context<'a> {
    /// Standard output: the command's result. Failures are
    /// [`OutputError`](crate::output::OutputError)s.
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

    /// Flushes both streams: stderr first, best-effort, then stdout, whose failure is an
    /// [`OutputError`](crate::output::OutputError).
    pub fn flush(&mut self) -> anyhow::Result<()> {
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
    /// One JSON object, described by `pi-rules docs COMMAND-json`.
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_rules_core::settings::Source;
    use std::borrow::Cow;

    /// A session on a temporary project (not a repository) with `settings` as its project file.
    fn session_with(settings: Option<&str>) -> (tempfile::TempDir, Session) {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        if let Some(text) = settings {
            std::fs::write(project.join(".pi/pi-config-settings.jsonc"), text).unwrap();
        }
        let session = Session::from_parts(project, None, Cow::Borrowed(Schema::embedded()));
        (root, session)
    }

    fn pairs(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn overrides_sit_above_the_project_file_and_keep_the_rest_of_it() {
        let (_root, session) = session_with(Some(
            r#"{"dco": true, "use_worktrees": true, "pidash_port": "bad"}"#,
        ));
        let mut overrides = SettingsOverrides::parse(
            &session.schema,
            &pairs(&["use_worktrees=false", "review_loop_max_cycles=\"5\""]),
        )
        .unwrap();
        let resolved = overrides.resolve(&session, &mut std::io::sink());
        let value = |key: &str| resolved.resolve_key(key).to_json().unwrap();
        assert_eq!(value("dco"), "true");
        assert_eq!(value("use_worktrees"), "false");
        assert_eq!(value("review_loop_max_cycles"), "5");
        // The rejected project value is still rejected: the default stands.
        assert_eq!(
            resolved.get("pidash_port").unwrap().source,
            &Source::Default
        );
        assert_eq!(
            overrides.describe(),
            ["use_worktrees=false", "review_loop_max_cycles=\"5\""]
        );
    }

    #[test]
    fn a_project_file_that_is_ignored_stays_ignored() {
        for text in ["[1, 2]", "{\"dco\": true,}"] {
            let (_root, session) = session_with(Some(text));
            let mut overrides =
                SettingsOverrides::parse(&session.schema, &pairs(&["use_worktrees=true"])).unwrap();
            let resolved = overrides.resolve(&session, &mut std::io::sink());
            assert_eq!(
                resolved.resolve_key("use_worktrees").to_json().unwrap(),
                "true"
            );
            assert_eq!(
                resolved.get("dco").unwrap().source,
                &Source::Default,
                "{text}"
            );
        }
    }

    #[test]
    fn values_are_json_or_strings_and_checked_per_key() {
        let schema = Schema::embedded();
        let ok = |pair: &str| SettingsOverrides::parse(schema, &pairs(&[pair])).is_ok();
        let err = |pair: &str| {
            SettingsOverrides::parse(schema, &pairs(&[pair]))
                .unwrap_err()
                .to_string()
        };
        assert!(ok("commit_trailer=Assisted-by"));
        assert!(ok("commit_trailer=false"));
        assert!(ok("acpx_agents=codex, claude"));
        assert!(ok("acpx_agents=[\"codex\"]"));
        assert!(ok("review_loop_max_cycles=10"));
        assert!(err("review_loop_max_cycles=0").contains("out of range"));
        assert!(err("dco=1").contains("expected a boolean, found a number"));
        assert!(err("pidash_port=70000").contains("out of range"));
        assert!(err("nope=1").contains("unknown settings key `nope`"));
        assert!(err("=1").contains("unknown settings key ``"));
        assert!(err("dco").contains("needs the form KEY=VALUE"));
        // The last value for a key wins.
        let overrides =
            SettingsOverrides::parse(schema, &pairs(&["dco=true", "dco=false"])).unwrap();
        assert_eq!(overrides.describe(), ["dco=false"]);
    }
}
