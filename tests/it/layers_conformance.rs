//! Layer conformance: every case of the conformance data's `layers.jsonl` built as a real tree
//! (as `fs_case.py` does) and run through the built binary's `assemble` and `settings`. Each case
//! also runs `explain`, whose kept files and blocks must be exactly what `assemble` printed, and
//! `serve`, whose `assemble` and `settings` methods must give the same block, warnings and
//! settings. The data is the repository's `conformance/layers.jsonl.gz`, or
//! `$PI_RULES_CONFORMANCE_DIR`; missing data fails the test (see [`conformance_data`]).

use crate::conformance_data;

use serde_json::{json, Value};
use std::fs;
use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The tree of one case: (environment, cwd, package dir).
struct Tree {
    env: Vec<(String, String)>,
    cwd: PathBuf,
    package: PathBuf,
}

fn write_layer(dir: &Path, entries: &[Value], package: &Path) {
    for entry in entries {
        let name = entry["name"].as_str().unwrap();
        let path = dir.join(name);
        match entry["kind"].as_str().unwrap() {
            "file" => fs::write(&path, entry["content"].as_str().unwrap()).unwrap(),
            "bytes" => fs::write(&path, hex(entry["hex"].as_str().unwrap())).unwrap(),
            "big" => {
                let size = entry["size"].as_u64().unwrap() as usize;
                let line = format!("# big\n{}\n", "x".repeat(99));
                let text = line.repeat(size / 106) + &"y".repeat(size % 106);
                fs::write(&path, text).unwrap();
            }
            "dir" => fs::create_dir_all(&path).unwrap(),
            "dangling" => symlink(dir.join("does-not-exist"), &path).unwrap(),
            "symlink_dir" => {
                fs::create_dir_all(dir.join("_adir")).unwrap();
                symlink(dir.join("_adir"), &path).unwrap();
            }
            "symlink_pkg" => symlink(package.join(name), &path).unwrap(),
            other => panic!("unknown entry kind {other}"),
        }
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn build(case: &Value, root: &Path) -> Tree {
    let home = root.join("home");
    let project = root.join("proj");
    let package = root.join("pkg");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&project).unwrap();
    let mut cwd = project.clone();
    let mut project_layer = project.join(".pi/rules");
    if case["git_subdir"].as_bool().unwrap_or(false) {
        let status = Command::new("git")
            .args(["init", "-q"])
            .arg(&project)
            .status()
            .unwrap();
        assert!(status.success());
        cwd = project.join("sub");
        fs::create_dir_all(&cwd).unwrap();
        project_layer = cwd.join(".pi/rules");
    }
    let layers = [
        ("package", package.clone()),
        ("user", home.join(".pi/agent/rules")),
        ("project", project_layer),
    ];
    for (name, dir) in &layers {
        let kind = case["layer_kinds"][name].as_str().unwrap_or("dir");
        if kind == "missing" {
            continue;
        }
        fs::create_dir_all(dir.parent().unwrap()).unwrap();
        if kind == "file" {
            fs::write(dir, "not a directory").unwrap();
            continue;
        }
        fs::create_dir_all(dir).unwrap();
        write_layer(dir, case[name].as_array().unwrap(), &package);
    }
    for (which, base) in [
        ("project_settings", project.join(".pi")),
        ("global_settings", home.join(".pi")),
    ] {
        let Some(settings) = case.get(which).filter(|s| s.is_object()) else {
            continue;
        };
        fs::create_dir_all(&base).unwrap();
        let name = settings["name"].as_str().unwrap();
        fs::write(base.join(name), settings["content"].as_str().unwrap()).unwrap();
        if case["both_project_settings"].as_bool().unwrap_or(false) && which == "project_settings" {
            let other = if name.ends_with("jsonc") {
                "pi-config-settings.json"
            } else {
                "pi-config-settings.jsonc"
            };
            fs::write(
                base.join(other),
                r#"{"dco": true, "review_loop_enforcement": true}"#,
            )
            .unwrap();
        }
    }
    let mut env = vec![
        ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
        ("HOME".to_owned(), home.display().to_string()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ];
    for (k, v) in case["env"].as_object().unwrap() {
        env.push((k.clone(), v.as_str().unwrap().to_owned()));
    }
    if case["subagent"].as_bool().unwrap_or(false) {
        env.push(("PI_SUBAGENT_CHILD".to_owned(), "1".to_owned()));
    }
    Tree { env, cwd, package }
}

fn run(tree: &Tree, args: &[&str], coms: bool, subagent_env: bool) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi-rules"));
    cmd.args(args).arg("--cwd").arg(&tree.cwd).env_clear().envs(
        tree.env
            .iter()
            .filter(|(k, _)| subagent_env || k != "PI_SUBAGENT_CHILD")
            .map(|(k, v)| (k, v)),
    );
    if args[0] != "settings" {
        cmd.arg("--package-dir").arg(&tree.package);
        if coms {
            cmd.arg("--coms-active");
        }
    }
    let output = cmd.output().unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        json!({
            "unparsable": String::from_utf8_lossy(&output.stdout),
            "stderr": String::from_utf8_lossy(&output.stderr),
        })
    })
}

