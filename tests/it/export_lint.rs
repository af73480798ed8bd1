//! What `pi-rules check` says about the files `pi-rules export` wrote, and about hand-written
//! ones, as each agent reads them (PR902-PR905, and PR1005's agents), through the binary.

use crate::common;

use common::{code, git, stdout, World};
use std::fs;

const RULE: &str = "Run make lint before every commit, and fix what it reports.\n";

/// `pi-rules check --format short` in `dir` (the project when `None`): its lines with `code`.
fn findings(w: &World, dir: Option<&str>, code_id: &str) -> Vec<String> {
    let mut cmd = w.command(&["check", "--format", "short"]);
    if let Some(dir) = dir {
        cmd.current_dir(w.project.join(dir));
    }
    let out = cmd.output().unwrap();
    stdout(&out)
        .lines()
        .filter(|l| l.contains(&format!("[{code_id}]")))
        .map(str::to_owned)
        .collect()
}

/// A project with one rule, exported to `targets` (the package layer left out).
fn exported(targets: &[&str]) -> World {
    let w = World::new();
    let package = w.package(&[("10-base.md", "Package rule: be brief.\n")]);
    w.rule("90-lint.md", RULE);
    let mut args = vec!["export"];
    args.extend_from_slice(targets);
    args.extend_from_slice(&["--package-dir", &package]);
    let out = w.run(&args);
    assert_eq!(code(&out), 0, "{}", common::stderr(&out));
    w
}

#[test]
fn copilot_reads_a_rule_twice_once_the_files_differ_and_through_an_import() {
    let w = World::new();
    w.rule("90-lint.md", RULE);
    // A hand-written line in CLAUDE.md: the files are no longer byte for byte the same.
    w.write(&w.project, "CLAUDE.md", "# Ours\n");
    // Exported one at a time: together, export writes CLAUDE.md as an `@./AGENTS.md` import.
    for target in ["agents-md", "claude"] {
        let out = w.run(&["export", target, "--layers", "project"]);
        assert_eq!(code(&out), 0, "{}", common::stderr(&out));
    }
    let got = findings(&w, None, "PR902");
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].starts_with("CLAUDE.md:4:1: warning[PR902]: Copilot reads the same rule text from `AGENTS.md` and from `CLAUDE.md`"),
        "{}",
        got[0]
    );
    // The pointer form that Copilot follows: still twice, at the import line.
    fs::write(
        w.project.join("CLAUDE.md"),
        "# Ours\n\n<!-- pi-rules:begin -->\n@AGENTS.md\n<!-- pi-rules:end -->\n",
    )
    .unwrap();
    let got = findings(&w, None, "PR902");
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].starts_with("CLAUDE.md:4:1: warning[PR902]: Copilot reads the same rule text from `AGENTS.md` and from `AGENTS.md` (through `@AGENTS.md` in `CLAUDE.md`)"),
        "{}",
        got[0]
    );
    // `@./AGENTS.md`, which Copilot does not follow and Claude Code reads once: nothing.
    fs::write(
        w.project.join("CLAUDE.md"),
        "# Ours\n\n<!-- pi-rules:begin -->\n@./AGENTS.md\n<!-- pi-rules:end -->\n",
    )
    .unwrap();
    assert_eq!(findings(&w, None, "PR902"), Vec::<String>::new());
}

#[test]
fn cline_and_gemini_read_their_files_with_agents_md() {
    // Exported one after the other: together, export leaves Cline's own file out.
    let w = exported(&["agents-md"]);
    let out = w.run(&["export", "cline", "--layers", "project"]);
    assert_eq!(code(&out), 0, "{}", common::stderr(&out));
    let got = findings(&w, None, "PR902");
    assert!(
        got.iter().any(|l| l.contains(
            "Cline reads the same rule text from `.clinerules/pi-rules.md` and from `AGENTS.md`"
        )),
        "{got:#?}"
    );
    // Gemini CLI told to read AGENTS.md as well as GEMINI.md (gemini not exported: an export
    // of it beside agents-md would name AGENTS.md in .gemini/settings.json itself).
    let w = exported(&["agents-md"]);
    fs::write(
        w.project.join("GEMINI.md"),
        format!("# Hand-written\n\n{RULE}"),
    )
    .unwrap();
    assert!(!findings(&w, None, "PR902")
        .iter()
        .any(|l| l.contains("Gemini CLI")));
    w.write(
        &w.project.join(".gemini"),
        "settings.json",
        "{\n  // JSON with comments, as Gemini CLI reads it\n  \"context\": { \"fileName\": [\"AGENTS.md\", \"GEMINI.md\"] }\n}\n",
    );
    let got = findings(&w, None, "PR902");
    assert!(
        got.iter().any(|l| l.starts_with("GEMINI.md:3:1: warning[PR902]: Copilot and Gemini CLI read the same rule text from `AGENTS.md` and from `GEMINI.md`")),
        "{got:#?}"
    );
}

