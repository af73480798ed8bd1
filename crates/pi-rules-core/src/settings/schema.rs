//! The settings schema: `settings-keys.json` read into an ordered list of [`KeySpec`]s.
//!
//! The schema is the single source of truth for which settings keys exist, their order, their
//! types, environment variables, defaults and bounds. The project's copy is turned into Rust
//! code when the crate is built (see `build.rs`), so [`Schema::embedded`] parses nothing at run
//! time: its strings are borrowed from the binary and its name index is a static table.
//! [`Schema::parse`] reads any other copy (`pi-rules --keys FILE`).

use crate::value::Value;
use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/embedded_schema.rs"));

/// The type of a settings key, from its `type` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyKind {
    /// `bool`: a boolean.
    Bool,
    /// `bool_or_string`: a boolean or a string (`commit_trailer`).
    BoolOrString,
    /// `bool_enable`: a boolean whose environment variable only says what disables it.
    BoolEnable,
    /// `int`: an integer within `min..=max`.
    Int,
    /// `number`: a finite number.
    Number,
    /// `port`: an integer port number.
    Port,
    /// `string`: a string, trimmed.
    String,
    /// `agent_list`: a list of agent names, as an array or a comma-separated string.
    AgentList,
    /// `agent_overrides`: per-agent provider and model overrides.
    AgentOverrides,
    /// Any other type name; such a key never takes a value from a file and resolves to `false`.
    Other(Cow<'static, str>),
}

impl KeyKind {
    /// The kind for a `type` name.
    pub fn from_name(name: &str) -> KeyKind {
        KeyKind::known(name).unwrap_or_else(|| KeyKind::Other(Cow::Owned(name.to_owned())))
    }

    fn known(name: &str) -> Option<KeyKind> {
        Some(match name {
            "bool" => KeyKind::Bool,
            "bool_or_string" => KeyKind::BoolOrString,
            "bool_enable" => KeyKind::BoolEnable,
            "int" => KeyKind::Int,
            "number" => KeyKind::Number,
            "port" => KeyKind::Port,
            "string" => KeyKind::String,
            "agent_list" => KeyKind::AgentList,
            "agent_overrides" => KeyKind::AgentOverrides,
            _ => return None,
        })
    }

    /// The `type` name as written in the schema.
    pub fn name(&self) -> &str {
        match self {
            KeyKind::Bool => "bool",
            KeyKind::BoolOrString => "bool_or_string",
            KeyKind::BoolEnable => "bool_enable",
            KeyKind::Int => "int",
            KeyKind::Number => "number",
            KeyKind::Port => "port",
            KeyKind::String => "string",
            KeyKind::AgentList => "agent_list",
            KeyKind::AgentOverrides => "agent_overrides",
            KeyKind::Other(name) => name,
        }
    }
}

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One settings key as the schema describes it. The texts are borrowed from the binary for the
/// embedded schema and owned for a parsed one.
#[derive(Debug, Clone, PartialEq)]
pub struct KeySpec {
    pub name: Cow<'static, str>,
    pub kind: KeyKind,
    /// The environment variable that supplies the key when no file does.
    pub env: Option<Cow<'static, str>>,
    /// The value when nothing else supplies one (`Value::Undefined` when the schema has none).
    pub default: Value,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Allowed values, for documentation and linting; resolution does not check them.
    pub enum_values: Option<Cow<'static, [Cow<'static, str>]>>,
    pub group: Option<Cow<'static, str>>,
    pub description: Option<Cow<'static, str>>,
    /// Only the digit strings `1`..`10` are accepted from text (`review_loop_max_cycles`).
    pub strict_digits: bool,
    /// Resolved from the settings files directly rather than from the merged, cached settings
    /// (`acpx_agents`, `cli_agents`).
    pub per_key_resolution: bool,
}

/// Why a schema text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The parser's message is part of this one, so the error has no separate source (a chain
    /// printer would say it twice).
    #[error("the settings schema is not valid JSON: {0}")]
    Json(serde_json::Error),
    #[error("the settings schema must be a JSON object with one entry per key")]
    NotAnObject,
    #[error("settings key `{key}` must be described by an object")]
    EntryNotAnObject { key: String },
    #[error("settings key `{key}` needs a `type` string")]
    MissingType { key: String },
    #[error("field `{field}` of settings key `{key}` must be {expected}")]
    BadField {
        key: String,
        field: &'static str,
        expected: &'static str,
    },
}

impl From<serde_json::Error> for SchemaError {
    fn from(err: serde_json::Error) -> Self {
        SchemaError::Json(err)
    }
}