/// `assemble`, `settings` and `assemble` with `confine` of one case through `pi-rules serve` (one
/// process, three requests): the three results.
fn serve(tree: &Tree, coms: bool) -> (Value, Value, Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
        .arg("serve")
        .env_clear()
        .envs(tree.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "assemble", "params": {
            "cwd": tree.cwd, "package_dir": tree.package, "coms_active": coms}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "settings", "params": {"cwd": tree.cwd}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "assemble", "params": {
            "cwd": tree.cwd, "package_dir": tree.package, "coms_active": coms, "confine": true}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for request in &requests {
        writeln!(stdin, "{request}").unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "serve exits 0 at EOF");
    let mut results = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|line| {
            let response: Value = serde_json::from_slice(line).unwrap();
            response.get("result").cloned().unwrap_or(response)
        });
    let assembled = results.next().unwrap_or(Value::Null);
    let settings = results.next().unwrap_or(Value::Null);
    let confined = results.next().unwrap_or(Value::Null);
    (assembled, settings, confined)
}

/// Whether the case's project layer links out of the project (into the package directory), which
/// `--confine` refuses.
fn leaves_the_project(case: &Value) -> bool {
    case["project"]
        .as_array()
        .is_some_and(|entries| entries.iter().any(|e| e["kind"] == "symlink_pkg"))
}

/// The rules block rebuilt from `explain`'s report alone: for each file it calls included, the
/// body without the markers of kept blocks and without dropped blocks, then the table repair,
/// join and placeholder steps. If `explain` misreports a decision, the rebuild differs from what
/// `assemble` printed.
fn explained_block(explain: &Value) -> Option<String> {
    if explain["subagent"] == true {
        return Some(String::new());
    }
    if explain["fallback"] == true {
        return Some(
            "\n\n[ORCHESTRATOR RULES] You are a MANAGER. Delegate work to subagents.\n".to_owned(),
        );
    }
    let mut bodies = Vec::new();
    for file in explain["files"].as_array()? {
        let status = file["status"].as_str()?;
        if !matches!(status, "included" | "unreadable-fell-back" | "masked") {
            continue;
        }
        let bytes = fs::read(file["path"].as_str()?).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body_start = file["body_start"].as_u64()? as usize;
        let mut cuts: Vec<(usize, usize)> = Vec::new();
        for block in file["blocks"].as_array()? {
            let range = |field: &str| -> Option<(usize, usize)> {
                let r = block[field].as_array()?;
                Some((r[0].as_u64()? as usize, r[1].as_u64()? as usize))
            };
            match block["state"].as_str()? {
                "kept" => {
                    cuts.push(range("opener")?);
                    cuts.push(range("closer")?);
                }
                "dropped" => cuts.push((range("opener")?.0, range("closer")?.1)),
                _ => {}
            }
        }
        cuts.sort_unstable();
        let mut body = String::new();
        let mut pos = body_start;
        for (start, end) in cuts {
            if start >= pos {
                body.push_str(&text[pos..start]);
                pos = end;
            }
        }
        body.push_str(&text[pos..]);
        bodies.push(pi_rules_core::table::repair(&body).into_owned());
    }
    let joined = bodies.join("\n\n");
    let repaired = pi_rules_core::table::repair(&joined);
    let value = explain["placeholders"][0]["value"].as_str()?;
    let mut text = String::new();
    pi_rules_core::placeholder::substitute_into(&repaired, value, &mut text);
    Some(format!("\n\n{text}"))
}

