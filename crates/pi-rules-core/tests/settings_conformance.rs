//! Settings resolution against the reference's outputs in `../shared/conformance/layers.jsonl`.
//!
//! Each case is materialised in memory the way `fs_case.py` writes it to disk: the project
//! settings file (and, with `both_project_settings`, the other-named file holding
//! `{"dco": true, "review_loop_enforcement": true}`; `.jsonc` wins), the global settings file and
//! the environment. Every resolved key is compared with the reference's.
//!
//! The data is `../shared/conformance/` beside the checkout, or `$PI_RULES_CONFORMANCE_DIR`. When
//! it cannot be read the test fails if `CI` is set (non-empty); otherwise it writes a note straight
//! to standard error (libtest would swallow a `println!`) and passes.

use pi_rules_core::settings::{resolve, Schema, SettingsFile};
use pi_rules_core::Value;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `fs_case.py` writes as the second project file of a `both_project_settings` case.
const OTHER_PROJECT_FILE: &str = r#"{"dco": true, "review_loop_enforcement": true}"#;

// The core does no I/O; these tests read the conformance data and the environment themselves.
#[allow(clippy::disallowed_methods)]
fn data_path() -> PathBuf {
    match std::env::var_os("PI_RULES_CONFORMANCE_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("layers.jsonl"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/conformance/layers.jsonl"),
    }
}

#[allow(clippy::disallowed_methods)]
fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The data at `path`; `None` after a note on `note` when it cannot be read, a panic when `ci`.
#[allow(clippy::disallowed_methods)]
fn load(path: &Path, ci: bool, note: &mut dyn Write) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(err) => {
            assert!(
                !ci,
                "conformance data `{}` cannot be read ({err}) and `CI` is set: put the shared \
                 conformance folder beside the checkout, or name it in `PI_RULES_CONFORMANCE_DIR`",
                path.display()
            );
            // A failed write of a note has nowhere else to go; the test passes anyway.
            let _ = writeln!(
                note,
                "note: conformance data `{}` cannot be read ({err}); settings conformance checked \
                 nothing (in CI it fails)",
                path.display()
            );
            None
        }
    }
}

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
    let path = data_path();
    // Straight to the process's stderr: libtest captures `println!` of a passing test.
    let Some(data) = load(&path, in_ci(), &mut std::io::stderr()) else {
        return;
    };
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
    assert!(total > 0, "no records in {}", path.display());
    assert!(
        diffs.is_empty(),
        "settings: {identical}/{total} identical; first differences:\n{}",
        diffs.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn missing_data_fails_in_ci_and_is_a_note_otherwise() {
    let missing = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/no-such-dir/layers.jsonl");
    let mut note = Vec::new();
    assert_eq!(load(&missing, false, &mut note), None);
    let note = String::from_utf8(note).unwrap();
    assert!(note.contains("checked nothing"), "{note}");
    let in_ci = std::panic::catch_unwind(|| load(&missing, true, &mut Vec::new()));
    let message = in_ci.expect_err("missing data must fail in CI");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("`CI` is set"), "{text}");
}
