//! `check` on rule sets written as people write them (issue 23 §2): unprefixed project and user
//! names and a final line break in every file are no finding, and `check --strict` passes on
//! them; what really goes wrong (keys other agents' formats use, YAML list lines, HTML comments,
//! names that load before the package rules, prefixes outside their range) is still reported.
//!
//! The rule sets are the fixtures `clean_project_*`, `clean_user_and_project` and `real_*` under
//! `tests/fixtures/check/` (same layout as the others there), run through the binary against the
//! embedded package rules, as a user runs it.

use crate::common;

use common::{code, stdout, World};
use serde_json::Value;
use std::fs;
use std::path::Path;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/check")
        .join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    let Ok(entries) = fs::read_dir(from) else {
        return;
    };
    fs::create_dir_all(to).unwrap();
    for entry in entries {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// A machine with fixture `name`'s layers and settings files in place, and the embedded
/// package rules.
fn world(name: &str) -> World {
    let world = World::new();
    let src = fixture(name);
    copy_dir(&src.join("project"), &world.project_rules());
    copy_dir(&src.join("user"), &world.user_rules());
    copy_dir(&src.join("project-settings"), &world.project.join(".pi"));
    copy_dir(&src.join("global-settings"), &world.home.join(".pi"));
    world
}

/// `check --strict --format json`: exit code and `(code, file name)` of every finding.
fn findings(world: &World, strict: bool) -> (i32, Vec<(String, String)>) {
    let mut args = vec!["check", "--format", "json"];
    if strict {
        args.push("--strict");
    }
    let out = world.run(&args);
    let report: Value = serde_json::from_str(&stdout(&out)).expect("a JSON report");
    let found = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            let path = d["path"].as_str().unwrap_or_default();
            let name = Path::new(path).file_name().unwrap_or_default();
            (
                d["code"].as_str().unwrap_or_default().to_owned(),
                name.to_string_lossy().into_owned(),
            )
        })
        .collect();
    (code(&out), found)
}

/// The rule files of a fixture, by layer directory.
fn rule_files(name: &str) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for layer in ["project", "user"] {
        let Ok(entries) = fs::read_dir(fixture(name).join(layer)) else {
            continue;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            files.push((name, fs::read(entry.path()).unwrap()));
        }
    }
    files.sort();
    files
}

const PLAIN: &[&str] = &[
    "clean_project_webapp",
    "clean_project_service",
    "clean_user_and_project",
];

#[test]
fn plain_rule_sets_have_no_findings_and_pass_strict() {
    for name in PLAIN {
        // What the fixtures are meant to show: names without a prefix, and files that end with
        // exactly one line break, as editors write them.
        let files = rule_files(name);
        assert!(files.len() >= 3, "{name}");
        assert!(
            files
                .iter()
                .any(|(n, _)| n.starts_with(|c: char| c.is_ascii_lowercase())),
            "{name}: a name without a prefix"
        );
        for (file, bytes) in &files {
            assert!(
                bytes.ends_with(b"\n") && !bytes.ends_with(b"\n\n"),
                "{name}/{file} ends with one line break"
            );
        }
        let world = world(name);
        assert_eq!(findings(&world, true), (0, vec![]), "{name}");
        let out = world.run(&["check", "--strict"]);
        assert_eq!(code(&out), 0, "{name}");
        assert!(
            stdout(&out).starts_with("no problems found"),
            "{name}: {}",
            stdout(&out)
        );
    }
}

#[test]
fn the_rules_check_accepts_are_the_ones_assemble_loads_after_the_package() {
    let world = world("clean_project_webapp");
    let out = world.run(&["assemble"]);
    assert_eq!(code(&out), 0);
    let block = stdout(&out);
    // The unprefixed project rules come after every package rule, in name order.
    let at = |needle: &str| block.find(needle).unwrap_or_else(|| panic!("{needle}"));
    let last_package = at("\n# Task Tracking\n");
    assert!(last_package < at("\n# Commits\n"));
    assert!(at("\n# Commits\n") < at("\n# Deploying\n"));
    assert!(at("\n# Deploying\n") < at("\n## Tests\n"));
    assert!(at("\n## Tests\n") < at("\n# Workflow\n"));
    // A final line break and the join make two blank lines: the format's, not a finding.
    assert!(block.contains("`secrets/`.\n\n\n# Deploying"), "{block}");
    assert!(!block.contains("\n\n\n\n"), "{block}");
}

