//! `pi-rules config`: pi-rules' own configuration as it takes effect, and where each value came
//! from (the default, the user file or the project file).
//!
//! The text form is TOML that pi-rules would read back as the same configuration, each value
//! followed by a comment naming its source; the JSON form is documented in `docs/config-json.md`
//! (its `format` version changes when a field changes meaning or goes away).

use crate::invocation::{Context, OutputFormat};
use crate::output::{output, write_notes, Exit};
use crate::terminal::escape;
use pi_rules_core::escape::is_unsafe_or_hidden;
use pi_rules_core::lint::Code;
use pi_rules_host::config::{CheckConfig, Config, ConfigSource, Level, LoadedConfig, PerPath};
use pi_rules_host::error::Result;
use pi_rules_host::session::Session;
use serde_json::{json, Map, Value as Json};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The format version of the JSON form (`docs/config-json.md`).
pub const JSON_FORMAT: u64 = 1;

/// Show pi-rules' own configuration and where each value came from.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules config                  # the effective configuration, as TOML with its sources
  pi-rules config --format json | jq '.sources'
  pi-rules schema --config         # the file's JSON schema

The files, the project's first: <project root>/.pi/pi-rules.toml (the project root is the
repository root when run below it), then $HOME/.pi/agent/pi-rules.toml; the project file
overrides the user file key by key (each code of [check.severity] is a key of its own), and a
key neither sets has its default. A problem in either file (not TOML, an unknown key, a value of
the wrong type, an unknown code) is a warning on stderr here, and an error of `pi-rules check`;
the key then keeps the other file's value or its default. Exit code 0 even so.

See `pi-rules docs config` for every key.")]
pub struct Args {
    /// The project directory [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

/// `pi-rules config`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let session = Session::new(cx.env, args.cwd.clone(), None)?;
    let loaded = Config::read(&session);
    write_notes(cx.err, &loaded.notes());
    let text = match args.format {
        OutputFormat::Json => format!("{}\n", json_form(&loaded)),
        OutputFormat::Text => text_form(&loaded),
    };
    output(cx.out.write_all(text.as_bytes()))?;
    Ok(Exit::Success)
}

/// Where a value came from, for the text form's comments.
fn source_label(source: ConfigSource) -> &'static str {
    match source {
        ConfigSource::Default => "default",
        ConfigSource::User => "user file",
        ConfigSource::Project => "project file",
    }
}

/// `text` as a TOML basic string that is safe on a terminal: quotes, backslashes, control,
/// bidirectional and invisible characters written as TOML escapes.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || is_unsafe_or_hidden(c) => {
                if u32::from(c) <= 0xFFFF {
                    let _ = write!(out, "\\u{:04X}", u32::from(c));
                } else {
                    let _ = write!(out, "\\U{:08X}", u32::from(c));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A key of a TOML table: bare when it may be, else quoted.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_owned()
    } else {
        toml_string(key)
    }
}

/// A value of `[export] set` (JSON text) as TOML: strings, numbers, booleans and lists of them
/// as they are; anything else as its JSON text in a string.
fn toml_value(json: &str) -> String {
    fn write(value: &Json) -> Option<String> {
        Some(match value {
            Json::String(s) => toml_string(s),
            Json::Bool(b) => b.to_string(),
            Json::Number(n) => n.to_string(),
            Json::Array(items) => toml_array(items.iter().map(write).collect::<Option<Vec<_>>>()?),
            Json::Null | Json::Object(_) => return None,
        })
    }
    serde_json::from_str(json)
        .ok()
        .and_then(|value| write(&value))
        .unwrap_or_else(|| toml_string(json))
}

/// A TOML array of `items`, already written.
fn toml_array(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    format!("[{}]", items.join(", "))
}

fn codes_toml(codes: &[Code]) -> String {
    toml_array(codes.iter().map(|c| toml_string(c.id())))
}

fn severities_inline(severity: &[(Code, Level)]) -> String {
    let items: Vec<String> = severity
        .iter()
        .map(|(code, level)| format!("{} = {}", code.id(), toml_string(level.as_str())))
        .collect();
    if items.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{ {} }}", items.join(", "))
    }
}

