//! One settings file, in the first two of the three stages: the raw value as parsed, and the
//! per-key checked values, where a value that fails its check is absent and the reason is kept.
//!
//! A file that is missing, unreadable, not valid JSONC or not an object at the top contributes
//! nothing (`{}`), as in the reference; the problem is kept with its byte offset so that a linter
//! can point at it.

use super::jsonc::{self, KeyAt, SyntaxError};
use super::rule::Rule;
use super::schema::Schema;
use crate::text::js_trim;
use crate::value::{js_number, Object, Value};
use indexmap::IndexMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The settings file names in a directory, preferred first. Only existence decides: when the
/// first exists the second is never read, even if the first cannot be parsed.
pub const SETTINGS_FILE_NAMES: [&str; 2] = ["pi-config-settings.jsonc", "pi-config-settings.json"];

/// The settings file of directory `dir`: `pi-config-settings.jsonc` when `exists` says it
/// exists, else `pi-config-settings.json` (which may not exist either).
pub fn settings_file_in(dir: &Path, exists: impl Fn(&Path) -> bool) -> PathBuf {
    let preferred = dir.join(SETTINGS_FILE_NAMES[0]);
    if exists(&preferred) {
        preferred
    } else {
        dir.join(SETTINGS_FILE_NAMES[1])
    }
}

/// Why a file that exists contributes nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum FileProblem {
    /// The file exists but could not be read.
    Unreadable { message: String },
    /// The text is not valid JSONC.
    Syntax(SyntaxError),
    /// The text is a JSON value other than an object.
    NotAnObject { found: &'static str },
}

impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileProblem::Unreadable { message } => write!(f, "cannot read the file: {message}"),
            FileProblem::Syntax(error) => write!(f, "invalid JSONC: {error}"),
            FileProblem::NotAnObject { found } => {
                write!(
                    f,
                    "the top level must be an object, found {}",
                    article(found)
                )
            }
        }
    }
}

/// A key whose value failed its check and so is absent from this file.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub key: String,
    pub reason: RejectReason,
    /// Byte offset of the key's opening quote (of its last occurrence, whose value counts).
    pub offset: Option<usize>,
}

/// Why a value failed its check.
#[derive(Debug, Clone, PartialEq)]
pub enum RejectReason {
    WrongType {
        expected: &'static str,
        found: &'static str,
    },
    NotAnInteger {
        value: f64,
    },
    OutOfRange {
        value: f64,
        min: f64,
        max: f64,
    },
    NotFinite,
    /// A string that is empty after trimming, for a key where empty means unset.
    EmptyString,
    /// A string other than the digit strings `1`..`10` (`review_loop_max_cycles`).
    NotACycleCount {
        text: String,
    },
    /// `agent_overrides` without one entry that sets a provider or a model.
    NoOverrides,
    /// A key whose schema type no file can set.
    UnsupportedType {
        kind: String,
    },
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::WrongType { expected, found } => {
                write!(f, "expected {expected}, found {}", article(found))
            }
            RejectReason::NotAnInteger { value } => {
                write!(f, "expected an integer, found {}", js_number(*value))
            }
            RejectReason::OutOfRange { value, min, max } => write!(
                f,
                "{} is out of range: it must be between {} and {}",
                js_number(*value),
                js_number(*min),
                js_number(*max)
            ),
            RejectReason::NotFinite => f.write_str("expected a finite number"),
            RejectReason::EmptyString => f.write_str("the string is empty after trimming"),
            RejectReason::NotACycleCount { text } => write!(
                f,
                "{text:?} is not one of the digit strings \"1\" to \"10\""
            ),
            RejectReason::NoOverrides => f.write_str(
                "no entry is an object with a `provider` or `model` that is a non-empty string or null",
            ),
            RejectReason::UnsupportedType { kind } => {
                write!(f, "a key of type `{kind}` cannot be set in a settings file")
            }
        }
    }
}

/// One settings file: present or not, its raw value, its checked values and its findings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SettingsFile {
    present: bool,
    raw: Value,
    problem: Option<FileProblem>,
    values: Object,
    rejected: Vec<Rejected>,
    unknown_keys: Vec<KeyAt>,
    duplicate_keys: Vec<KeyAt>,
}

