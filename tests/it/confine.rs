//! Rules from projects people clone: links that leave the project, special files, and
//! `--confine` (or `PI_RULES_CONFINE=1`), which refuses them. Without it the block stays what the
//! reference makes, and stderr names each such file.

use serde_json::Value;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::common;

use common::file_entry;

/// A dotfiles home: `$HOME` is itself a git repository, with a secret in `~/.ssh` and a cloned
/// project below it.
struct Home {
    _root: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    package: PathBuf,
}

const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY----- not-really-a-key";

impl Home {
    fn new() -> Home {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = home.join("src/cloned");
        let package = root.path().join("package");
        fs::create_dir_all(home.join(".ssh")).unwrap();
        fs::write(home.join(".ssh/id_ed25519"), SECRET).unwrap();
        fs::create_dir_all(project.join(".pi/rules")).unwrap();
        fs::create_dir_all(&package).unwrap();
        fs::write(package.join("95-env.md"), "Package copy of 95-env.\n").unwrap();
        let status = Command::new("git")
            .args(["init", "-q"])
            .arg(&home)
            .status()
            .unwrap();
        assert!(status.success());
        Home {
            _root: root,
            home,
            project,
            package,
        }
    }

    fn rules(&self) -> PathBuf {
        self.project.join(".pi/rules")
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_pi-rules"))
            .args(args)
            .arg("--package-dir")
            .arg(&self.package)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .envs(env.iter().copied())
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn assemble(&self, extra: &[&str], env: &[(&str, &str)]) -> (Value, String) {
        let mut args = vec!["assemble", "--format", "json"];
        args.extend_from_slice(extra);
        let output = self.run(&args, env);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let json = serde_json::from_slice(&output.stdout).unwrap();
        (json, String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

fn block(report: &Value) -> &str {
    report["block"].as_str().unwrap()
}

fn status<'a>(report: &'a Value, name: &str) -> &'a str {
    file_entry(report, name).map_or("absent", |f| f["status"].as_str().unwrap())
}

#[test]
fn a_link_to_a_secret_under_a_dotfiles_home_is_named_and_confined() {
    let home = Home::new();
    symlink(
        home.home.join(".ssh/id_ed25519"),
        home.rules().join("90-key.md"),
    )
    .unwrap();
    let (report, err) = home.assemble(&[], &[]);
    assert!(
        block(&report).contains(SECRET),
        "the block stays as the reference makes it"
    );
    assert!(
        err.contains("90-key.md") && err.contains("outside the project"),
        "{err}"
    );
    for (extra, env) in [
        (&["--confine"][..], &[][..]),
        (&[], &[("PI_RULES_CONFINE", "1")][..]),
    ] {
        let (report, err) = home.assemble(extra, env);
        assert!(!block(&report).contains(SECRET), "{extra:?} {env:?}");
        assert_eq!(status(&report, "90-key.md"), "unreadable");
        assert!(
            err.contains("is not read") && err.contains("--confine"),
            "{err}"
        );
    }
}

#[test]
fn a_link_to_proc_environ_is_refused_in_every_layer_and_the_lower_copy_used() {
    let home = Home::new();
    let env = [("API_TOKEN", "sk-secret-value")];
    symlink("/proc/self/environ", home.rules().join("95-env.md")).unwrap();
    let (report, err) = home.assemble(&[], &env);
    assert!(block(&report).contains("sk-secret-value"));
    assert!(
        err.contains("95-env.md") && err.contains("special file"),
        "{err}"
    );
    let (report, _) = home.assemble(&["--confine"], &env);
    assert!(!block(&report).contains("sk-secret-value"));
    assert!(block(&report).contains("Package copy of 95-env."));
    assert_eq!(status(&report, "95-env.md"), "unreadable-fell-back");
    // The same link in the user layer is a special file too.
    fs::remove_file(home.rules().join("95-env.md")).unwrap();
    let user = home.home.join(".pi/agent/rules");
    fs::create_dir_all(&user).unwrap();
    symlink("/proc/self/environ", user.join("75-env.md")).unwrap();
    let (report, _) = home.assemble(&["--confine"], &env);
    assert!(!block(&report).contains("sk-secret-value"));
    assert_eq!(status(&report, "75-env.md"), "unreadable");
}

#[test]
fn a_linked_rules_directory_or_pi_directory_leaving_the_project_is_confined() {
    let home = Home::new();
    let elsewhere = home.home.join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("90-planted.md"), "Planted instruction.\n").unwrap();
    fs::remove_dir_all(home.rules()).unwrap();
    symlink(&elsewhere, home.rules()).unwrap();
    let (report, _) = home.assemble(&[], &[]);
    assert!(block(&report).contains("Planted instruction."));
    let (report, err) = home.assemble(&["--confine"], &[]);
    assert!(!block(&report).contains("Planted instruction."), "{err}");
    // `.pi` itself a link.
    fs::remove_file(home.rules()).unwrap();
    let pi = home.project.join(".pi");
    fs::remove_dir_all(&pi).unwrap();
    fs::create_dir_all(elsewhere.join("rules")).unwrap();
    fs::write(elsewhere.join("rules/90-planted.md"), "Planted again.\n").unwrap();
    symlink(&elsewhere, &pi).unwrap();
    let (report, _) = home.assemble(&["--confine"], &[]);
    assert!(!block(&report).contains("Planted again."));
}

#[test]
fn links_inside_the_project_and_masks_keep_working_under_confine() {
    let home = Home::new();
    fs::create_dir_all(home.project.join("docs")).unwrap();
    fs::write(
        home.project.join("docs/shared.md"),
        "Shared project rule.\n",
    )
    .unwrap();
    symlink("../../docs/shared.md", home.rules().join("90-shared.md")).unwrap();
    symlink("/dev/null", home.rules().join("95-env.md")).unwrap();
    let (report, err) = home.assemble(&["--confine"], &[]);
    assert!(block(&report).contains("Shared project rule."));
    assert!(!block(&report).contains("Package copy of 95-env."));
    assert_eq!(status(&report, "95-env.md"), "masked");
    assert_eq!(err, "", "nothing escapes");
}

#[test]
fn the_project_root_is_the_repository_when_it_is_below_home() {
    let home = Home::new();
    let repo = home.home.join("src/app");
    let sub = repo.join("sub");
    fs::create_dir_all(sub.join(".pi/rules")).unwrap();
    let status = Command::new("git")
        .args(["init", "-q"])
        .arg(&repo)
        .status()
        .unwrap();
    assert!(status.success());
    fs::write(repo.join("TEAM.md"), "Team rule from the repository.\n").unwrap();
    symlink("../../../TEAM.md", sub.join(".pi/rules/90-team.md")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
        .args(["assemble", "--confine", "--cwd"])
        .arg(&sub)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home.home)
        .output()
        .unwrap();
    let block = String::from_utf8_lossy(&output.stdout);
    assert!(
        block.contains("Team rule from the repository."),
        "{output:?}"
    );
}

#[test]
fn a_package_dir_that_does_not_exist_is_said_on_stderr() {
    let home = Home::new();
    for (args, env) in [
        (vec!["assemble", "--package-dir", "/typo"], vec![]),
        (vec!["assemble"], vec![("PI_RULES_PACKAGE_DIR", "/typo")]),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
            .args(&args)
            .env_clear()
            .env("HOME", &home.home)
            .envs(env.iter().copied())
            .current_dir(&home.project)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "[ORCHESTRATOR RULES] You are a MANAGER. Delegate work to subagents.\n"
        );
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(
            err.contains("`/typo`") && err.contains("not a directory"),
            "{err}"
        );
    }
}

