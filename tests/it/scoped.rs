//! Scoped rules through the binary: `paths:`, `agents:` and nested `.pi/rules` directories in
//! `assemble --path/--agent`, `explain --path` and `serve`'s `rules_for_paths`.

use crate::common::{code, stderr, stdout, World};
use serde_json::Value;
use std::fs;

/// A project with an API rule, a web rule (list form), a rule for Cursor only, a plain rule, and
/// a nested `packages/api/.pi/rules` with a rule of its own and one replacing the plain rule.
fn world() -> World {
    let w = World::new();
    w.rule(
        "api.md",
        "---\npaths: src/api/**, **/*.sql\n---\nAPI RULE\n",
    );
    w.rule("web.md", "---\npaths:\n  - \"web/**\"\n---\nWEB RULE\n");
    w.rule("cursor.md", "---\nagents: cursor\n---\nCURSOR RULE\n");
    w.rule("plain.md", "PLAIN RULE\n");
    let nested = w.project.join("packages/api/.pi/rules");
    w.write(&nested, "napi.md", "NESTED API RULE\n");
    w.write(&nested, "plain.md", "NESTED PLAIN RULE\n");
    w.write(
        &nested,
        "sql.md",
        "---\npaths: *.sql\n---\nNESTED SQL RULE\n",
    );
    w
}

fn block(w: &World, args: &[&str]) -> String {
    let mut all = vec!["assemble", "--package-dir", "/nonexistent-package"];
    all.extend_from_slice(args);
    let out = w.run(&all);
    assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    stdout(&out)
}

fn has(text: &str, rules: &[&str], missing: &[&str]) {
    for rule in rules {
        assert!(text.contains(rule), "{rule} should be in:\n{text}");
    }
    for rule in missing {
        assert!(!text.contains(rule), "{rule} should not be in:\n{text}");
    }
}

#[test]
fn an_agent_sees_the_rules_of_the_files_it_works_on() {
    let w = world();
    let b = block(&w, &["--agent", "claude", "--path", "src/api/handler.ts"]);
    has(
        &b,
        &["API RULE", "PLAIN RULE"],
        &["WEB RULE", "CURSOR RULE", "NESTED"],
    );
    // Any depth for a glob with no slash; a second file adds its rules.
    let b = block(
        &w,
        &[
            "--agent",
            "claude",
            "--path",
            "db/m/1.sql",
            "--path",
            "web/a.css",
        ],
    );
    has(&b, &["API RULE", "WEB RULE"], &["CURSOR RULE"]);
    // No file: only the rules with no paths.
    let b = block(&w, &["--agent", "claude"]);
    has(
        &b,
        &["PLAIN RULE"],
        &["API RULE", "WEB RULE", "CURSOR RULE"],
    );
    // agents: names the agent.
    let b = block(&w, &["--agent", "Cursor"]);
    has(&b, &["PLAIN RULE", "CURSOR RULE"], &["API RULE"]);
}

#[test]
fn a_nested_directory_brings_its_rules_and_replaces_the_root_rule_in_its_subtree() {
    let w = world();
    let b = block(
        &w,
        &["--agent", "claude", "--path", "packages/api/src/x.ts"],
    );
    has(
        &b,
        &["NESTED API RULE", "NESTED PLAIN RULE"],
        &["PLAIN RULE\n\n", "API RULE\n\nNESTED", "NESTED SQL RULE"],
    );
    assert!(!b.starts_with("PLAIN RULE") && !b.contains("\nPLAIN RULE"));
    // A nested rule's paths are relative to its directory.
    let b = block(
        &w,
        &["--agent", "claude", "--path", "packages/api/db/1.sql"],
    );
    has(&b, &["NESTED SQL RULE", "API RULE"], &[]);
    // A file outside the subtree keeps the root's rule beside the nested one.
    let b = block(
        &w,
        &[
            "--agent",
            "claude",
            "--path",
            "packages/api/x.ts",
            "--path",
            "README.md",
        ],
    );
    has(&b, &["NESTED PLAIN RULE", "\nPLAIN RULE"], &[]);
    // Absolute paths are placed against the project.
    let abs = w.project.join("packages/api/x.ts");
    let b = block(&w, &["--agent", "claude", "--path", abs.to_str().unwrap()]);
    has(&b, &["NESTED API RULE"], &[]);
}

