//! `pi-rules serve` as a host drives it: a child process, one request per line, one response per
//! line. The layer conformance data also run through `serve` (see `layers_conformance.rs`).

use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// A running `pi-rules serve` with a home directory of its own.
struct ServeChild {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    _home: tempfile::TempDir,
    home: PathBuf,
    next_id: u64,
}

impl ServeChild {
    fn start(args: &[&str]) -> ServeChild {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
            .arg("serve")
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        ServeChild {
            child,
            stdin,
            stdout,
            home: home.path().to_path_buf(),
            _home: home,
            next_id: 0,
        }
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn read_response(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(line.ends_with('\n'), "a whole line: {line:?}");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends `line` and reads one response line.
    fn exchange(&mut self, line: &str) -> Value {
        self.send_line(line);
        self.read_response()
    }

    /// Calls `method` and returns the whole response.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let response = self.exchange(&request.to_string());
        assert_eq!(response["id"], self.next_id, "{response}");
        response
    }

    /// Calls `method` and returns its result, failing on an error response.
    fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }

    /// Closes stdin and waits: the exit status.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

fn project(root: &Path, name: &str, rules: &[(&str, &str)]) -> PathBuf {
    let dir = root.join(name);
    let layer = dir.join(".pi/rules");
    fs::create_dir_all(&layer).unwrap();
    for (file, text) in rules {
        fs::write(layer.join(file), text).unwrap();
    }
    dir
}

/// What the one-shot command prints with `--format json`, run in the same environment.
fn one_shot(home: &Path, args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn results_are_what_the_commands_print() {
    let root = tempfile::tempdir().unwrap();
    let dir = project(
        root.path(),
        "app",
        &[("90-x.md", "{{IF:typo}}x{{/IF}}Project rule.\n")],
    );
    let cwd = dir.to_str().unwrap();
    let mut server = ServeChild::start(&[]);
    let home = server.home.clone();
    let mut served = server.result("assemble", json!({"cwd": cwd}));
    let mut direct = one_shot(&home, &["assemble", "--format", "json", "--cwd", cwd]);
    // Timings differ from run to run.
    served["stats"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| !k.ends_with("_us"));
    direct["stats"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| !k.ends_with("_us"));
    assert_eq!(served, direct);
    assert_eq!(
        served["warnings"],
        json!(["unknown setting key in conditional: typo"])
    );
    for (method, args) in [
        ("explain", vec!["explain", "--format", "json", "--cwd", cwd]),
        ("check", vec!["check", "--format", "json", "--cwd", cwd]),
        (
            "settings",
            vec!["settings", "--format", "json", "--cwd", cwd],
        ),
    ] {
        assert_eq!(
            server.result(method, json!({"cwd": cwd})),
            one_shot(&home, &args),
            "{method}"
        );
    }
    let text = server.result("explain", json!({"cwd": cwd, "format": "text"}));
    assert!(text["text"].as_str().unwrap().contains("90-x.md"), "{text}");
    let short = server.result("check", json!({"cwd": cwd, "format": "short"}));
    assert_eq!(short["errors"], 1, "{short}");
    assert!(short["text"].as_str().unwrap().contains("PR101"), "{short}");
    assert!(server.finish().success());
}

#[test]
fn many_working_directories_in_one_process() {
    let root = tempfile::tempdir().unwrap();
    let mut server = ServeChild::start(&[]);
    for i in 0..20 {
        let text = format!("Rule of project {i}.\n");
        let dir = project(root.path(), &format!("p{i}"), &[("90-own.md", &text)]);
        let result = server.result("assemble", json!({"cwd": dir}));
        let block = result["block"].as_str().unwrap();
        assert!(block.ends_with(&format!("\n\n{text}")), "{i}: {block:?}");
        assert_eq!(block.matches("Rule of project").count(), 1);
    }
    assert!(server.finish().success());
}

#[test]
fn rule_files_are_read_on_every_request() {
    let root = tempfile::tempdir().unwrap();
    let dir = project(root.path(), "app", &[("90-x.md", "First wording.\n")]);
    let mut server = ServeChild::start(&[]);
    let first = server.result("assemble", json!({"cwd": dir}));
    assert!(first["block"]
        .as_str()
        .unwrap()
        .ends_with("First wording.\n"));
    fs::write(dir.join(".pi/rules/90-x.md"), "Second wording.\n").unwrap();
    let second = server.result("assemble", json!({"cwd": dir}));
    assert!(second["block"]
        .as_str()
        .unwrap()
        .ends_with("Second wording.\n"));
}

/// Writes the project settings file with a given modification time, so that the test does not
/// depend on the filesystem's timestamp granularity.
fn write_settings(dir: &Path, text: &str, seconds: u64) {
    let path = dir.join(".pi/pi-config-settings.json");
    fs::write(&path, text).unwrap();
    let file = fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
        .unwrap();
}

#[test]
fn a_settings_edit_shows_at_the_next_request() {
    // serve kept the reference's settings cache: an edit could take `--settings-ttl` seconds
    // (30 by default) to show. Now each request looks at the settings files, as at the rules.
    let root = tempfile::tempdir().unwrap();
    let dir = project(
        root.path(),
        "app",
        &[("90-x.md", "{{IF:dco}}Sign off.{{/IF}}\n")],
    );
    write_settings(&dir, r#"{"dco": true}"#, 1_000_000);
    let mut server = ServeChild::start(&[]);
    let dco = |server: &mut ServeChild| {
        server.result("settings", json!({"cwd": dir, "keys": ["dco"]}))["dco"].clone()
    };
    assert_eq!(dco(&mut server), true);
    let block = server.result("assemble", json!({"cwd": dir}))["block"].clone();
    assert!(block.as_str().unwrap().contains("Sign off."));
    write_settings(&dir, r#"{"dco": false}"#, 2_000_000);
    assert_eq!(dco(&mut server), false);
    let block = server.result("assemble", json!({"cwd": dir}))["block"].clone();
    assert!(!block.as_str().unwrap().contains("Sign off."));
    // An edit of the same size, its modification time put back, shows too.
    write_settings(&dir, r#"{"dco": true }"#, 2_000_000);
    let block = server.result("assemble", json!({"cwd": dir}))["block"].clone();
    assert!(block.as_str().unwrap().contains("Sign off."));
    // Another working directory loads its own settings at once.
    let other = project(root.path(), "other", &[]);
    write_settings(&other, r#"{"dco": true}"#, 3_000_000);
    let result = server.result("settings", json!({"cwd": other, "keys": ["dco"]}));
    assert_eq!(result["dco"], true);
}

/// `assemble` with `have`, as the pi package sends it each turn: the first answer is the result
/// with its token, the next ones `{"unchanged":true}` while nothing changed, and the result
/// again with a new token once a rule or the settings change.
#[test]
fn an_unchanged_turn_is_answered_in_a_few_bytes() {
    let root = tempfile::tempdir().unwrap();
    let dir = project(
        root.path(),
        "app",
        &[("90-x.md", "{{IF:dco}}Sign off.{{/IF}}\n")],
    );
    write_settings(&dir, r#"{"dco": true}"#, 1_000_000);
    let rule = dir.join(".pi/rules/90-x.md");
    let file = fs::File::options().write(true).open(&rule).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000))
        .unwrap();
    let mut server = ServeChild::start(&[]);
    let first = server.result("assemble", json!({"cwd": dir, "have": ""}));
    let plain = server.result("assemble", json!({"cwd": dir}));
    let token = first["token"].as_str().unwrap().to_owned();
    assert_eq!(token.len(), 32);
    assert_eq!(first["block"], plain["block"]);
    assert!(plain.get("token").is_none());
    // The rule was written just now: its stamp is not trusted for two seconds, so this turn may
    // run again; either way, the answer is that nothing changed.
    server.next_id += 1;
    let line = json!({"jsonrpc": "2.0", "id": server.next_id, "method": "assemble",
                      "params": {"cwd": dir, "have": token}})
    .to_string();
    server.send_line(&line);
    let mut raw = String::new();
    server.stdout.read_line(&mut raw).unwrap();
    assert_eq!(
        raw,
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"unchanged\":true}}}}\n",
            server.next_id
        )
    );
    assert!(raw.len() < 64, "{} bytes", raw.len());
    write_settings(&dir, r#"{"dco": false}"#, 2_000_000);
    let changed = server.result("assemble", json!({"cwd": dir, "have": token}));
    assert_ne!(changed["token"], token);
    assert!(!changed["block"].as_str().unwrap().contains("Sign off."));
    // A stale token gets the whole result; `explain` takes no `have`.
    let again = server.result("assemble", json!({"cwd": dir, "have": token}));
    assert_eq!(again["token"], changed["token"]);
    let refused = server.call("explain", json!({"cwd": dir, "have": ""}));
    assert_eq!(refused["error"]["code"], -32602);
    assert!(server.finish().success());
}

#[test]
fn with_a_zero_ttl_every_request_sees_the_settings_file() {
    let root = tempfile::tempdir().unwrap();
    let dir = project(root.path(), "app", &[]);
    write_settings(&dir, r#"{"review_loop_max_cycles": 4}"#, 1_000_000);
    let mut server = ServeChild::start(&["--settings-ttl", "0"]);
    let params = json!({"cwd": dir, "keys": ["review_loop_max_cycles"]});
    assert_eq!(
        server.result("settings", params.clone())["review_loop_max_cycles"],
        4
    );
    write_settings(&dir, r#"{"review_loop_max_cycles": 7}"#, 2_000_000);
    assert_eq!(
        server.result("settings", params)["review_loop_max_cycles"],
        7
    );
}

#[test]
fn render_and_eval_and_version() {
    let root = tempfile::tempdir().unwrap();
    let dir = project(root.path(), "app", &[]);
    let mut server = ServeChild::start(&[]);
    let rendered = server.result(
        "render",
        json!({"cwd": dir, "prompt": "cfg {{SETTINGS:dco}}"}),
    );
    assert_eq!(rendered, json!({"text": "cfg {\"dco\":false}"}));
    let evaluated = server.result(
        "eval",
        json!({"rules": ["a{{IF:x}}b{{/IF}}{{/IF}}"], "settings": {"x": true}}),
    );
    assert_eq!(
        evaluated,
        json!({"text": "ab{{/IF}}", "warnings": ["unbalanced conditional marker: {{/IF}}"],
               "files": [{"index": 0, "included": true}]})
    );
    let version = server.result("version", Value::Null);
    assert_eq!(version["name"], "pi-rules");
    assert_eq!(version["protocol"], 1);
    assert_eq!(version["version"], env!("CARGO_PKG_VERSION"));
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error: {response}"))
}

#[test]
fn every_error_code() {
    let mut server = ServeChild::start(&[]);
    let parse = server.exchange("{not json");
    assert_eq!(error_code(&parse), -32700);
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(error_code(&server.exchange("\u{ff}\u{fe}")), -32700);
    for not_a_request in [
        r#"{"id": 1, "method": "version"}"#,
        r#"{"jsonrpc": "1.0", "id": 1, "method": "version"}"#,
        r#"{"jsonrpc": "2.0", "id": 1, "method": 5}"#,
        r#"{"jsonrpc": "2.0", "id": {}, "method": "version"}"#,
        r#"42"#,
        r#""text""#,
        r#"[]"#,
    ] {
        let response = server.exchange(not_a_request);
        assert_eq!(error_code(&response), -32600, "{not_a_request}");
    }
    let unknown = server.call("nope", json!({}));
    assert_eq!(error_code(&unknown), -32601);
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .contains("assemble"));
    for (method, params) in [
        ("assemble", json!({})),
        ("assemble", json!({"cwd": 5})),
        ("assemble", json!({"cwd": "/", "colour": true})),
        ("explain", json!({"cwd": "/", "format": "yaml"})),
        ("assemble", json!({"cwd": "/", "format": "text"})),
        ("check", json!({"cwd": "/", "format": "sarif-ish"})),
        ("settings", json!({"cwd": "/", "keys": "dco"})),
        ("render", json!({"cwd": "/"})),
        ("eval", Value::Null),
    ] {
        let response = server.call(method, params.clone());
        assert_eq!(error_code(&response), -32602, "{method} {params}");
    }
    let missing = server.call("assemble", json!({"cwd": "/no/such/dir"}));
    assert_eq!(error_code(&missing), -32000);
    assert_eq!(missing["error"]["data"]["kind"], "input");
    // The server is still answering.
    assert_eq!(server.result("version", Value::Null)["protocol"], 1);
    assert!(server.finish().success());
}

#[test]
fn batches_and_notifications() {
    let mut server = ServeChild::start(&[]);
    // A notification gets no response: the next line answered is the request after it.
    server.send_line(r#"{"jsonrpc": "2.0", "method": "version"}"#);
    server.send_line(r#"{"jsonrpc": "2.0", "method": "no-such-method"}"#);
    let response = server.exchange(r#"{"jsonrpc": "2.0", "id": "after", "method": "version"}"#);
    assert_eq!(response["id"], "after");
    let batch = server.exchange(
        r#"[{"jsonrpc": "2.0", "id": 1, "method": "version"},
            {"jsonrpc": "2.0", "method": "version"},
            {"jsonrpc": "2.0", "id": 2, "method": "nope"},
            7]"#
        .replace('\n', " ")
        .as_str(),
    );
    let items = batch.as_array().unwrap();
    assert_eq!(items.len(), 3, "{batch}");
    assert_eq!(items[0]["id"], 1);
    assert_eq!(items[1]["id"], 2);
    assert_eq!(error_code(&items[1]), -32601);
    assert_eq!(error_code(&items[2]), -32600);
    // A batch of notifications alone gets nothing; the next request is answered in order.
    server.send_line(r#"[{"jsonrpc": "2.0", "method": "version"}]"#);
    let response = server.exchange(r#"{"jsonrpc": "2.0", "id": null, "method": "version"}"#);
    assert_eq!(response["id"], Value::Null);
    assert!(response.get("result").is_some());
}

#[test]
fn lines_split_on_lf_only() {
    let root = tempfile::tempdir().unwrap();
    let text = "Line\u{2028}separator and\u{2029}paragraph separator.\n";
    let dir = project(root.path(), "app", &[("90-x.md", text)]);
    let mut server = ServeChild::start(&[]);
    // The request itself carries U+2028 unescaped inside a string.
    let request = format!(
        "{{\"jsonrpc\": \"2.0\", \"id\": \"\u{2028}\", \"method\": \"assemble\", \"params\": {{\"cwd\": {}}}}}",
        json!(dir)
    );
    let response = server.exchange(&request);
    assert_eq!(response["id"], "\u{2028}");
    assert!(response["result"]["block"]
        .as_str()
        .unwrap()
        .ends_with(text));
}

#[test]
fn an_over_long_line_is_refused_and_the_stream_goes_on() {
    let mut server = ServeChild::start(&[]);
    let stdin = server.stdin.as_mut().unwrap();
    let chunk = vec![b' '; 1 << 20];
    // 80 MiB of spaces, five times the 16 MiB limit, written while the server reads.
    for _ in 0..80 {
        stdin.write_all(&chunk).unwrap();
    }
    stdin.write_all(b"{}\n").unwrap();
    let response = server.read_response();
    assert_eq!(error_code(&response), -32600);
    assert_eq!(server.result("version", Value::Null)["protocol"], 1);
    let pid = server.child.id();
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap();
    assert!(
        rss_kb < 40 * 1024,
        "peak RSS {rss_kb} kB: the long line was kept"
    );
    assert!(server.finish().success());
}

#[test]
fn eof_ends_the_server_with_success() {
    let server = ServeChild::start(&[]);
    let started = Instant::now();
    assert!(server.finish().success());
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The peak resident memory of a running process, in kB.
fn peak_rss_kb(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_large_batch_is_answered_without_holding_every_response() {
    let root = tempfile::tempdir().unwrap();
    let dir = project(root.path(), "app", &[]);
    let mut server = ServeChild::start(&[]);
    // 2,000 assemblies of the package rules: about 60 MB of responses on one line.
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "assemble", "params": {"cwd": dir}});
    let batch = format!("[{}]", vec![request.to_string(); 2000].join(","));
    server.send_line(&batch);
    let response = server.read_response();
    let items = response.as_array().unwrap();
    assert_eq!(items.len(), 2000);
    assert!(items.iter().all(|r| r["result"]["block"]
        .as_str()
        .is_some_and(|b| b.len() > 1000)));
    let pid = server.child.id();
    let rss_kb = peak_rss_kb(pid);
    assert!(
        rss_kb < 40 * 1024,
        "peak RSS {rss_kb} kB: the responses were held together"
    );
    assert!(server.finish().success());
}

/// Runs git hermetically in `cwd`.
fn git_in(cwd: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_CEILING_DIRECTORIES")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn a_git_directory_made_or_removed_shows_within_the_ttl() {
    // `outer/app` is not in a repository: its project settings are `outer/app/.pi`. Once
    // `outer` is one, they are `outer/.pi`. The repository root is kept per working directory
    // for the TTL, as the settings are, and looked for again after it.
    let root = tempfile::tempdir().unwrap();
    let outer = root.path().join("outer");
    let app = project(&outer, "app", &[]);
    fs::create_dir_all(outer.join(".pi")).unwrap();
    write_settings(&outer, r#"{"review_loop_max_cycles": 9}"#, 1_000_000);
    let mut server = ServeChild::start(&["--settings-ttl", "1"]);
    let cycles = |server: &mut ServeChild| {
        let params = json!({"cwd": app, "keys": ["review_loop_max_cycles"]});
        server.result("settings", params)["review_loop_max_cycles"].clone()
    };
    let default = cycles(&mut server);
    assert_ne!(default, 9);
    let made_at = Instant::now();
    git_in(&outer, &["init", "-q"]);
    let cached = cycles(&mut server);
    if made_at.elapsed() < Duration::from_millis(900) {
        assert_eq!(cached, default, "the root is kept for the TTL");
    }
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(cycles(&mut server), 9, "a new .git shows after the TTL");
    // The assembly sees the same root: the settings file it names is the root's.
    let explained = server.result("explain", json!({"cwd": app}));
    assert_eq!(
        explained["settings_files"][0]["path"],
        outer
            .join(".pi/pi-config-settings.json")
            .display()
            .to_string()
    );
    fs::remove_dir_all(outer.join(".git")).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(
        cycles(&mut server),
        default,
        "a removed .git shows after the TTL"
    );
    assert!(server.finish().success());
}

#[test]
fn serve_results_carry_the_note_on_root_rules_left_out() {
    let root = tempfile::tempdir().unwrap();
    let repo = project(root.path(), "repo", &[("90-team.md", "# Team rule\n")]);
    let src = repo.join("src");
    fs::create_dir_all(&src).unwrap();
    git_in(&repo, &["init", "-q"]);
    let mut server = ServeChild::start(&[]);
    let expected = json!([format!(
        "the project rules at the repository root, `{}/.pi/rules`, are not read from this \
         directory: project rules come from the working directory's `.pi/rules` (`{}/.pi/rules`); \
         run from `{}` to use them",
        repo.display(),
        src.display(),
        repo.display()
    )]);
    // Twice: the second request is warm (the root from the cache) and says the same.
    for _ in 0..2 {
        let assembled = server.result("assemble", json!({"cwd": src}));
        assert_eq!(assembled["notes"], expected);
        assert!(!assembled["block"].as_str().unwrap().contains("Team rule"));
        assert_eq!(
            server.result("explain", json!({"cwd": src}))["notes"],
            expected
        );
        let text = server.result("explain", json!({"cwd": src, "format": "text"}));
        assert_eq!(text["notes"], expected, "{text}");
        let short = server.result("check", json!({"cwd": src, "format": "short"}));
        assert_eq!(short["notes"], expected, "{short}");
    }
    // At the root, nothing is left out.
    assert_eq!(
        server.result("assemble", json!({"cwd": repo}))["notes"],
        json!([])
    );
    let text = server.result("explain", json!({"cwd": repo, "format": "text"}));
    assert_eq!(text["notes"], json!([]));
    assert!(server.finish().success());
}

#[test]
fn a_cwd_that_is_not_a_directory_is_named_as_the_request_parameter() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("no\x1bsuch");
    let file = root.path().join("file");
    fs::write(&file, "").unwrap();
    let mut server = ServeChild::start(&[]);
    for cwd in [&missing, &file] {
        for (method, params) in [
            ("assemble", json!({"cwd": cwd})),
            ("explain", json!({"cwd": cwd, "format": "text"})),
            ("check", json!({"cwd": cwd})),
            ("check", json!({"cwd": cwd, "format": "human"})),
            ("settings", json!({"cwd": cwd})),
            ("render", json!({"cwd": cwd, "prompt": "x"})),
        ] {
            let response = server.call(method, params);
            let message = response["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with("params.cwd: `") && message.contains("` is not a directory"),
                "{method}: {message}"
            );
            assert!(!message.contains("--cwd"), "{method}: {message}");
            assert!(!message.contains('\x1b'), "{method}: {message:?}");
            assert_eq!(response["error"]["code"], -32000);
            assert_eq!(response["error"]["data"]["kind"], "input");
        }
    }
    assert!(server.finish().success());
    // The command line names its flag.
    let output = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
        .args(["assemble", "--cwd"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("`--cwd "), "{err}");
    assert!(!err.contains("params.cwd"), "{err}");
}

#[test]
fn keys_resolved_per_key_see_a_settings_change_at_once() {
    // `acpx_agents` and `cli_agents` read the settings files as they are on every request, as
    // the reference does, whatever the TTL: a write shows at the next request even when the
    // server keeps the file's text between requests.
    let root = tempfile::tempdir().unwrap();
    let dir = project(root.path(), "app", &[]);
    let path = dir.join(".pi/pi-config-settings.json");
    fs::write(&path, r#"{"acpx_agents": ["codex"]}"#).unwrap();
    let mut server = ServeChild::start(&[]);
    let agents = |server: &mut ServeChild| {
        server.result("settings", json!({"cwd": dir, "keys": ["acpx_agents"]}))["acpx_agents"]
            .clone()
    };
    assert_eq!(agents(&mut server), json!(["codex"]));
    // Once the file is older than the kernel's time tick by a margin, its text is kept.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(agents(&mut server), json!(["codex"]));
    assert_eq!(agents(&mut server), json!(["codex"]));
    // The same size, another content: the change time tells.
    fs::write(&path, r#"{"acpx_agents": ["gemin"]}"#).unwrap();
    assert_eq!(agents(&mut server), json!(["gemin"]));
    // Replaced by a rename, with the old times put back: another inode.
    let other = dir.join(".pi/new.json");
    fs::write(&other, r#"{"acpx_agents": ["qwen1"]}"#).unwrap();
    let old = fs::metadata(&path).unwrap().modified().unwrap();
    fs::File::options()
        .write(true)
        .open(&other)
        .unwrap()
        .set_modified(old)
        .unwrap();
    fs::rename(&other, &path).unwrap();
    assert_eq!(agents(&mut server), json!(["qwen1"]));
    // Removed: the default at once.
    fs::remove_file(&path).unwrap();
    assert_eq!(agents(&mut server), json!([]));
    assert!(server.finish().success());
}

/// `eval` as a turn: the rule texts once, then their `rules_token`; `have` gets
/// `{"unchanged":true}` while the response would be the same; each response is plain `eval`'s
/// with `token` and `rules_token` added.
#[test]
fn eval_sends_the_rules_once_and_then_their_token() {
    let mut server = ServeChild::start(&[]);
    let rules = json!(["# A\n{{IF:dco}}Sign off.{{/IF}}\n", "{{/IF}}B\n"]);
    let plain = |server: &mut ServeChild, dco: bool| {
        server.result("eval", json!({"rules": rules, "settings": {"dco": dco}}))
    };
    let first = server.result(
        "eval",
        json!({"rules": rules, "settings": {"dco": true}, "have": ""}),
    );
    let rules_token = first["rules_token"].as_str().unwrap().to_owned();
    let token = first["token"].as_str().unwrap().to_owned();
    let mut stripped = first.clone();
    stripped.as_object_mut().unwrap().remove("token");
    stripped.as_object_mut().unwrap().remove("rules_token");
    assert_eq!(stripped, plain(&mut server, true));
    let same = server.result(
        "eval",
        json!({"rules_token": rules_token, "settings": {"dco": true}, "have": token}),
    );
    assert_eq!(same, json!({"unchanged": true}));
    let other = server.result(
        "eval",
        json!({"rules_token": rules_token, "settings": {"dco": false}, "have": token}),
    );
    assert_eq!(other["text"], plain(&mut server, false)["text"]);
    assert_ne!(other["token"], token);
    assert_eq!(other["rules_token"], rules_token);
    let unknown = server.call("eval", json!({"rules_token": "0", "settings": {}}));
    assert_eq!(unknown["error"]["code"], -32602);
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .contains("send `rules` again"));
    let both = server.call("eval", json!({"rules_token": rules_token, "rules": []}));
    assert_eq!(both["error"]["code"], -32602);
    assert!(server.finish().success());
}
