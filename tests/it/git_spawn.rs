//! The `git` that repository discovery spawns: found only through absolute `PATH` entries, run
//! with repository-selected programs switched off, and never waited on for a FIFO that git would
//! block on. Black-box through the binary where the effect is visible (`settings` reads the
//! project settings file at the repository root), and through `repo` where it is not.

use crate::common;

use common::{git, mkfifo};
use pi_rules::invocation::process_env;
use pi_rules_host::repo::{self, Discovery, GIT_HARDENING, GIT_TIMEOUT};
use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The `PATH` of the test process, which holds the real git in an absolute directory.
fn system_path() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned())
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A git that leaves `marker` behind (with a shell builtin: `PATH` may find nothing else) and
/// claims the repository is somewhere else.
fn plant_git(dir: &Path, marker: &Path) {
    script(
        &dir.join("git"),
        &format!(": > '{}'\necho /elsewhere/.git", marker.display()),
    );
}

/// A temporary tree: `home/`, and `repo/` (a repository whose settings file turns `dco` on)
/// with `repo/sub/` as the working directory. The repository declares an extension, so native
/// discovery cannot decide it and git is spawned.
struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let tree = Tree { _tmp: tmp, root };
        fs::create_dir_all(tree.home()).unwrap();
        let repo = tree.repo();
        fs::create_dir_all(repo.join("sub")).unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["config", "core.repositoryformatversion", "1"]);
        git(&repo, &["config", "extensions.worktreeConfig", "true"]);
        fs::create_dir_all(repo.join(".pi")).unwrap();
        fs::write(repo.join(".pi/pi-config-settings.json"), r#"{"dco": true}"#).unwrap();
        assert!(matches!(
            repo::discover(&repo.join("sub")),
            Discovery::NeedsGit(_)
        ));
        tree
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }

    /// `pi-rules settings --format json dco` with `PATH` set to `path`, run in `dir`.
    fn settings(&self, dir: &Path, path: &str, extra: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pi-rules"));
        command
            .args(["settings", "--format", "json"])
            .args(extra)
            .arg("dco")
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .current_dir(dir);
        command.output().unwrap()
    }
}

/// The resolved `dco` from `settings --format json`: `true` only when the settings file at the
/// repository root was found, which here takes the real git.
fn dco(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    value["dco"].clone()
}

#[test]
fn planted_git_in_a_relative_or_empty_path_entry_never_runs() {
    let tree = Tree::new();
    let sub = tree.repo().join("sub");
    let marker = tree.root.join("planted-git-ran");
    // Everywhere a relative entry could lead: the project, the working directory, a `bin` in it.
    for dir in [tree.repo(), sub.clone(), sub.join("bin")] {
        plant_git(&dir, &marker);
    }
    let elsewhere = tree.root.join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    plant_git(&elsewhere, &marker);
    let path = system_path();
    let cases = [
        (format!(".:{path}"), sub.clone(), vec![]),
        (format!(":{path}"), sub.clone(), vec![]),
        (format!("bin:{path}"), sub.clone(), vec![]),
        (format!("..:{path}"), sub.clone(), vec![]),
        // `--cwd` from elsewhere: git runs in the given directory, where `.` now points.
        (
            format!(".:{path}"),
            elsewhere.clone(),
            vec!["--cwd".to_owned(), sub.display().to_string()],
        ),
        (
            format!("{path}:"),
            elsewhere.clone(),
            vec!["--cwd".to_owned(), sub.display().to_string()],
        ),
    ];
    for (search, dir, extra) in cases {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let output = tree.settings(&dir, &search, &extra);
        assert!(!marker.exists(), "a planted git ran with PATH={search:?}");
        // The real git (from an absolute entry) found the repository root.
        assert_eq!(dco(&output), Value::Bool(true), "PATH={search:?}");
    }
}

#[test]
fn only_relative_path_entries_means_no_git_at_all() {
    let tree = Tree::new();
    let sub = tree.repo().join("sub");
    let marker = tree.root.join("planted-git-ran");
    plant_git(&sub, &marker);
    let output = tree.settings(&sub, ".", &[]);
    assert!(!marker.exists());
    // Without git the working directory stands in for the root: no settings file there.
    assert_eq!(dco(&output), Value::Bool(false));
}