#[test]
fn for_pi_scopes_are_off_by_default_and_the_block_is_pi_configs() {
    let w = world();
    let plain = block(&w, &[]);
    has(
        &plain,
        &["API RULE", "WEB RULE", "CURSOR RULE", "PLAIN RULE"],
        &["NESTED"],
    );
    let out = w.run(&[
        "assemble",
        "--package-dir",
        "/nonexistent-package",
        "--path",
        "src/api/x.ts",
    ]);
    assert_eq!(stdout(&out), plain);
    assert!(
        stderr(&out).contains("scopes are off for pi"),
        "{}",
        stderr(&out)
    );
    // The JSON form has no scope member when scopes were not honoured.
    let json: Value = serde_json::from_str(&block(&w, &["--format", "json"])).unwrap();
    assert!(json.get("scope").is_none());
}

#[test]
fn json_and_explain_say_why_each_scoped_rule_is_in_or_out() {
    let w = world();
    let args = [
        "--agent",
        "claude",
        "--path",
        "packages/api/x.ts",
        "--format",
        "json",
    ];
    let json: Value = serde_json::from_str(&block(&w, &args)).unwrap();
    let scope = &json["scope"];
    assert_eq!(scope["agent"], "claude");
    assert_eq!(scope["paths"][0], "packages/api/x.ts");
    let why = |name: &str, nested: bool| {
        scope["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name && r["nested"] == nested)
            .unwrap_or_else(|| panic!("{name} in {scope}"))
            .clone()
    };
    assert_eq!(why("api.md", false)["why"], "no-glob-matched");
    assert_eq!(why("api.md", false)["applies"], false);
    assert_eq!(why("cursor.md", false)["why"], "not-for-agent");
    assert_eq!(why("napi.md", true)["why"], "in-directory");
    assert_eq!(why("plain.md", false)["why"], "replaced");
    // A replaced root rule with no scope of its own belongs to the project directory.
    assert_eq!(why("plain.md", false)["dir"], w.project.to_str().unwrap());
    assert_eq!(why("sql.md", true)["why"], "no-glob-matched");
    assert_eq!(why("api.md", false)["paths"][1], "**/*.sql");

    let out = w.run(&[
        "explain",
        "--package-dir",
        "/nonexistent-package",
        "--agent",
        "claude",
        "--path",
        "src/api/h.ts",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("scopes for agent claude, files src/api/h.ts"),
        "{text}"
    );
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} in {text}"))
            .to_owned()
    };
    assert!(line("api.md [paths").starts_with("  in "));
    assert!(line("api.md [paths").contains("`src/api/**` matches `src/api/h.ts`"));
    assert!(line("web.md [paths").starts_with("  out"));
    assert!(line("cursor.md").contains("does not name claude"));
}

