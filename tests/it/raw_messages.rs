//! The host's messages are raw, and the command line escapes them where it prints them: a name
//! or a path with terminal controls in an error or a refusal reaches stderr written visibly.

use crate::common::{stderr, World};

/// Asserts that `err` holds `shown` (the escaped form) and no escape character.
fn escaped_in(err: &str, shown: &str) {
    assert!(err.contains(shown), "{err}");
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
}

#[test]
fn a_rule_query_is_escaped_in_its_error() {
    let world = World::new();
    let out = world.expect(&["show", "no\u{1b}]0;owned\u{7}such"], 2);
    escaped_in(&stderr(&out), "no rule is named `no\\x1b]0;owned\\x07such`");
}

#[test]
fn a_set_key_and_value_are_escaped_in_their_errors() {
    let world = World::new();
    let out = world.expect(&["diff", "--set", "bad\u{1b}[2Jkey=1"], 2);
    escaped_in(&stderr(&out), "unknown settings key `bad\\x1b[2Jkey`");
    let out = world.expect(&["diff", "--set", "dco\u{1b}[2J"], 2);
    escaped_in(
        &stderr(&out),
        "`--set dco\\x1b[2J` needs the form KEY=VALUE",
    );
}

#[test]
fn a_cwd_that_is_not_a_directory_is_escaped() {
    let world = World::new();
    let missing = world.root().join("no\u{1b}]0;owned\u{7}dir");
    let out = world.run(&["assemble", "--cwd", missing.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    escaped_in(&stderr(&out), "no\\x1b]0;owned\\x07dir` is not a directory");
}

#[test]
fn a_refused_fix_names_its_link_escaped() {
    let world = World::new();
    let outside = world.root().join("out\u{1b}[2J");
    std::fs::create_dir_all(&outside).unwrap();
    let target = world.write(&outside, "90-x.md", "{{if:dco}}x{{/IF}}\n");
    std::os::unix::fs::symlink(&target, world.project_layer().join("90-x.md")).unwrap();
    let out = world.run(&["check", "--fix"]);
    escaped_in(
        &stderr(&out),
        "out\\x1b[2J/90-x.md`, outside its layer directory",
    );
}