#[test]
fn spawned_git_gets_the_hardening_options_and_runs_no_fsmonitor_hook() {
    let tree = Tree::new();
    let repo = tree.repo();
    let hook_marker = tree.root.join("fsmonitor-ran");
    let hook = tree.root.join("hooks/fsmonitor");
    script(&hook, &format!(": > '{}'", hook_marker.display()));
    git(
        &repo,
        &["config", "core.fsmonitor", &hook.display().to_string()],
    );
    // A wrapper in an absolute `PATH` entry records how it is called, then runs the real git.
    let real_git = repo::find_git(Some(system_path().as_ref())).expect("git on PATH");
    let log = tree.root.join("git-args");
    let wrapper_dir = tree.root.join("wrapper");
    script(
        &wrapper_dir.join("git"),
        &format!(
            "printf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"",
            log.display(),
            real_git.display()
        ),
    );
    let path = format!("{}:{}", wrapper_dir.display(), system_path());
    let output = tree.settings(&repo.join("sub"), &path, &[]);
    assert_eq!(dco(&output), Value::Bool(true));
    let calls = fs::read_to_string(&log).expect("the wrapper ran");
    let expected = format!("{} rev-parse --git-common-dir", GIT_HARDENING.join(" "));
    assert_eq!(calls.trim(), expected);
    assert!(calls.contains("-c core.fsmonitor=false"));
    assert!(!hook_marker.exists(), "the repository's fsmonitor hook ran");

    // The options do what they claim with this git: an index-reading command runs the hook
    // without them and not with them.
    let status = |hardened: bool| {
        let mut command = Command::new(&real_git);
        if hardened {
            command.args(GIT_HARDENING);
        }
        command
            .args(["status", "--porcelain"])
            .current_dir(&repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap()
    };
    status(true);
    assert!(
        !hook_marker.exists(),
        "the hardened git ran the fsmonitor hook"
    );
    status(false);
    assert!(
        hook_marker.exists(),
        "this git does not run core.fsmonitor at all, so the check above proves nothing"
    );
}

/// A linked worktree `wt` of `main`, in a fresh temporary directory.
fn worktree() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let main = root.join("main");
    fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q"]);
    git(&main, &["commit", "-q", "--allow-empty", "-m", "initial"]);
    git(&main, &["worktree", "add", "-q", "../wt"]);
    (tmp, main, root.join("wt"))
}

/// Runs `settings` in `dir` and returns how long it took and `dco`.
fn timed_settings(dir: &Path, home: &Path) -> (Duration, Value) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
        .args(["settings", "--format", "json", "dco"])
        .env_clear()
        .env("PATH", system_path())
        .env("HOME", home)
        .current_dir(dir)
        .output()
        .unwrap();
    (started.elapsed(), dco(&output))
}

