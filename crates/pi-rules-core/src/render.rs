//! `{{SETTINGS}}` and `{{SETTINGS:key,…}}` in agent prompt text (never in rules).
//!
//! Each placeholder becomes `JSON.stringify` of an object of the named known keys (or of every
//! known key) with their values; unknown keys are dropped silently (a caller can hear of them,
//! [`render_noting`]), undefined values omitted.

use crate::find;
use crate::scope::Settings;
use crate::text::js_trim;
use crate::value::write_json_object;
use std::collections::HashSet;

const OPEN: &[u8] = b"{{SETTINGS";

/// Replaces every `{{SETTINGS…}}` in `prompt`.
pub fn render(prompt: &str, settings: &Settings) -> String {
    render_noting(prompt, settings, &mut |_, _| {})
}

/// [`render`], calling `unknown` with the byte offset and the text of every key that a
/// `{{SETTINGS:…}}` names and that is not a known key (and so is dropped), in the order of the
/// prompt. A key named twice in one placeholder is reported once.
pub fn render_noting(
    prompt: &str,
    settings: &Settings,
    unknown: &mut dyn FnMut(usize, &str),
) -> String {
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
                keys = Some((run, &prompt[run..close]));
            }
        }
        match end {
            Some(end) => {
                out.push_str(&prompt[copied..start]);
                write_object(keys, settings, &mut out, unknown);
                copied = end;
                from = end;
            }
            None => from = start + 1,
        }
    }
    out.push_str(&prompt[copied..]);
    out
}

/// Writes the JSON object for a placeholder naming `keys`, the list and its offset in the prompt
/// (all known keys for `None`); `unknown` hears of each key dropped as unknown.
fn write_object(
    keys: Option<(usize, &str)>,
    settings: &Settings,
    out: &mut String,
    unknown: &mut dyn FnMut(usize, &str),
) {
    match keys {
        None => write_json_object(settings.iter(), out),
        Some((at, list)) => {
            // Duplicates keep their first position; unknown keys are dropped.
            let mut seen: HashSet<&str> = HashSet::new();
            let mut item_start = at;
            let entries = list.split(',').filter_map(|item| {
                let item_at = item_start;
                item_start += item.len() + 1;
                let key = js_trim(item);
                if key.is_empty() || !seen.insert(key) {
                    return None;
                }
                let value = settings.get(key);
                if value.is_none() {
                    // `js_trim` returns a slice of `item`: its offset in it is what it skipped.
                    let skipped = key.as_ptr() as usize - item.as_ptr() as usize;
                    unknown(item_at + skipped, key);
                }
                value.map(|value| (key, value))
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

    #[test]
    fn unknown_keys_are_reported_where_they_are() {
        let mut settings = Settings::new();
        settings.insert("dco", Value::Bool(true));
        settings.insert("u", Value::Undefined);
        let prompt = "a {{SETTINGS:dcoo, dco,\u{a0}nope ,nope,u}} b {{SETTINGS}} {{SETTINGS:x}b}} \
                      {{SETTINGS: dcoo}}";
        let mut heard = Vec::new();
        let text = render_noting(prompt, &settings, &mut |at, key| {
            heard.push((at, key.to_owned()))
        });
        assert_eq!(text, render(prompt, &settings));
        let expected: Vec<(usize, String)> = ["dcoo", "nope", "dcoo"]
            .iter()
            .scan(0, |from, key| {
                let at = *from + prompt[*from..].find(key).unwrap();
                *from = at + key.len();
                Some((at, (*key).to_owned()))
            })
            .collect();
        assert_eq!(heard, expected);
    }
}
