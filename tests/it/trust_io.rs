//! Hostile input and output: closed, full and broken streams, oversized and special files in
//! place of settings files, schemas and prompts. Every command must end with its documented exit
//! code, promptly, without a panic, and never lose the block to a failing stderr.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const COMMANDS: &[&[&str]] = &[
    &["assemble"],
    &["assemble", "--format", "json"],
    &["settings"],
    &["settings", "--format", "json"],
    &["explain"],
    &["explain", "--format", "json"],
    &["check"],
    &["check", "--format", "json"],
    &["check", "--explain", "PR101"],
];

use crate::common;

use common::{code, stderr, World};

#[test]
fn a_full_stderr_never_costs_the_block() {
    let world = World::new();
    world.rule(
        "90-x.md",
        "{{IF:typo}}hidden{{/IF}}Visible text.\n{{/IF}}\n",
    );
    let output = world.shell(&["assemble"], "2>/dev/full");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let block = String::from_utf8(output.stdout).unwrap();
    assert!(block.ends_with("Visible text.\n{{/IF}}\n"), "{block:?}");
}

#[test]
fn an_input_error_with_a_full_stderr_is_still_exit_3() {
    let world = World::new();
    for args in [
        &["assemble", "--cwd", "/missing"][..],
        &["render", "/missing"],
    ] {
        let output = world.shell(args, "2>/dev/full");
        assert_eq!(code(&output), 3, "{args:?}");
    }
}

#[test]
fn a_full_stdout_is_exit_4_for_every_command() {
    let world = World::new();
    world.rule("90-x.md", "Rule.\n");
    for args in COMMANDS {
        let output = world.shell(args, ">/dev/full");
        assert_eq!(code(&output), 4, "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains("cannot write"), "{args:?}");
    }
}

#[test]
fn a_broken_pipe_is_exit_4_and_quiet() {
    let world = World::new();
    world.rule("90-x.md", "Rule.\n");
    for args in COMMANDS {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = world
            .command(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(code(&output), 4, "{args:?}");
        assert_eq!(
            stderr(&output),
            "",
            "{args:?}: no message for a broken pipe"
        );
    }
}

/// A settings file of `size` bytes that would turn `dco` on if it were read.
fn big_settings(path: &Path, size: usize) {
    let padding = " ".repeat(size);
    fs::write(path, format!("{{\"dco\": true{padding}}}")).unwrap();
}

#[test]
fn an_oversized_settings_file_is_ignored_whole_with_a_warning() {
    let world = World::new();
    let path = world.home.join(".pi/pi-config-settings.json");
    big_settings(&path, 2 << 20);
    let output = world
        .command(&["settings", "dco", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "{\"dco\":false}\n");
    let err = stderr(&output);
    assert!(
        err.contains("pi-config-settings.json") && err.contains("limit"),
        "{err}"
    );
    // Under the limit the same file is read.
    big_settings(&path, 1000);
    let output = world
        .command(&["settings", "dco", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "{\"dco\":true}\n");
}

#[test]
fn an_oversized_settings_file_costs_neither_time_nor_memory() {
    let world = World::new();
    let path = world.project.join(".pi/pi-config-settings.jsonc");
    big_settings(&path, 256 << 20);
    let started = Instant::now();
    let output = world
        .command(&["assemble", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0);
    assert!(started.elapsed() < Duration::from_secs(5));
    fs::remove_file(&path).unwrap();
}

#[test]
fn special_files_in_place_of_settings_files_do_not_hang() {
    let world = World::new();
    let fifo = world.project.join(".pi/pi-config-settings.jsonc");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("/dev/zero", world.home.join(".pi/pi-config-settings.json"))
        .unwrap();
    let started = Instant::now();
    for args in [&["assemble"][..], &["settings"], &["explain"], &["check"]] {
        let output = world.command(args).output().unwrap();
        assert!(code(&output) <= 1, "{args:?}: {}", stderr(&output));
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    let output = world.command(&["settings"]).output().unwrap();
    let err = stderr(&output);
    assert!(
        err.contains("pi-config-settings.jsonc") && err.contains("not a regular file"),
        "{err}"
    );
    assert!(
        err.contains("pi-config-settings.json`") && err.contains("limit"),
        "{err}"
    );
}

#[test]
fn schemas_and_prompts_are_read_with_a_bound() {
    let world = World::new();
    let started = Instant::now();
    for args in [
        &["settings", "--keys", "/dev/zero"][..],
        &["render", "/dev/zero"],
        &["assemble", "--keys", "/dev/zero"],
    ] {
        let output = world.command(args).output().unwrap();
        assert_eq!(code(&output), 3, "{args:?}");
        assert!(
            stderr(&output).contains("limit"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn render_reads_stdin_for_a_dash() {
    let world = World::new();
    let output = world.run_stdin(&["render", "-"], "cfg {{SETTINGS:dco}}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "cfg {\"dco\":false}"
    );
}

#[test]
fn ignored_settings_are_said_once_on_stderr() {
    let world = World::new();
    let dir = world.project.join(".pi");
    fs::write(dir.join("pi-config-settings.json"), r#"{"dco": true}"#).unwrap();
    fs::write(
        dir.join("pi-config-settings.jsonc"),
        "{\"review_loop_max_cycles\": 99, \"dco\": \"yes\",}",
    )
    .unwrap();
    let output = world.command(&["assemble"]).output().unwrap();
    let err = stderr(&output);
    assert_eq!(err.matches("is ignored").count(), 2, "{err}");
    assert!(
        err.contains("pi-config-settings.json` is ignored because"),
        "{err}"
    );
    assert!(
        err.contains("settings file") && err.contains("invalid JSONC"),
        "{err}"
    );
    fs::write(
        dir.join("pi-config-settings.jsonc"),
        "{\"review_loop_max_cycles\": 99, \"dco\": \"yes\"}",
    )
    .unwrap();
    for args in [&["assemble"][..], &["explain"], &["settings"]] {
        let output = world.command(args).output().unwrap();
        let err = stderr(&output);
        assert!(
            err.contains("`review_loop_max_cycles` in"),
            "{args:?}: {err}"
        );
        assert!(err.contains("`dco` in"), "{args:?}: {err}");
        assert_eq!(err.matches("`dco` in").count(), 1, "{args:?}: once");
    }
}

#[test]
fn a_bad_schema_is_explained_once() {
    let world = World::new();
    let path = world.project.join("keys.json");
    fs::write(&path, "{\"a\":").unwrap();
    let output = world
        .command(&["settings", "--keys", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&output), 3);
    let err = stderr(&output);
    assert_eq!(err.matches("EOF while parsing").count(), 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn warnings_on_stderr_are_escaped() {
    let world = World::new();
    world.rule("90-x.md", "{{IF:a\x1b]0;OWNED\x07\nb}}x{{/IF}}Text.\n");
    let output = world.command(&["assemble"]).output().unwrap();
    let err = stderr(&output);
    assert_eq!(
        err,
        "rule assembly: malformed conditional condition: a\\x1b]0;OWNED\\x07\\nb\n"
    );
    // The JSON form keeps the reference's exact message.
    let output = world
        .command(&["assemble", "--format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["warnings"][0],
        "malformed conditional condition: a\x1b]0;OWNED\x07\nb"
    );
}