#[test]
fn rules_ported_from_other_agents_keep_the_findings_that_matter() {
    let world = world("real_cursor_port");
    let expected: Vec<(String, String)> = [
        // Claude Code's `paths:` is a scope of pi-rules' own: with scopes off, it has no effect
        // in pi yet, and its globs match no file of the fixture.
        ("PR1007", "api.md"),
        ("PR1004", "api.md"),
        ("PR1004", "api.md"),
        ("PR302", "docs.md"),
        ("PR512", "docs.md"),
        ("PR303", "frontend.md"),
        ("PR302", "frontend.md"),
        ("PR302", "frontend.md"),
    ]
    .iter()
    .map(|(c, f)| ((*c).to_owned(), (*f).to_owned()))
    .collect();
    // Warnings fail only `--strict`; nothing here is an error.
    assert_eq!(findings(&world, false), (0, expected.clone()));
    assert_eq!(findings(&world, true), (1, expected));
    // The keys other formats scope rules with are named as such.
    let out = world.run(&["check", "--format", "short"]);
    for key in ["globs", "alwaysApply", "applyTo"] {
        assert!(
            stdout(&out).contains(&format!(
                "frontmatter key `{key}` does not scope this rule: it is in every prompt"
            )),
            "{key}: {}",
            stdout(&out)
        );
    }
    assert!(stdout(&out).contains("`paths:` has no effect in pi yet"));
}

#[test]
fn names_that_break_the_order_are_still_reported() {
    let world = world("real_misordered_names");
    let (status, found) = findings(&world, true);
    assert_eq!(status, 1);
    let expected: Vec<(String, String)> = [
        ("PR405", "7-tone.md"),
        ("PR404", "7-tone.md"),
        ("PR406", "7-tone.md"),
        ("PR404", "-setup.md"),
        ("PR404", "05-deploy.md"),
        ("PR404", "_overview.md"),
    ]
    .iter()
    .map(|(c, f)| ((*c).to_owned(), (*f).to_owned()))
    .collect();
    assert_eq!(found, expected);
    let out = world.run(&["check", "--format", "short"]);
    assert!(stdout(&out).contains(
        "`_overview.md` has no numeric prefix and loads before `00-orchestrator-core.md` and 12 \
         other rules of the layers below"
    ));
}

#[test]
fn a_text_that_ends_with_a_blank_line_is_still_a_blank_run() {
    let world = World::new();
    let dir = world.project_layer();
    world.write(&dir, "commit.md", "# Commits\n\nSign every commit.\n");
    world.write(&dir, "deploy.md", "# Deploy\n\nDeploy from CI only.\n\n");
    world.write(
        &dir,
        "review.md",
        "# Review\n\n{{IF:dco}}Check the sign-off.{{/IF}}\n\nRead the diff.\n",
    );
    let (status, found) = findings(&world, true);
    // Infos do not fail `--strict`.
    assert_eq!(status, 0);
    assert_eq!(
        found,
        [("PR804", "deploy.md"), ("PR804", "review.md")]
            .iter()
            .map(|(c, f)| ((*c).to_owned(), (*f).to_owned()))
            .collect::<Vec<_>>()
    );
}

/// A blank line between the frontmatter's closing fence and the first heading, or a blank first
/// line, is how people write rules (issue 33: all 16 blank runs left on seven real projects'
/// rule sets): no finding, though the text then starts with a line break.
#[test]
fn a_blank_line_before_the_first_line_of_text_is_no_blank_run() {
    let world = World::new();
    let dir = world.project_layer();
    world.write(
        &dir,
        "commit.md",
        "---\nrequires_setting: dco\n---\n\n# Commits\n\nSign every commit.\n",
    );
    world.write(&dir, "review.md", "\n# Review\n\nRead the diff.\n");
    world.write(
        &dir,
        "tests.md",
        "---\nrequires_setting: commit_trailer\n---\n\n{{IF:dco}}Signed.{{/IF}}\n\n# Tests\n",
    );
    let (status, found) = findings(&world, true);
    assert_eq!(status, 0);
    assert_eq!(found, Vec::<(String, String)>::new());
}
