//! The temporary machine the black-box CLI tests run `pi-rules` in: a home directory and a
//! project directory, a clean environment, and helpers to write rules and run commands.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The commands added for writing and inspecting rules, and `schema`, `completions` and `man`:
/// each has examples in its `--help` and a tested example in the documentation.
pub const EXAMPLE_COMMANDS: &[&str] = &[
    "show",
    "override",
    "new",
    "diff",
    "watch",
    "schema",
    "completions",
    "man",
    "export",
    "import",
];

/// A temporary machine: `$HOME`, a project directory (the working directory of every command)
/// and the environment variables the test sets; nothing else from the test's environment but
/// `PATH`.
pub struct World {
    root: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    env: Vec<(String, String)>,
}

impl World {
    pub fn new() -> World {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = root.path().join("project");
        // Both `.pi` directories exist and are empty: no settings, no rules.
        fs::create_dir_all(home.join(".pi")).unwrap();
        fs::create_dir_all(project.join(".pi")).unwrap();
        World {
            root,
            home,
            project,
            env: Vec::new(),
        }
    }

    /// The same world with `key` set in every command's environment.
    pub fn env(mut self, key: &str, value: &str) -> World {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The temporary directory that holds everything.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// `$HOME/.pi/agent/rules` (not created).
    pub fn user_rules(&self) -> PathBuf {
        self.home.join(".pi/agent/rules")
    }

    /// `<project>/.pi/rules` (not created).
    pub fn project_rules(&self) -> PathBuf {
        self.project.join(".pi/rules")
    }

    /// `<project>/.pi/rules`, created.
    pub fn project_layer(&self) -> PathBuf {
        let dir = self.project_rules();
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Writes `text` to `dir/name`, creating `dir`.
    pub fn write(&self, dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        fs::create_dir_all(dir).unwrap();
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        path
    }

    /// Writes a project rule.
    pub fn rule(&self, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        self.write(&self.project_rules(), name, text)
    }

    /// Writes a global settings file, `$HOME/.pi/NAME`.
    pub fn global_settings(&self, name: &str, text: &str) -> PathBuf {
        self.write(&self.home.join(".pi"), name, text)
    }

    /// A package directory with the given rules, for `--package-dir`.
    pub fn package(&self, rules: &[(&str, &str)]) -> String {
        let dir = self.root().join("package");
        fs::create_dir_all(&dir).unwrap();
        for (name, text) in rules {
            self.write(&dir, name, text);
        }
        dir.display().to_string()
    }

    /// `program` in this world: clean environment, `$HOME`, the project as working directory,
    /// stdin closed.
    pub fn program(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .current_dir(&self.project)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        cmd
    }

    /// `pi-rules ARGS` in this world.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.program(env!("CARGO_BIN_EXE_pi-rules"));
        cmd.args(args);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs with more environment variables.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.command(args)
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }

    /// Runs with `input` on stdin.
    pub fn run_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    /// Runs and asserts the exit code.
    pub fn expect(&self, args: &[&str], code: i32) -> Output {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}\nstdout: {}\nstderr: {}",
            stdout(&out),
            stderr(&out)
        );
        out
    }

    /// Runs `pi-rules ARGS` through `sh -c`, with `redirect` applied (e.g. `>&-`).
    pub fn shell(&self, args: &[&str], redirect: &str) -> Output {
        let script = format!("exec \"$0\" \"$@\" {redirect}");
        self.program("sh")
            .arg("-c")
            .arg(script)
            .arg(env!("CARGO_BIN_EXE_pi-rules"))
            .args(args)
            .output()
            .unwrap()
    }
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The exit code; a test fails when the process was killed by a signal.
pub fn code(out: &Output) -> i32 {
    out.status.code().expect("exited, not killed by a signal")
}

/// The entry of file `name` in the `files` of an `assemble` or `explain` JSON report.
pub fn file_entry<'a>(report: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    report["files"]
        .as_array()?
        .iter()
        .find(|f| f["name"] == name)
}

/// Runs git hermetically in `cwd` (no user or system config, no discovery variables).
pub fn git(cwd: &Path, args: &[&str]) {
    let mut command = Command::new("git");
    command
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    for name in pi_rules_host::repo::GIT_DISCOVERY_ENV {
        command.env_remove(name);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo failed");
}

/// The names in a directory, sorted (to see leftover temporary files).
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every file below `dir`, relative to it, `/`-separated, in name order; `.pi` directories (the
/// rule layers) are not entered.
pub fn files_below(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().unwrap() != ".pi" {
                    stack.push(path);
                }
            } else {
                let rel = path.strip_prefix(dir).unwrap();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}
