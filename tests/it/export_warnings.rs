//! What `pi-rules export` says, as it exports (and with `--check` and `--dry-run`, of the files
//! as they would be), about the files agents read: a rule read twice (PR902), an export hidden
//! by another file (PR903), a comment Claude Code strips (PR904), Codex's chain limit (PR905);
//! and nothing at all on the common case.

use crate::common;

use common::{code, stderr, stdout, World};
use std::fs;

const RULE: &str = "Run make lint before every commit, and fix what it reports.\n";

/// `pi-rules export ARGS --layers project`.
fn export(w: &World, args: &[&str]) -> std::process::Output {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--layers", "project"]);
    w.run(&all)
}

/// The lines of `out`'s stderr that are warnings with `code_id`.
fn warned(out: &std::process::Output, code_id: &str) -> Vec<String> {
    stderr(out)
        .lines()
        .filter(|l| l.starts_with(&format!("pi-rules: warning[{code_id}]: ")))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_plain_export_of_one_scoped_rule_to_claude_prints_no_warning() {
    let w = World::new();
    w.rule(
        "50-api.md",
        "---\npaths: src/api/**\n---\nValidate every request body.\n",
    );
    for args in [
        &["claude"][..],
        &["claude", "--check"],
        &["claude", "--dry-run"],
    ] {
        let out = export(&w, args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
    // The scoped file was written: the export did something, and said nothing of case.
    let written = fs::read_to_string(w.project.join(".claude/rules/pi-rules/50-api.md")).unwrap();
    assert!(written.contains("/src/api/**"), "{written}");
    // The same rule to AGENTS.md alone, whose subsection is headed with the glob: quiet too.
    let out = export(&w, &["agents-md"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_hand_written_copy_of_an_exported_rule_is_a_warning_and_fails_check() {
    let w = World::new();
    w.rule("90-lint.md", RULE);
    // A hand-written AGENTS.md that holds the rule already: Copilot reads it with CLAUDE.md.
    w.write(&w.project, "AGENTS.md", format!("# Notes\n\n{RULE}"));
    // --dry-run says it of the files as they would be, before anything is written.
    let out = export(&w, &["claude", "--dry-run"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let got = warned(&out, "PR902");
    assert_eq!(got.len(), 1, "{}", stderr(&out));
    assert!(
        got[0].contains("Copilot reads the same rule text from")
            && got[0].contains("`AGENTS.md`")
            && got[0].contains("`CLAUDE.md`"),
        "{}",
        got[0]
    );
    let out = export(&w, &["claude"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(warned(&out, "PR902").len(), 1, "{}", stderr(&out));
    // The files are fresh, and yet the check fails: the copy must be seen in CI.
    let out = export(&w, &["claude", "--check"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "no file is stale");
    assert_eq!(warned(&out, "PR902").len(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("would reach an agent twice"),
        "{}",
        stderr(&out)
    );
    // The copy taken out of the hand-written file: quiet, and the check passes.
    fs::write(w.project.join("AGENTS.md"), "# Notes\n").unwrap();
    let out = export(&w, &["claude", "--check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_copy_between_two_hand_written_files_is_left_to_check() {
    let w = World::new();
    w.rule("90-lint.md", "Keep functions short.\n");
    // Copilot reads both, but neither is a file this export writes: `check` says so, not
    // `export`.
    let other = "Every public function has a doc comment that says what it returns.\n";
    w.write(&w.project.join(".github"), "copilot-instructions.md", other);
    w.write(&w.project, "GEMINI.md", format!("# Ours\n\n{other}"));
    let out = export(&w, &["cursor"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let out = export(&w, &["cursor", "--check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn an_override_or_a_hand_written_claude_md_beside_an_exported_agents_md_is_warned_about() {
    let w = World::new();
    w.rule("90-lint.md", RULE);
    w.write(&w.project, "AGENTS.override.md", "# Local\n");
    let out = export(&w, &["agents-md", "--dry-run"]);
    let got = warned(&out, "PR903");
    assert_eq!(got.len(), 1, "{}", stderr(&out));
    assert!(
        got[0].starts_with("pi-rules: warning[PR903]: AGENTS.override.md: Codex reads `AGENTS.override.md` instead of `AGENTS.md`"),
        "{}",
        got[0]
    );
    fs::remove_file(w.project.join("AGENTS.override.md")).unwrap();
    // Claude Code reads a CLAUDE.md it finds, and not AGENTS.md beside it.
    w.write(&w.project, "CLAUDE.md", "# Ours\n\nUse tabs.\n");
    let out = export(&w, &["agents-md"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let got = warned(&out, "PR903");
    assert_eq!(got.len(), 1, "{}", stderr(&out));
    assert!(
        got[0].contains("Claude Code reads `CLAUDE.md`"),
        "{}",
        got[0]
    );
    // A warning, not a failure of the check.
    let out = export(&w, &["agents-md", "--check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(warned(&out, "PR903").len(), 1, "{}", stderr(&out));
    // With claude exported too, CLAUDE.md holds the import: nothing hidden.
    let out = export(&w, &["agents-md", "claude"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn codex_s_limit_is_warned_about_per_chain_not_per_file() {
    let w = World::new();
    // Two files of 20 KB each: each within Codex's 32 KiB, the chain root → packages/api not.
    let big = |word: &str| {
        (0..400)
            .map(|i| format!("Rule {word} {i}: keep this line as it is written here.\n\n"))
            .collect::<String>()
    };
    w.rule("90-root.md", big("root"));
    let nested = w.project.join("packages/api/.pi/rules");
    fs::create_dir_all(&nested).unwrap();
    fs::write(nested.join("50-api.md"), big("api")).unwrap();
    let out = export(&w, &["agents-md"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(fs::metadata(w.project.join("packages/api/AGENTS.md")).is_ok());
    assert_eq!(warned(&out, "PR901"), Vec::<String>::new());
    let got = warned(&out, "PR905");
    assert_eq!(got.len(), 1, "{}", stderr(&out));
    assert!(
        got[0].starts_with("pi-rules: warning[PR905]: packages/api/AGENTS.md:")
            && got[0].contains(
                "Codex working in `packages/api` joins `AGENTS.md`, `packages/api/AGENTS.md`"
            ),
        "{}",
        got[0]
    );
}

#[test]
fn a_comment_in_a_rule_exported_to_claude_is_warned_about_and_not_for_other_agents() {
    let w = World::new();
    w.rule(
        "90-lint.md",
        "Run make lint.\n<!-- Never push to main directly. -->\n",
    );
    let out = export(&w, &["agents-md"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(warned(&out, "PR904"), Vec::<String>::new());
    let out = export(&w, &["claude", "--dry-run"]);
    let got = warned(&out, "PR904");
    assert_eq!(got.len(), 1, "{}", stderr(&out));
    assert!(
        got[0].starts_with("pi-rules: warning[PR904]: CLAUDE.md:")
            && got[0].contains("Never push to main directly."),
        "{}",
        got[0]
    );
}

#[test]
fn json_output_holds_the_warnings_with_code_path_line_and_column() {
    let w = World::new();
    w.rule("90-lint.md", RULE);
    w.write(&w.project, "AGENTS.md", format!("# Notes\n\n{RULE}"));
    w.write(&w.project, "AGENTS.override.md", "# Local\n");
    for check in [false, true] {
        let mut args = vec!["claude", "--format", "json"];
        if check {
            args.push("--check");
        }
        let out = export(&w, &args);
        let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let warnings = json["warnings"].as_array().unwrap();
        let copy = warnings
            .iter()
            .find(|w| w["code"] == "PR902")
            .unwrap_or_else(|| panic!("{warnings:#?}"));
        assert!(copy["path"].is_string(), "{copy}");
        assert!(copy["line"].as_u64().unwrap() >= 1, "{copy}");
        assert!(copy["column"].as_u64().unwrap() >= 1, "{copy}");
        assert!(
            copy["message"].as_str().unwrap().contains("Copilot"),
            "{copy}"
        );
        assert_eq!(code(&out), if check { 1 } else { 0 }, "{}", stderr(&out));
    }
}
