//! Runs the shell examples of the documentation, so that every example marked as tested works
//! as written, and compares what they print with the output shown beside them.
//!
//! A fenced block whose info string is `sh tested` (optionally followed by `status=N`, the exit
//! status its last command should give; 0 by default) is an example to run. The blocks are
//! looked for in `README.md` and in every `docs/*.md`, so they keep running wherever the text is
//! moved. The blocks of one file run in order, each with `sh -e`, in one fresh world: an empty
//! `$HOME`, an empty project directory `$HOME/project` as the working directory, and the
//! `pi-rules` under test first on `PATH`.
//!
//! A fenced block whose info string is `text output`, after a tested block with nothing but blank
//! lines between them, is what that example prints: its standard output and standard error, as
//! one stream in the order written (as a terminal shows them). The test compares it byte for
//! byte, with two exceptions, both for what differs from one run to the next or is too long to
//! show:
//! - the world's `$HOME` (a fresh temporary directory) is written `~`, wherever it appears;
//! - a last line `…` alone means the output goes on: the lines before it must be the output's
//!   first lines.
//!
//! `PI_RULES_README_BLESS=1 cargo test -p pi-rules --test it readme_examples` writes what the
//! examples printed into their output blocks in place (keeping a final `…` and the number of
//! lines before it), for review with `git diff`, as insta's review does for snapshots.

use crate::common;

use common::EXAMPLE_COMMANDS;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable that makes the test rewrite the output blocks instead of failing on them.
const BLESS_ENV: &str = "PI_RULES_README_BLESS";

/// The line that ends a shown output early.
const MORE: &str = "…";

/// One example block.
#[derive(Debug)]
struct Example {
    file: PathBuf,
    /// 1-based line of the opening fence.
    line: usize,
    script: String,
    status: i32,
    /// The output block that follows it, if any.
    output: Option<Shown>,
}

/// An output block: its text and where it is.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    /// 0-based index of its first content line, and of its closing fence.
    first: usize,
    fence: usize,
    text: String,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
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

/// The words of a fence opener's info string, or `None` when `line` is not a fence.
fn fence_words(line: &str) -> Option<Vec<&str>> {
    let info = line.trim_start().strip_prefix("```")?;
    Some(info.split_whitespace().collect())
}

/// Whether `line` closes a fenced block: backticks alone (an info string would make it an opener).
fn closes(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.len() >= 3 && trimmed.bytes().all(|b| b == b'`')
}

/// The content of the fenced block opened at `open` (its lines, each with `\n`) and the index
/// of its closing fence.
fn block(file: &Path, lines: &[&str], open: usize) -> (String, usize) {
    let mut text = String::new();
    for (at, line) in lines.iter().enumerate().skip(open + 1) {
        if closes(line) {
            return (text, at);
        }
        text.push_str(line);
        text.push('\n');
    }
    panic!("{}:{}: unclosed fenced block", file.display(), open + 1);
}

/// The tested examples of one Markdown text, each with the output block that follows it.
fn examples(file: &Path, text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let Some(words) = fence_words(lines[at]) else {
            at += 1;
            continue;
        };
        let (script, fence) = block(file, &lines, at);
        if words.first() == Some(&"sh") && words.contains(&"tested") {
            let status = words
                .iter()
                .find_map(|w| w.strip_prefix("status="))
                .map_or(0, |s| s.parse().expect("status=N takes a number"));
            let mut next = fence + 1;
            while next < lines.len() && lines[next].trim().is_empty() {
                next += 1;
            }
            let output = match lines.get(next).and_then(|l| fence_words(l)) {
                Some(words) if words.contains(&"output") => {
                    let (text, end) = block(file, &lines, next);
                    Some(Shown {
                        first: next + 1,
                        fence: end,
                        text,
                    })
                }
                _ => None,
            };
            let end = output.as_ref().map_or(fence, |o| o.fence);
            found.push(Example {
                file: file.to_path_buf(),
                line: at + 1,
                script,
                status,
                output,
            });
            at = end + 1;
        } else {
            // An output block here follows no tested example, so nothing would ever compare it.
            assert!(
                !words.contains(&"output"),
                "{}:{}: an output block that does not follow a tested example (only blank lines \
                 may come between them)",
                file.display(),
                at + 1
            );
            // Another fenced block: skip it.
            at = fence + 1;
        }
    }
    found
}