impl SettingsFile {
    /// No file: contributes nothing.
    pub fn missing() -> SettingsFile {
        SettingsFile::default()
    }

    /// A file that exists but could not be read: contributes nothing.
    pub fn unreadable(message: impl Into<String>) -> SettingsFile {
        SettingsFile {
            present: true,
            problem: Some(FileProblem::Unreadable {
                message: message.into(),
            }),
            ..SettingsFile::default()
        }
    }

    /// Parses and checks a file's text against `schema`.
    pub fn parse(schema: &Schema, text: &str) -> SettingsFile {
        let mut file = SettingsFile {
            present: true,
            ..SettingsFile::default()
        };
        let document = match jsonc::parse(text) {
            Ok(document) => document,
            Err(error) => {
                file.problem = Some(FileProblem::Syntax(error));
                return file;
            }
        };
        let Value::Object(raw) = &document.value else {
            file.problem = Some(FileProblem::NotAnObject {
                found: document.value.type_name(),
            });
            file.raw = document.value;
            return file;
        };

        // Each distinct key in order of first appearance, with the offsets of its first and
        // last occurrences (the last is the one whose value `JSON.parse` keeps).
        let mut offsets: IndexMap<&str, (usize, usize)> = IndexMap::new();
        for at in &document.top_level_keys {
            match offsets.get_mut(at.key.as_str()) {
                Some((_, last)) => {
                    *last = at.offset;
                    file.duplicate_keys.push(at.clone());
                }
                None => {
                    offsets.insert(at.key.as_str(), (at.offset, at.offset));
                }
            }
        }
        for (key, &(first, offset)) in &offsets {
            let Some(spec) = schema.get(key) else {
                file.unknown_keys.push(KeyAt {
                    key: (*key).to_owned(),
                    offset: first,
                });
                continue;
            };
            let Some(value) = raw.get(key) else { continue };
            match check(Rule::of(spec), value, spec.kind.name()) {
                Ok(checked) => file.values.insert(*key, checked),
                Err(reason) => file.rejected.push(Rejected {
                    key: (*key).to_owned(),
                    reason,
                    offset: Some(offset),
                }),
            }
        }
        file.raw = document.value;
        file
    }

    /// Whether the file exists (even if it contributes nothing).
    pub fn is_present(&self) -> bool {
        self.present
    }

    /// Stage 1: the whole value as parsed; undefined when there is none.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// Whether the raw top-level object has `key`, whatever its value.
    pub fn has_raw_key(&self, key: &str) -> bool {
        matches!(&self.raw, Value::Object(raw) if raw.contains_key(key))
    }

    /// Stage 2: the known keys whose values passed their checks, as checked (trimmed, and so on).
    pub fn values(&self) -> &Object {
        &self.values
    }

    /// The checked value of `key`, if it has one.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    /// Why the file contributes nothing, if it does not.
    pub fn problem(&self) -> Option<&FileProblem> {
        self.problem.as_ref()
    }

    /// Known keys whose values failed their checks, in file order.
    pub fn rejected(&self) -> &[Rejected] {
        &self.rejected
    }

    /// Top-level keys the schema does not know, in file order, each at its first occurrence.
    pub fn unknown_keys(&self) -> &[KeyAt] {
        &self.unknown_keys
    }

    /// Every repeated occurrence of a top-level key (the last one's value counts).
    pub fn duplicate_keys(&self) -> &[KeyAt] {
        &self.duplicate_keys
    }
}

