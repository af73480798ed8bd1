//! Exit codes when the output is discarded or cannot be written.
//!
//! A harness that ignores a command's output gives it `/dev/null` opened read-write (Python's
//! `subprocess.DEVNULL`, Node's `stdio: "ignore"`). Every command must then run and exit as
//! documented, with the code it has when its output is read: a CI gate lives on `check`'s exit
//! status. A stdout that really fails (`/dev/full`) is still exit 4.

use std::fs::{File, OpenOptions};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{code, stderr, World};

/// `/dev/null` opened as a harness opens it: read and write.
fn dev_null_read_write() -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .unwrap()
}

fn dev_full() -> File {
    OpenOptions::new().write(true).open("/dev/full").unwrap()
}

/// One command, the world it runs in, and its documented exit code.
struct Case {
    args: &'static [&'static str],
    /// Prepares a fresh world (rules, prompt files).
    setup: fn(&World),
    expected: i32,
}

fn nothing(_: &World) {}

fn clean_rule(world: &World) {
    world.rule("90-team.md", "Use small commits.\n");
}

fn unclosed_block(world: &World) {
    world.rule("90-team.md", "{{IF:dco}}Sign off.\n");
}

fn prompt(world: &World) {
    world.write(
        &world.project,
        "prompt.md",
        "Config: {{SETTINGS:dco,review_loop_max_cycles}}\n",
    );
}

const CASES: &[Case] = &[
    Case {
        args: &["assemble"],
        setup: clean_rule,
        expected: 0,
    },
    Case {
        args: &["assemble", "--format", "json"],
        setup: clean_rule,
        expected: 0,
    },
    Case {
        args: &["settings"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["settings", "dco", "--format", "json"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["settings", "dcoo"],
        setup: nothing,
        expected: 2,
    },
    Case {
        args: &["render", "prompt.md"],
        setup: prompt,
        expected: 0,
    },
    Case {
        // stdin is closed: an empty prompt.
        args: &["render", "-"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["render", "missing.md"],
        setup: nothing,
        expected: 3,
    },
    Case {
        args: &["explain"],
        setup: clean_rule,
        expected: 0,
    },
    Case {
        args: &["explain", "--format", "json"],
        setup: clean_rule,
        expected: 0,
    },
    Case {
        args: &["check"],
        setup: clean_rule,
        expected: 0,
    },
    Case {
        args: &["check"],
        setup: unclosed_block,
        expected: 1,
    },
    Case {
        args: &["check", "--format", "json"],
        setup: unclosed_block,
        expected: 1,
    },
    Case {
        args: &["check", "--explain", "PR101"],
        setup: nothing,
        expected: 0,
    },
    Case {
        // stdin is closed: no requests.
        args: &["eval"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["show", "40-critical-rules"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["show", "no-such-rule"],
        setup: nothing,
        expected: 2,
    },
    Case {
        args: &["diff", "--set", "dco=true"],
        setup: nothing,
        expected: 1,
    },
    Case {
        args: &["diff", "--set", "dco=false"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["schema"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["completions", "bash"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["man"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["new", "team-conventions", "--project"],
        setup: nothing,
        expected: 0,
    },
    Case {
        args: &["override", "40-critical-rules", "--project"],
        setup: nothing,
        expected: 0,
    },
    Case {
        // stdin is closed: no requests, a clean end.
        args: &["serve"],
        setup: nothing,
        expected: 0,
    },
];

/// Runs `case` in a fresh world with `stdout` as its standard output.
fn run(case: &Case, stdout: impl Into<Stdio>) -> (World, Output) {
    let world = World::new();
    (case.setup)(&world);
    let output = world
        .command(case.args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (world, output)
}

#[test]
fn every_command_exits_as_documented_with_stdout_discarded_read_write() {
    for case in CASES {
        // The same command with its output read, for reference.
        let (_, piped) = run(case, Stdio::piped());
        assert_eq!(
            code(&piped),
            case.expected,
            "{:?} on a pipe: {}",
            case.args,
            stderr(&piped)
        );
        let (world, discarded) = run(case, dev_null_read_write());
        assert_eq!(
            code(&discarded),
            case.expected,
            "{:?} with stdout /dev/null read-write: {}",
            case.args,
            stderr(&discarded)
        );
        assert_eq!(
            stderr(&discarded),
            stderr(&piped),
            "{:?}: the same diagnostics",
            case.args
        );
        // The command did its work: the writers wrote.
        match case.args[0] {
            "new" => assert!(world
                .project_rules()
                .join("90-team-conventions.md")
                .is_file()),
            "override" => assert!(world.project_rules().join("40-critical-rules.md").is_file()),
            _ => {}
        }
    }
}

#[test]
fn every_command_that_prints_is_exit_4_on_a_full_stdout() {
    let mut printing = 0;
    for case in CASES {
        let (_, piped) = run(case, Stdio::piped());
        if piped.stdout.is_empty() {
            // Nothing to write, so nothing fails: the documented code stands.
            let (_, full) = run(case, dev_full());
            assert_eq!(code(&full), case.expected, "{:?}", case.args);
            continue;
        }
        printing += 1;
        let (_, full) = run(case, dev_full());
        assert_eq!(
            code(&full),
            4,
            "{:?} with stdout /dev/full: {}",
            case.args,
            stderr(&full)
        );
        assert!(
            stderr(&full).contains("cannot write"),
            "{:?}: {}",
            case.args,
            stderr(&full)
        );
    }
    assert!(printing >= 19, "only {printing} commands printed anything");
}

#[test]
fn a_closed_stdout_is_taken_as_discarded() {
    // Rust's runtime reopens a closed stdout on /dev/null before `main`: `>&-` cannot be told
    // apart from a harness's /dev/null, so it is treated the same way.
    let world = World::new();
    clean_rule(&world);
    let output = world.shell(&["check"], ">&-");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    unclosed_block(&world);
    let output = world.shell(&["check"], ">&-");
    assert_eq!(code(&output), 1, "{}", stderr(&output));
}

#[test]
fn watch_keeps_running_with_stdout_discarded_read_write() {
    let world = World::new();
    clean_rule(&world);
    let mut child = world
        .command(&["watch"])
        .stdout(dev_null_read_write())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(1500) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("watch ended with {status} with its stdout discarded");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// What a Python harness does: `subprocess.run(cmd, stdout=DEVNULL)`.
#[test]
fn python_devnull_gets_the_check_exit_code() {
    let Ok(python) = Command::new("python3").arg("--version").output() else {
        eprintln!("python3 is not installed: the harness case is left to the tests above");
        return;
    };
    assert!(python.status.success());
    let world = World::new();
    unclosed_block(&world);
    let script = "import subprocess, sys\n\
                  r = subprocess.run([sys.argv[1], 'check'], stdout=subprocess.DEVNULL)\n\
                  sys.exit(r.returncode)\n";
    let output = world
        .program("python3")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_pi-rules"))
        .output()
        .unwrap();
    assert_eq!(code(&output), 1, "{}", stderr(&output));
}
