//! `show` and hostile rule files: on a terminal nothing a file says drives the terminal, on a
//! pipe or into a file the bytes are exact, and a copy that is a special file or leaves the
//! project is named on stderr as `assemble` names it (and refused under `--confine`). `render`
//! prints a prompt file the same way. JSON on a terminal carries no character a terminal acts
//! on, and reads as the same JSON; a usage error does not echo the command line's controls.
//!
//! The terminal is a real pseudo-terminal: the test opens one, gives its far end to the binary as
//! stdout, and reads what reaches the terminal.

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{symlink, OpenOptionsExt};
use std::process::Stdio;

use crate::common;

use common::{code, stderr, stdout, World};

/// What a command did with its stdout on a terminal.
struct OnTerminal {
    /// The bytes the terminal received (output processing is off, so they are the bytes
    /// written).
    shown: Vec<u8>,
    stderr: String,
    code: i32,
}

/// Runs `pi-rules ARGS` in `world` with stdout on a fresh pseudo-terminal.
fn on_terminal(world: &World, args: &[&str]) -> OnTerminal {
    on_terminal_with_input(world, args, None)
}

/// [`on_terminal`], with `input` on stdin when given.
fn on_terminal_with_input(world: &World, args: &[&str], input: Option<&[u8]>) -> OnTerminal {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    use rustix::termios::{tcgetattr, tcsetattr, OptionalActions, OutputModes};

    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32)
        .open(name.to_str().unwrap())
        .unwrap();
    // No `\n` → `\r\n` on the way: what arrives is what the command wrote.
    let mut modes = tcgetattr(&terminal).unwrap();
    modes.output_modes.remove(OutputModes::OPOST);
    tcsetattr(&terminal, OptionalActions::Now, &modes).unwrap();

    let mut command = world.command(args);
    command.stdout(terminal).stderr(Stdio::piped());
    if input.is_some() {
        command.stdin(Stdio::piped());
    }
    let mut child = command.spawn().unwrap();
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        std::io::Write::write_all(&mut stdin, input).unwrap();
    }
    // The command holds our end of the terminal: drop it, so that the terminal hangs up when the
    // child exits.
    drop(command);
    let reader = std::thread::spawn(move || {
        let mut master = File::from(master);
        let mut shown = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match master.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => shown.extend_from_slice(&buf[..n]),
                // EIO: the far end is closed and everything written has been read.
                Err(_) => break,
            }
        }
        shown
    });
    let output = child.wait_with_output().unwrap();
    OnTerminal {
        shown: reader.join().unwrap(),
        stderr: stderr(&output),
        code: code(&output),
    }
}

/// A rule that tries everything a file can do to a terminal: a carriage return that hides the
/// start of its line, a title change and a screen clear, BEL, backspace, a bidi override, a C1
/// CSI as a character and as a lone byte, a cut UTF-8 sequence; and the tabs and line breaks of
/// ordinary text.
const HOSTILE: &[u8] = b"# Team\n\n- Safe text\rEvil\n\x1b]0;OWNED\x07\x1b[2J\x08x\n\
\tindented \xe2\x80\xae rlo \xc2\x9b1m c1 \x9b2J byte \xe2\x82 cut\n";

/// `HOSTILE` as a terminal shows it.
const HOSTILE_SHOWN: &str = "# Team\n\n- Safe text\\rEvil\n\\x1b]0;OWNED\\x07\\x1b[2J\\x08x\n\
\tindented \\u{202e} rlo \\x9b1m c1 \\x9b2J byte \\xe2\\x82 cut\n";

