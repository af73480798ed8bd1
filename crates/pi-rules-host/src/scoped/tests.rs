use super::*;
use pi_rules_core::settings::Schema;
use std::borrow::Cow;
use std::fs;

#[test]
fn paths_are_placed_lexically_against_the_working_directory() {
    let cwd = Path::new("/p/app");
    let placed = place(
        &[
            PathBuf::from("src/./a.ts"),
            PathBuf::from("/p/app/lib/../web/x"),
            PathBuf::from("../other/y"),
            PathBuf::from("/real/app/z"),
        ],
        cwd,
        Some(Path::new("/real/app")),
    );
    let relative: Vec<Option<&str>> = placed.iter().map(|p| p.relative.as_deref()).collect();
    assert_eq!(relative, [Some("src/a.ts"), Some("web/x"), None, Some("z")]);
    assert_eq!(placed[2].given, "../other/y");
}

#[test]
fn nested_directories_are_found_by_asking_each_level_once() {
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path().join("repo");
    for dir in ["a/.pi/rules", "a/b/c/.pi/rules", "a/b/.pi"] {
        fs::create_dir_all(cwd.join(dir)).unwrap();
    }
    // `cwd`'s own `.pi/rules` is the project layer, not a nested one.
    fs::create_dir_all(cwd.join(".pi/rules")).unwrap();
    let files = Files::new();
    let placed = place(
        &[
            PathBuf::from("a/b/c/d/file.ts"),
            PathBuf::from("a/x.ts"),
            PathBuf::from("top.ts"),
        ],
        &cwd,
        None,
    );
    let found = nested_dirs(&files, &placed, &cwd);
    assert_eq!(found, [cwd.join("a"), cwd.join("a/b/c")]);
}

#[test]
fn the_index_reassembles_a_rule_when_the_settings_change() {
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path().join("p");
    fs::create_dir_all(cwd.join(".pi/rules")).unwrap();
    fs::write(
        cwd.join(".pi/rules/api.md"),
        "---\npaths: api/**\n---\n{{IF:dco}}SIGNED{{/IF}}{{IFNOT:dco}}UNSIGNED{{/IFNOT}}\n",
    )
    .unwrap();
    let session = Session::from_parts(cwd.clone(), None, Cow::Borrowed(Schema::embedded()));
    let policy = session.policy(false);
    let mut index = Index::build(&session, None, &policy);
    assert_eq!(index.len(), 1);
    let query = Query {
        agent: "claude".into(),
        paths: vec![PathBuf::from("api/x")],
    };
    let features = pi_rules_core::Features::default();
    let text = |index: &mut Index, dco: bool| {
        let mut settings = pi_rules_core::Settings::new();
        settings.insert("dco", pi_rules_core::Value::Bool(dco));
        let scope = pi_rules_core::Scope {
            settings: &settings,
            features: &features,
            review_loop_max_cycles: "3",
        };
        let answer = index.rules_for(&session, &policy, &query, &scope);
        answer.rules.into_iter().map(|m| m.text).collect::<String>()
    };
    assert!(text(&mut index, true).contains("SIGNED"));
    assert!(text(&mut index, false).contains("UNSIGNED"));
    assert!(index.is_fresh(&session, None, false));
    fs::write(cwd.join(".pi/rules/web.md"), "---\npaths: web/**\n---\nW\n").unwrap();
    // A session asks the file system once per path: a later request has a session of its own.
    let later = Session::from_parts(cwd.clone(), None, Cow::Borrowed(Schema::embedded()));
    assert!(!index.is_fresh(&later, None, false));
}
