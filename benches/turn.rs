//! The agent turn where nothing changed, next to what it is measured against, interleaved in one
//! run so that the shared machine's load falls on all of them alike (issue 37):
//!
//! - `turn`: `assemble` with `have` to a `pi-rules serve` child, over its pipes, answered
//!   `{"unchanged":true}` (one `lstat` per path the last run read);
//! - `version`: a bare `version` request over the same pipes, the floor of any round trip;
//! - `assemble`: a whole `assemble` over the pipes (what every turn cost before: about 34 KB);
//! - `one-shot`: a `pi-rules assemble --format json` process, from spawn to exit, its output read
//!   from a pipe;
//! - `in process`: the server's own work for `turn` and for `assemble` (`LineServer` without the
//!   pipes).
//!
//! The project is `scripts/serve_latency.py`'s typical one: a repository with a settings file
//! and two project rules, the embedded package rules, an empty `$HOME`. Its files are left two
//! seconds to settle before the timing, as a project between two turns is (stamps of files
//! changed within two seconds before a run are not trusted).
//!
//! The in-process reference, pi-config's loader, is not in this repository; its published figures
//! (650–792 µs a turn on this kind of machine) are quoted next to the ratios, and the pi package's
//! benchmark (`integrations/pi/bench/turn.ts`) measures, in the same run as the package's own
//! turns, the floor of an in-process loader: reading the same files with Node.
//!
//! Run with `cargo bench -p pi-rules --bench turn` (`TURN_ROUNDS=N`, default 2000).

use pi_rules::serve::LineServer;
use pi_rules_host::env::Env;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_pi-rules");

/// The published figures of the reference's in-process turn, in µs (the issue's, and
/// `../shared/bench/README.md`'s).
const REFERENCE_US: [f64; 2] = [650.0, 792.0];

