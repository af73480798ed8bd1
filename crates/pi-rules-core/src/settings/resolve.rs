//! Stage 3: every known key resolved, in schema order, with the source it came from.
//!
//! Resolution of a key (SPEC §4): the project file's checked value, else the global file's, else
//! the key's environment variable read by the key's rule, else the schema default. The merge is
//! per top-level key. Environment variables are looked up through [`EnvLookup`], so this module
//! reads nothing itself.

use super::agents::agent_names_value;
use super::file::{cycle_count, SettingsFile};
use super::js_number::{parse_float, parse_int};
use super::rule::Rule;
use super::schema::{KeySpec, Schema};
use crate::scope::Settings;
use crate::text::js_trim;
use crate::value::{Object, Value};
use std::fmt;

/// Lower-cased environment values that mean true.
const TRUE_WORDS: [&str; 4] = ["true", "1", "yes", "on"];
/// Lower-cased environment values that mean false.
const FALSE_WORDS: [&str; 4] = ["false", "0", "no", "off"];

/// What an unknown key resolves to.
static UNKNOWN_KEY_VALUE: Value = Value::Bool(false);

/// Read access to environment variables; the binary supplies the process environment, tests a
/// map. Any `Fn(&str) -> Option<String>` is one.
pub trait EnvLookup {
    /// The variable's value, or `None` when it is not set.
    fn var(&self, name: &str) -> Option<String>;
}

impl<F> EnvLookup for F
where
    F: Fn(&str) -> Option<String>,
{
    fn var(&self, name: &str) -> Option<String> {
        self(name)
    }
}

/// Where a resolved value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    ProjectFile,
    GlobalFile,
    /// The environment variable of that name.
    Env(String),
    /// The schema default.
    Default,
    /// No rule applies (an unknown key, or a schema type without a resolution rule): `false`,
    /// as in the reference.
    Fallback,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::ProjectFile => f.write_str("project settings file"),
            Source::GlobalFile => f.write_str("global settings file"),
            Source::Env(name) => write!(f, "environment variable `{name}`"),
            Source::Default => f.write_str("default"),
            Source::Fallback => f.write_str("no rule (false)"),
        }
    }
}

/// A key's resolved value and its source.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedValue {
    pub value: Value,
    pub source: Source,
}

/// Every known key's resolved value, in schema order: the settings that assembly reads, and
/// where each value came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Resolved {
    settings: Settings,
    /// The source of each value, in the order of `settings`.
    sources: Vec<Source>,
}

/// One key's resolution, borrowed from [`Resolved`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolution<'a> {
    pub value: &'a Value,
    pub source: &'a Source,
}

impl Resolved {
    /// The resolution of `key`, or `None` when the key is unknown.
    pub fn get(&self, key: &str) -> Option<Resolution<'_>> {
        let (at, value) = self.settings.get_full(key)?;
        Some(Resolution {
            value,
            source: self.sources.get(at)?,
        })
    }

    /// The value of `key`; an unknown key is `false`, as in the reference.
    pub fn resolve_key(&self, key: &str) -> &Value {
        self.settings.get(key).unwrap_or(&UNKNOWN_KEY_VALUE)
    }

    /// Keys in schema order with their resolutions.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Resolution<'_>)> {
        self.settings
            .iter()
            .zip(&self.sources)
            .map(|((key, value), source)| (key, Resolution { value, source }))
    }

    /// The settings view that assembly and `{{SETTINGS}}` read: every key with its value.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The settings view, without the sources.
    pub fn into_settings(self) -> Settings {
        self.settings
    }

    /// Every key with its value as one object, for printing as JSON.
    pub fn to_object(&self) -> Object {
        self.settings
            .iter()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.sources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

/// The project and global files, checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SettingsPair<'a> {
    pub(crate) project: &'a SettingsFile,
    pub(crate) global: &'a SettingsFile,
}

