//! The JavaScript-like value model that settings and literals live in.
//!
//! Settings come from JSON files and are compared, tested for truthiness and printed the way the
//! reference implementation (JavaScript) does it. This module is the one place where those
//! semantics are written down: [`Value::is_truthy`], [`Value::strict_equals`] (`===`),
//! [`Value::to_json`] (`JSON.stringify`) and [`Value::to_js_string`] (`String(v)`).

use indexmap::IndexMap;
use std::fmt::Write as _;

/// A JavaScript value as far as settings need one.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// A known key with no value.
    #[default]
    Undefined,
    Null,
    Bool(bool),
    /// Every number is an IEEE-754 double, as in JavaScript.
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Object),
}

/// An object whose keys keep JavaScript's property order: array-index keys first in ascending
/// numeric order, then the other keys in insertion order. A repeated key keeps its first position
/// and takes the last value, as `JSON.parse` does.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object {
    /// Hashed as the settings are (see `scope.rs`): std's hasher would ask the kernel for its
    /// keys the first time a command makes an object.
    entries: IndexMap<String, Value, foldhash::fast::RandomState>,
    /// Whether some key is an array index, so that iteration must reorder.
    has_index_keys: bool,
}

impl Object {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` to `value`; a key already present keeps its position.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        let key = key.into();
        if !self.has_index_keys && is_array_index(&key) {
            self.has_index_keys = true;
        }
        self.entries.insert(key, value);
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.entries.shift_remove(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in JavaScript property order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        let mut order: Vec<(&str, &Value)> =
            self.entries.iter().map(|(k, v)| (k.as_str(), v)).collect();
        if self.has_index_keys {
            // Stable: non-index keys keep insertion order behind the index keys.
            order.sort_by_key(|(k, _)| array_index(k).map_or((1, 0), |n| (0, n)));
        }
        order.into_iter()
    }
}

impl FromIterator<(String, Value)> for Object {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        let mut object = Object::new();
        for (k, v) in iter {
            object.insert(k, v);
        }
        object
    }
}

/// `Some(n)` when `key` is the canonical decimal form of an integer below 2^32 - 1.
fn array_index(key: &str) -> Option<u64> {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    (n < u64::from(u32::MAX)).then_some(n)
}

fn is_array_index(key: &str) -> bool {
    array_index(key).is_some()
}

impl Value {
    /// JavaScript truthiness, with one difference the reference adds: an empty array and an empty
    /// object are falsy.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Undefined | Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => !(*n == 0.0 || n.is_nan()),
            Value::String(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
        }
    }

    /// JavaScript `===` against a literal: same type and value. Arrays and objects are never
    /// equal to anything here (identity never holds between a setting and a literal), and
    /// undefined equals nothing.
    pub fn strict_equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            _ => false,
        }
    }

    /// `JSON.stringify(value)`, or `None` where JavaScript returns undefined.
    pub fn to_json(&self) -> Option<String> {
        if matches!(self, Value::Undefined) {
            return None;
        }
        let mut out = String::new();
        self.write_json(&mut out);
        Some(out)
    }

    /// Appends `JSON.stringify(self)` to `out`; undefined (which only a caller can hand in at
    /// the top) prints as `null`, as it does inside an array.
    pub fn write_json(&self, out: &mut String) {
        // Nesting depth is bounded by the parser that built the value; settings values come from
        // `serde_json` (which limits recursion) or from our own settings parser.
        match self {
            Value::Undefined | Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(n) => {
                if n.is_finite() {
                    write_js_number(*n, out);
                } else {
                    out.push_str("null");
                }
            }
            Value::String(s) => write_json_string(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Value::Object(object) => write_json_object(object.iter(), out),
        }
    }

    /// JavaScript `String(value)`.
    pub fn to_js_string(&self) -> String {
        match self {
            Value::Undefined => "undefined".to_owned(),
            Value::Null => "null".to_owned(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => js_number(*n),
            Value::String(s) => s.clone(),
            Value::Array(items) => {
                let mut out = String::new();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if !matches!(item, Value::Undefined | Value::Null) {
                        out.push_str(&item.to_js_string());
                    }
                }
                out
            }
            Value::Object(_) => "[object Object]".to_owned(),
        }
    }

    /// The name of the value's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Undefined => "undefined",
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

impl From<serde_json::Value> for Value {
    fn from(value: serde_json::Value) -> Self {
        match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(s) => Value::String(s),
            serde_json::Value::Array(items) => {
                Value::Array(items.into_iter().map(Value::from).collect())
            }
            serde_json::Value::Object(map) => {
                Value::Object(map.into_iter().map(|(k, v)| (k, Value::from(v))).collect())
            }
        }
    }
}

/// JavaScript `Number.prototype.toString()` for a double: `3`, `3.5`, `1e+21`, `-0` as `0`.
pub fn js_number(n: f64) -> String {
    let mut out = String::new();
    write_js_number(n, &mut out);
    out
}

fn write_js_number(n: f64, out: &mut String) {
    if n == 0.0 {
        // Covers -0, which JavaScript prints as "0".
        out.push('0');
        return;
    }
    let mut buffer = ryu_js::Buffer::new();
    out.push_str(buffer.format(n));
}

/// Appends `JSON.stringify` of an object with these entries, in this order; undefined values are
/// left out.
pub fn write_json_object<'v>(
    entries: impl Iterator<Item = (&'v str, &'v Value)>,
    out: &mut String,
) {
    out.push('{');
    let mut first = true;
    for (key, value) in entries {
        if matches!(value, Value::Undefined) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_json_string(key, out);
        out.push(':');
        value.write_json(out);
    }
    out.push('}');
}

/// Appends `s` as a JSON string literal, escaped as `JSON.stringify` does: `\"`, `\\`, the short
/// escapes for control characters that have them, `\u00xx` for the others, everything else
/// (non-ASCII, `/`, U+2028) as it is.
pub fn write_json_string(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn truthiness_table() {
        let s = |x: &str| Value::String(x.to_owned());
        let cases = [
            (Value::Undefined, false),
            (Value::Null, false),
            (Value::Bool(false), false),
            (Value::Bool(true), true),
            (Value::Number(0.0), false),
            (Value::Number(-0.0), false),
            (Value::Number(f64::NAN), false),
            (Value::Number(0.5), true),
            (s(""), false),
            (s("false"), true),
            (s("0"), true),
            (Value::Array(vec![]), false),
            (Value::Array(vec![Value::Null]), true),
            (obj(&[]), false),
            (obj(&[("a", Value::Null)]), true),
        ];
        for (value, expected) in cases {
            assert_eq!(value.is_truthy(), expected, "{value:?}");
        }
    }

    #[test]
    fn strict_equality_table() {
        let s = |x: &str| Value::String(x.to_owned());
        let n = Value::Number;
        let cases = [
            (n(3.0), n(3.0), true),
            (n(-0.0), n(0.0), true),
            (n(f64::NAN), n(f64::NAN), false),
            (n(3.0), s("3"), false),
            (s("a"), s("a"), true),
            (Value::Bool(true), s("true"), false),
            (Value::Null, Value::Null, true),
            (Value::Undefined, Value::Undefined, false),
            (Value::Undefined, Value::Null, false),
            (Value::Array(vec![]), Value::Array(vec![]), false),
            (obj(&[]), obj(&[]), false),
        ];
        for (a, b, expected) in cases {
            assert_eq!(a.strict_equals(&b), expected, "{a:?} === {b:?}");
        }
    }

    #[test]
    fn numbers_print_like_javascript() {
        let cases = [
            (3.0, "3"),
            (3.5, "3.5"),
            (-0.0, "0"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (-2.5, "-2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (9007199254740993.0, "9007199254740992"),
        ];
        for (n, expected) in cases {
            assert_eq!(js_number(n), expected, "{n}");
        }
    }

    #[test]
    fn json_stringify_table() {
        let s = |x: &str| Value::String(x.to_owned());
        let cases = [
            (Value::Null, "null"),
            (Value::Number(f64::INFINITY), "null"),
            (Value::Number(-0.0), "0"),
            (s("a\"b\\c\n\t\r\u{8}\u{c}"), r#""a\"b\\c\n\t\r\b\f""#),
            (s("\u{0}\u{1f}\u{7f}"), "\"\\u0000\\u001f\u{7f}\""),
            (s("é/\u{2028}"), "\"é/\u{2028}\""),
            (
                Value::Array(vec![Value::Undefined, Value::Bool(true)]),
                "[null,true]",
            ),
            (
                obj(&[("b", Value::Number(1.0)), ("u", Value::Undefined)]),
                r#"{"b":1}"#,
            ),
            (
                obj(&[
                    ("b", Value::Number(1.0)),
                    ("10", Value::Number(2.0)),
                    ("2", Value::Number(3.0)),
                    ("01", Value::Number(4.0)),
                ]),
                r#"{"2":3,"10":2,"b":1,"01":4}"#,
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(value.to_json().as_deref(), Some(expected), "{value:?}");
        }
        assert_eq!(Value::Undefined.to_json(), None);
    }

    #[test]
    fn repeated_key_keeps_first_position_and_last_value() {
        let mut object = Object::new();
        object.insert("a", Value::Number(1.0));
        object.insert("b", Value::Number(2.0));
        object.insert("a", Value::Number(3.0));
        assert_eq!(
            Value::Object(object).to_json().as_deref(),
            Some(r#"{"a":3,"b":2}"#)
        );
    }

    #[test]
    fn js_string_table() {
        let cases = [
            (Value::Number(7.0), "7"),
            (Value::String("5".into()), "5"),
            (Value::Bool(false), "false"),
            (Value::Null, "null"),
            (
                Value::Array(vec![
                    Value::Number(1.0),
                    Value::Null,
                    Value::String("x".into()),
                ]),
                "1,,x",
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(value.to_js_string(), expected);
        }
    }
}