/// `pi-rules check` in the dotfiles home, as short lines.
fn check(home: &Home, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["check", "--format", "short"];
    args.extend_from_slice(extra);
    let output = home.run(&args, &[]);
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn check_reports_rules_and_settings_that_leave_the_project() {
    let home = Home::new();
    symlink(
        home.home.join(".ssh/id_ed25519"),
        home.rules().join("90-key.md"),
    )
    .unwrap();
    symlink("/proc/self/environ", home.rules().join("95-env.md")).unwrap();
    let (code, out) = check(&home, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("90-key.md") && out.contains("error[PR601]"),
        "{out}"
    );
    assert!(
        out.contains("95-env.md") && out.contains("error[PR602]"),
        "{out}"
    );
    // A project outside any repository whose settings file links elsewhere.
    let plain = tempfile::tempdir().unwrap();
    let project = plain.path().join("project");
    fs::create_dir_all(project.join(".pi")).unwrap();
    fs::write(plain.path().join("settings.json"), "{}").unwrap();
    symlink(
        plain.path().join("settings.json"),
        project.join(".pi/pi-config-settings.json"),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
        .args(["check", "--format", "short"])
        .env_clear()
        .env("HOME", &home.home)
        .current_dir(&project)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        out.lines()
            .any(|l| l.contains("pi-config-settings.json") && l.contains("error[PR601]")),
        "{out}"
    );
}

#[test]
fn check_reports_a_package_dir_that_does_not_exist() {
    let home = Home::new();
    let output = Command::new(env!("CARGO_BIN_EXE_pi-rules"))
        .args(["check", "--format", "short", "--package-dir", "/typo"])
        .env_clear()
        .env("HOME", &home.home)
        .current_dir(&home.project)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(
        out.contains("error[PR409]") && out.contains("/typo"),
        "{out}"
    );
}

#[test]
fn check_reports_unusable_layers_and_settings_files() {
    let home = Home::new();
    // The user layer is a FIFO, the project settings file is over the size limit.
    fs::create_dir_all(home.home.join(".pi/agent")).unwrap();
    let status = Command::new("mkfifo")
        .arg(home.home.join(".pi/agent/rules"))
        .status()
        .unwrap();
    assert!(status.success());
    let big = format!("{{\"dco\": true{}}}", " ".repeat(2 << 20));
    // Under a dotfiles home, `$HOME/.pi` holds the project settings file too.
    fs::write(home.home.join(".pi/pi-config-settings.jsonc"), big).unwrap();
    let (code, out) = check(&home, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("PR409") && l.contains("FIFO")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("PR706") && l.contains("limit")),
        "{out}"
    );
    assert!(!out.contains("PR701"), "not a syntax error: {out}");
}