/// Resolves every key of `schema` from the two files and the environment.
pub fn resolve(
    schema: &Schema,
    project: &SettingsFile,
    global: &SettingsFile,
    env: &dyn EnvLookup,
) -> Resolved {
    let files = SettingsPair { project, global };
    resolve_from(schema, files, files, env)
}

/// Resolves every key; keys with per-key resolution (`acpx_agents`, `cli_agents`) read
/// `per_key` instead of `merged`, which lets a cache serve the others while those see the files
/// as they are now, as the reference does.
pub(crate) fn resolve_from(
    schema: &Schema,
    merged: SettingsPair<'_>,
    per_key: SettingsPair<'_>,
    env: &dyn EnvLookup,
) -> Resolved {
    let mut resolved = Resolved {
        settings: Settings::with_capacity(schema.len()),
        sources: Vec::with_capacity(schema.len()),
    };
    // Schema names are unique, so the two lists stay in step.
    for spec in schema.keys() {
        let ResolvedValue { value, source } = resolve_spec(spec, merged, per_key, env);
        resolved.settings.insert(spec.name.clone(), value);
        resolved.sources.push(source);
    }
    resolved
}

/// Resolves one key.
pub(crate) fn resolve_spec(
    spec: &KeySpec,
    merged: SettingsPair<'_>,
    per_key: SettingsPair<'_>,
    env: &dyn EnvLookup,
) -> ResolvedValue {
    let name = spec.name.as_ref();
    let merged_value = || {
        value_in_files(merged, name).map(|(value, source)| ResolvedValue {
            value: value.clone(),
            source,
        })
    };
    // The environment variable, when it is set and not empty, read by `read`, when that gives
    // a value. It is looked up only when no file gives the key.
    let env_value = |read: &dyn Fn(&str) -> Option<Value>| {
        let var = spec.env.as_deref()?;
        let raw = env.var(var).filter(|raw| !raw.is_empty())?;
        Some(ResolvedValue {
            value: read(&raw)?,
            source: Source::Env(var.to_owned()),
        })
    };
    let default = || ResolvedValue {
        value: spec.default.clone(),
        source: Source::Default,
    };

    let resolved = match Rule::of(spec) {
        Rule::CommitTrailer => merged_value().or_else(|| {
            env_value(&|raw| {
                let lower = raw.to_lowercase();
                Some(if TRUE_WORDS.contains(&lower.as_str()) {
                    Value::Bool(true)
                } else if FALSE_WORDS.contains(&lower.as_str()) {
                    Value::Bool(false)
                } else {
                    Value::String(raw.to_owned())
                })
            })
        }),
        Rule::AgentList => {
            let listed = value_in_files(per_key, name)
                .map(|(value, source)| ResolvedValue {
                    value: agent_names_value(value),
                    source,
                })
                .or_else(|| env_value(&|raw| Some(agent_names_value(&Value::String(raw.into())))));
            return listed.unwrap_or_else(|| ResolvedValue {
                value: agent_names_value(&spec.default),
                source: Source::Default,
            });
        }
        Rule::Enable => merged_value().or_else(|| {
            env_value(&|raw| {
                let lower = raw.to_lowercase();
                Some(Value::Bool(!FALSE_WORDS.contains(&lower.as_str())))
            })
        }),
        Rule::DashboardPort => merged_value().or_else(|| {
            env_value(&|raw| {
                let port = parse_int(raw);
                (port.is_finite() && port > 0.0 && port <= 65535.0).then_some(Value::Number(port))
            })
        }),
        Rule::ReviewCycles => {
            merged_value().or_else(|| env_value(&|raw| cycle_count(raw).map(Value::Number)))
        }
        Rule::AgentOverrides => merged_value(),
        Rule::Bool => merged_value().or_else(|| {
            env_value(&|raw| {
                let lower = raw.to_lowercase();
                Some(Value::Bool(TRUE_WORDS.contains(&lower.as_str())))
            })
        }),
        Rule::Int { min, max } => merged_value().or_else(|| {
            env_value(&|raw| {
                let n = signed_digits(js_trim(raw))?;
                (n >= min && n <= max).then_some(Value::Number(n))
            })
        }),
        Rule::Port { .. } => merged_value()
            .filter(|resolved| match resolved.value {
                Value::Number(n) => n.trunc() == n && (0.0..=65535.0).contains(&n),
                _ => false,
            })
            .or_else(|| {
                env_value(&|raw| {
                    let trimmed = js_trim(raw);
                    if trimmed.starts_with('-') {
                        return None;
                    }
                    let n = signed_digits(trimmed)?;
                    (n <= 65535.0).then_some(Value::Number(n))
                })
            }),
        Rule::Number => merged_value().or_else(|| {
            env_value(&|raw| {
                let n = parse_float(raw);
                n.is_finite().then_some(Value::Number(n))
            })
        }),
        Rule::String { .. } => merged_value()
            .or_else(|| env_value(&|raw| Some(Value::String(js_trim(raw).to_owned())))),
        Rule::Unsupported => {
            return ResolvedValue {
                value: Value::Bool(false),
                source: Source::Fallback,
            }
        }
    };
    resolved.unwrap_or_else(default)
}