/// The checked form of `value` under `rule`, or why it fails.
fn check(rule: Rule, value: &Value, kind: &str) -> Result<Value, RejectReason> {
    let wrong = |expected| RejectReason::WrongType {
        expected,
        found: value.type_name(),
    };
    match rule {
        Rule::CommitTrailer => match value {
            Value::Bool(_) | Value::String(_) => Ok(value.clone()),
            _ => Err(wrong("a boolean or a string")),
        },
        Rule::AgentList => match value {
            Value::String(_) | Value::Array(_) => Ok(value.clone()),
            _ => Err(wrong("a string or an array")),
        },
        Rule::Enable | Rule::Bool => match value {
            Value::Bool(_) => Ok(value.clone()),
            _ => Err(wrong("a boolean")),
        },
        Rule::DashboardPort => integer_in(value, 1.0, 65535.0),
        Rule::Int { min, max } => integer_in(value, min, max),
        Rule::Port { min } => integer_in(value, min, 65535.0),
        Rule::ReviewCycles => match value {
            Value::Number(_) => integer_in(value, 1.0, 10.0),
            Value::String(text) => cycle_count(text)
                .map(Value::Number)
                .ok_or_else(|| RejectReason::NotACycleCount { text: text.clone() }),
            _ => Err(wrong("an integer or a digit string")),
        },
        Rule::Number => match value {
            Value::Number(n) if n.is_finite() => Ok(value.clone()),
            Value::Number(_) => Err(RejectReason::NotFinite),
            _ => Err(wrong("a number")),
        },
        Rule::String { drop_empty } => match value {
            Value::String(s) => {
                let trimmed = js_trim(s);
                if drop_empty && trimmed.is_empty() {
                    Err(RejectReason::EmptyString)
                } else {
                    Ok(Value::String(trimmed.to_owned()))
                }
            }
            _ => Err(wrong("a string")),
        },
        Rule::AgentOverrides => match value {
            Value::Object(entries) => agent_overrides(entries)
                .map(Value::Object)
                .ok_or(RejectReason::NoOverrides),
            _ => Err(wrong("an object")),
        },
        Rule::Unsupported => Err(RejectReason::UnsupportedType {
            kind: kind.to_owned(),
        }),
    }
}

/// `value` when it is an integer (`Number.isInteger`) within `min..=max`.
fn integer_in(value: &Value, min: f64, max: f64) -> Result<Value, RejectReason> {
    let Value::Number(n) = *value else {
        return Err(RejectReason::WrongType {
            expected: "an integer",
            found: value.type_name(),
        });
    };
    if !n.is_finite() || n.trunc() != n {
        return Err(RejectReason::NotAnInteger { value: n });
    }
    if n < min || n > max {
        return Err(RejectReason::OutOfRange { value: n, min, max });
    }
    Ok(Value::Number(n))
}

/// The number a string gives for `review_loop_max_cycles`: trimmed, exactly `1`..`9` or `10`.
pub(crate) fn cycle_count(text: &str) -> Option<f64> {
    match js_trim(text).as_bytes() {
        [d @ b'1'..=b'9'] => Some(f64::from(d - b'0')),
        b"10" => Some(10.0),
        _ => None,
    }
}

/// The usable entries of an `agent_overrides` object: each entry that is an object keeps
/// `provider` and `model` when null or a string non-empty after trimming (trimmed); entries left
/// with neither are dropped. `None` when no entry is left.
fn agent_overrides(entries: &Object) -> Option<Object> {
    let mut kept = Object::new();
    for (name, entry) in entries.iter() {
        // The reference assigns entries to a plain object, where `__proto__` sets the
        // prototype instead of adding a key, so such an entry never shows.
        if name == "__proto__" {
            continue;
        }
        let Value::Object(entry) = entry else {
            continue;
        };
        let mut fields = Object::new();
        for field in ["provider", "model"] {
            match entry.get(field) {
                Some(Value::Null) => fields.insert(field, Value::Null),
                Some(Value::String(s)) if !js_trim(s).is_empty() => {
                    fields.insert(field, Value::String(js_trim(s).to_owned()));
                }
                _ => {}
            }
        }
        if !fields.is_empty() {
            kept.insert(name, Value::Object(fields));
        }
    }
    (!kept.is_empty()).then_some(kept)
}

