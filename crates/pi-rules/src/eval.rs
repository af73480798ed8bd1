//! `pi-rules eval`: the engine's line-oriented JSON interface for hosts and tests.
//!
//! One request per line in, one response per line out. An assembly request has `rules`; a render
//! request has `prompt`. A line that is not a valid request gets `{"error": "..."}` and the
//! stream goes on.

use pi_rules_core::value::js_number;
use pi_rules_core::{assemble, render, Features, Scope, Settings, Value};
use serde_json::{json, Map, Value as Json};
use std::io::{self, BufRead, Write};

/// Answers every line of `input` on `output`, flushing after each response.
pub fn serve(input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut line = Vec::new();
    let mut input = input;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let response = respond(text);
        output.write_all(response.as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

/// The response line (without newline) for one request line.
pub fn respond(line: &str) -> String {
    let response = match serde_json::from_str::<Json>(line) {
        Ok(request) => handle(&request).unwrap_or_else(|message| json!({ "error": message })),
        Err(err) => json!({ "error": format!("request is not valid JSON: {err}") }),
    };
    response.to_string()
}

fn handle(request: &Json) -> Result<Json, String> {
    let request = request
        .as_object()
        .ok_or("a request must be a JSON object with `rules` or `prompt`")?;
    let settings = settings(request)?;
    if let Some(rules) = request.get("rules") {
        let rules = string_array(rules, "rules")?;
        let features = features(request)?;
        let cycles = match request.get("review_loop_max_cycles") {
            None | Some(Json::Null) => "3".to_owned(),
            Some(Json::Number(n)) => js_number(n.as_f64().unwrap_or(f64::NAN)),
            Some(Json::String(s)) => s.clone(),
            Some(_) => return Err("`review_loop_max_cycles` must be a number".into()),
        };
        let scope = Scope {
            settings: &settings,
            features: &features,
            review_loop_max_cycles: &cycles,
        };
        let assembly = assemble(&rules, &scope);
        let files: Vec<Json> = assembly
            .included
            .iter()
            .enumerate()
            .map(|(index, included)| json!({ "index": index, "included": included }))
            .collect();
        let warnings: Vec<String> = assembly.warnings.iter().map(|w| w.to_string()).collect();
        Ok(json!({ "text": assembly.text, "warnings": warnings, "files": files }))
    } else if let Some(prompt) = request.get("prompt") {
        let prompt = prompt.as_str().ok_or("`prompt` must be a string")?;
        Ok(json!({ "text": render::render(prompt, &settings) }))
    } else {
        Err("a request needs `rules` (an assembly) or `prompt` (a render)".into())
    }
}

fn string_array<'a>(value: &'a Json, field: &str) -> Result<Vec<&'a str>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("`{field}` must be an array of strings"))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .ok_or_else(|| format!("`{field}` must be an array of strings"))
        })
        .collect()
}

/// Known keys in order (`known_keys`, or the keys of `settings`), each with its value or
/// undefined.
fn settings(request: &Map<String, Json>) -> Result<Settings, String> {
    let empty = Map::new();
    let values = match request.get("settings") {
        None | Some(Json::Null) => &empty,
        Some(Json::Object(map)) => map,
        Some(_) => return Err("`settings` must be an object".into()),
    };
    let mut settings = Settings::new();
    let mut add = |key: &str| {
        let value = values
            .get(key)
            .cloned()
            .map_or(Value::Undefined, Value::from);
        settings.insert(key, value);
    };
    match request.get("known_keys") {
        None | Some(Json::Null) => values.keys().for_each(|k| add(k)),
        Some(keys) => string_array(keys, "known_keys")?.into_iter().for_each(add),
    }
    Ok(settings)
}

fn features(request: &Map<String, Json>) -> Result<Features, String> {
    let mut features = Features::new();
    match request.get("features") {
        None | Some(Json::Null) => {}
        Some(Json::Object(map)) => {
            for (name, on) in map {
                let on = on
                    .as_bool()
                    .ok_or_else(|| format!("feature `{name}` must be true or false"))?;
                features.set(name.clone(), on);
            }
        }
        Some(_) => return Err("`features` must be an object of booleans".into()),
    }
    Ok(features)
}
