//! Run below the repository root, project rules are read from `<cwd>/.pi/rules` (as the
//! reference reads them) while settings come from the root: `assemble`, `explain` and `check` say
//! so on stderr when the root has a `.pi/rules` that the working directory does not read, and
//! the JSON forms of `assemble` and `explain` carry it in `notes` (issue 23 §5).

use crate::common;

use common::{code, git, stderr, stdout, World};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

/// A repository at `<world>/repo` with a team rule in its root's `.pi/rules`, and `src/` below.
fn repository(world: &World) -> (PathBuf, PathBuf) {
    let repo = world.root().join("repo");
    fs::create_dir_all(repo.join(".pi/rules")).unwrap();
    fs::create_dir_all(repo.join("src")).unwrap();
    fs::write(repo.join(".pi/rules/90-team.md"), "# Team rule\n").unwrap();
    git(&repo, &["init", "-q"]);
    (repo.clone(), repo.join("src"))
}

fn run_in(world: &World, cwd: &Path, args: &[&str]) -> std::process::Output {
    let mut command = world.command(args);
    command.arg("--cwd").arg(cwd);
    command.output().unwrap()
}

/// The note's lines on stderr.
fn notes(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("pi-rules: note:"))
        .collect()
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn each_command_says_the_root_rules_are_not_read_from_a_subdirectory() {
    let world = World::new();
    let (repo, src) = repository(&world);
    let expected = format!(
        "pi-rules: note: the project rules at the repository root, `{}/.pi/rules`, are not read \
         from this directory: project rules come from the working directory's `.pi/rules` \
         (`{}/.pi/rules`); run from `{}` to use them",
        repo.display(),
        src.display(),
        repo.display()
    );
    for args in [
        &["assemble"][..],
        &["explain"],
        &["check"],
        &["check", "--format", "short"],
        &["assemble", "--format", "json"],
        &["explain", "--format", "json"],
    ] {
        let out = run_in(&world, &src, args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert_eq!(notes(&stderr(&out)), [expected.as_str()], "{args:?}");
    }
    // The behaviour is kept: the team's rule is not in the block, and check finds nothing.
    let block = stdout(&run_in(&world, &src, &["assemble"]));
    assert!(!block.contains("Team rule"), "{block}");
    let checked = stdout(&run_in(&world, &src, &["check"]));
    assert!(checked.contains("no problems found"), "{checked}");
    // The JSON forms carry the note, plain, in `notes`.
    let plain = expected.strip_prefix("pi-rules: note: ").unwrap();
    for command in ["assemble", "explain"] {
        let report = json(&run_in(&world, &src, &[command, "--format", "json"]));
        assert_eq!(report["notes"], serde_json::json!([plain]), "{command}");
    }
}

#[test]
fn no_note_where_the_root_rules_are_read_or_there_are_none() {
    let world = World::new();
    let (repo, src) = repository(&world);
    // At the root, the rules are read.
    let out = run_in(&world, &repo, &["assemble"]);
    assert!(stdout(&out).contains("Team rule"));
    assert!(notes(&stderr(&out)).is_empty(), "{}", stderr(&out));
    let report = json(&run_in(&world, &repo, &["explain", "--format", "json"]));
    assert_eq!(report["notes"], serde_json::json!([]));
    // A subdirectory whose `.pi` is a link to the root's reads the same directory.
    let linked = repo.join("linked");
    fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(repo.join(".pi"), linked.join(".pi")).unwrap();
    let out = run_in(&world, &linked, &["assemble"]);
    assert!(stdout(&out).contains("Team rule"));
    assert!(notes(&stderr(&out)).is_empty(), "{}", stderr(&out));
    // A root without `.pi/rules` (a settings directory only) has nothing left out.
    fs::remove_dir_all(repo.join(".pi/rules")).unwrap();
    for args in [&["assemble"][..], &["check"], &["explain"]] {
        let out = run_in(&world, &src, args);
        assert!(
            notes(&stderr(&out)).is_empty(),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // Outside a repository there is no root.
    let plain = world.root().join("plain/sub");
    fs::create_dir_all(plain.join("../.pi/rules")).unwrap();
    let out = run_in(&world, &plain, &["check"]);
    assert!(notes(&stderr(&out)).is_empty(), "{}", stderr(&out));
}

#[test]
fn a_subdirectory_with_rules_of_its_own_still_hears_of_the_roots() {
    let world = World::new();
    let (_repo, src) = repository(&world);
    fs::create_dir_all(src.join(".pi/rules")).unwrap();
    fs::write(src.join(".pi/rules/90-local.md"), "# Local rule\n").unwrap();
    let out = run_in(&world, &src, &["assemble"]);
    assert!(stdout(&out).contains("Local rule"));
    assert!(!stdout(&out).contains("Team rule"));
    assert_eq!(notes(&stderr(&out)).len(), 1, "{}", stderr(&out));
}

#[test]
fn a_dotfiles_repository_at_home_is_not_the_project() {
    // `$HOME` is a repository with `.pi/rules`: its subdirectories are projects of their own
    // (the project root is the working directory), so nothing is said.
    let world = World::new();
    git(&world.home, &["init", "-q"]);
    fs::create_dir_all(world.home.join(".pi/rules")).unwrap();
    fs::write(world.home.join(".pi/rules/90-home.md"), "# Home rule\n").unwrap();
    let sub = world.home.join("notes");
    fs::create_dir_all(&sub).unwrap();
    let out = run_in(&world, &sub, &["assemble"]);
    assert_eq!(code(&out), 0);
    assert!(notes(&stderr(&out)).is_empty(), "{}", stderr(&out));
}

#[test]
fn the_path_is_escaped_on_stderr_and_plain_in_json() {
    let world = World::new();
    let repo = world.root().join("re\x1b[31mpo");
    fs::create_dir_all(repo.join(".pi/rules")).unwrap();
    fs::create_dir_all(repo.join("src")).unwrap();
    fs::write(repo.join(".pi/rules/90-team.md"), "# Team rule\n").unwrap();
    git(&repo, &["init", "-q"]);
    let out = run_in(&world, &repo.join("src"), &["assemble", "--format", "json"]);
    let err = stderr(&out);
    assert!(!err.contains('\x1b'), "{err:?}");
    assert_eq!(notes(&err).len(), 1, "{err:?}");
    let report = json(&out);
    let note = report["notes"][0].as_str().unwrap();
    assert!(
        note.contains(&format!("`{}/.pi/rules`", repo.display())),
        "{note:?}"
    );
}
