//! The JSON schema of the configuration file (`pi-rules schema --config`), for editors that
//! check TOML against a JSON schema (taplo, Even Better TOML) and for scripts. It says what
//! `file.rs` accepts: the same keys, types, severities, layers and codes.

use super::Level;
use pi_rules_core::lint::CODES;
use serde_json::{json, Value};

/// The schema, JSON Schema draft 2020-12.
pub fn json_schema() -> Value {
    let mut codes: Vec<&str> = CODES.iter().map(|info| info.id).collect();
    codes.extend(CODES.iter().map(|info| info.name));
    let severity = json!({
        "description": "Each code's severity: \"off\" does not report it.",
        "type": "object",
        "propertyNames": {"$ref": "#/$defs/code"},
        "additionalProperties": {"$ref": "#/$defs/level"},
    });
    let ignore = json!({
        "description": "Codes not reported.",
        "type": "array",
        "items": {"$ref": "#/$defs/code"},
    });
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pi-rules configuration (.pi/pi-rules.toml, ~/.pi/agent/pi-rules.toml)",
        "description": "pi-rules' own choices. The project's file overrides the user's key by key.",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "rules": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "scoped": {
                        "description": "Whether pi's block honours rule scopes (paths:, agents:, nested .pi/rules directories).",
                        "type": "boolean",
                        "default": false,
                    },
                },
            },
            "check": {
                "description": "What `pi-rules check` reports, and how seriously.",
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "ignore": ignore,
                    "severity": severity,
                    "per-path": {
                        "description": "Overrides for the files some globs match (relative to the project root); a later entry wins.",
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["paths"],
                            "properties": {
                                "paths": {
                                    "description": "Gitignore-style globs, relative to the project root.",
                                    "type": "array",
                                    "items": {"type": "string", "minLength": 1},
                                },
                                "ignore": ignore,
                                "severity": severity,
                            },
                        },
                    },
                },
            },
            "export": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "targets": {
                        "description": "The targets a bare `pi-rules export` (and `export --check`) writes, as on the command line: a list, or one comma-separated string.",
                        "anyOf": [
                            {
                                "type": "array",
                                "items": {"enum": crate::export::targets::Target::ALL.map(|t| t.name())},
                                "uniqueItems": true,
                            },
                            {"type": "string"},
                        ],
                    },
                    "layers": {
                        "description": "The layers `pi-rules export` writes for other agents.",
                        "type": "array",
                        "items": {"enum": ["package", "user", "project"]},
                        "uniqueItems": true,
                        "default": ["project"],
                    },
                    "settings": {
                        "description": "The settings `pi-rules export` reads, as `--settings`: the project settings file and the schema defaults, or the whole chain.",
                        "enum": ["project", "all"],
                        "default": "project",
                    },
                    "set": {
                        "description": "Settings values `pi-rules export` uses, as `--set KEY=VALUE` each.",
                        "type": "object",
                    },
                },
            },
        },
        "$defs": {
            "code": {
                "description": "A diagnostic code of `pi-rules check`, by id or by name.",
                "type": "string",
                "enum": codes,
            },
            "level": {"enum": Level::NAMES},
        },
    })
}