/// The known settings keys, in file order, with an index by name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schema {
    keys: Vec<KeySpec>,
    /// Indexes into `keys`, ordered by name length and then by name (see [`by_length`]), for
    /// lookups by binary search.
    sorted: Cow<'static, [u32]>,
}

impl Schema {
    /// The schema embedded in this build, generated from `settings-keys.json` at build time.
    /// Building it borrows every text and allocates only the key list and the defaults that are
    /// non-empty strings.
    pub fn embedded() -> &'static Schema {
        static SCHEMA: OnceLock<Schema> = OnceLock::new();
        SCHEMA.get_or_init(Schema::build_embedded)
    }

    /// A fresh copy of the embedded schema: what [`Schema::embedded`] builds once per process.
    pub fn build_embedded() -> Schema {
        Schema {
            keys: embedded_keys(),
            sorted: Cow::Borrowed(&EMBEDDED_SORTED),
        }
    }

    /// Reads a `settings-keys.json` text. A key given twice keeps its first position and its
    /// last description, as `JSON.parse` does.
    pub fn parse(text: &str) -> Result<Schema, SchemaError> {
        let root: serde_json::Value = serde_json::from_str(text)?;
        let serde_json::Value::Object(entries) = root else {
            return Err(SchemaError::NotAnObject);
        };
        let mut keys = Vec::with_capacity(entries.len());
        for (name, entry) in entries {
            keys.push(key_spec(name, entry)?);
        }
        // At most 2^32 keys: a schema text is read with a bound far below that.
        let mut sorted: Vec<u32> = (0..keys.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        sorted.sort_by(|&a, &b| by_length(&keys[a as usize].name, &keys[b as usize].name));
        Ok(Schema {
            keys,
            sorted: Cow::Owned(sorted),
        })
    }

    /// The key named `name`, if it is known.
    pub fn get(&self, name: &str) -> Option<&KeySpec> {
        let at = self
            .sorted
            .binary_search_by(|&i| by_length(self.name_at(i), name))
            .ok()?;
        self.keys.get(self.sorted[at] as usize)
    }

    fn name_at(&self, i: u32) -> &str {
        self.keys.get(i as usize).map_or("", |k| &k.name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every key, in schema order.
    pub fn keys(&self) -> impl Iterator<Item = &KeySpec> {
        self.keys.iter()
    }

    /// Every key name, in schema order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|k| k.name.as_ref())
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The order of the name index: shorter names first, equal lengths by bytes. Most comparisons
/// are then settled by the lengths alone. `build.rs` sorts the embedded index the same way.
fn by_length(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn key_spec(name: String, entry: serde_json::Value) -> Result<KeySpec, SchemaError> {
    let serde_json::Value::Object(fields) = entry else {
        return Err(SchemaError::EntryNotAnObject { key: name });
    };
    let bad = |field: &'static str, expected: &'static str| SchemaError::BadField {
        key: name.clone(),
        field,
        expected,
    };
    let kind = match fields.get("type") {
        Some(serde_json::Value::String(kind)) => KeyKind::from_name(kind),
        _ => return Err(SchemaError::MissingType { key: name }),
    };
    let string = |value: Option<&serde_json::Value>, field| match value {
        None => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(Cow::Owned(s.clone()))),
        Some(_) => Err(bad(field, "a string")),
    };
    let number = |value: Option<&serde_json::Value>, field| match value {
        None => Ok(None),
        Some(serde_json::Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(bad(field, "a number")),
    };
    let flag = |value: Option<&serde_json::Value>, field| match value {
        None => Ok(false),
        Some(serde_json::Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(field, "a boolean")),
    };
    let enum_values = match fields.get("enum") {
        None => None,
        Some(serde_json::Value::Array(items)) => Some(Cow::Owned(
            items
                .iter()
                .map(|item| item.as_str().map(|s| Cow::Owned(s.to_owned())))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("enum", "an array of strings"))?,
        )),
        Some(_) => return Err(bad("enum", "an array of strings")),
    };
    Ok(KeySpec {
        env: string(fields.get("env"), "env")?,
        min: number(fields.get("min"), "min")?,
        max: number(fields.get("max"), "max")?,
        group: string(fields.get("group"), "group")?,
        description: string(fields.get("description"), "description")?,
        strict_digits: flag(fields.get("strict_digits"), "strict_digits")?,
        per_key_resolution: flag(fields.get("per_key_resolution"), "per_key_resolution")?,
        enum_values,
        default: fields
            .get("default")
            .cloned()
            .map_or(Value::Undefined, Value::from),
        kind,
        name: Cow::Owned(name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text `build.rs` generated the embedded schema from.
    const EMBEDDED_SCHEMA: &str = include_str!("../../settings-keys.json");

    #[test]
    fn generated_schema_equals_the_parsed_file() {
        let schema = Schema::parse(EMBEDDED_SCHEMA).expect("embedded schema");
        assert!(!schema.is_empty());
        assert_eq!(Schema::embedded(), &schema);
    }

    #[test]
    fn lookups_find_every_key_and_only_those() {
        for schema in [
            Schema::embedded().clone(),
            Schema::parse(EMBEDDED_SCHEMA).expect("schema"),
        ] {
            for (i, name) in schema.names().enumerate() {
                assert_eq!(
                    schema.get(name).map(|k| &k.name),
                    Some(&schema.keys[i].name)
                );
            }
            for absent in ["", "a", "zzz", "dco ", "DCO", "log_rule", "log_rulesx"] {
                assert!(!schema.contains(absent), "{absent:?}");
            }
        }
    }

    #[test]
    fn a_repeated_key_keeps_its_first_position() {
        let schema = Schema::parse(
            r#"{"b": {"type": "bool"}, "a": {"type": "int"}, "b": {"type": "string"}}"#,
        )
        .expect("schema");
        let names: Vec<&str> = schema.names().collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(schema.get("b").map(|k| &k.kind), Some(&KeyKind::String));
        assert_eq!(schema.get("a").map(|k| &k.kind), Some(&KeyKind::Int));
    }

    #[test]
    fn embedded_schema_facts() {
        let schema = Schema::embedded();
        assert_eq!(schema.names().next(), Some("dco"));
        let cycles = schema.get("review_loop_max_cycles").expect("key");
        assert_eq!(cycles.kind, KeyKind::Int);
        assert_eq!(cycles.env.as_deref(), Some("PI_REVIEW_LOOP_MAX_CYCLES"));
        assert!(matches!(cycles.name, Cow::Borrowed(_)));
        assert_eq!(cycles.default, Value::Number(3.0));
        assert_eq!((cycles.min, cycles.max), (Some(1.0), Some(10.0)));
        assert!(cycles.strict_digits);
        let agents = schema.get("acpx_agents").expect("key");
        assert_eq!(agents.kind, KeyKind::AgentList);
        assert!(agents.per_key_resolution);
        assert_eq!(agents.default, Value::Array(vec![]));
        let log = schema.get("log_rules").expect("key");
        assert_eq!(log.enum_values.as_ref().map(|v| v.len()), Some(5));
        assert_eq!(log.default, Value::String("info".into()));
        assert_eq!(
            schema.get("comment_signature").and_then(|k| k.env.clone()),
            None
        );
        assert!(!schema.contains("nope"));
    }

    #[test]
    fn order_is_file_order() {
        let schema =
            Schema::parse(r#"{"z": {"type": "bool"}, "a": {"type": "int"}, "m": {"type": "x"}}"#)
                .expect("schema");
        let names: Vec<&str> = schema.names().collect();
        assert_eq!(names, ["z", "a", "m"]);
        assert_eq!(
            schema.get("m").map(|k| &k.kind),
            Some(&KeyKind::Other("x".into()))
        );
        assert_eq!(schema.get("z").map(|k| &k.default), Some(&Value::Undefined));
    }

    #[test]
    fn errors_table() {
        let cases = [
            ("not json", "the settings schema is not valid JSON"),
            ("[]", "the settings schema must be a JSON object"),
            (
                r#"{"a": 1}"#,
                "settings key `a` must be described by an object",
            ),
            (r#"{"a": {}}"#, "settings key `a` needs a `type` string"),
            (
                r#"{"a": {"type": "int", "min": "1"}}"#,
                "field `min` of settings key `a` must be a number",
            ),
            (
                r#"{"a": {"type": "bool", "env": 3}}"#,
                "field `env` of settings key `a` must be a string",
            ),
            (
                r#"{"a": {"type": "string", "enum": [1]}}"#,
                "field `enum` of settings key `a` must be an array of strings",
            ),
            (
                r#"{"a": {"type": "string", "strict_digits": 1}}"#,
                "field `strict_digits` of settings key `a` must be a boolean",
            ),
        ];
        for (text, expected) in cases {
            let message = Schema::parse(text).expect_err(text).to_string();
            assert!(message.starts_with(expected), "{text}: {message}");
        }
    }

    #[test]
    fn kind_names_round_trip() {
        for name in [
            "bool",
            "bool_or_string",
            "bool_enable",
            "int",
            "number",
            "port",
            "string",
            "agent_list",
            "agent_overrides",
            "mystery",
        ] {
            assert_eq!(KeyKind::from_name(name).name(), name);
        }
    }
}
