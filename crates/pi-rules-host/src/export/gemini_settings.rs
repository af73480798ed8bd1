//! `.gemini/settings.json`, the project's Gemini CLI settings: when `AGENTS.md` is exported
//! together with `gemini`, export names `AGENTS.md` in its `context.fileName` instead of
//! writing a `GEMINI.md` of its own, so that Gemini CLI reads the rules from the same files as
//! the other agents, once. Pure: bytes in, bytes out.
//!
//! Facts (Gemini CLI docs, "Gemini CLI configuration", `context.fileName`: "the name of the
//! context file or files to load into memory", a string or an array of strings, `GEMINI.md`
//! when unset; measured with Gemini CLI 0.61.0 in tests/agents: it then reads `AGENTS.md` at the
//! root, and a nested `AGENTS.md` after a read in its directory, as it does `GEMINI.md`). Gemini
//! CLI strips comments from its settings files before it parses them (its settings loader runs
//! `strip-json-comments` and then `JSON.parse`, read in the bundle of `@google/gemini-cli`
//! 0.61.0); this module reads strict JSON only, and a file with comments (or anything else it
//! cannot read) is left as it is, with a warning that says what to add by hand.
//!
//! The file is the team's: every other key stays, in its order (`serde_json` with
//! `preserve_order`), and the file keeps its indentation and line endings.

use serde_json::{Map, Value};

/// The file, relative to the project root.
pub const PATH: &str = ".gemini/settings.json";

/// The names export adds to a `context.fileName` that was not set: `AGENTS.md`, and
/// `GEMINI.md`, Gemini CLI's default, so that the team's own `GEMINI.md` files are still read.
pub const ADDED: [&str; 2] = ["AGENTS.md", "GEMINI.md"];

/// The name that must be in `context.fileName`.
const NAME: &str = "AGENTS.md";

/// What to add by hand, for the warning about a file that cannot be read.
pub const BY_HAND: &str = "add `\"context\": { \"fileName\": [\"AGENTS.md\", \"GEMINI.md\"] }` (keeping any names it has) by hand";

/// The new bytes of the settings file so that `context.fileName` names `AGENTS.md` (`old` is the
/// file, `None` when it does not exist): `Ok(None)` when it names it already; `Err(why)` when the
/// file cannot be read as a JSON object with an object `context` and a string or array
/// `fileName` (it is then left as it is).
pub fn add(old: Option<&[u8]>) -> Result<Option<Vec<u8>>, String> {
    let Some(old) = old else {
        return Ok(Some(render(&created(), &Style::default())));
    };
    let mut value = parse(old)?;
    let root = value
        .as_object_mut()
        .ok_or_else(|| "it is not a JSON object".to_owned())?;
    let context = root
        .entry("context")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| "its `context` is not an object".to_owned())?;
    match context.get_mut("fileName") {
        None => {
            context.insert("fileName".to_owned(), added());
        }
        Some(Value::String(name)) if name == NAME => return Ok(None),
        Some(Value::String(name)) => {
            let name = std::mem::take(name);
            context.insert(
                "fileName".to_owned(),
                Value::Array(vec![Value::String(name), Value::String(NAME.to_owned())]),
            );
        }
        Some(Value::Array(names)) => {
            if names.iter().any(|n| n.as_str() == Some(NAME)) {
                return Ok(None);
            }
            names.push(Value::String(NAME.to_owned()));
        }
        Some(_) => return Err("its `context.fileName` is neither a string nor a list".to_owned()),
    }
    Ok(Some(render(&value, &Style::of(old))))
}

/// Whether the file names `AGENTS.md` in `context.fileName` (a project exported together).
pub fn names_agents_md(bytes: &[u8]) -> bool {
    let Ok(value) = parse(bytes) else {
        return false;
    };
    match value.pointer("/context/fileName") {
        Some(Value::String(name)) => name == NAME,
        Some(Value::Array(names)) => names.iter().any(|n| n.as_str() == Some(NAME)),
        _ => false,
    }
}

/// What `export --remove` does to the file: `None`, nothing (no addition of export's that can be
/// told apart); `Some(None)`, the file goes (it holds exactly what export creates); `Some(Some(
/// bytes))`, `context.fileName` goes (it is exactly [`ADDED`], what export adds where no name
/// was set), and `context` with it when nothing else is left in it. A list of the team's own
/// that export added `AGENTS.md` to is left as it is: nothing in the file says who put it there.
pub fn take_back(old: &[u8]) -> Option<Option<Vec<u8>>> {
    let mut value = parse(old).ok()?;
    if value == created() {
        return Some(None);
    }
    let root = value.as_object_mut()?;
    let context = root.get_mut("context")?.as_object_mut()?;
    if context.get("fileName") != Some(&added()) {
        return None;
    }
    context.shift_remove("fileName");
    if context.is_empty() {
        root.shift_remove("context");
    }
    Some(Some(render(&value, &Style::of(old))))
}