#[test]
fn fifo_commondir_is_decided_without_waiting_on_git() {
    let (tmp, main, wt) = worktree();
    fs::create_dir_all(main.join(".pi")).unwrap();
    fs::write(main.join(".pi/pi-config-settings.json"), r#"{"dco": true}"#).unwrap();
    // Before: the worktree resolves to the main checkout.
    let (_, before) = timed_settings(&wt, tmp.path());
    assert_eq!(before, Value::Bool(true));

    let commondir = main.join(".git/worktrees/wt/commondir");
    fs::remove_file(&commondir).unwrap();
    mkfifo(&commondir);
    assert_eq!(repo::discover(&wt), Discovery::NotARepository);
    // Git itself would wait on the FIFO until it is killed: the same answer, only later.
    assert_eq!(
        repo::repo_root_from_git(&process_env(), &wt, Duration::from_millis(300)),
        None
    );
    let (took, after) = timed_settings(&wt, tmp.path());
    assert_eq!(after, Value::Bool(false));
    assert!(took < GIT_TIMEOUT, "settings took {took:?}");
}

#[test]
fn fifo_config_and_fifo_head_are_decided_without_waiting_on_git() {
    for file in ["config", "HEAD"] {
        let tmp = tempfile::tempdir().unwrap();
        let top = fs::canonicalize(tmp.path()).unwrap().join("top");
        fs::create_dir_all(&top).unwrap();
        git(&top, &["init", "-q"]);
        // An outer repository that a walk past the FIFO would find instead.
        let inner = top.join("inner");
        fs::create_dir_all(&inner).unwrap();
        git(&inner, &["init", "-q"]);
        let path = inner.join(".git").join(file);
        fs::remove_file(&path).unwrap();
        mkfifo(&path);
        assert_eq!(repo::discover(&inner), Discovery::NotARepository, "{file}");
        assert_eq!(
            repo::repo_root_from_git(&process_env(), &inner, Duration::from_millis(300)),
            None,
            "{file}"
        );
        let started = Instant::now();
        assert_eq!(repo::repo_root(&process_env(), &inner), None, "{file}");
        assert!(started.elapsed() < GIT_TIMEOUT, "{file}");
    }
}

#[test]
fn commondir_that_is_a_directory_or_a_device_is_not_a_repository() {
    // Git fails reading a directory, and reads `/dev/zero` until it is killed.
    for make in ["dir", "/dev/zero", "/dev/null"] {
        let (_tmp, main, wt) = worktree();
        let commondir = main.join(".git/worktrees/wt/commondir");
        fs::remove_file(&commondir).unwrap();
        if make == "dir" {
            fs::create_dir(&commondir).unwrap();
        } else {
            std::os::unix::fs::symlink(make, &commondir).unwrap();
        }
        assert_eq!(repo::discover(&wt), Discovery::NotARepository, "{make}");
        assert_eq!(
            repo::repo_root_from_git(&process_env(), &wt, Duration::from_millis(500)),
            None,
            "{make}"
        );
    }
}

/// Whether process `pid` (read from `file`) still runs a few seconds on: gone, or a zombie
/// waiting to be reaped, counts as ended. A killed process ends when it is next scheduled, not
/// when `kill` returns, so this waits for it.
fn still_runs(file: &Path) -> bool {
    let pid = fs::read_to_string(file).unwrap();
    let runs = || {
        let stat = fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        stat.is_ok_and(|stat| {
            let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
            state != Some(Some('Z'))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while runs() {
        if Instant::now() >= deadline {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// What a git, or a wrapper named git, starts ends with it: a wrapper whose helper hangs is
/// killed with the helper at the timeout, and a helper left running behind a git that answered
/// (holding its stdout open) is ended, so the answer is read at once.
#[test]
fn what_git_starts_ends_with_it() {
    let tree = Tree::new();
    let sub = tree.repo().join("sub");
    let wrapper_dir = tree.root.join("wrapper");
    let helper = tree.root.join("helper.pid");
    let real_git = repo::find_git(Some(system_path().as_ref())).unwrap();
    let path = format!("{}:{}", wrapper_dir.display(), system_path());

    // The wrapper waits on a helper that never ends.
    script(
        &wrapper_dir.join("git"),
        &format!("sleep 300 &\necho $! > '{}'\nwait", helper.display()),
    );
    let started = Instant::now();
    let output = tree.settings(&sub, &path, &[]);
    assert_eq!(
        dco(&output),
        Value::Bool(false),
        "no answer: no repository root"
    );
    assert!(started.elapsed() < GIT_TIMEOUT + Duration::from_secs(3));
    assert!(!still_runs(&helper), "the hung helper was left running");

    // The wrapper runs git, which answers, and leaves a helper holding git's stdout.
    script(
        &wrapper_dir.join("git"),
        &format!(
            "sleep 300 &\necho $! > '{}'\nexec '{}' \"$@\"",
            helper.display(),
            real_git.display()
        ),
    );
    let started = Instant::now();
    let output = tree.settings(&sub, &path, &[]);
    assert_eq!(dco(&output), Value::Bool(true), "git's answer was read");
    assert!(started.elapsed() < GIT_TIMEOUT + Duration::from_secs(3));
    assert!(!still_runs(&helper), "the helper was left running");
}