/// The checked value of `name` in the project file, else in the global file.
fn value_in_files<'a>(files: SettingsPair<'a>, name: &str) -> Option<(&'a Value, Source)> {
    files
        .project
        .get(name)
        .map(|v| (v, Source::ProjectFile))
        .or_else(|| files.global.get(name).map(|v| (v, Source::GlobalFile)))
}

/// `Number(text)` when `text` matches `^-?\d+$` (ASCII digits).
fn signed_digits(text: &str) -> Option<f64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn file(text: &str) -> SettingsFile {
        SettingsFile::parse(Schema::embedded(), text)
    }

    /// Resolves `key` with the given files (`None`: missing) and environment.
    fn resolve_one(
        key: &str,
        project: Option<&str>,
        global: Option<&str>,
        env: &[(&str, &str)],
    ) -> ResolvedValue {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let lookup = |name: &str| env.get(name).cloned();
        let project = project.map_or_else(SettingsFile::missing, file);
        let global = global.map_or_else(SettingsFile::missing, file);
        let resolved = resolve(Schema::embedded(), &project, &global, &lookup);
        let resolution = resolved.get(key).expect("known key");
        ResolvedValue {
            value: resolution.value.clone(),
            source: resolution.source.clone(),
        }
    }

    fn env_case(key: &str, var: &str, raw: &str) -> String {
        resolve_one(key, None, None, &[(var, raw)])
            .value
            .to_json()
            .unwrap_or_default()
    }

    #[test]
    fn env_readings_table() {
        // (key, env var, raw value, resolved JSON)
        let cases = [
            (
                "commit_trailer",
                "PI_COMMIT_TRAILER",
                "Assisted-by",
                r#""Assisted-by""#,
            ),
            ("commit_trailer", "PI_COMMIT_TRAILER", "OFF", "false"),
            ("commit_trailer", "PI_COMMIT_TRAILER", "Yes", "true"),
            ("commit_trailer", "PI_COMMIT_TRAILER", " on", r#"" on""#),
            ("commit_trailer", "PI_COMMIT_TRAILER", "", "false"),
            ("dco", "PI_DCO", "Yes", "true"),
            ("dco", "PI_DCO", "off", "false"),
            ("dco", "PI_DCO", " true", "false"),
            ("dco", "PI_DCO", "maybe", "false"),
            (
                "task_auto_clear_enabled",
                "PI_TASK_AUTO_CLEAR_ENABLED",
                "",
                "true",
            ),
            (
                "task_auto_clear_enabled",
                "PI_TASK_AUTO_CLEAR_ENABLED",
                "nah",
                "false",
            ),
            ("pidash_enable", "PI_PIDASH_ENABLE", "OFF", "false"),
            ("pidash_enable", "PI_PIDASH_ENABLE", "0", "false"),
            ("pidash_enable", "PI_PIDASH_ENABLE", "nope", "true"),
            ("pidash_enable", "PI_PIDASH_ENABLE", "", "true"),
            ("pidash_port", "PI_PIDASH_PORT", "8080abc", "8080"),
            ("pidash_port", "PI_PIDASH_PORT", " 9000", "9000"),
            ("pidash_port", "PI_PIDASH_PORT", "0", "19190"),
            ("pidash_port", "PI_PIDASH_PORT", "-5", "19190"),
            ("pidash_port", "PI_PIDASH_PORT", "70000", "19190"),
            (
                "review_loop_max_cycles",
                "PI_REVIEW_LOOP_MAX_CYCLES",
                " 4 ",
                "4",
            ),
            (
                "review_loop_max_cycles",
                "PI_REVIEW_LOOP_MAX_CYCLES",
                "10",
                "10",
            ),
            (
                "review_loop_max_cycles",
                "PI_REVIEW_LOOP_MAX_CYCLES",
                "01",
                "3",
            ),
            (
                "review_loop_max_cycles",
                "PI_REVIEW_LOOP_MAX_CYCLES",
                "1e1",
                "3",
            ),
            (
                "review_loop_max_cycles",
                "PI_REVIEW_LOOP_MAX_CYCLES",
                "11",
                "3",
            ),
            ("coms_max_hops", "PI_COMS_MAX_HOPS", " 7 ", "7"),
            ("coms_max_hops", "PI_COMS_MAX_HOPS", "10abc", "5"),
            ("coms_max_hops", "PI_COMS_MAX_HOPS", "-3", "5"),
            ("coms_max_hops", "PI_COMS_MAX_HOPS", "51", "5"),
            (
                "coms_timeout_ms",
                "PI_COMS_TIMEOUT_MS",
                "99999999999",
                "99999999999",
            ),
            ("coms_timeout_ms", "PI_COMS_TIMEOUT_MS", "999", "1800000"),
            (
                "dream_interval_hours",
                "PI_DREAM_INTERVAL_HOURS",
                "2.5",
                "2.5",
            ),
            (
                "dream_interval_hours",
                "PI_DREAM_INTERVAL_HOURS",
                "3abc",
                "3",
            ),
            (
                "dream_interval_hours",
                "PI_DREAM_INTERVAL_HOURS",
                "1e2",
                "100",
            ),
            (
                "dream_interval_hours",
                "PI_DREAM_INTERVAL_HOURS",
                "-1",
                "-1",
            ),
            (
                "dream_interval_hours",
                "PI_DREAM_INTERVAL_HOURS",
                "inf",
                "3",
            ),
            (
                "dream_interval_hours",
                "PI_DREAM_INTERVAL_HOURS",
                "Infinity",
                "3",
            ),
            ("image_model", "PI_IMAGE_MODEL", "  img-1  ", r#""img-1""#),
            ("image_model", "PI_IMAGE_MODEL", "   ", r#""""#),
            ("sidecar_log_level", "PI_SIDECAR_LOG_LEVEL", "", r#""info""#),
            (
                "acpx_agents",
                "ACPX_AGENTS",
                "Claude, gemini,,bad name!",
                r#"["claude","gemini"]"#,
            ),
            ("acpx_agents", "ACPX_AGENTS", " , ", "[]"),
            ("cli_agents", "CLI_AGENTS", "GEMINI,gemini", r#"["gemini"]"#),
        ];
        for (key, var, raw, expected) in cases {
            assert_eq!(
                env_case(key, var, raw),
                expected,
                "{key} with {var}={raw:?}"
            );
        }
    }

    #[test]
    fn sources_table() {
        let env = [("PI_DCO", "1"), ("ACPX_AGENTS", "envagent")];
        // (key, project, global, value JSON, source)
        let cases = [
            (
                "dco",
                Some(r#"{"dco": false}"#),
                Some(r#"{"dco": true}"#),
                "false",
                Source::ProjectFile,
            ),
            (
                "dco",
                Some(r#"{"dco": "x"}"#),
                Some(r#"{"dco": false}"#),
                "false",
                Source::GlobalFile,
            ),
            (
                "dco",
                Some("{broken"),
                None,
                "true",
                Source::Env("PI_DCO".into()),
            ),
            ("use_worktrees", None, None, "false", Source::Default),
            (
                "acpx_agents",
                Some(r#"{"acpx_agents": 5}"#),
                Some(r#"{"acpx_agents": "G"}"#),
                r#"["g"]"#,
                Source::GlobalFile,
            ),
            (
                "acpx_agents",
                Some(r#"{"acpx_agents": ""}"#),
                Some(r#"{"acpx_agents": "G"}"#),
                "[]",
                Source::ProjectFile,
            ),
            (
                "acpx_agents",
                Some(r#"{"acpx_agents": 5}"#),
                None,
                r#"["envagent"]"#,
                Source::Env("ACPX_AGENTS".into()),
            ),
            ("cli_agents", None, None, "[]", Source::Default),
            (
                "agent_overrides",
                None,
                Some(r#"{"agent_overrides": {"a": {"model": "m"}}}"#),
                r#"{"a":{"model":"m"}}"#,
                Source::GlobalFile,
            ),
            ("agent_overrides", None, None, "{}", Source::Default),
            (
                "review_loop_max_cycles",
                Some(r#"{"review_loop_max_cycles": "7"}"#),
                None,
                "7",
                Source::ProjectFile,
            ),
            (
                "image_model",
                Some(r#"{"image_model": " "}"#),
                Some(r#"{"image_model": "g"}"#),
                r#""g""#,
                Source::GlobalFile,
            ),
        ];
        for (key, project, global, value, source) in cases {
            let resolved = resolve_one(key, project, global, &env);
            assert_eq!(
                resolved.value.to_json().as_deref(),
                Some(value),
                "{key} {project:?} {global:?}"
            );
            assert_eq!(resolved.source, source, "{key} {project:?} {global:?}");
        }
    }

    #[test]
    fn unknown_keys_and_views() {
        let resolved = resolve(
            Schema::embedded(),
            &SettingsFile::missing(),
            &SettingsFile::missing(),
            &|_: &str| None,
        );
        assert_eq!(resolved.resolve_key("no_such_key"), &Value::Bool(false));
        assert_eq!(resolved.resolve_key("pidash_port"), &Value::Number(19190.0));
        assert_eq!(resolved.len(), Schema::embedded().len());
        let settings = resolved.settings();
        let names: Vec<&str> = settings.keys().collect();
        let schema_names: Vec<&str> = Schema::embedded().names().collect();
        assert_eq!(names, schema_names);
        assert_eq!(resolved.to_object().len(), resolved.len());
    }

    #[test]
    fn generic_types_from_a_custom_schema() {
        let schema = Schema::parse(
            r#"{
                "p": {"type": "port", "env": "P", "default": 1},
                "i": {"type": "int", "env": "I", "default": 7, "min": -5, "max": 5},
                "x": {"type": "mystery", "env": "X", "default": "d"}
            }"#,
        )
        .expect("schema");
        let cases = [
            ("p", "{}", "8080", "8080"),
            ("p", "{}", " 0 ", "0"),
            ("p", "{}", "-0", "1"),
            ("p", "{}", "65536", "1"),
            ("p", r#"{"p": 0}"#, "", "0"),
            ("i", "{}", "-5", "-5"),
            ("i", "{}", "-6", "7"),
            ("i", r#"{"i": -1}"#, "", "-1"),
            ("x", r#"{"x": "v"}"#, "e", "false"),
        ];
        for (key, project, env, expected) in cases {
            let project = SettingsFile::parse(&schema, project);
            let lookup = |_: &str| Some(env.to_owned());
            let resolved = resolve(&schema, &project, &SettingsFile::missing(), &lookup);
            assert_eq!(
                resolved.resolve_key(key).to_json().as_deref(),
                Some(expected),
                "{key} env {env:?}"
            );
        }
    }
}