#[test]
fn an_override_or_a_hand_written_claude_md_hides_the_export() {
    let w = exported(&["agents-md"]);
    assert_eq!(findings(&w, None, "PR903"), Vec::<String>::new());
    w.write(&w.project, "AGENTS.override.md", "Local notes.\n");
    w.write(&w.project, "CLAUDE.md", "# Mine\n");
    let got = findings(&w, None, "PR903");
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(got[0].starts_with("AGENTS.override.md:1:1: warning[PR903]: Codex reads `AGENTS.override.md` instead of `AGENTS.md`"), "{}", got[0]);
    assert!(
        got[1].starts_with("CLAUDE.md:1:1: warning[PR903]: Claude Code reads `CLAUDE.md`"),
        "{}",
        got[1]
    );
    // Exporting claude too ends the second.
    let out = w.run(&["export", "claude", "--layers", "project"]);
    assert_eq!(code(&out), 0);
    let got = findings(&w, None, "PR903");
    assert_eq!(got.len(), 1, "{got:#?}");
}

#[test]
fn a_comment_in_a_rule_exported_to_claude_is_reported_on_the_rule() {
    let w = World::new();
    w.rule(
        "90-lint.md",
        "---\nrequires: \n---\nRun make lint.\n   <!-- Never on Fridays. -->\n",
    );
    // Not exported to Claude Code: nothing.
    let out = w.run(&["export", "agents-md", "--layers", "project"]);
    assert_eq!(code(&out), 0);
    assert_eq!(findings(&w, None, "PR904"), Vec::<String>::new());
    let out = w.run(&["export", "claude", "--layers", "project"]);
    assert_eq!(code(&out), 0);
    let got = findings(&w, None, "PR904");
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].starts_with(
            ".pi/rules/90-lint.md:5:4: warning[PR904]: this rule is exported to Claude Code"
        ),
        "{}",
        got[0]
    );
}

#[test]
fn codex_s_chain_is_summed_from_the_repository_root_by_the_walk_or_from_below() {
    let w = World::new();
    git(&w.project, &["init", "-q"]);
    w.rule("90-lint.md", RULE);
    w.write(&w.project, "AGENTS.md", "a".repeat(20_000));
    let api = w.project.join("packages/api");
    w.write(&api, "AGENTS.md", format!("# API\n{}", "b".repeat(15_000)));
    // Each alone is within the limit, the chain is not: once, at the deeper file.
    let got = findings(&w, None, "PR905");
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].starts_with("packages/api/AGENTS.md:2:12763: warning[PR905]: Codex working in `packages/api` joins `AGENTS.md`, `packages/api/AGENTS.md` holding 35006 bytes"),
        "{}",
        got[0]
    );
    // From the nested directory the walk starts there, and the root's file is still counted.
    let got = findings(&w, Some("packages/api"), "PR905");
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].starts_with("AGENTS.md:2:12763: warning[PR905]"),
        "{}",
        got[0]
    );
    // An AGENTS.override.md is what Codex reads instead.
    w.write(&api, "AGENTS.override.md", "Short.\n");
    assert_eq!(findings(&w, None, "PR905"), Vec::<String>::new());
}

#[test]
fn a_glob_an_agent_reads_otherwise_names_the_agents() {
    let w = World::new();
    w.write(&w.project.join("docs/API"), "x.md", "x");
    w.write(&w.project.join("src"), "a.ts", "x");
    w.rule(
        "90-api.md",
        "---\npaths:\n  - docs/API/**\n  - \"src/[!x]*.ts\"\n---\nKeep the API stable.\n",
    );
    let got = findings(&w, None, "PR1005");
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(
        got[0].contains("Claude Code and Copilot in VS Code match globs without regard to case"),
        "{}",
        got[0]
    );
    assert!(
        got[1].contains("negated class, which Claude Code"),
        "{}",
        got[1]
    );
}
