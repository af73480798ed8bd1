//! The values a settings key can hold under the schema, and the classes of values that a file's
//! conditions can tell apart.
//!
//! A key is modelled by a few classes: one per literal it is compared with (when the key can hold
//! that literal), then "another truthy value" and "another falsy value" when the schema allows
//! such values. A bare test splits the classes by truthiness, `== LITERAL` picks the literal's
//! class. Every condition is then a set of classes, a bit mask, and a conjunction of conditions
//! on one key is the intersection of their masks.

use crate::lint::schema::KeyInfo;
use crate::value::{js_number, Value};

/// At most this many literals per key get a class of their own; comparisons with further
/// literals constrain nothing (they are treated as unknown), which keeps masks in a `u64`.
pub(crate) const MAX_LITERALS: usize = 62;

const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// One part of a key's domain.
#[derive(Debug, Clone)]
enum Part {
    /// Exactly these values.
    Values(Vec<Value>),
    /// Any string.
    Strings,
    /// Any integer from `min` to `max`.
    Ints { min: f64, max: f64 },
    /// Any finite number.
    Numbers,
    /// Lists or objects, empty (falsy) or not: never equal to a literal.
    Collections,
    /// A key of a type the checks do not know: anything.
    Anything,
}

/// The values a key can hold: the union of its parts and its default.
#[derive(Debug, Clone)]
pub(crate) struct Domain {
    parts: Vec<Part>,
    default: Value,
    /// The key's type in words, for messages.
    pub described: String,
}

