//! Settings resolution against the reference's outputs in the conformance data's `layers.jsonl`.
//!
//! Each case is materialised in memory the way `fs_case.py` writes it to disk: the project
//! settings file (and, with `both_project_settings`, the other-named file holding
//! `{"dco": true, "review_loop_enforcement": true}`; `.jsonc` wins), the global settings file and
//! the environment. Every resolved key is compared with the reference's.
//!
//! The data is the repository's `conformance/layers.jsonl.gz`, or `$PI_RULES_CONFORMANCE_DIR`
//! (plain `.jsonl` files); when it cannot be read the test fails.

use pi_rules_core::settings::{resolve, Schema, SettingsFile};
use pi_rules_core::Value;
use std::collections::HashMap;

/// What `fs_case.py` writes as the second project file of a `both_project_settings` case.
const OTHER_PROJECT_FILE: &str = r#"{"dco": true, "review_loop_enforcement": true}"#;

// The core does no I/O; this test reads the conformance data and the environment itself, with
// the binary crate's helper for finding the data (one rule for every conformance test).
#[allow(clippy::disallowed_methods)]
#[path = "../../../tests/it/conformance_data/mod.rs"]
mod conformance_data;

/// The text of the settings file that wins in a case's directory, if any.
fn winning_text(case: &serde_json::Value, which: &str) -> Option<String> {
    let file = case.get(which).filter(|f| !f.is_null())?;
    let name = file.get("name")?.as_str()?;
    let content = file.get("content")?.as_str()?.to_owned();
    let both = which == "project_settings"
        && case
            .get("both_project_settings")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
    if both && !name.ends_with(".jsonc") {
        // The other file is the `.jsonc` one, and it wins.
        return Some(OTHER_PROJECT_FILE.to_owned());
    }
    Some(content)
}

fn json(value: &Value) -> String {
    value.to_json().unwrap_or_else(|| "undefined".to_owned())
}

#[test]
fn settings_match_the_reference() {
    let data = conformance_data::read("layers.jsonl");
    let schema = Schema::embedded();
    let (mut identical, mut total) = (0, 0);
    let mut diffs = Vec::new();
    for (line_no, line) in data.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: serde_json::Value = serde_json::from_str(line).expect("a JSON record");
        let case = &record["case"];
        let Some(expected) = record["expected"]["settings"].as_object() else {
            continue;
        };
        total += 1;

        let file = |which| {
            winning_text(case, which).map_or_else(SettingsFile::missing, |text| {
                SettingsFile::parse(schema, &text)
            })
        };
        let project = file("project_settings");
        let global = file("global_settings");
        let env: HashMap<String, String> = case["env"]
            .as_object()
            .map(|vars| {
                vars.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        let lookup = |name: &str| env.get(name).cloned();
        let resolved = resolve(schema, &project, &global, &lookup);

        let mut case_diffs = Vec::new();
        for (key, want) in expected {
            let want = json(&Value::from(want.clone()));
            let got = json(resolved.resolve_key(key));
            if got != want {
                case_diffs.push(format!("  {key}: expected {want}, got {got}"));
            }
        }
        let got_keys: Vec<&str> = resolved.iter().map(|(k, _)| k).collect();
        let want_keys: Vec<&str> = expected.keys().map(String::as_str).collect();
        if got_keys != want_keys {
            case_diffs.push(format!("  keys: expected {want_keys:?}, got {got_keys:?}"));
        }
        if case_diffs.is_empty() {
            identical += 1;
        } else {
            diffs.push(format!(
                "record {} (project {:?}, global {:?}, env {}):\n{}",
                line_no + 1,
                winning_text(case, "project_settings"),
                winning_text(case, "global_settings"),
                case["env"],
                case_diffs.join("\n")
            ));
        }
    }
    println!("settings: {identical}/{total} identical");
    assert!(total > 0, "no records in the layers data");
    assert!(
        diffs.is_empty(),
        "settings: {identical}/{total} identical; first differences:\n{}",
        diffs.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
}