fn typical_project(root: &Path) -> (PathBuf, PathBuf) {
    let app = root.join("app");
    std::fs::create_dir_all(app.join(".pi/rules")).expect("rules");
    std::fs::create_dir_all(app.join(".git")).expect("git");
    std::fs::write(app.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::write(
        app.join(".pi/pi-config-settings.jsonc"),
        "{\n  // the team's settings\n  \"dco\": true,\n  \"use_worktrees\": true\n}\n",
    )
    .expect("settings");
    std::fs::write(
        app.join(".pi/rules/90-team.md"),
        "# Team\n\n{{IF:dco}}Sign off every commit.{{/IF}}\n\nKeep changes small.\n",
    )
    .expect("rule");
    std::fs::write(
        app.join(".pi/rules/95-deploy.md"),
        "# Deploy\n\nDeploy from main only, after review.\n",
    )
    .expect("rule");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    (app, home)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn percentile(values: &[f64], p: f64) -> f64 {
    values[((values.len() as f64 * p) as usize).min(values.len() - 1)]
}

struct Pipe {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    line: String,
}

impl Pipe {
    fn start(home: &Path) -> Pipe {
        let mut child = Command::new(BIN)
            .arg("serve")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("serve");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().expect("stdout"));
        Pipe {
            child,
            stdin,
            stdout,
            line: String::new(),
        }
    }

    /// Sends `request` and reads the response line: the round trip's µs.
    fn round_trip(&mut self, request: &[u8]) -> f64 {
        self.line.clear();
        let started = Instant::now();
        self.stdin.write_all(request).expect("write");
        self.stdin.flush().expect("flush");
        self.stdout.read_line(&mut self.line).expect("read");
        started.elapsed().as_secs_f64() * 1e6
    }
}

fn one_shot(cwd: &Path, home: &Path) -> f64 {
    let started = Instant::now();
    let output = Command::new(BIN)
        .args(["assemble", "--format", "json", "--cwd"])
        .arg(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .stderr(Stdio::null())
        .output()
        .expect("one-shot");
    let elapsed = started.elapsed().as_secs_f64() * 1e6;
    assert!(output.status.success() && output.stdout.starts_with(b"{\"format\":"));
    elapsed
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let rounds: usize = std::env::var("TURN_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000);
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let (cwd, home) = typical_project(&root);
    std::thread::sleep(Duration::from_millis(2100));

    let cwd_json = serde_json::to_string(&cwd).expect("cwd");
    let plain = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"assemble\",\"params\":{{\"cwd\":{cwd_json}}}}}\n"
    );
    let first = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"assemble\",\"params\":{{\"cwd\":{cwd_json},\"have\":\"\"}}}}\n"
    );
    let version = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"version\"}\n";

    let mut pipe = Pipe::start(&home);
    pipe.round_trip(first.as_bytes());
    let reply: serde_json::Value = serde_json::from_str(&pipe.line).expect("reply");
    let token = reply["result"]["token"].as_str().expect("token").to_owned();
    let turn = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"assemble\",\"params\":{{\"cwd\":{cwd_json},\"have\":\"{token}\"}}}}\n"
    );
    pipe.round_trip(turn.as_bytes());
    assert_eq!(
        pipe.line,
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"unchanged\":true}}\n"
    );
    let unchanged_bytes = pipe.line.len();
    pipe.round_trip(plain.as_bytes());
    let whole_bytes = pipe.line.len();

    let env = Env::from_vars(cwd.clone(), [("HOME", home.clone().into_os_string())]);
    let mut server = LineServer::new(env, Duration::from_secs(30));
    let mut sink = Vec::with_capacity(1 << 16);
    let mut in_process = |line: &[u8]| {
        sink.clear();
        let started = Instant::now();
        server
            .handle_line(line.strip_suffix(b"\n").unwrap_or(line), &mut sink)
            .expect("in process");
        started.elapsed().as_secs_f64() * 1e6
    };
    in_process(first.as_bytes());
    assert!(in_process(turn.as_bytes()) > 0.0);

    let warm = 50.min(rounds);
    let mut samples: [Vec<f64>; 6] = Default::default();
    for round in 0..warm + rounds {
        // Each measurement in turn goes first, so that none always follows the one-shot process
        // (the server's pipe then wakes a CPU that went idle while it ran).
        let mut row = [0.0; 6];
        for step in 0..row.len() {
            let at = (round + step) % row.len();
            row[at] = match at {
                0 => pipe.round_trip(turn.as_bytes()),
                1 => pipe.round_trip(version),
                2 => pipe.round_trip(plain.as_bytes()),
                3 => one_shot(&cwd, &home),
                4 => in_process(turn.as_bytes()),
                _ => in_process(plain.as_bytes()),
            };
        }
        if round >= warm {
            for (samples, value) in samples.iter_mut().zip(row) {
                samples.push(value);
            }
        }
    }
    drop(pipe.stdin);
    let _ = pipe.child.wait();

    let labels = [
        "turn, unchanged (pipe)",
        "version (pipe)",
        "assemble, whole (pipe)",
        "one-shot assemble process",
        "turn, unchanged (in process)",
        "assemble, whole (in process)",
    ];
    let mut medians = [0.0; 6];
    println!(
        "{rounds} rounds, interleaved; the unchanged answer is {unchanged_bytes} bytes, the whole \
         one {whole_bytes}"
    );
    for (i, samples) in samples.iter_mut().enumerate() {
        medians[i] = median(samples);
        println!(
            "{:32} median {:9.1} µs   p10 {:9.1}   p90 {:9.1}",
            labels[i],
            medians[i],
            percentile(samples, 0.1),
            percentile(samples, 0.9)
        );
    }
    let [turn, version, whole, process, _, _] = medians;
    println!(
        "turn / one-shot process:  {:.4}   (target <= 0.015)",
        turn / process
    );
    println!(
        "turn / reference's turn:  {:.3}–{:.3}   (its published {}–{} µs; target <= 0.1)",
        turn / REFERENCE_US[1],
        turn / REFERENCE_US[0],
        REFERENCE_US[0],
        REFERENCE_US[1]
    );
    println!("turn / version:           {:.2}", turn / version);
    println!("turn / whole assemble:    {:.3}", turn / whole);
}