impl Domain {
    /// The domain of a settings key, from its type, bounds and `enum`.
    pub(crate) fn of(info: &KeyInfo) -> Domain {
        let n = js_number;
        let bools = || Part::Values(vec![Value::Bool(true), Value::Bool(false)]);
        let (parts, described) = match info.kind.as_str() {
            "bool" | "bool_enable" => (vec![bools()], "a boolean".to_owned()),
            "bool_or_string" => (
                vec![bools(), Part::Strings],
                "a boolean or a string".to_owned(),
            ),
            "string" => match &info.enum_values {
                Some(values) => (
                    vec![Part::Values(
                        values.iter().map(|v| Value::String(v.clone())).collect(),
                    )],
                    format!(
                        "one of {}",
                        values
                            .iter()
                            .map(|v| format!("`{v}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
                None => (vec![Part::Strings], "a string".to_owned()),
            },
            "int" => {
                let (min, max) = (info.min.unwrap_or(0.0), info.max.unwrap_or(MAX_SAFE));
                (
                    vec![Part::Ints { min, max }],
                    format!("an integer from {} to {}", n(min), n(max)),
                )
            }
            "port" => {
                let min = info.min.unwrap_or(0.0);
                (
                    vec![Part::Ints { min, max: 65535.0 }],
                    format!("a port number from {} to 65535", n(min)),
                )
            }
            "number" => (vec![Part::Numbers], "a number".to_owned()),
            "agent_list" => (vec![Part::Collections], "a list of agent names".to_owned()),
            "agent_overrides" => (vec![Part::Collections], "an object".to_owned()),
            other => (vec![Part::Anything], format!("of type `{other}`")),
        };
        Domain {
            parts,
            default: info.default.clone(),
            described,
        }
    }

    /// Whether the key can hold `value` (a literal).
    pub(crate) fn contains(&self, value: &Value) -> bool {
        self.default.strict_equals(value)
            || self.parts.iter().any(|part| match part {
                Part::Values(values) => values.iter().any(|v| v.strict_equals(value)),
                Part::Strings => matches!(value, Value::String(_)),
                Part::Ints { min, max } => matches!(value,
                    Value::Number(x) if x.trunc() == *x && *x >= *min && *x <= *max),
                Part::Numbers => matches!(value, Value::Number(x) if x.is_finite()),
                Part::Collections => false,
                Part::Anything => true,
            })
    }

    /// A value of the key with truthiness `truthy` that equals none of `literals`, if there is
    /// one.
    pub(crate) fn other(&self, literals: &[Value], truthy: bool) -> Option<Value> {
        let fresh =
            |v: &Value| v.is_truthy() == truthy && !literals.iter().any(|l| l.strict_equals(v));
        if fresh(&self.default) {
            return Some(self.default.clone());
        }
        for part in &self.parts {
            let found = match part {
                Part::Values(values) => values.iter().find(|v| fresh(v)).cloned(),
                Part::Strings if truthy => (0..=literals.len())
                    .map(|i| Value::String(format!("x{i}")))
                    .find(|v| fresh(v)),
                Part::Strings => Some(Value::String(String::new())).filter(|v| fresh(v)),
                Part::Ints { min, max } => {
                    let (min, max) = (min.ceil(), max.floor());
                    if truthy {
                        // Among the first `literals.len() + 2` non-zero integers of the range.
                        let mut x = min;
                        let mut found = None;
                        let mut tried = 0;
                        while x <= max && tried <= literals.len() + 1 {
                            if x != 0.0 {
                                tried += 1;
                                let v = Value::Number(x);
                                if fresh(&v) {
                                    found = Some(v);
                                    break;
                                }
                            }
                            x += 1.0;
                        }
                        found
                    } else {
                        Some(Value::Number(0.0)).filter(|v| min <= 0.0 && max >= 0.0 && fresh(v))
                    }
                }
                Part::Numbers if truthy => (1..=literals.len() + 1)
                    .map(|i| Value::Number(i as f64))
                    .find(|v| fresh(v)),
                Part::Numbers => Some(Value::Number(0.0)).filter(|v| fresh(v)),
                Part::Collections if truthy => {
                    Some(Value::Array(vec![Value::String("agent".to_owned())]))
                }
                Part::Collections => Some(Value::Array(Vec::new())),
                Part::Anything if truthy => Some(Value::String("x".to_owned())).filter(fresh),
                Part::Anything => Some(Value::Array(Vec::new())),
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

/// One class of values of a variable.
#[derive(Debug, Clone)]
pub(crate) struct Class {
    pub truthy: bool,
    /// The literal this class is, or `None` for "another value".
    pub literal: Option<Value>,
    /// A value of the class, for examples and tests.
    pub example: Value,
}

/// The classes of one variable (a settings key or a feature predicate).
#[derive(Debug, Clone)]
pub(crate) struct Classes {
    pub classes: Vec<Class>,
    /// The literals that have a class, in order.
    literals: Vec<Value>,
}

impl Classes {
    /// The classes of a settings key with domain `domain`, compared with `literals` (distinct,
    /// in order of first use).
    pub(crate) fn of_key(domain: &Domain, literals: &[Value]) -> Classes {
        let mut kept: Vec<Value> = Vec::new();
        for literal in literals {
            if kept.len() < MAX_LITERALS
                && domain.contains(literal)
                && !kept.iter().any(|k| k.strict_equals(literal))
            {
                kept.push(literal.clone());
            }
        }
        let mut classes: Vec<Class> = kept
            .iter()
            .map(|l| Class {
                truthy: l.is_truthy(),
                literal: Some(l.clone()),
                example: l.clone(),
            })
            .collect();
        for truthy in [true, false] {
            if let Some(example) = domain.other(&kept, truthy) {
                classes.push(Class {
                    truthy,
                    literal: None,
                    example,
                });
            }
        }
        Classes {
            classes,
            literals: kept,
        }
    }

    /// The two classes of a feature predicate: on and off.
    pub(crate) fn feature() -> Classes {
        Classes {
            classes: vec![
                Class {
                    truthy: true,
                    literal: None,
                    example: Value::Bool(true),
                },
                Class {
                    truthy: false,
                    literal: None,
                    example: Value::Bool(false),
                },
            ],
            literals: Vec::new(),
        }
    }

    /// Every class.
    pub(crate) fn full(&self) -> u64 {
        match self.classes.len() {
            64 => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }

    /// The classes of truthy values.
    pub(crate) fn truthy(&self) -> u64 {
        self.mask(|c| c.truthy)
    }

    /// The classes equal to `literal`: `Some(0)` when the key can never hold it, `None` when
    /// the literal has no class of its own (over [`MAX_LITERALS`]).
    pub(crate) fn equal(&self, domain: &Domain, literal: &Value) -> Option<u64> {
        if !domain.contains(literal) {
            return Some(0);
        }
        let index = self
            .literals
            .iter()
            .position(|l| l.strict_equals(literal))?;
        Some(1 << index)
    }

    fn mask(&self, keep: impl Fn(&Class) -> bool) -> u64 {
        self.classes
            .iter()
            .enumerate()
            .filter(|(_, c)| keep(c))
            .fold(0, |m, (i, _)| m | 1 << i)
    }
}

/// A literal as a reader writes it: strings quoted.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{s}\""),
        Value::Array(a) if a.is_empty() => "an empty list".to_owned(),
        Value::Array(_) => "a non-empty list".to_owned(),
        Value::Object(o) if o.is_empty() => "an empty object".to_owned(),
        Value::Object(_) => "a non-empty object".to_owned(),
        other => other.to_json().unwrap_or_else(|| "undefined".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::testing::schema;

    fn classes_of(key: &str, literals: &[Value]) -> (Domain, Classes) {
        let schema = schema();
        let info = schema.get(key).expect("key");
        let domain = Domain::of(info);
        let classes = Classes::of_key(&domain, literals);
        (domain, classes)
    }

    #[test]
    fn class_table() {
        let n = Value::Number;
        let s = |x: &str| Value::String(x.to_owned());
        // (key, literals, number of classes, truthy mask)
        let cases: Vec<(&str, Vec<Value>, usize, u64)> = vec![
            ("dco", vec![], 2, 0b01),
            ("dco", vec![Value::Bool(true)], 2, 0b01),
            ("dco", vec![Value::Bool(true), Value::Bool(false)], 2, 0b01),
            // 1..10, never falsy.
            ("review_loop_max_cycles", vec![], 1, 0b1),
            ("review_loop_max_cycles", vec![n(3.0), n(0.0)], 2, 0b11),
            // An enum without "": always truthy.
            ("log_rules", vec![s("debug")], 2, 0b11),
            ("commit_trailer", vec![s("Signed-off-by")], 3, 0b011),
            ("acpx_agents", vec![], 2, 0b01),
            ("dream_interval_hours", vec![n(0.0)], 2, 0b10),
        ];
        for (key, literals, count, truthy) in cases {
            let (_, c) = classes_of(key, &literals);
            assert_eq!(c.classes.len(), count, "{key} {literals:?}: {c:?}");
            assert_eq!(c.truthy(), truthy, "{key} {literals:?}: {c:?}");
        }
    }

    #[test]
    fn examples_belong_to_their_class() {
        let schema = schema();
        for key in schema.names() {
            let info = schema.get(key).expect("key");
            let domain = Domain::of(info);
            let literals = [Value::Number(3.0), Value::String("info".into())];
            let classes = Classes::of_key(&domain, &literals);
            for class in &classes.classes {
                assert_eq!(class.example.is_truthy(), class.truthy, "{key}");
                match &class.literal {
                    Some(l) => assert!(l.strict_equals(&class.example)),
                    None => assert!(!literals.iter().any(|l| l.strict_equals(&class.example))),
                }
            }
        }
    }

    #[test]
    fn equal_table() {
        let (domain, c) = classes_of("log_rules", &[Value::String("debug".into())]);
        assert_eq!(c.equal(&domain, &Value::String("debug".into())), Some(1));
        assert_eq!(c.equal(&domain, &Value::String("verbose".into())), Some(0));
        let (domain, c) = classes_of("review_loop_max_cycles", &[]);
        assert_eq!(c.equal(&domain, &Value::Number(20.0)), Some(0));
        assert_eq!(c.equal(&domain, &Value::Number(4.0)), None);
    }
}