#[test]
fn layers_conformance() {
    let data = conformance_data::read("layers.jsonl");
    let mut total = 0;
    let mut failures = Vec::new();
    let mut explain_failures = Vec::new();
    let mut serve_failures = Vec::new();
    let mut confined_cases = 0;
    let mut confine_failures = Vec::new();
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).unwrap();
        let (case, expected) = (&record["case"], &record["expected"]);
        total += 1;
        let root = tempfile::tempdir().unwrap();
        let tree = build(case, root.path());
        let coms = case["coms_active"].as_bool().unwrap_or(false);
        let assembled = run(&tree, &["assemble", "--format", "json"], coms, true);
        let settings = run(&tree, &["settings", "--format", "json"], false, false);
        let mut problems = Vec::new();
        for key in ["block", "warnings"] {
            if assembled.get(key) != Some(&expected[key]) {
                problems.push(format!(
                    "{key}: expected {} got {}",
                    expected[key],
                    assembled.get(key).unwrap_or(&assembled)
                ));
            }
        }
        for (key, value) in expected["settings"].as_object().unwrap() {
            if settings.get(key) != Some(value) {
                problems.push(format!(
                    "settings.{key}: expected {value} got {:?}",
                    settings.get(key)
                ));
            }
        }
        if !problems.is_empty() {
            failures.push((total - 1, problems));
        }
        // The serve process has the subagent variable when the case has it, as `assemble` above.
        let (served, served_settings, confined) = serve(&tree, coms);
        let same_assembly = ["block", "warnings"]
            .iter()
            .all(|key| served.get(key) == assembled.get(key));
        if !same_assembly || served_settings != settings {
            serve_failures.push(total - 1);
        }
        // Without links out of the project, `--confine` changes nothing.
        if !leaves_the_project(case) {
            confined_cases += 1;
            if ["block", "warnings"]
                .iter()
                .any(|key| confined.get(key) != Some(&expected[key]))
            {
                confine_failures.push(total - 1);
            }
        }
        let explained = run(&tree, &["explain", "--format", "json"], coms, true);
        let rebuilt = explained_block(&explained).map(Value::String);
        if rebuilt.as_ref() != assembled.get("block") {
            explain_failures.push(total - 1);
        }
    }
    println!("layers: {}/{total} identical", total - failures.len());
    println!(
        "explain agrees with assemble: {}/{total}",
        total - explain_failures.len()
    );
    println!(
        "serve agrees with assemble and settings: {}/{total}",
        total - serve_failures.len()
    );
    println!(
        "with --confine, on trees without links out of the project: {}/{confined_cases} identical",
        confined_cases - confine_failures.len()
    );
    for (index, problems) in failures.iter().take(5) {
        println!("--- case {index}");
        for p in problems {
            println!("  {}", p.chars().take(600).collect::<String>());
        }
    }
    assert!(total > 0, "layers.jsonl holds no cases");
    assert!(failures.is_empty(), "{} cases differ", failures.len());
    assert!(
        confine_failures.is_empty(),
        "--confine changes cases {:?}",
        &confine_failures[..confine_failures.len().min(10)]
    );
    assert!(
        serve_failures.is_empty(),
        "serve disagrees with the commands on cases {:?}",
        &serve_failures[..serve_failures.len().min(10)]
    );
    assert!(
        explain_failures.is_empty(),
        "explain disagrees with assemble on cases {:?}",
        &explain_failures[..explain_failures.len().min(10)]
    );
}