fn parse(bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_owned())?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text)
        .map_err(|e| format!("it is not plain JSON ({e}; comments are not read here)"))
}

fn added() -> Value {
    Value::Array(
        ADDED
            .iter()
            .map(|n| Value::String((*n).to_owned()))
            .collect(),
    )
}

/// What export writes where there is no settings file.
fn created() -> Value {
    let mut context = Map::new();
    context.insert("fileName".to_owned(), added());
    let mut root = Map::new();
    root.insert("context".to_owned(), Value::Object(context));
    Value::Object(root)
}

/// How the team's file is laid out: its indentation and line ending.
struct Style {
    indent: String,
    crlf: bool,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            indent: "  ".to_owned(),
            crlf: false,
        }
    }
}

impl Style {
    fn of(bytes: &[u8]) -> Style {
        let text = String::from_utf8_lossy(bytes);
        let indent = text
            .lines()
            .skip(1)
            .map(|l| l.trim_end_matches('\r'))
            .find(|l| !l.trim().is_empty())
            .map(|l| {
                l.chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .collect::<String>()
            })
            .filter(|i| !i.is_empty())
            .unwrap_or_else(|| "  ".to_owned());
        Style {
            indent,
            crlf: text.contains("\r\n"),
        }
    }
}

fn render(value: &Value, style: &Style) -> Vec<u8> {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(style.indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    // A `Value` always serializes.
    let _ = value.serialize(&mut ser);
    out.push(b'\n');
    if style.crlf {
        let text = String::from_utf8_lossy(&out).replace('\n', "\r\n");
        return text.into_bytes();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> &str {
        std::str::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_new_file_names_agents_md_and_gemini_md_and_goes_back_whole() {
        let made = add(None).unwrap().unwrap();
        assert_eq!(
            text(&made),
            "{\n  \"context\": {\n    \"fileName\": [\n      \"AGENTS.md\",\n      \"GEMINI.md\"\n    ]\n  }\n}\n"
        );
        assert!(names_agents_md(&made));
        assert_eq!(add(Some(&made)).unwrap(), None);
        assert_eq!(take_back(&made), Some(None));
    }

    #[test]
    fn the_team_s_keys_stay_in_their_order_and_layout() {
        let team = "{\r\n    \"ui\": { \"theme\": \"Dracula\" },\r\n    \"context\": { \"includeDirectories\": [\"lib\"] },\r\n    \"general\": {}\r\n}\r\n";
        let made = add(Some(team.as_bytes())).unwrap().unwrap();
        let made_text = text(&made);
        let ui = made_text.find("\"ui\"").unwrap();
        let context = made_text.find("\"context\"").unwrap();
        let general = made_text.find("\"general\"").unwrap();
        assert!(ui < context && context < general, "{made_text}");
        assert!(made_text.contains("\r\n    \"ui\""), "{made_text}");
        assert!(!made_text.replace("\r\n", "").contains('\n'), "{made_text}");
        let value: Value = serde_json::from_slice(&made).unwrap();
        assert_eq!(value["context"]["includeDirectories"][0], "lib");
        assert_eq!(value["context"]["fileName"], added());
        // Taken back: the names go, the team's keys stay.
        let back = take_back(&made).unwrap().unwrap();
        let value: Value = serde_json::from_slice(&back).unwrap();
        let original: Value = serde_json::from_str(team).unwrap();
        assert_eq!(value, original);
    }

    #[test]
    fn a_name_the_team_set_is_kept_and_agents_md_added_after_it() {
        let made = add(Some(b"{\"context\":{\"fileName\":\"CONTEXT.md\"}}"))
            .unwrap()
            .unwrap();
        let value: Value = serde_json::from_slice(&made).unwrap();
        assert_eq!(
            value["context"]["fileName"],
            serde_json::json!(["CONTEXT.md", "AGENTS.md"])
        );
        // Who added AGENTS.md cannot be told: left as it is.
        assert_eq!(take_back(&made), None);
        let list = br#"{"context":{"fileName":["A.md"]}}"#;
        let made = add(Some(list)).unwrap().unwrap();
        let value: Value = serde_json::from_slice(&made).unwrap();
        assert_eq!(
            value["context"]["fileName"],
            serde_json::json!(["A.md", "AGENTS.md"])
        );
        assert_eq!(
            add(Some(br#"{"context":{"fileName":"AGENTS.md"}}"#)).unwrap(),
            None
        );
    }

    #[test]
    fn a_file_that_cannot_be_read_is_an_error_and_never_taken_back() {
        for bad in [
            &b"{ // mine\n \"a\": 1 }"[..],
            b"[1]",
            b"{\"context\": 3}",
            b"{\"context\": {\"fileName\": 3}}",
            b"\xff",
        ] {
            assert!(add(Some(bad)).is_err(), "{bad:?}");
            assert_eq!(take_back(bad), None);
            assert!(!names_agents_md(bad));
        }
    }
}
