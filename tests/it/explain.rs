//! `pi-rules explain` on hostile layers: output and memory stay linear in the input, values are
//! printed in full once, and nothing from a file or a setting reaches the terminal unescaped.

use serde_json::Value;
use std::fs;

use crate::common;

use common::{file_entry, World};

/// `explain` in a world, with extra environment variables.
trait Explain {
    fn text(&self, env: &[(&str, &str)]) -> String;
    fn json(&self, env: &[(&str, &str)]) -> (Value, usize);
}

impl Explain for World {
    fn text(&self, env: &[(&str, &str)]) -> String {
        let output = self.run_env(&["explain"], env);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    fn json(&self, env: &[(&str, &str)]) -> (Value, usize) {
        let output = self.run_env(&["explain", "--format", "json"], env);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        // The form is written by hand: it must be the bytes `serde_json` writes for the same
        // data (compact, keys in order, the same escapes), and one line.
        let mut expected = serde_json::to_string(&report).unwrap();
        expected.push('\n');
        assert!(
            expected.as_bytes() == output.stdout,
            "not serde_json's bytes"
        );
        (report, output.stdout.len())
    }
}

fn project_file<'a>(report: &'a Value, name: &str) -> &'a Value {
    file_entry(report, name).unwrap_or_else(|| panic!("no file {name} in the report"))
}

#[test]
fn deep_nesting_gives_output_linear_in_the_input() {
    let world = World::new();
    let depth = 5000;
    let text = format!("{}x{}", "{{IF:dco}}".repeat(depth), "{{/IF}}".repeat(depth));
    world.rule("90-deep.md", &text);
    let tree = world.text(&[("PI_DCO", "1")]);
    assert!(tree.len() < 40 * text.len(), "{} bytes of text", tree.len());
    let deepest = tree.lines().find(|l| l.contains("[depth 4999]")).unwrap();
    assert!(deepest.len() < 200, "indentation is capped: {deepest:?}");
    let (report, bytes) = world.json(&[("PI_DCO", "1")]);
    assert!(bytes < 80 * text.len(), "{bytes} bytes of JSON");
    let blocks = project_file(&report, "90-deep.md")["blocks"]
        .as_array()
        .unwrap();
    assert_eq!(blocks.len(), depth);
    assert_eq!(blocks[depth - 1]["depth"], depth - 1);
    assert!(blocks.iter().all(|b| b["state"] == "kept"));
}

#[test]
fn a_long_value_is_printed_in_full_once() {
    let world = World::new();
    let value = "v".repeat(1_000_000);
    world.rule("90-many.md", "{{IF:image_model}}x{{/IF}}\n".repeat(400));
    let settings = format!("{{\"image_model\": \"{value}\"}}");
    world.global_settings("pi-config-settings.json", &settings);
    let env = [];
    let tree = world.text(&env);
    assert!(tree.len() < 200_000, "{} bytes of text", tree.len());
    assert!(
        tree.contains(&format!("({} bytes)", value.len() + 2)),
        "the length is shown"
    );
    let (report, bytes) = world.json(&env);
    assert!(bytes < value.len() + 300_000, "{bytes} bytes of JSON");
    assert_eq!(report["settings"]["image_model"]["value"], value.as_str());
    let source = report["settings"]["image_model"]["source"]
        .as_str()
        .unwrap();
    assert!(source.ends_with("pi-config-settings.json"), "{source}");
}