/// A JavaScript type name with its article, for messages.
fn article(type_name: &str) -> String {
    match type_name {
        "null" | "undefined" => type_name.to_owned(),
        "array" | "object" => format!("an {type_name}"),
        _ => format!("a {type_name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(text: &str) -> SettingsFile {
        SettingsFile::parse(Schema::embedded(), text)
    }

    /// The checked values as compact JSON.
    fn values_json(text: &str) -> String {
        Value::Object(checked(text).values().clone())
            .to_json()
            .unwrap_or_default()
    }

    #[test]
    fn per_key_checks_table() {
        // (name, file text, checked values)
        let cases = [
            (
                "commit_trailer bool",
                r#"{"commit_trailer": true}"#,
                r#"{"commit_trailer":true}"#,
            ),
            (
                "commit_trailer string kept raw",
                r#"{"commit_trailer": " x "}"#,
                r#"{"commit_trailer":" x "}"#,
            ),
            ("commit_trailer number", r#"{"commit_trailer": 1}"#, "{}"),
            (
                "bool",
                r#"{"dco": true, "use_worktrees": "true"}"#,
                r#"{"dco":true}"#,
            ),
            (
                "bool_enable",
                r#"{"pidash_enable": false, "pidiff_enable": 0}"#,
                r#"{"pidash_enable":false}"#,
            ),
            (
                "number finite",
                r#"{"dream_interval_hours": 2.5}"#,
                r#"{"dream_interval_hours":2.5}"#,
            ),
            (
                "number infinite",
                r#"{"dream_interval_hours": 1e400}"#,
                "{}",
            ),
            (
                "number from string",
                r#"{"dream_interval_hours": "3"}"#,
                "{}",
            ),
            (
                "port",
                r#"{"pidash_port": 65535}"#,
                r#"{"pidash_port":65535}"#,
            ),
            (
                "port 3.0 is an integer",
                r#"{"pidash_port": 3.0}"#,
                r#"{"pidash_port":3}"#,
            ),
            ("port zero", r#"{"pidash_port": 0}"#, "{}"),
            ("port too big", r#"{"pidash_port": 65536}"#, "{}"),
            ("port fraction", r#"{"pidash_port": 19190.5}"#, "{}"),
            (
                "image_model trimmed",
                r#"{"image_model": " m "}"#,
                r#"{"image_model":"m"}"#,
            ),
            ("image_model blank", r#"{"image_model": "  "}"#, "{}"),
            (
                "agent_model blank kept",
                r#"{"agent_model": "  "}"#,
                r#"{"agent_model":""}"#,
            ),
            (
                "string trimmed",
                r#"{"coms_dir": " /x "}"#,
                r#"{"coms_dir":"/x"}"#,
            ),
            (
                "string empty kept",
                r#"{"log_rules": ""}"#,
                r#"{"log_rules":""}"#,
            ),
            (
                "enum not checked",
                r#"{"log_rules": "loud"}"#,
                r#"{"log_rules":"loud"}"#,
            ),
            (
                "cycles int",
                r#"{"review_loop_max_cycles": 10}"#,
                r#"{"review_loop_max_cycles":10}"#,
            ),
            ("cycles 11", r#"{"review_loop_max_cycles": 11}"#, "{}"),
            ("cycles 0", r#"{"review_loop_max_cycles": 0}"#, "{}"),
            (
                "cycles string becomes a number",
                r#"{"review_loop_max_cycles": " 7 "}"#,
                r#"{"review_loop_max_cycles":7}"#,
            ),
            ("cycles 01", r#"{"review_loop_max_cycles": "01"}"#, "{}"),
            ("cycles 1e1", r#"{"review_loop_max_cycles": "1e1"}"#, "{}"),
            (
                "cycles 10.0 string",
                r#"{"review_loop_max_cycles": "10.0"}"#,
                "{}",
            ),
            ("cycles 3.5", r#"{"review_loop_max_cycles": 3.5}"#, "{}"),
            (
                "int in range",
                r#"{"coms_max_hops": 50}"#,
                r#"{"coms_max_hops":50}"#,
            ),
            ("int below min", r#"{"coms_max_hops": 0}"#, "{}"),
            ("int above max", r#"{"coms_max_hops": 51}"#, "{}"),
            (
                "int without max",
                r#"{"coms_timeout_ms": 9007199254740991}"#,
                r#"{"coms_timeout_ms":9007199254740991}"#,
            ),
            (
                "int past safe",
                r#"{"coms_timeout_ms": 9007199254740993}"#,
                "{}",
            ),
            (
                "agents string raw",
                r#"{"acpx_agents": " A, b "}"#,
                r#"{"acpx_agents":" A, b "}"#,
            ),
            (
                "agents array raw",
                r#"{"cli_agents": [1, "x"]}"#,
                r#"{"cli_agents":[1,"x"]}"#,
            ),
            ("agents number", r#"{"cli_agents": 1}"#, "{}"),
            (
                "overrides",
                r#"{"agent_overrides": {"r": {"model": " m ", "provider": null, "x": 1}, "e": {"provider": ""}, "n": 3, "z": {"model": 2}}}"#,
                r#"{"agent_overrides":{"r":{"provider":null,"model":"m"}}}"#,
            ),
            (
                "overrides none usable",
                r#"{"agent_overrides": {"w": {"provider": ""}, "z": [1]}}"#,
                "{}",
            ),
            ("overrides array", r#"{"agent_overrides": [1]}"#, "{}"),
            (
                "overrides index keys first",
                r#"{"agent_overrides": {"b": {"model": "x"}, "2": {"model": "y"}}}"#,
                r#"{"agent_overrides":{"2":{"model":"y"},"b":{"model":"x"}}}"#,
            ),
            (
                "overrides __proto__ never shows",
                r#"{"agent_overrides": {"__proto__": {"model": "x"}}}"#,
                "{}",
            ),
            (
                "repeated key: last value",
                r#"{"dco": true, "dco": 3}"#,
                "{}",
            ),
        ];
        for (name, text, expected) in cases {
            assert_eq!(values_json(text), expected, "{name}");
        }
    }

    #[test]
    fn rejections_keep_reason_and_offset() {
        let file = checked(
            "{\n  \"pidash_port\": 70000,\n  \"dco\": \"yes\",\n  \"image_model\": \" \"\n}",
        );
        let found: Vec<(String, String, Option<usize>)> = file
            .rejected()
            .iter()
            .map(|r| (r.key.clone(), r.reason.to_string(), r.offset))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "pidash_port".to_owned(),
                    "70000 is out of range: it must be between 1 and 65535".to_owned(),
                    Some(4)
                ),
                (
                    "dco".to_owned(),
                    "expected a boolean, found a string".to_owned(),
                    Some(28)
                ),
                (
                    "image_model".to_owned(),
                    "the string is empty after trimming".to_owned(),
                    Some(44)
                ),
            ]
        );
        assert!(file.problem().is_none());
    }

    #[test]
    fn reason_messages() {
        let cases = [
            (r#"{"pidash_port": 1.5}"#, "expected an integer, found 1.5"),
            (r#"{"dream_interval_hours": 1e999}"#, "expected a finite number"),
            (r#"{"review_loop_max_cycles": "01"}"#, r#""01" is not one of the digit strings "1" to "10""#),
            (r#"{"agent_overrides": {}}"#, "no entry is an object with a `provider` or `model` that is a non-empty string or null"),
            (r#"{"acpx_agents": null}"#, "expected a string or an array, found null"),
            (r#"{"agent_overrides": []}"#, "expected an object, found an array"),
        ];
        for (text, expected) in cases {
            let file = checked(text);
            let reason = file.rejected().first().map(|r| r.reason.to_string());
            assert_eq!(reason.as_deref(), Some(expected), "{text}");
        }
    }

    #[test]
    fn unknown_and_duplicate_keys() {
        let file = checked(r#"{"dcoo": 1, "dco": true, "x": 2, "dco": false, "dcoo": 3}"#);
        let unknown: Vec<(&str, usize)> = file
            .unknown_keys()
            .iter()
            .map(|k| (k.key.as_str(), k.offset))
            .collect();
        assert_eq!(unknown, [("dcoo", 1), ("x", 25)]);
        let repeated: Vec<(&str, usize)> = file
            .duplicate_keys()
            .iter()
            .map(|k| (k.key.as_str(), k.offset))
            .collect();
        assert_eq!(repeated, [("dco", 33), ("dcoo", 47)]);
        assert_eq!(file.get("dco"), Some(&Value::Bool(false)));
        assert!(file.get("dcoo").is_none());
        assert!(file.has_raw_key("dcoo"));
    }

    #[test]
    fn files_that_contribute_nothing() {
        let cases: [(&str, &str, &str); 5] = [
            ("syntax error", "{,}", "invalid JSONC: "),
            (
                "trailing comma",
                r#"{"dco": true, }"#,
                "invalid JSONC: trailing commas",
            ),
            (
                "array top level",
                "[1, 2]",
                "the top level must be an object, found an array",
            ),
            (
                "null top level",
                "null",
                "the top level must be an object, found null",
            ),
            (
                "string top level",
                r#""x""#,
                "the top level must be an object, found a string",
            ),
        ];
        for (name, text, message) in cases {
            let file = checked(text);
            assert!(file.is_present(), "{name}");
            assert!(file.values().is_empty(), "{name}");
            let problem = file.problem().map(ToString::to_string).unwrap_or_default();
            assert!(problem.starts_with(message), "{name}: {problem}");
        }
        let syntax = checked("{\n  \"dco\": tru\n}");
        assert!(matches!(
            syntax.problem(),
            Some(FileProblem::Syntax(SyntaxError { offset: 11, .. }))
        ));
        let missing = SettingsFile::missing();
        assert!(!missing.is_present() && missing.problem().is_none());
        let unreadable = SettingsFile::unreadable("is a directory");
        assert_eq!(
            unreadable.problem().map(ToString::to_string).as_deref(),
            Some("cannot read the file: is a directory")
        );
    }

    #[test]
    fn jsonc_comments_allowed() {
        let text =
            "// settings\n{ /* block */\"dco\": true, \"image_model\": \"a // not a comment\"}";
        assert_eq!(
            values_json(text),
            r#"{"dco":true,"image_model":"a // not a comment"}"#
        );
    }

    #[test]
    fn file_choice_prefers_jsonc() {
        let dir = Path::new("/p/.pi");
        let cases: [(&[&str], &str); 3] = [
            (
                &["pi-config-settings.jsonc", "pi-config-settings.json"],
                "pi-config-settings.jsonc",
            ),
            (&["pi-config-settings.json"], "pi-config-settings.json"),
            (&[], "pi-config-settings.json"),
        ];
        for (existing, expected) in cases {
            let chosen = settings_file_in(dir, |p| {
                existing.iter().any(|name| p == dir.join(name).as_path())
            });
            assert_eq!(chosen, dir.join(expected), "{existing:?}");
        }
    }

    #[test]
    fn cycle_count_table() {
        let cases = [
            ("1", Some(1.0)),
            ("10", Some(10.0)),
            (" 4 ", Some(4.0)),
            ("\u{feff}9", Some(9.0)),
            ("0", None),
            ("11", None),
            ("01", None),
            ("1e1", None),
            ("", None),
            ("abc", None),
        ];
        for (text, expected) in cases {
            assert_eq!(cycle_count(text), expected, "{text:?}");
        }
    }

    mod properties {
        use super::*;
        use crate::settings::resolve;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_settings_text_checks_and_resolves(
                text in r#"\{("(dco|pidash_port|agent_overrides|acpx_agents|review_loop_max_cycles|x)": ?([0-9.e-]{1,6}|"[ a-z0-9]{0,4}"|\[[0-9,"a ]{0,6}\]|\{("[a-z]{1,2}": ?\{"(provider|model)": ?("[ a-z]{0,3}"|null|1)\},? ?){0,2}\}|true|null),? ?){0,6}\}"#
            ) {
                let file = checked(&text);
                for rejected in file.rejected() {
                    prop_assert!(rejected.offset.is_some_and(|o| o < text.len()));
                }
                let resolved = resolve(Schema::embedded(), &file, &SettingsFile::missing(), &|_: &str| None);
                prop_assert_eq!(resolved.len(), Schema::embedded().len());
            }
        }
    }
}