/// The text form: TOML with a comment for each value's source.
fn text_form(loaded: &LoadedConfig) -> String {
    let config = &loaded.config;
    let mut out = String::new();
    out.push_str("# pi-rules configuration, as it takes effect\n");
    for file in &loaded.files {
        let which = source_label(file.source);
        let _ = writeln!(
            out,
            "# {which}: {} ({})",
            escape(&file.path.display().to_string()),
            escape(&file.state.describe())
        );
    }
    let line = |out: &mut String, text: String, source: ConfigSource| {
        let _ = writeln!(out, "{text}  # {}", source_label(source));
    };
    out.push_str("\n[rules]\n");
    line(
        &mut out,
        format!("scoped = {}", config.rules.scoped),
        loaded.source("rules.scoped"),
    );
    out.push_str("\n[check]\n");
    let check: &CheckConfig = &config.check;
    line(
        &mut out,
        format!("ignore = {}", codes_toml(&check.ignore)),
        loaded.source("check.ignore"),
    );
    if check.severity.is_empty() {
        line(&mut out, "severity = {}".to_owned(), ConfigSource::Default);
    }
    if check.per_path.is_empty() {
        line(
            &mut out,
            "per-path = []".to_owned(),
            loaded.source("check.per-path"),
        );
    }
    if !check.severity.is_empty() {
        out.push_str("[check.severity]\n");
        for (code, level) in &check.severity {
            let key = format!("check.severity.{}", code.id());
            line(
                &mut out,
                format!("{} = {}", code.id(), toml_string(level.as_str())),
                loaded.source(&key),
            );
        }
    }
    for entry in &check.per_path {
        let _ = writeln!(out, "[[check.per-path]]  # {}", source_label(entry.source));
        write_per_path(&mut out, entry);
    }
    out.push_str("\n[export]\n");
    let export = &config.export;
    let targets = toml_array(export.targets.iter().map(|t| toml_string(t)));
    line(
        &mut out,
        format!("targets = {targets}"),
        loaded.source("export.targets"),
    );
    let layers = toml_array(export.layers.iter().map(|l| toml_string(l.as_str())));
    line(
        &mut out,
        format!("layers = {layers}"),
        loaded.source("export.layers"),
    );
    let settings = export.settings.map_or("project", |s| s.as_str());
    line(
        &mut out,
        format!("settings = {}", toml_string(settings)),
        loaded.source("export.settings"),
    );
    let set: Vec<String> = export
        .set
        .iter()
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, json)| format!("{} = {}", toml_key(key), toml_value(json)))
        .collect();
    line(
        &mut out,
        format!("set = {{ {} }}", set.join(", ")),
        loaded.source("export.set"),
    );
    out
}

fn write_per_path(out: &mut String, entry: &PerPath) {
    let paths = toml_array(entry.paths.iter().map(|p| toml_string(p)));
    let _ = writeln!(out, "paths = {paths}");
    if !entry.ignore.is_empty() {
        let _ = writeln!(out, "ignore = {}", codes_toml(&entry.ignore));
    }
    if !entry.severity.is_empty() {
        let _ = writeln!(out, "severity = {}", severities_inline(&entry.severity));
    }
}

fn severities_json(severity: &[(Code, Level)]) -> Json {
    let map: Map<String, Json> = severity
        .iter()
        .map(|(code, level)| (code.id().to_owned(), json!(level.as_str())))
        .collect();
    Json::Object(map)
}

fn codes_json(codes: &[Code]) -> Json {
    json!(codes.iter().map(|c| c.id()).collect::<Vec<_>>())
}

/// The JSON form (`docs/config-json.md`).
fn json_form(loaded: &LoadedConfig) -> Json {
    let config = &loaded.config;
    let check = &config.check;
    let per_path: Vec<Json> = check
        .per_path
        .iter()
        .map(|entry| {
            json!({
                "paths": entry.paths,
                "ignore": codes_json(&entry.ignore),
                "severity": severities_json(&entry.severity),
                "source": entry.source.as_str(),
            })
        })
        .collect();
    let layers: Vec<&str> = config.export.layers.iter().map(|l| l.as_str()).collect();
    let set: Map<String, Json> = (config.export.set.iter())
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, json)| {
            (
                key.to_owned(),
                serde_json::from_str(json).unwrap_or(Json::Null),
            )
        })
        .collect();
    let mut sources = Map::new();
    let mut source = |key: String| {
        let from = loaded.source(&key).as_str();
        sources.insert(key, json!(from));
    };
    source("rules.scoped".to_owned());
    source("check.ignore".to_owned());
    for (code, _) in &check.severity {
        source(format!("check.severity.{}", code.id()));
    }
    source("check.per-path".to_owned());
    source("export.targets".to_owned());
    source("export.layers".to_owned());
    source("export.settings".to_owned());
    source("export.set".to_owned());
    let files: Vec<Json> = loaded
        .files
        .iter()
        .map(|file| {
            json!({
                "source": file.source.as_str(),
                "path": file.path.display().to_string(),
                "state": file.state.describe(),
            })
        })
        .collect();
    let findings: Vec<Json> = loaded
        .findings
        .iter()
        .map(|f| {
            json!({
                "code": f.code.id(),
                "severity": f.code.severity().as_str(),
                "path": f.path.display().to_string(),
                "line": f.line,
                "column": f.column,
                "message": f.message,
                "help": f.help,
            })
        })
        .collect();
    json!({
        "format": JSON_FORMAT,
        "config": {
            "rules": {"scoped": config.rules.scoped},
            "check": {
                "ignore": codes_json(&check.ignore),
                "severity": severities_json(&check.severity),
                "per-path": per_path,
            },
            "export": {
                "targets": config.export.targets,
                "layers": layers,
                "settings": config.export.settings.map_or("project", |s| s.as_str()),
                "set": set,
            },
        },
        "sources": sources,
        "files": files,
        "findings": findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_strings_escape_what_a_terminal_acts_on() {
        let cases = [
            ("a/**", "\"a/**\""),
            ("say \"hi\"\\", "\"say \\\"hi\\\"\\\\\""),
            ("\x1b[31m", "\"\\u001B[31m\""),
            ("\u{202e}x", "\"\\u202Ex\""),
            ("é", "\"é\""),
        ];
        for (text, expected) in cases {
            assert_eq!(toml_string(text), expected, "{text:?}");
        }
    }
}