#[test]
fn show_on_a_terminal_escapes_what_could_drive_it_and_keeps_the_layout() {
    let world = World::new();
    world.rule("90-team.md", HOSTILE);
    let shown = on_terminal(&world, &["show", "90-team"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(String::from_utf8(shown.shown).unwrap(), HOSTILE_SHOWN);
    // \r, ESC ×2, BEL, BS, U+202E, U+009B, the byte 0x9b and two cut bytes.
    assert!(
        shown
            .stderr
            .contains("10 control characters or bytes that are not UTF-8 are shown escaped")
            && shown.stderr.contains("--raw"),
        "{}",
        shown.stderr
    );
    assert!(!shown.stderr.contains('\u{1b}'));
}

#[test]
fn show_raw_on_a_terminal_and_show_on_a_pipe_or_into_a_file_print_the_bytes() {
    let world = World::new();
    world.rule("90-team.md", HOSTILE);
    let raw = on_terminal(&world, &["show", "90-team", "--raw"]);
    assert_eq!(raw.code, 0, "{}", raw.stderr);
    assert_eq!(raw.shown, HOSTILE);
    assert_eq!(raw.stderr, "", "no note when nothing is escaped");

    let piped = world.run(&["show", "90-team"]);
    assert_eq!(code(&piped), 0);
    assert_eq!(piped.stdout, HOSTILE);
    assert_eq!(stderr(&piped), "");

    let path = world.root().join("copy.md");
    let output = world
        .command(&["show", "90-team"])
        .stdout(File::create(&path).unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&output), 0);
    assert_eq!(fs::read(&path).unwrap(), HOSTILE);
}

#[test]
fn show_of_clean_text_is_the_same_on_a_terminal_and_says_nothing() {
    let world = World::new();
    let text =
        "---\ndescription: x\n---\n# Rules\n\n| a\t| b |\n\n{{IF:dco}}Sign off.{{/IF}}\n漢字 👨‍👩‍👧\n";
    world.rule("90-team.md", text);
    let shown = on_terminal(&world, &["show", "90-team"]);
    assert_eq!(shown.code, 0);
    assert_eq!(shown.shown, text.as_bytes());
    assert_eq!(shown.stderr, "");
    // The embedded package rules are clean text too.
    let package = on_terminal(&world, &["show", "40-critical-rules"]);
    let piped = world.run(&["show", "40-critical-rules"]);
    assert_eq!(package.shown, piped.stdout);
    assert_eq!(package.stderr, "");
}

/// `text` with the process id in `/proc/<pid>/…` replaced: `/proc/self` resolves to the reading
/// process, which is another one for each command.
fn without_pids(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("/proc/") {
        out.push_str(&rest[..at + "/proc/".len()]);
        rest = rest[at + "/proc/".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push_str("PID");
    }
    out.push_str(rest);
    out
}

/// The stderr lines of `assemble` in `world` that name `file`.
fn assemble_warnings(world: &World, file: &str) -> Vec<String> {
    let out = world.run(&["assemble"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stderr(&out)
        .lines()
        .filter(|l| l.contains(file))
        .map(without_pids)
        .collect()
}

#[test]
fn show_of_a_special_file_warns_as_assemble_does() {
    let world = World::new();
    world.project_layer();
    symlink(
        "/proc/self/environ",
        world.project_rules().join("95-env.md"),
    )
    .unwrap();
    let expected = assemble_warnings(&world, "95-env.md");
    assert_eq!(expected.len(), 1, "{expected:?}");
    assert!(expected[0].contains("a special file"), "{expected:?}");
    for args in [
        &["show", "95-env"][..],
        &["show", "95-env.md", "--layer", "project"],
    ] {
        let out = world.run(args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        // The file is shown (the environment the command runs with), and named.
        assert!(stdout(&out).contains("HOME="), "{args:?}");
        let warnings: Vec<String> = stderr(&out).lines().map(without_pids).collect();
        assert_eq!(warnings, expected, "{args:?}");
    }
}

#[test]
fn show_of_a_special_file_is_refused_under_confine() {
    let world = World::new();
    world.project_layer();
    symlink(
        "/proc/self/environ",
        world.project_rules().join("95-env.md"),
    )
    .unwrap();
    for (args, env) in [
        (&["show", "95-env", "--confine"][..], None),
        (&["show", "95-env"][..], Some(("PI_RULES_CONFINE", "1"))),
        (
            &["show", "95-env", "--layer", "project", "--confine"][..],
            None,
        ),
    ] {
        let out = world.run_env(args, env.as_slice());
        assert_eq!(code(&out), 3, "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{args:?}: nothing of the file");
        assert!(
            stderr(&out).contains("refused by --confine") && stderr(&out).contains("special file"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // With a lower copy, --confine shows that one, as the loader takes it.
    world.write(&world.user_rules(), "95-env.md", "User copy.\n");
    let out = world.run(&["show", "95-env", "--confine"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "User copy.\n");
    assert!(
        stderr(&out).contains("showing the user copy"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn show_of_a_rule_outside_the_project_warns_as_assemble_does() {
    let world = World::new();
    let outside = world.write(world.root(), "secret.md", "Outside text.\n");
    world.project_layer();
    symlink(&outside, world.project_rules().join("96-out.md")).unwrap();
    let expected = assemble_warnings(&world, "96-out.md");
    assert_eq!(expected.len(), 1, "{expected:?}");
    assert!(expected[0].contains("outside the project"), "{expected:?}");
    let out = world.run(&["show", "96-out"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "Outside text.\n");
    let warnings: Vec<String> = stderr(&out).lines().map(without_pids).collect();
    assert_eq!(warnings, expected);
    let out = world.run(&["show", "96-out", "--confine"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn show_of_a_plain_rule_or_a_mask_warns_of_nothing_special() {
    let world = World::new();
    world.rule("90-team.md", "Team.\n");
    symlink(
        "/dev/null",
        world.project_rules().join("40-critical-rules.md"),
    )
    .unwrap();
    let out = world.run(&["show", "90-team"]);
    assert_eq!(stderr(&out), "");
    let out = world.run(&["show", "40-critical-rules"]);
    assert_eq!(code(&out), 0);
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    assert!(stderr(&out).contains("masks"), "{}", stderr(&out));
}

#[test]
fn render_on_a_terminal_escapes_and_on_a_pipe_or_with_raw_prints_the_bytes() {
    let world = World::new();
    let prompt = "Config: {{SETTINGS:dco}}\n\tstep\u{1b}]0;OWNED\u{7} \u{202e}x\r\n";
    world.write(&world.project, "prompt.md", prompt);
    let rendered = "Config: {\"dco\":false}\n\tstep\u{1b}]0;OWNED\u{7} \u{202e}x\r\n";
    let shown = on_terminal(&world, &["render", "prompt.md"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(
        String::from_utf8(shown.shown).unwrap(),
        "Config: {\"dco\":false}\n\tstep\\x1b]0;OWNED\\x07 \\u{202e}x\\r\n"
    );
    assert!(
        shown.stderr.contains("4 control characters"),
        "{}",
        shown.stderr
    );
    let raw = on_terminal(&world, &["render", "prompt.md", "--raw"]);
    assert_eq!(raw.shown, rendered.as_bytes());
    assert_eq!(raw.stderr, "");
    let piped = world.run(&["render", "prompt.md"]);
    assert_eq!(stdout(&piped), rendered);
    assert_eq!(stderr(&piped), "");
}

#[test]
fn assemble_on_a_terminal_escapes_the_block_and_on_a_pipe_or_with_raw_prints_the_bytes() {
    let world = World::new();
    world.rule(
        "90-team.md",
        "# Team\n\tstep\u{1b}]0;OWNED\u{7}\u{1b}[2J \u{202e}x\n".as_bytes(),
    );
    let raw_rule = "# Team\n\tstep\u{1b}]0;OWNED\u{7}\u{1b}[2J \u{202e}x\n";
    let shown = on_terminal(&world, &["assemble"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let text = String::from_utf8(shown.shown).unwrap();
    assert!(
        text.contains("# Team\n\tstep\\x1b]0;OWNED\\x07\\x1b[2J \\u{202e}x"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
    assert!(
        shown.stderr.contains("4 control characters"),
        "{}",
        shown.stderr
    );
    let raw = on_terminal(&world, &["assemble", "--raw"]);
    assert!(String::from_utf8(raw.shown).unwrap().contains(raw_rule));
    assert_eq!(raw.stderr, "");
    let piped = world.run(&["assemble"]);
    assert!(stdout(&piped).contains(raw_rule));
    assert_eq!(stderr(&piped), "");
}

/// Whether `text` holds a character that must not reach a terminal as itself, line breaks
/// aside.
fn drives_a_terminal(text: &str) -> bool {
    text.contains(|c: char| {
        c != '\n'
            && matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}' | '\u{61c}' | '\u{200e}' | '\u{200f}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
    })
}

/// `json` read, without its timings (`*_us`), which differ from run to run.
fn untimed(json: &str) -> serde_json::Value {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                map.retain(|key, _| !key.ends_with("_us"));
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = serde_json::from_str(json).unwrap();
    strip(&mut value);
    value
}

/// What JSON carries as itself (a string's DEL, C1 and bidi controls) is escaped on a terminal
/// and exact on a pipe, and the two read as the same JSON, for every command that writes JSON.
#[test]
fn json_on_a_terminal_carries_no_control_and_reads_as_the_json_on_a_pipe() {
    let world = World::new();
    let hostile =
        "# Team \u{9b}31m\u{7f} \u{202e}txt\u{2066} \u{2028} é — →\n{{IF:dco\u{9b}2J}}x{{/IF}}\n";
    world.rule("90-team\u{202e}.md", hostile);
    let cases: &[&[&str]] = &[
        &["assemble", "--format", "json"],
        &["explain", "--format", "json"],
        &["check", "--format", "json"],
        &["check", "--format", "sarif"],
    ];
    let mut carried = 0;
    for args in cases {
        let shown = on_terminal(&world, args);
        let text = String::from_utf8(shown.shown).unwrap();
        assert!(!drives_a_terminal(&text), "{args:?}: {text}");
        let piped = world.run(args);
        assert_eq!(code(&piped), shown.code, "{args:?}");
        let piped = stdout(&piped);
        assert_eq!(
            piped.contains('\u{202e}'),
            text.contains("\\u202e"),
            "{args:?}: {text}"
        );
        carried += usize::from(piped.contains('\u{202e}'));
        assert_eq!(
            piped.contains("é — →"),
            text.contains("é — →"),
            "{args:?}: kept as it is"
        );
        assert_eq!(untimed(&text), untimed(&piped), "{args:?}");
    }
    assert!(
        carried >= 3,
        "assemble, explain and check carry the rule's name or text"
    );
}

/// `eval` and `serve` answer a person at a terminal the same way.
#[test]
fn line_protocols_on_a_terminal_carry_no_control() {
    let world = World::new();
    let request = serde_json::json!({
        "rules": ["# T \u{9b}31m \u{202e}x\n{{IF:dco\u{2066}}}y{{/IF}}\n"],
        "settings": {},
    });
    let shown = on_terminal_with_input(&world, &["eval"], Some(format!("{request}\n").as_bytes()));
    let text = String::from_utf8(shown.shown).unwrap();
    assert!(!drives_a_terminal(&text), "{text}");
    assert!(text.contains("\\u009b31m \\u202ex"), "{text}");

    world.rule("90-team.md", "# Team \u{9b}31m \u{202e}x\n");
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "assemble",
        "params": { "cwd": world.project.to_str().unwrap() },
    });
    let shown = on_terminal_with_input(&world, &["serve"], Some(format!("{request}\n").as_bytes()));
    let text = String::from_utf8(shown.shown).unwrap();
    assert!(!drives_a_terminal(&text), "{text}");
    assert!(text.contains("# Team \\u009b31m \\u202ex"), "{text}");
}

/// A command line clap refuses is quoted in its message: the quote shows its controls escaped.
#[test]
fn usage_errors_show_the_command_line_escaped() {
    let world = World::new();
    for args in [
        &[
            "assemble",
            "--settings",
            "x\u{1b}]0;OWNED\u{7}\u{1b}[2J\u{9b}31m\u{202e}",
        ][..],
        &["explain", "\u{1b}[2J\u{202e}"],
        &["no-such-command\u{9b}2J"],
    ] {
        let out = world.run(args);
        assert_eq!(code(&out), 2, "{args:?}");
        let err = stderr(&out);
        assert!(!drives_a_terminal(&err), "{args:?}: {err}");
        assert!(
            err.contains("\\u{202e}") || err.contains("\\x9b2J"),
            "{args:?}: {err}"
        );
    }
    let help = world.run(&["assemble", "--help"]);
    assert_eq!(code(&help), 0);
    assert!(stdout(&help).starts_with("Assemble the rules block"));
}