/// `text` with every occurrence of the world's home directory written `~`.
fn normalise(text: &str, home: &Path) -> String {
    let mut text = text.to_owned();
    let real = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
    for form in [real.as_path(), home] {
        let form = form
            .to_str()
            .expect("the temporary directory's path is UTF-8");
        text = text.replace(form, "~");
    }
    text
}

/// Whether `got` is what `shown` shows: the same bytes, or, when `shown` ends with a line `…`,
/// the lines before it are `got`'s first lines.
fn matches(shown: &str, got: &str) -> bool {
    match shown.strip_suffix(&format!("{MORE}\n")) {
        Some(head) => got.starts_with(head),
        None => shown == got,
    }
}

/// What to write into an output block that showed `shown` when the example printed `got`: all
/// of it, or as many lines as were shown before a final `…`, then `…`.
fn blessed(shown: &str, got: &str) -> String {
    assert!(
        !got.lines().any(|line| line.trim_start().starts_with("```")),
        "the output holds a line that would close its fenced block:\n{got}"
    );
    let mut text = match shown.strip_suffix(&format!("{MORE}\n")) {
        Some(head) => {
            let keep = head.lines().count();
            let mut text: String = got.split_inclusive('\n').take(keep).collect();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(MORE);
            text
        }
        None => got.to_owned(),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// An output block that differs from what its example printed.
#[derive(Debug)]
struct Stale {
    example: usize,
    got: String,
}

/// Runs one file's examples in order in a fresh world; returns the output blocks that differ.
fn run_all(examples: &[Example]) -> Vec<Stale> {
    let world = tempfile::tempdir().unwrap();
    let home = world.path().join("home");
    let project = home.join("project");
    fs::create_dir_all(&project).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_pi-rules")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut stale = Vec::new();
    for (index, example) in examples.iter().enumerate() {
        // Standard error joins standard output, in the order written, as on a terminal.
        let out = Command::new("sh")
            .arg("-e")
            .arg("-c")
            .arg(format!("exec 2>&1\n{}", example.script))
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &home)
            .current_dir(&project)
            .output()
            .unwrap();
        let printed = normalise(&String::from_utf8_lossy(&out.stdout), &home);
        assert_eq!(
            out.status.code(),
            Some(example.status),
            "{}:{}: the example exited with {:?}, not {}\n{}\noutput:\n{printed}",
            example.file.display(),
            example.line,
            out.status.code(),
            example.status,
            example.script,
        );
        if let Some(shown) = &example.output {
            if !matches(&shown.text, &printed) {
                stale.push(Stale {
                    example: index,
                    got: printed,
                });
            }
        }
    }
    stale
}

/// `text` with the stale output blocks of `examples` rewritten.
fn bless(text: &str, examples: &[Example], stale: &[Stale]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut at = 0;
    for one in stale {
        let shown = examples[one.example].output.as_ref().unwrap();
        for line in &lines[at..shown.first] {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&blessed(&shown.text, &one.got));
        at = shown.fence;
    }
    for line in &lines[at..] {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn documented_examples_run_as_written_and_print_what_is_shown() {
    let blessing = std::env::var_os(BLESS_ENV).is_some_and(|v| v == "1");
    let mut all = Vec::new();
    let mut report = String::new();
    for file in documents() {
        let text = fs::read_to_string(&file).unwrap();
        let found = examples(&file, &text);
        let stale = run_all(&found);
        if blessing && !stale.is_empty() {
            fs::write(&file, bless(&text, &found, &stale)).unwrap();
            eprintln!(
                "{}: {} output blocks rewritten",
                file.display(),
                stale.len()
            );
        } else {
            for one in &stale {
                let example = &found[one.example];
                let shown = example.output.as_ref().unwrap();
                report.push_str(&format!(
                    "{}:{}: the output shown at line {} is not what the example printed\n\
                     {}--- shown\n{}--- printed\n{}---\n",
                    file.display(),
                    example.line,
                    shown.first + 1,
                    example.script,
                    shown.text,
                    one.got
                ));
            }
        }
        all.extend(found);
    }
    assert!(
        report.is_empty(),
        "{report}\nTo write what the examples print into the documents: \
         {BLESS_ENV}=1 cargo test -p pi-rules --test it readme_examples, then review with git diff"
    );
    for command in EXAMPLE_COMMANDS.iter().chain(&["docs"]) {
        let needle = format!("pi-rules {command}");
        assert!(
            all.iter().any(|e| e.script.contains(&needle)),
            "no tested example runs `{needle}`; mark one with ```sh tested"
        );
    }
    assert!(
        all.iter().filter(|e| e.output.is_some()).count() >= 5,
        "the documents show the output of fewer than five tested examples"
    );
}

#[test]
fn the_extractor_finds_marked_blocks_and_their_output_only() {
    let text = "\
intro
```sh
not run
```
```sh tested
echo one
echo two
```

```text output
one
two
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
        [("echo one\necho two\n", 0, 5), ("false\n", 1, 17)]
    );
    assert_eq!(
        found[0].output,
        Some(Shown {
            first: 10,
            fence: 12,
            text: "one\ntwo\n".to_owned()
        })
    );
    assert_eq!(found[1].output, None);
}

#[test]
fn an_output_block_after_no_tested_example_is_an_error() {
    for text in [
        "```sh tested\nfalse\n```\ntext between\n```text output\nnot compared\n```\n",
        "```sh\necho untested\n```\n\n```text output\nuntested\n```\n",
    ] {
        let result = std::panic::catch_unwind(|| examples(Path::new("x.md"), text));
        let message = result.expect_err(text);
        let message = message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(
            message.contains("does not follow a tested example"),
            "{message}"
        );
    }
}

fn example(script: &str, status: i32, shown: Option<&str>) -> Example {
    Example {
        file: PathBuf::from("x.md"),
        line: 1,
        script: script.to_owned(),
        status,
        output: shown.map(|text| Shown {
            first: 0,
            fence: 0,
            text: text.to_owned(),
        }),
    }
}

#[test]
fn a_failing_example_fails_the_run() {
    let failing = example("pi-rules show no-such-rule\n", 0, None);
    let result = std::panic::catch_unwind(|| run_all(&[failing]));
    assert!(result.is_err());
}

#[test]
fn printed_output_is_compared_with_the_shown_output() {
    // stderr joins stdout in order; the home directory is written `~`.
    let script = "echo out; echo err >&2; echo \"$HOME/x\"; pwd\n";
    let right = example(script, 0, Some("out\nerr\n~/x\n~/project\n"));
    let wrong = example(script, 0, Some("out\n~/x\n"));
    let head = example("printf 'a\\nb\\nc\\n'\n", 0, Some("a\nb\n…\n"));
    let not_head = example("printf 'a\\nb\\nc\\n'\n", 0, Some("a\nc\n…\n"));
    let stale = run_all(&[right, wrong, head, not_head]);
    let got: Vec<(usize, &str)> = stale.iter().map(|s| (s.example, s.got.as_str())).collect();
    assert_eq!(got, [(1, "out\nerr\n~/x\n~/project\n"), (3, "a\nb\nc\n")]);
}

#[test]
fn blessing_rewrites_only_the_stale_output_blocks() {
    let text = "\
```sh tested
echo new
```
```text output
old
```
```sh tested
printf '1\\n2\\n3\\n'
```
```text output
9
…
```
```sh tested
echo same
```
```text output
same
```
";
    let found = examples(Path::new("x.md"), text);
    let stale = run_all(&found);
    assert_eq!(stale.len(), 2);
    assert_eq!(
        bless(text, &found, &stale),
        text.replace("old\n", "new\n").replace("9\n…", "1\n…")
    );
}
