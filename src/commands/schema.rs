//! `pi-rules schema`: the settings keys as the schema describes them; with `--config`, the JSON
//! schema of pi-rules' own configuration file.
//!
//! The JSON form is documented in `docs/schema-json.md`; its `format` version changes when a field
//! changes meaning or goes away.

use crate::invocation::{Context, OutputFormat};
use crate::output::{output, Exit, UsageError};
use crate::terminal::{escape, Paint};
use pi_rules_core::lint::suggest;
use pi_rules_core::settings::{KeySpec, Schema};
use pi_rules_core::Value;
use pi_rules_host::error::Result;
use pi_rules_host::session::Session;
use serde_json::{json, Value as Json};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The format version of the JSON form (`docs/schema-json.md`).
pub const JSON_FORMAT: u64 = 1;

/// Describe the settings keys: type, default, environment variable, range, group.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules schema                          # every key, in schema order
  pi-rules schema review_loop_max_cycles dco
  pi-rules schema --format json | jq '.keys[] | select(.group == \"Git\") | .key'
  pi-rules schema --config > pi-rules.schema.json   # the JSON schema of .pi/pi-rules.toml

The values a settings file may hold are checked against these types and ranges; a value that
fails is ignored and a lower source supplies the key (see `pi-rules check`).")]
pub struct Args {
    /// Keys to describe [default: all].
    #[arg(value_name = "KEY")]
    pub keys: Vec<String>,
    /// A settings schema to use instead of the embedded settings-keys.json.
    #[arg(long = "keys", value_name = "FILE")]
    pub schema: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
    /// Print the JSON schema of pi-rules' configuration file (.pi/pi-rules.toml) instead.
    #[arg(long, conflicts_with_all = ["keys", "schema"])]
    pub config: bool,
}

/// `pi-rules schema`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    if args.config {
        let schema = pi_rules_host::config::json_schema();
        let text = serde_json::to_string_pretty(&schema).unwrap_or_default();
        output(writeln!(cx.out, "{text}"))?;
        return Ok(Exit::Success);
    }
    let session;
    let schema: &Schema = match &args.schema {
        None => Schema::embedded(),
        Some(path) => {
            session = Session::new(cx.env, None, Some(path))?;
            &session.schema
        }
    };
    let specs = select(schema, &args.keys)?;
    match args.format {
        OutputFormat::Json => {
            let keys: Vec<Json> = specs.iter().map(|spec| key_json(spec)).collect();
            let value = json!({"format": JSON_FORMAT, "keys": keys});
            output(writeln!(cx.out, "{value}"))?;
        }
        OutputFormat::Text => {
            let paint = Paint { on: cx.color_out() };
            let mut text = String::new();
            for (i, spec) in specs.iter().enumerate() {
                if i > 0 {
                    text.push('\n');
                }
                write_key(&mut text, spec, paint);
            }
            output(cx.out.write_all(text.as_bytes()))?;
        }
    }
    Ok(Exit::Success)
}

/// The keys named (in the order given), or all of them; an unknown key is a usage error.
fn select<'s>(schema: &'s Schema, names: &[String]) -> Result<Vec<&'s KeySpec>> {
    if names.is_empty() {
        return Ok(schema.keys().collect());
    }
    let mut specs = Vec::with_capacity(names.len());
    for name in names {
        match schema.get(name) {
            Some(spec) => specs.push(spec),
            None => {
                let hint = match suggest::closest(name, schema.names()) {
                    Some(near) => format!("; did you mean `{near}`?"),
                    None => "; `pi-rules schema` lists every key".to_owned(),
                };
                return Err(
                    UsageError(format!("unknown settings key `{}`{hint}", escape(name))).into(),
                );
            }
        }
    }
    Ok(specs)
}

/// The default as JSON text (`undefined` when the schema gives none).
fn default_text(spec: &KeySpec) -> String {
    spec.default
        .to_json()
        .unwrap_or_else(|| "undefined".to_owned())
}

/// `1 to 10`, `at least 1`, `at most 10`, or nothing.
fn range_text(spec: &KeySpec) -> Option<String> {
    let n = |x: f64| pi_rules_core::value::js_number(x);
    match (spec.min, spec.max) {
        (Some(min), Some(max)) => Some(format!("{} to {}", n(min), n(max))),
        (Some(min), None) => Some(format!("at least {}", n(min))),
        (None, Some(max)) => Some(format!("at most {}", n(max))),
        (None, None) => None,
    }
}

fn write_key(out: &mut String, spec: &KeySpec, paint: Paint) {
    let _ = writeln!(out, "{}", paint.paint("1", &escape(&spec.name)));
    let mut field = |label: &str, value: &str| {
        let _ = writeln!(out, "  {label:<12} {value}");
    };
    if let Some(description) = &spec.description {
        field("description", &escape(description));
    }
    field("type", &escape(spec.kind.name()));
    field("default", &escape(&default_text(spec)));
    field("env", &spec.env.as_deref().map_or("none".into(), escape));
    if let Some(range) = range_text(spec) {
        field("range", &range);
    }
    if let Some(values) = &spec.enum_values {
        let list: Vec<String> = values.iter().map(|v| escape(v).into_owned()).collect();
        field("one of", &list.join(", "));
    }
    if let Some(group) = &spec.group {
        field("group", &escape(group));
    }
}

/// One key in the JSON form.
fn key_json(spec: &KeySpec) -> Json {
    let number = |x: Option<f64>| x.map(|x| value_json(&Value::Number(x)));
    json!({
        "key": spec.name,
        "type": spec.kind.name(),
        "default": value_json(&spec.default),
        "env": spec.env,
        "min": number(spec.min),
        "max": number(spec.max),
        "enum": spec.enum_values,
        "group": spec.group,
        "description": spec.description,
    })
}

/// A value as JSON; `undefined` (no default) is `null`.
fn value_json(value: &Value) -> Json {
    value
        .to_json()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Json::Null)
}
