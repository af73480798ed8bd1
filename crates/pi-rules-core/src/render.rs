//! `{{SETTINGS}}` and `{{SETTINGS:key,…}}` in agent prompt text (never in rules).
//!
//! Each placeholder becomes `JSON.stringify` of an object of the named known keys (or of every
//! known key) with their values; unknown keys are dropped silently, undefined values omitted.

use crate::find;
use crate::scope::Settings;
use crate::text::js_trim;
use crate::value::write_json_object;
use std::collections::HashSet;

const OPEN: &[u8] = b"{{SETTINGS";

/// Replaces every `{{SETTINGS…}}` in `prompt`.
pub fn render(prompt: &str, settings: &Settings) -> String {
    let bytes = prompt.as_bytes();
    let mut out = String::with_capacity(prompt.len());
    let finder = find::Finder::new(OPEN);
    let mut copied = 0;
    let mut from = 0;
    // First `}` at or after a position, cached: keys runs of neighbouring candidates overlap.
    let mut brace: Option<usize> = None;
    while let Some(off) = finder.find(&bytes[from..]) {
        let start = from + off;
        let after = start + OPEN.len();
        let mut end = None;
        let mut keys = None;
        if bytes[after..].starts_with(b"}}") {
            end = Some(after + 2);
        } else if bytes.get(after) == Some(&b':') {
            let run = after + 1;
            let close = match brace {
                Some(b) if b >= run => b,
                _ => {
                    let b = find::memchr(b'}', &bytes[run..]).map_or(bytes.len(), |o| run + o);
                    brace = Some(b);
                    b
                }
            };
            if close > run && bytes.get(close + 1) == Some(&b'}') {
                end = Some(close + 2);
                keys = Some(&prompt[run..close]);
            }
        }
        match end {
            Some(end) => {
                out.push_str(&prompt[copied..start]);
                write_object(keys, settings, &mut out);
                copied = end;
                from = end;
            }
            None => from = start + 1,
        }
    }
    out.push_str(&prompt[copied..]);
    out
}

/// Writes the JSON object for a placeholder naming `keys` (all known keys for `None`).
fn write_object(keys: Option<&str>, settings: &Settings, out: &mut String) {
    match keys {
        None => write_json_object(settings.iter(), out),
        Some(list) => {
            // Duplicates keep their first position; unknown keys are dropped.
            let mut seen: HashSet<&str> = HashSet::new();
            let entries = list.split(',').map(js_trim).filter_map(|key| {
                if key.is_empty() || !seen.insert(key) {
                    return None;
                }
                settings.get(key).map(|value| (key, value))
            });
            write_json_object(entries, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    #[test]
    fn render_table() {
        let mut settings = Settings::new();
        settings.insert("dco", Value::Bool(false));
        settings.insert("n", Value::Number(3.0));
        settings.insert("u", Value::Undefined);
        let cases = [
            ("{{SETTINGS}}", r#"{"dco":false,"n":3}"#),
            ("{{SETTINGS:n, dco ,n}}", r#"{"n":3,"dco":false}"#),
            ("{{SETTINGS:nope,u}}", "{}"),
            ("{{SETTINGS:}}", "{{SETTINGS:}}"),
            ("{{SETTINGS:a}b}}", "{{SETTINGS:a}b}}"),
            ("{{SETTINGS }}", "{{SETTINGS }}"),
            ("{{{SETTINGS:n}}}", r#"{{"n":3}}"#),
            ("{{SETTINGS:{{SETTINGS:n}}", r#"{}"#),
            ("x{{SETTINGS:,}}y", "x{}y"),
        ];
        for (input, expected) in cases {
            assert_eq!(render(input, &settings), expected, "{input:?}");
        }
    }
}
