//! What the linter needs to know about the settings schema: key names in order, with their type
//! and bounds. Plain data, so that the caller builds it from the real schema
//! ([`SchemaInfo::from_schema`]) or by hand in tests.

use crate::settings::Schema;
use crate::value::Value;
use std::collections::HashMap;

/// One settings key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyInfo {
    pub name: String,
    /// The schema's `type` name: `bool`, `bool_or_string`, `bool_enable`, `int`, `port`,
    /// `number`, `string`, `agent_list`, `agent_overrides`, or another (not checked).
    pub kind: String,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The default value, which a key may hold whatever its bounds say.
    pub default: Value,
    /// The values the schema allows (`enum`), when it lists them. Resolution does not enforce
    /// them, but the checks take them as the key's domain.
    pub enum_values: Option<Vec<String>>,
}

impl KeyInfo {
    /// A key of `kind` without bounds or default.
    pub fn new(name: impl Into<String>, kind: impl Into<String>) -> Self {
        KeyInfo {
            name: name.into(),
            kind: kind.into(),
            min: None,
            max: None,
            default: Value::Undefined,
            enum_values: None,
        }
    }
}

/// The known settings keys, in schema order.
#[derive(Debug, Clone, Default)]
pub struct SchemaInfo {
    keys: Vec<KeyInfo>,
    /// Looked up once per condition of every file: a fast, per-process seeded hasher.
    index: HashMap<String, usize, foldhash::fast::RandomState>,
}

impl SchemaInfo {
    /// The keys, in order; a repeated name keeps its first entry.
    pub fn new(keys: Vec<KeyInfo>) -> Self {
        let mut index = HashMap::with_capacity_and_hasher(keys.len(), Default::default());
        for (i, key) in keys.iter().enumerate() {
            index.entry(key.name.clone()).or_insert(i);
        }
        SchemaInfo { keys, index }
    }

    /// The linter's view of the settings schema.
    pub fn from_schema(schema: &Schema) -> Self {
        SchemaInfo::new(
            schema
                .keys()
                .map(|spec| KeyInfo {
                    name: spec.name.to_string(),
                    kind: spec.kind.name().to_owned(),
                    min: spec.min,
                    max: spec.max,
                    default: spec.default.clone(),
                    enum_values: spec
                        .enum_values
                        .as_ref()
                        .map(|v| v.iter().map(|s| s.to_string()).collect()),
                })
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> Option<&KeyInfo> {
        self.index.get(name).map(|&i| &self.keys[i])
    }

    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// Key names in schema order.
    pub fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.keys.iter().map(|k| k.name.as_str())
    }
}
