//! Black-box tests of the `pi-rules` binary: exit codes, stdout and stderr, on temporary trees.

use serde_json::Value;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{file_entry, stderr, stdout, World};

/// The assembly as JSON, from a world.
trait Assemble {
    fn assemble_json(&self, extra: &[&str]) -> Value;

    fn block(&self, extra: &[&str]) -> String {
        self.assemble_json(extra)["block"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

impl Assemble for World {
    fn assemble_json(&self, extra: &[&str]) -> Value {
        let mut args = vec!["assemble", "--format", "json"];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn status_of<'a>(report: &'a Value, name: &str) -> &'a str {
    file_entry(report, name).unwrap_or_else(|| panic!("no file {name} in {report}"))["status"]
        .as_str()
        .unwrap()
}

/// No line between two table rows is blank.
fn assert_tables_tight(block: &str) {
    let lines: Vec<&str> = block.lines().collect();
    for w in lines.windows(3) {
        let blank = w[1].trim_matches([' ', '\t']).is_empty();
        assert!(
            !(w[0].contains('|') && blank && w[2].starts_with('|')),
            "blank line between table rows:\n{}\n{}\n{}",
            w[0],
            w[1],
            w[2]
        );
    }
}

#[test]
fn embedded_package_rules_assemble_cleanly_with_defaults() {
    let world = World::new();
    let out = world.run(&["assemble"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.starts_with("# Orchestrator Core Contract"), "{text}");
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    for marker in ["{{IF", "{{/IF", "{{REVIEW_LOOP_MAX_CYCLES}}", "{{SETTINGS"] {
        assert!(!text.contains(marker), "{marker} leaked");
    }
    assert_tables_tight(&text);
    let report = world.assemble_json(&[]);
    assert_eq!(report["block"].as_str().unwrap(), format!("\n\n{text}"));
    assert_eq!(report["warnings"], serde_json::json!([]));
    assert_eq!(status_of(&report, "55-coms-protocol.md"), "gated");
    assert_eq!(status_of(&report, "00-orchestrator-core.md"), "included");
    assert_eq!(report["stats"]["files_read"], 12);
    assert_eq!(report["stats"]["block_bytes"], text.len() + 2);
    assert!(report["stats"]["bytes_read"].as_u64().unwrap() > text.len() as u64);
}

/// (setting or feature, how to turn it on, text only present when on, text only present when off)
#[test]
fn package_rules_follow_their_gates() {
    type Toggle = fn(World) -> (World, Vec<&'static str>);
    let cases: &[(&str, Toggle, &str, &str)] = &[
        (
            "review_loop_enforcement",
            |w| (w.env("PI_REVIEW_LOOP_ENFORCEMENT", "true"), vec![]),
            "# Code Review Loop (mandatory)",
            "# Code Review (advisory)",
        ),
        (
            "orchestrator_edit_write_block",
            |w| {
                w.global_settings(
                    "pi-config-settings.json",
                    r#"{"orchestrator_edit_write_block": true}"#,
                );
                (w, vec![])
            },
            "## Checklist before any implementation",
            "## Small edits",
        ),
        (
            "external_ai_agents",
            |w| (w.env("ACPX_AGENTS", "claude, codex"), vec![]),
            "## External agents",
            "| Debugging | `debugger` | reproducing",
        ),
        (
            "coms_active",
            |w| (w, vec!["--coms-active"]),
            "# Peer Messaging (coms)",
            "Use the `worker` agent",
        ),
        (
            "use_worktrees",
            |w| (w.env("PI_USE_WORKTREES", "1"), vec![]),
            "### Worktrees are mandatory",
            "### Branch in the checkout",
        ),
        (
            "dco",
            |w| (w.env("PI_DCO", "yes"), vec![]),
            "**DCO sign-off is required.**",
            "Do not add `Signed-off-by`",
        ),
    ];
    for (name, toggle, on_text, off_text) in cases {
        let off = World::new().block(&[]);
        let (world, flags) = toggle(World::new());
        let on = world.block(&flags);
        assert!(on.contains(on_text), "{name} on: missing {on_text:?}");
        assert!(!off.contains(on_text), "{name} off: has {on_text:?}");
        if *name != "coms_active" {
            assert!(off.contains(off_text), "{name} off: missing {off_text:?}");
            assert!(!on.contains(off_text), "{name} on: has {off_text:?}");
        }
        for block in [&on, &off] {
            assert!(!block.contains("{{"), "{name}: marker text leaked");
            assert_tables_tight(block);
        }
    }
}

#[test]
fn review_loop_max_cycles_fills_the_placeholder() {
    let world = World::new()
        .env("PI_REVIEW_LOOP_ENFORCEMENT", "true")
        .env("PI_REVIEW_LOOP_MAX_CYCLES", "7");
    let block = world.block(&[]);
    assert!(block.contains("The budget is **7** cycles"), "{block}");
}

#[test]
fn project_override_replaces_and_warns_on_stderr() {
    let world = World::new();
    fs::write(
        world.project_layer().join("40-critical-rules.md"),
        "mine {{IF:typo}}gone{{/IF}}",
    )
    .unwrap();
    let out = world.run(&["assemble"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("mine "));
    assert!(!stdout(&out).contains("Critical Rules"));
    assert_eq!(
        stderr(&out),
        "rule assembly: unknown setting key in conditional: typo\n"
    );
    let report = world.assemble_json(&[]);
    let file = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "40-critical-rules.md")
        .unwrap();
    assert_eq!(file["layer"], "project");
    assert_eq!(file["shadowed"][0], "<embedded>/40-critical-rules.md");
}

fn finishes_quickly(world: &World) -> Value {
    let started = Instant::now();
    let report = world.assemble_json(&[]);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    report
}

#[test]
fn fifo_link_is_skipped_without_blocking() {
    let world = World::new();
    let fifo = world.home.join("pipe");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    symlink(&fifo, world.project_layer().join("30-prompt-templates.md")).unwrap();
    symlink(&fifo, world.project_layer().join("95-pipe.md")).unwrap();
    let report = finishes_quickly(&world);
    assert_eq!(
        status_of(&report, "30-prompt-templates.md"),
        "unreadable-fell-back"
    );
    assert_eq!(status_of(&report, "95-pipe.md"), "unreadable");
    assert!(report["block"]
        .as_str()
        .unwrap()
        .contains("# Prompt Templates"));
}

#[test]
fn dev_zero_link_is_oversized_and_hides_the_package_rule() {
    let world = World::new();
    symlink("/dev/zero", world.project_layer().join("35-memory.md")).unwrap();
    let report = finishes_quickly(&world);
    assert_eq!(status_of(&report, "35-memory.md"), "oversized");
    assert!(!report["block"].as_str().unwrap().contains("memory_search"));
}

#[test]
fn dev_null_link_masks_the_package_rule() {
    let world = World::new();
    symlink("/dev/null", world.project_layer().join("35-memory.md")).unwrap();
    let report = finishes_quickly(&world);
    assert_eq!(status_of(&report, "35-memory.md"), "masked");
    assert!(!report["block"].as_str().unwrap().contains("memory_search"));
}

#[test]
fn link_loop_falls_back_to_the_lower_layer() {
    let world = World::new();
    let dir = world.project_layer();
    symlink(dir.join("b.md"), dir.join("45-file-preview.md")).unwrap();
    symlink(dir.join("45-file-preview.md"), dir.join("b.md")).unwrap();
    let report = finishes_quickly(&world);
    assert_eq!(
        status_of(&report, "45-file-preview.md"),
        "unreadable-fell-back"
    );
    assert_eq!(status_of(&report, "b.md"), "unreadable");
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let world = World::new();
    fs::write(
        world.project_layer().join("99-bytes.md"),
        b"ok \xff\xfe end",
    )
    .unwrap();
    let block = world.block(&[]);
    assert!(block.ends_with("ok \u{fffd}\u{fffd} end"), "{block:?}");
}

#[test]
fn directory_named_like_a_rule_is_ignored() {
    let world = World::new();
    fs::create_dir_all(world.project_layer().join("x.md")).unwrap();
    fs::write(world.project_layer().join("notes.MD"), "ignored").unwrap();
    let report = world.assemble_json(&[]);
    let names: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"x.md") && !names.contains(&"notes.MD"));
    assert_eq!(names.len(), 12);
}

/// (settings file name, content) that must leave every key at its default.
#[test]
fn broken_settings_files_are_ignored_whole() {
    let cases = [
        ("pi-config-settings.json", r#"{"dco": true,}"#),
        ("pi-config-settings.json", r#"["dco"]"#),
        ("pi-config-settings.jsonc", "{\"dco\": true /* unclosed"),
        ("pi-config-settings.json", "not json"),
    ];
    for (name, content) in cases {
        let world = World::new();
        world.global_settings(name, content);
        let out = world.run(&["settings", "dco", "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{content}");
        assert_eq!(stdout(&out), "{\"dco\":false}\n", "{content}");
    }
}

#[test]
fn unreadable_settings_file_is_ignored() {
    let world = World::new();
    // A directory where the .jsonc should be: it exists (so the .json is not used) but cannot be
    // read, which works even for root, unlike file permissions.
    fs::create_dir_all(world.home.join(".pi/pi-config-settings.jsonc")).unwrap();
    world.global_settings("pi-config-settings.json", r#"{"dco": true}"#);
    let out = world.run(&["settings", "dco", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "{\"dco\":false}\n");
}

#[test]
fn settings_table_shows_sources() {
    let world = World::new().env("PI_DCO", "on");
    world.global_settings(
        "pi-config-settings.jsonc",
        "// comment\n{\"use_worktrees\": true}",
    );
    let out = world.run(&[
        "settings",
        "dco",
        "use_worktrees",
        "review_loop_max_cycles",
        "no_such_key",
    ]);
    // Every key asked for is printed, and the unknown one makes it a usage error.
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    let row = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no row {key} in\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("dco"), ["dco", "true", "env", "PI_DCO"]);
    let global = world.home.join(".pi/pi-config-settings.jsonc");
    assert_eq!(
        row("use_worktrees"),
        ["use_worktrees", "true", global.to_str().unwrap()]
    );
    assert_eq!(
        row("review_loop_max_cycles"),
        ["review_loop_max_cycles", "3", "default"]
    );
    assert_eq!(
        row("no_such_key"),
        ["no_such_key", "false", "not", "a", "settings", "key"]
    );
    assert!(stderr(&out).contains("`no_such_key` is not a settings key"));
}

#[test]
fn project_settings_come_from_the_repository_root() {
    let world = World::new();
    let status = Command::new("git")
        .args(["init", "-q"])
        .arg(&world.project)
        .status()
        .unwrap();
    assert!(status.success());
    fs::create_dir_all(world.project.join(".pi")).unwrap();
    fs::write(
        world.project.join(".pi/pi-config-settings.json"),
        r#"{"dco": true}"#,
    )
    .unwrap();
    let sub = world.project.join("deep/sub");
    fs::create_dir_all(&sub).unwrap();
    let out = world.run(&[
        "settings",
        "--cwd",
        sub.to_str().unwrap(),
        "dco",
        "--format",
        "json",
    ]);
    assert_eq!(stdout(&out), "{\"dco\":true}\n");
}

#[test]
fn subagent_gets_no_block() {
    let world = World::new().env("PI_SUBAGENT_CHILD", "1");
    let out = world.run(&["assemble"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(world.block(&[]), "");
}

#[test]
fn empty_package_dir_gives_the_fallback_line() {
    let world = World::new();
    let empty = world.home.join("empty");
    fs::create_dir_all(&empty).unwrap();
    let out = world.run(&["assemble", "--package-dir", empty.to_str().unwrap()]);
    assert_eq!(
        stdout(&out),
        "[ORCHESTRATOR RULES] You are a MANAGER. Delegate work to subagents.\n"
    );
    let env_world = World::new().env("PI_RULES_PACKAGE_DIR", empty.to_str().unwrap());
    assert!(env_world.block(&[]).contains("[ORCHESTRATOR RULES]"));
}

#[test]
fn render_fills_settings_from_stdin_and_files() {
    let world = World::new().env("PI_DCO", "true");
    let out = world.run_stdin(&["render"], "x {{SETTINGS:dco,nope}} y");
    assert_eq!(stdout(&out), "x {\"dco\":true} y");
    let file = world.project.join("prompt.md");
    fs::write(&file, "{{SETTINGS:review_loop_max_cycles}}").unwrap();
    let out = world.run(&["render", file.to_str().unwrap()]);
    assert_eq!(stdout(&out), "{\"review_loop_max_cycles\":3}");
}

#[test]
fn missing_prompt_file_is_an_input_error() {
    let world = World::new();
    let out = world.run(&["render", "/no/such/prompt.md"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("`/no/such/prompt.md`"), "{err}");
    assert!(err.contains("pipe the prompt on stdin"), "{err}");
}

#[test]
fn missing_cwd_is_an_input_error() {
    let world = World::new();
    for command in ["assemble", "settings", "explain", "check"] {
        let out = world.run(&[command, "--cwd", "/no/such/dir"]);
        assert_eq!(out.status.code(), Some(3), "{command}");
        assert!(
            stderr(&out).contains("`--cwd /no/such/dir` is not a directory"),
            "{command}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let world = World::new();
    for args in [
        &["assemble", "--format", "yaml"][..],
        &["no-such-command"][..],
        &["assemble", "--bogus"][..],
    ] {
        let out = world.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn every_command_has_help_with_an_example() {
    let world = World::new();
    for command in ["assemble", "settings", "render", "explain", "check", "eval"] {
        let out = world.run(&[command, "--help"]);
        assert_eq!(out.status.code(), Some(0));
        assert!(stdout(&out).contains("Examples:"), "{command}");
    }
    let top = stdout(&world.run(&["--help"]));
    assert!(top.contains("Exit codes:"));
}

#[test]
fn eval_answers_line_by_line_and_survives_bad_lines() {
    let world = World::new();
    let input = concat!(
        "not json\n",
        "[1,2]\n",
        "{\"rules\": [\"{{IF:dco}}a{{/IF}}b\"], \"settings\": {\"dco\": true}}\n",
        "{\"rules\": \"nope\"}\n",
        "{\"prompt\": \"{{SETTINGS}}\", \"settings\": {\"dco\": false}}\n",
    );
    let out = world.run_stdin(&["eval"], input);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0]["error"].is_string());
    assert!(lines[1]["error"].is_string());
    assert_eq!(lines[2]["text"], "ab");
    assert_eq!(
        lines[2]["files"],
        serde_json::json!([{"index": 0, "included": true}])
    );
    assert!(lines[3]["error"].is_string());
    assert_eq!(lines[4]["text"], "{\"dco\":false}");
}

#[test]
fn eval_stdin_that_cannot_be_read_is_an_input_error() {
    let world = World::new();
    // Reading a directory fails (EISDIR): an input error (3), not an output error (4).
    let dir = fs::File::open(&world.project).unwrap();
    let out = world.command(&["eval"]).stdin(dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the requests"));
}

#[test]
fn eval_answers_a_line_over_the_limit_with_an_error_and_goes_on() {
    let world = World::new();
    let long = format!(
        "{{\"rules\": [\"{}\"]}}\n{{\"rules\": [\"next\"]}}\n",
        "x".repeat(pi_rules::lines::MAX_LINE)
    );
    let out = world.run_stdin(&["eval"], &long);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0]["error"]
        .as_str()
        .unwrap()
        .contains("more than the limit"));
    assert_eq!(lines[1]["text"], "next");
}

#[test]
fn eval_flushes_each_response() {
    let world = World::new();
    let mut child = world
        .command(&["eval"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    for i in 0..3 {
        writeln!(stdin, "{{\"rules\": [\"n{i}\"]}}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let response: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(response["text"], format!("n{i}"));
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn explain_names_the_reason_and_suggests_keys() {
    let world = World::new();
    fs::write(
        world.project_layer().join("90-mine.md"),
        "---\nrequires_setting: dco\n---\nsigned",
    )
    .unwrap();
    fs::write(
        world.project_layer().join("91-typo.md"),
        "a\n{{IF:review_loop_enforcment}}x{{/IF}}",
    )
    .unwrap();
    let out = world.run(&["explain", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = |name: &str| {
        report["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap()
            .clone()
    };
    let mine = file("90-mine.md");
    assert_eq!(mine["status"], "gated");
    assert_eq!(
        mine["reason"],
        "gated (requires_setting: dco = false from default)"
    );
    let typo = file("91-typo.md");
    let block = &typo["blocks"][0];
    assert_eq!(
        (block["line"].as_u64(), block["column"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(block["state"], "dropped");
    let why = block["why"].as_str().unwrap();
    assert!(
        why.contains("did you mean `review_loop_enforcement`"),
        "{why}"
    );
    let text = stdout(&world.run(&["explain"]));
    assert!(!text.contains('\x1b'), "colour on a pipe");
    assert!(text.contains("91-typo.md"));
    assert!(
        text.contains("2:1 {{IF:review_loop_enforcment}} dropped"),
        "{text}"
    );
}

#[test]
fn settings_with_a_misspelt_key_is_a_usage_error_that_still_prints_every_key() {
    let world = World::new();
    for format in ["text", "json"] {
        let out = world.run(&["settings", "dco", "dcoo", "--format", format]);
        assert_eq!(out.status.code(), Some(2), "{format}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("`dcoo` is not a settings key") && err.contains("did you mean `dco`?"),
            "{err}"
        );
        assert!(!err.contains("`dco` is not"), "{err}");
        let text = stdout(&out);
        if format == "json" {
            assert_eq!(text, "{\"dco\":false,\"dcoo\":false}\n");
        } else {
            assert!(text.lines().any(|l| l.starts_with("dco ")), "{text}");
            assert!(text.lines().any(|l| l.starts_with("dcoo ")), "{text}");
        }
    }
    // Known keys alone: exit 0 and a quiet stderr.
    let out = world.run(&["settings", "dco", "review_loop_max_cycles"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "");
    // A key far from every known one: no guess, a pointer to the list instead.
    let out = world.run(&["settings", "zzzzzzzz"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("`pi-rules schema` lists the keys"));
}

#[test]
fn render_names_each_unknown_key_with_its_place_and_a_guess_and_still_exits_0() {
    let world = World::new();
    world.write(
        &world.project,
        "prompt.md",
        "Intro.\n  Config: {{SETTINGS:dco, dcoo}} again {{SETTINGS:dcoo,zzzzzzzz}}\n",
    );
    let out = world.run(&["render", "prompt.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The prompt is what pi-config makes: the unknown keys left out.
    assert_eq!(stdout(&out), "Intro.\n  Config: {\"dco\":false} again {}\n");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one line per unknown key: {err}");
    assert!(
        lines[0].contains("prompt.md:2:27: `dcoo` is not a settings key")
            && lines[0].ends_with("did you mean `dco`?"),
        "{err}"
    );
    assert!(
        lines[1].contains("prompt.md:2:56: `zzzzzzzz` is not a settings key"),
        "{err}"
    );
    // On stdin the place is `<stdin>`; a key is escaped before it reaches the terminal.
    let out = world.run_stdin(&["render", "-"], "{{SETTINGS:\u{1b}]0;owned\u{7}}}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "{}");
    let err = stderr(&out);
    assert!(err.contains("<stdin>:1:12: `\\x1b]0;owned\\x07`"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
    // Known keys only: nothing on stderr.
    let out = world.run_stdin(&["render", "-"], "{{SETTINGS:dco}} {{SETTINGS}}");
    assert_eq!(stderr(&out), "");
}

#[test]
fn render_names_at_most_twenty_unknown_keys_and_counts_the_rest() {
    let world = World::new();
    let keys: Vec<String> = (0..50).map(|i| format!("k{i}")).collect();
    let prompt = format!("{{{{SETTINGS:{}}}}} {{{{SETTINGS:k0}}}}", keys.join(","));
    let out = world.run_stdin(&["render", "-"], &prompt);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "{} {}");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 21, "{err}");
    assert!(
        err.lines().last().unwrap().contains("30 more keys"),
        "{err}"
    );
}
