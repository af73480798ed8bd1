//! The agent-name list parser behind `acpx_agents` and `cli_agents`.

use crate::text::js_trim;
use crate::value::Value;
use std::collections::HashSet;

/// Agent names from an array (a non-string item counts as `""`) or a comma-separated string:
/// each trimmed and lower-cased, kept when it matches `^[a-z0-9_-]+$`, repeats dropped (the
/// first stays). Any other value gives no names.
pub fn parse_agent_names(value: &Value) -> Vec<String> {
    let candidates: Vec<String> = match value {
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().map_or_else(String::new, normalize))
            .collect(),
        Value::String(list) => list.split(',').map(normalize).collect(),
        _ => Vec::new(),
    };
    // A fast hasher, as for the settings: std's asks the kernel for its keys on first use.
    let mut seen: HashSet<String, foldhash::fast::RandomState> = HashSet::default();
    candidates
        .into_iter()
        .filter(|name| is_agent_name(name) && seen.insert(name.clone()))
        .collect()
}

/// The names as a settings value: an array of strings.
pub fn agent_names_value(value: &Value) -> Value {
    Value::Array(
        parse_agent_names(value)
            .into_iter()
            .map(Value::String)
            .collect(),
    )
}

fn normalize(name: &str) -> String {
    js_trim(name).to_lowercase()
}

fn is_agent_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::String(text.to_owned())
    }

    #[test]
    fn agent_names_table() {
        let cases: [(&str, Value, &[&str]); 12] = [
            ("comma list", s("claude,gemini"), &["claude", "gemini"]),
            (
                "trimmed and lower-cased",
                s(" Claude , GEMINI "),
                &["claude", "gemini"],
            ),
            (
                "bad names dropped",
                s("Claude, gemini,,bad name!"),
                &["claude", "gemini"],
            ),
            (
                "repeats keep the first",
                s("GEMINI,gemini,x,Gemini"),
                &["gemini", "x"],
            ),
            ("only separators", s(" , "), &[]),
            ("empty", s(""), &[]),
            (
                "array with non-strings",
                Value::Array(vec![
                    s("claude"),
                    s("Gemini"),
                    s("bad name!"),
                    Value::Number(3.0),
                    s(" x "),
                ]),
                &["claude", "gemini", "x"],
            ),
            (
                "array items are not split",
                Value::Array(vec![s("a,b")]),
                &[],
            ),
            (
                "digits, dash and underscore",
                s("a-1,b_2,3"),
                &["a-1", "b_2", "3"],
            ),
            ("kelvin sign lower-cases to k", s("\u{212a}imi"), &["kimi"]),
            (
                "javascript whitespace trimmed",
                s("\u{feff}claude\u{a0}"),
                &["claude"],
            ),
            ("other types give nothing", Value::Number(1.0), &[]),
        ];
        for (name, input, expected) in cases {
            assert_eq!(parse_agent_names(&input), expected, "{name}");
        }
        assert_eq!(parse_agent_names(&Value::Undefined), Vec::<String>::new());
    }

    #[test]
    fn value_form_is_an_array_of_strings() {
        assert_eq!(
            agent_names_value(&s("b,a")).to_json().as_deref(),
            Some(r#"["b","a"]"#)
        );
    }
}