#[test]
fn an_unknown_agent_is_a_usage_error_with_a_suggestion() {
    let w = world();
    let out = w.run(&["assemble", "--agent", "claud"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("did you mean `claude`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_nested_rules_directory_linked_out_of_the_project_is_not_read() {
    let w = world();
    let outside = w.root().join("outside");
    w.write(&outside, "evil.md", "EVIL RULE\n");
    let dir = w.project.join("packages/web/.pi");
    fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("rules")).unwrap();
    crate::common::git(&w.project, &["init", "-q"]);
    let out = w.run(&[
        "assemble",
        "--package-dir",
        "/nonexistent-package",
        "--agent",
        "claude",
        "--path",
        "packages/web/x.ts",
    ]);
    assert_eq!(code(&out), 0);
    assert!(!stdout(&out).contains("EVIL RULE"));
    assert!(
        stderr(&out).contains("outside the project"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_huge_paths_list_is_bounded() {
    let w = World::new();
    // 15,000 short globs in a file under the 128 KiB limit: the first 1,000 are read.
    let globs: Vec<String> = (0..15_000).map(|i| format!("d{i}/")).collect();
    let text = format!("---\npaths: {}\n---\nMANY\n", globs.join(","));
    assert!(text.len() < 128 * 1024, "{}", text.len());
    w.rule("many.md", &text);
    let started = std::time::Instant::now();
    let b = block(&w, &["--agent", "claude", "--path", "d5/x"]);
    assert!(b.contains("MANY"));
    let b = block(&w, &["--agent", "claude", "--path", "d14999/x"]);
    assert!(!b.contains("MANY"), "globs past the bound are not used");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// Answers of `serve` to `rules_for_paths` requests, one per line of `requests` (params).
fn serve(w: &World, requests: &[Value]) -> Vec<Value> {
    let input: String = requests
        .iter()
        .enumerate()
        .map(|(i, params)| {
            let request = serde_json::json!({
                "jsonrpc": "2.0", "id": i, "method": "rules_for_paths", "params": params,
            });
            format!("{request}\n")
        })
        .collect();
    let out = w.run_stdin(&["serve"], &input);
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn serve_answers_the_rules_that_touched_files_bring_in() {
    let w = world();
    let cwd = w.project.to_str().unwrap();
    let params = |paths: &[&str], agent: &str| {
        serde_json::json!({
            "cwd": cwd, "paths": paths, "agent": agent, "package_dir": "/nonexistent-package",
        })
    };
    let answers = serve(
        &w,
        &[
            params(&["src/api/h.ts", "packages/api/x.ts"], "claude"),
            params(&["src/api/h.ts"], "pi"),
            params(&["web/a.css"], "bob"),
            params(&["README.md"], "claude"),
        ],
    );
    let result = &answers[0]["result"];
    assert_eq!(result["scoped"], true);
    let rules = result["rules"].as_array().unwrap();
    let names: Vec<&str> = rules.iter().map(|r| r["name"].as_str().unwrap()).collect();
    // Only rules a path brought in: not the plain rule, which is in the block already; the
    // nested plain rule replaces the root's for the file in its directory.
    assert_eq!(names, ["api.md", "napi.md", "plain.md"]);
    assert_eq!(rules[0]["matched"]["glob"], "src/api/**");
    assert_eq!(rules[0]["matched"]["path"], "src/api/h.ts");
    assert_eq!(rules[0]["text"], "API RULE\n");
    assert_eq!(rules[0]["dir"], cwd);
    assert!(rules[1]["matched"]["glob"].is_null());
    assert!(rules[2]["path"]
        .as_str()
        .unwrap()
        .ends_with("packages/api/.pi/rules/plain.md"));
    assert!(result["elapsed_us"].as_u64().is_some());
    // pi, with scopes off in this project: nothing is added.
    assert_eq!(answers[1]["result"]["scoped"], false);
    assert_eq!(answers[1]["result"]["rules"], serde_json::json!([]));
    // An unknown agent is an invalid request.
    assert_eq!(answers[2]["error"]["code"], -32602);
    assert_eq!(answers[3]["result"]["rules"], serde_json::json!([]));
}

#[test]
fn serve_sees_a_rule_added_between_requests() {
    let w = world();
    let cwd = w.project.to_str().unwrap().to_owned();
    let params = serde_json::json!({"cwd": cwd, "paths": ["lib/x.rs"], "agent": "codex"});
    let mut child = w
        .command(&["serve"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut ask = |id: u32| {
        use std::io::{BufRead, Write};
        let request = serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": "rules_for_paths", "params": params,
        });
        writeln!(stdin, "{request}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        answer["result"]["rules"].as_array().unwrap().len()
    };
    assert_eq!(ask(1), 0);
    w.rule("rust.md", "---\npaths: lib/**\n---\nRUST RULE\n");
    assert_eq!(ask(2), 1);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn override_copies_the_winning_rule_into_a_nested_directory() {
    let w = world();
    // The project's copy of `plain.md` wins over the package's, so it is the one copied.
    let package = w.package(&[("plain.md", "PACKAGE PLAIN\n"), ("solo.md", "SOLO\n")]);
    fs::create_dir_all(w.project.join("services/web")).unwrap();
    let args = |name: &str, force: bool| {
        let mut a = vec![
            "override",
            name,
            "--dir",
            "services/web",
            "--package-dir",
            package.as_str(),
        ];
        if force {
            a.push("--force");
        }
        a.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        w.run(&refs)
    };
    let out = run(args("plain", false));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let dest = w.project.join("services/web/.pi/rules/plain.md");
    assert_eq!(stdout(&out).trim(), dest.to_str().unwrap());
    assert_eq!(fs::read_to_string(&dest).unwrap(), "PLAIN RULE\n");
    // A rule only the package has is copied from there.
    let out = run(args("solo", false));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let solo = w.project.join("services/web/.pi/rules/solo.md");
    assert_eq!(fs::read_to_string(solo).unwrap(), "SOLO\n");
    // Never over a file without --force.
    fs::write(&dest, "EDITED\n").unwrap();
    let out = run(args("plain", false));
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&dest).unwrap(), "EDITED\n");
    let out = run(args("plain", true));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&dest).unwrap(), "PLAIN RULE\n");
    // The copy is what an agent sees for files there.
    let b = block(&w, &["--agent", "claude", "--path", "services/web/x.ts"]);
    has(&b, &["SOLO"], &[]);
    // A directory outside the project, or one that does not exist, is refused.
    let out = w.run(&["override", "plain", "--dir", "../elsewhere"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let out = w.run(&["override", "plain", "--dir", "no/such/dir"]);
    assert_ne!(code(&out), 0);
    assert!(!w.project.join("no").exists());
}
