//! What conditions are evaluated against: setting values and feature predicates.

use crate::value::Value;
use indexmap::IndexMap;
use std::borrow::Cow;

/// Lookups happen once per condition on every assembly: a fast, per-process seeded hasher. Keys
/// are usually the schema's own names, borrowed from the binary.
type Map<V> = IndexMap<Cow<'static, str>, V, foldhash::fast::RandomState>;

/// The known settings keys, in schema order, each with its value (`Value::Undefined` for a known
/// key without one). A key that is absent is unknown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    values: Map<Value>,
}

impl Settings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Settings with room for `keys` keys.
    pub fn with_capacity(keys: usize) -> Self {
        Settings {
            values: Map::with_capacity_and_hasher(keys, Default::default()),
        }
    }

    /// Declares `key` known with `value`; a key declared twice keeps its first position.
    pub fn insert(&mut self, key: impl Into<Cow<'static, str>>, value: Value) {
        self.values.insert(key.into(), value);
    }

    /// The value of a known key, or `None` when the key is unknown.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    /// The position of a known key in key order, with its value.
    pub fn get_full(&self, key: &str) -> Option<(usize, &Value)> {
        self.values.get_full(key).map(|(at, _, value)| (at, value))
    }

    pub fn is_known(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    /// Known keys in order, with their values.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.values.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(AsRef::as_ref)
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl<K: Into<Cow<'static, str>>> FromIterator<(K, Value)> for Settings {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut settings = Settings::with_capacity(iter.size_hint().0);
        for (k, v) in iter {
            settings.values.entry(k.into()).or_insert(v);
        }
        settings
    }
}

/// Feature predicates: named booleans the host reports, such as `coms_active`. Exactly the names
/// present are predicates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Features {
    flags: Map<bool>,
}

impl Features {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets predicate `name`; a later value replaces an earlier one.
    pub fn set(&mut self, name: impl Into<Cow<'static, str>>, on: bool) {
        self.flags.insert(name.into(), on);
    }

    /// The predicate's value, or `None` when `name` is not a predicate.
    pub fn get(&self, name: &str) -> Option<bool> {
        // A host sets a handful of predicates; comparing them beats hashing the name.
        if self.flags.len() <= 8 {
            return self
                .flags
                .iter()
                .find(|(flag, _)| flag.as_ref() == name)
                .map(|(_, &on)| on);
        }
        self.flags.get(name).copied()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, bool)> {
        self.flags.iter().map(|(n, on)| (n.as_ref(), *on))
    }
}

/// Everything one assembly reads besides the rule texts.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub settings: &'a Settings,
    pub features: &'a Features,
    /// What `{{REVIEW_LOOP_MAX_CYCLES}}` becomes.
    pub review_loop_max_cycles: &'a str,
}
