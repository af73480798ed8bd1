//! Runs the shell examples of the documentation, so that every example marked as tested works
//! as written.
//!
//! A fenced block whose info string is `sh tested` (optionally followed by `status=N`, the exit
//! status its last command should give; 0 by default) is an example to run. The blocks are
//! looked for in `README.md` and in every `docs/*.md`, so they keep running wherever the text is
//! moved. The blocks of one file run in order, each with `sh -e`, in one fresh world: an empty
//! `$HOME`, an empty project directory as the working directory, and the `pi-rules` under test
//! first on `PATH`.

mod common;

use common::EXAMPLE_COMMANDS;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One example block.
#[derive(Debug)]
struct Example {
    file: PathBuf,
    /// 1-based line of the opening fence.
    line: usize,
    script: String,
    status: i32,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `README.md` and `docs/*.md`, in a stable order.
fn documents() -> Vec<PathBuf> {
    let root = repository();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .map(|dir| {
            dir.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect()
        })
        .unwrap_or_default();
    docs.sort();
    files.extend(docs);
    files.retain(|f| f.is_file());
    files
}

/// The tested examples of one Markdown text.
fn examples(file: &Path, text: &str) -> Vec<Example> {
    let mut found = Vec::new();
    let mut open: Option<(usize, i32, String)> = None;
    for (at, line) in text.lines().enumerate() {
        match &mut open {
            None => {
                let Some(info) = line.trim_start().strip_prefix("```") else {
                    continue;
                };
                let words: Vec<&str> = info.split_whitespace().collect();
                if words.first() == Some(&"sh") && words.contains(&"tested") {
                    let status = words
                        .iter()
                        .find_map(|w| w.strip_prefix("status="))
                        .map_or(0, |s| s.parse().expect("status=N takes a number"));
                    open = Some((at + 1, status, String::new()));
                } else {
                    // Another fenced block: skip to its end.
                    open = Some((0, 0, String::new()));
                }
            }
            Some((start, status, script)) => {
                // A closing fence is backticks alone (an info string would make it an opener).
                let trimmed = line.trim();
                if trimmed.len() >= 3 && trimmed.bytes().all(|b| b == b'`') {
                    if *start > 0 {
                        found.push(Example {
                            file: file.to_path_buf(),
                            line: *start,
                            script: std::mem::take(script),
                            status: *status,
                        });
                    }
                    open = None;
                } else {
                    script.push_str(line);
                    script.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "{}: unclosed fenced block", file.display());
    found
}

/// Runs one file's examples in order in a fresh world.
fn run_all(examples: &[Example]) {
    let world = tempfile::tempdir().unwrap();
    let home = world.path().join("home");
    let project = world.path().join("project");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&project).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_pi-rules")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for example in examples {
        let out = Command::new("sh")
            .arg("-e")
            .arg("-c")
            .arg(&example.script)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &home)
            .current_dir(&project)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(example.status),
            "{}:{}: the example exited with {:?}, not {}\n{}\nstdout:\n{}\nstderr:\n{}",
            example.file.display(),
            example.line,
            out.status.code(),
            example.status,
            example.script,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn documented_examples_run_as_written() {
    let mut all = Vec::new();
    for file in documents() {
        let text = fs::read_to_string(&file).unwrap();
        let found = examples(&file, &text);
        run_all(&found);
        all.extend(found);
    }
    for command in EXAMPLE_COMMANDS {
        let needle = format!("pi-rules {command}");
        assert!(
            all.iter().any(|e| e.script.contains(&needle)),
            "no tested example runs `{needle}`; mark one with ```sh tested"
        );
    }
}

#[test]
fn the_extractor_finds_marked_blocks_only() {
    let text = "\
intro
```sh
not run
```
```sh tested
echo one
echo two
```
```text
```sh tested inside a text block is not a fence opener here
```
```sh tested status=1
false
```
";
    let found = examples(Path::new("x.md"), text);
    let scripts: Vec<(&str, i32, usize)> = found
        .iter()
        .map(|e| (e.script.as_str(), e.status, e.line))
        .collect();
    assert_eq!(
        scripts,
        [("echo one\necho two\n", 0, 5), ("false\n", 1, 12)]
    );
}

#[test]
fn a_failing_example_fails_the_run() {
    let example = Example {
        file: PathBuf::from("x.md"),
        line: 1,
        script: "pi-rules show no-such-rule\n".to_owned(),
        status: 0,
    };
    let result = std::panic::catch_unwind(|| run_all(&[example]));
    assert!(result.is_err());
}