#[test]
fn names_conditions_and_values_are_escaped_in_the_text_form() {
    let world = World::new();
    world.rule("90-x\x1b]0;OWNED\x07\x1b[2J.md", "Rule.\n");
    world.rule(
        "91-y\n└─ 00-orchestrator-core.md  included.md",
        "{{IF:a\x1b[31m\nb}}x{{/IF}}{{IF:commit_trailer}}c{{/IF}}",
    );
    let tree = world.text(&[("PI_COMMIT_TRAILER", "Signed\x1b[2J-off")]);
    assert!(!tree.contains('\x1b') && !tree.contains('\x07'), "{tree:?}");
    assert!(tree.contains("90-x\\x1b]0;OWNED\\x07\\x1b[2J.md"), "{tree}");
    assert!(
        tree.contains("91-y\\n└─ 00-orchestrator-core.md  included.md"),
        "{tree}"
    );
    assert!(
        !tree
            .lines()
            .any(|l| l.starts_with("└─ 00-orchestrator-core.md")),
        "no forged line: {tree}"
    );
    assert!(tree.contains("{{IF:a\\x1b[31m\\nb}}"), "{tree}");
    // Values are shown as JSON, whose escapes already keep controls out.
    assert!(tree.contains("\"Signed\\u001b[2J-off\""), "{tree}");
    // JSON stays plain JSON.
    let (report, _) = world.json(&[]);
    assert!(report["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["name"] == "90-x\x1b]0;OWNED\x07\x1b[2J.md"));
}

#[test]
fn totals_match_the_block_and_settings_files_are_listed() {
    let world = World::new();
    world.rule("90-x.md", "Project rule.\n");
    fs::write(
        world.home.join(".pi/pi-config-settings.jsonc"),
        "{\"dco\": 3}",
    )
    .unwrap();
    let (report, _) = world.json(&[]);
    let block = report["block"].as_str().unwrap();
    assert_eq!(report["totals"]["bytes"], block.len());
    assert_eq!(report["totals"]["tokens"], block.len().div_ceil(4));
    let files = report["settings_files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0]["scope"], "project");
    assert_eq!(files[0]["state"], "missing");
    assert_eq!(files[1]["scope"], "global");
    assert_eq!(files[1]["state"], "read; 1 value ignored");
    let tree = world.text(&[]);
    assert!(tree.contains("settings global"), "{tree}");
    assert!(
        tree.contains(&format!(
            "total: 13 of 13 files included, {} bytes",
            block.len()
        )) || tree.contains(&format!("{} bytes", block.len())),
        "{tree}"
    );
}

#[test]
fn coms_active_is_labelled_as_a_host_flag_and_a_feature() {
    let world = World::new();
    world.rule(
        "90-x.md",
        "{{IF:coms_active==true}}a{{/IF}}{{IF:coms_active}}b{{/IF}}",
    );
    let tree = world.text(&[]);
    assert!(tree.contains("--coms-active was not given"), "{tree}");
    assert!(tree.contains("`coms_active` is a feature"), "{tree}");
    assert!(
        !tree.contains("neither a settings key nor a feature"),
        "{tree}"
    );
    let output = world.run(&["explain", "--coms-active"]);
    let tree = String::from_utf8(output.stdout).unwrap();
    assert!(tree.contains("from the host: --coms-active"), "{tree}");
    assert!(!tree.contains("was not given"), "{tree}");
}

#[test]
fn the_settings_shown_are_the_keys_that_gates_and_blocks_read() {
    let world = World::new();
    let package = world.package(&[("10-p.md", "a{{IF:dco}}b{{/IF}}")]);
    world.rule(
        "90-gated.md",
        "---\nrequires_setting: use_worktrees\n---\nz",
    );
    world.rule(
        "91-blocks.md",
        "{{IF:log_rules}}y{{/IF}}{{IFNOT:dco}}w{{/IFNOT}}{{IF:coms_active}}v{{/IF}}".repeat(100),
    );
    world.rule("92-unknown.md", "{{IF:no_such_key}}u{{/IF}}");
    let output = world.run(&["explain", "--format", "json", "--package-dir", &package]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut shown: Vec<&str> = report["settings"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    shown.sort_unstable();
    // A feature and an unknown key are not settings; the placeholder's key always is.
    assert_eq!(
        shown,
        [
            "dco",
            "log_rules",
            "review_loop_max_cycles",
            "use_worktrees"
        ]
    );
}
