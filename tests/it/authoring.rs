//! Black-box tests of the authoring commands: `show`, `override`, `new`, `diff`, `watch`,
//! `schema`, `completions` and `man`, on temporary homes and projects.

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common;

use common::{listing, stderr, stdout, World, EXAMPLE_COMMANDS};

/// The shipped text of a package rule, from the repository.
fn shipped(name: &str) -> Vec<u8> {
    fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("rules")
            .join(name),
    )
    .unwrap()
}

// ---------------------------------------------------------------------------------------------
// show

#[test]
fn show_prints_the_embedded_rule_byte_for_byte_under_every_name_form() {
    let world = World::new();
    for name in [
        "40-critical-rules.md",
        "40-critical-rules",
        "critical-rules",
    ] {
        let out = world.expect(&["show", name], 0);
        assert_eq!(out.stdout, shipped("40-critical-rules.md"), "{name}");
        assert!(out.stderr.is_empty(), "{}", stderr(&out));
    }
    // Frontmatter is shown as written.
    let out = world.expect(&["show", "55-coms-protocol"], 0);
    assert!(stdout(&out).starts_with("---\n"), "{}", stdout(&out));
    assert_eq!(out.stdout, shipped("55-coms-protocol.md"));
}

#[test]
fn show_text_with_markers_frontmatter_and_odd_bytes() {
    let world = World::new();
    let text: &[u8] = b"---\r\nrequires_setting: dco\r\n---\r\n# Team\r\n{{IF:use_worktrees}}Use a worktree.{{/IF}}\r\nbad byte: \xff\r\nno newline at the end";
    world.write(&world.user_rules(), "40-critical-rules.md", text);
    let out = world.expect(&["show", "critical-rules"], 0);
    assert_eq!(out.stdout, text);
    insta::assert_snapshot!(
        "show_user_override",
        String::from_utf8_lossy(&out.stdout).replace('\r', "\\r")
    );
    let package = world.expect(&["show", "critical-rules", "--layer", "package"], 0);
    assert_eq!(package.stdout, shipped("40-critical-rules.md"));
    let user = world.expect(&["show", "critical-rules", "--layer", "user"], 0);
    assert_eq!(user.stdout, text);
}

#[test]
fn show_the_winner_is_the_highest_layer() {
    let world = World::new();
    world.write(&world.user_rules(), "75-mine.md", "user copy\n");
    world.write(&world.project_rules(), "75-mine.md", "project copy\n");
    assert_eq!(world.expect(&["show", "mine"], 0).stdout, b"project copy\n");
    assert_eq!(
        world.expect(&["show", "mine", "--layer", "user"], 0).stdout,
        b"user copy\n"
    );
    let out = world.expect(&["show", "mine", "--layer", "package"], 2);
    assert!(
        stderr(&out).contains(
            "`75-mine.md` has no copy in the package layer; it is in the project and user layer"
        ),
        "{}",
        stderr(&out)
    );
    // --cwd chooses the project.
    let elsewhere = World::new();
    let cwd = world.project.display().to_string();
    assert_eq!(
        elsewhere
            .expect(&["show", "75-mine.md", "--cwd", &cwd], 0)
            .stdout,
        b"project copy\n"
    );
}

#[test]
fn show_an_unknown_name_lists_near_names() {
    let world = World::new();
    let out = world.expect(&["show", "critcal-rules"], 2);
    insta::assert_snapshot!("show_unknown_name", stderr(&out));
    let out = world.expect(&["show", "zzzzzz"], 2);
    assert!(
        stderr(&out).contains("no rule is named `zzzzzz` in any layer"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn show_an_ambiguous_short_name_lists_the_rules() {
    let world = World::new();
    world.write(&world.user_rules(), "70-notes.md", "a\n");
    world.write(&world.project_rules(), "90-notes.md", "b\n");
    let out = world.expect(&["show", "notes"], 2);
    assert!(
        stderr(&out).contains("`notes` names several rules: `70-notes.md`, `90-notes.md`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn show_reads_a_package_directory_and_says_what_it_cannot_show() {
    let world = World::new();
    let package = world.package(&[("10-a.md", "package a\n")]);
    assert_eq!(
        world
            .expect(&["show", "10-a", "--package-dir", &package], 0)
            .stdout,
        b"package a\n"
    );
    // A masked rule shows as empty, and says so.
    fs::create_dir_all(world.project_rules()).unwrap();
    symlink("/dev/null", world.project_rules().join("10-a.md")).unwrap();
    let out = world.expect(&["show", "10-a", "--package-dir", &package], 0);
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("masks the lower copies"),
        "{}",
        stderr(&out)
    );
    // An oversized copy is not shown.
    world.write(&world.user_rules(), "20-big.md", vec![b'x'; 131_073]);
    let out = world.expect(&["show", "20-big"], 3);
    assert!(
        stderr(&out).contains("131073 bytes, over the 131072-byte limit"),
        "{}",
        stderr(&out)
    );
    // A copy that cannot be read falls back to the lower one, with a note.
    symlink(
        world.root().join("nowhere"),
        world.user_rules().join("35-memory.md"),
    )
    .unwrap();
    let out = world.expect(&["show", "35-memory"], 0);
    assert_eq!(out.stdout, shipped("35-memory.md"));
    assert!(stderr(&out).contains("the user copy"), "{}", stderr(&out));
}

// ---------------------------------------------------------------------------------------------
// override

#[test]
fn override_copies_the_package_rule_into_the_user_layer() {
    let world = World::new();
    assert!(!world.home.join(".pi/agent").exists());
    let out = world.expect(&["override", "40-critical-rules", "--user"], 0);
    let path = world.user_rules().join("40-critical-rules.md");
    assert_eq!(stdout(&out), format!("{}\n", path.display()));
    assert_eq!(fs::read(&path).unwrap(), shipped("40-critical-rules.md"));
    assert_eq!(listing(&world.user_rules()), ["40-critical-rules.md"]);
    // The override now wins, and assembles to the same block as before.
    assert_eq!(
        world.expect(&["show", "critical-rules"], 0).stdout,
        shipped("40-critical-rules.md")
    );
}

#[test]
fn override_refuses_to_replace_without_force() {
    let world = World::new();
    let path = world.write(&world.user_rules(), "40-critical-rules.md", "my edits\n");
    let before = fs::metadata(&path).unwrap().modified().unwrap();
    let out = world.expect(&["override", "critical-rules", "--user"], 3);
    assert!(
        stderr(&out).contains("already exists; pass --force to replace it with the package copy"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
    assert_eq!(fs::read_to_string(&path).unwrap(), "my edits\n");
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), before);
    assert_eq!(listing(&world.user_rules()), ["40-critical-rules.md"]);

    world.expect(&["override", "critical-rules", "--user", "--force"], 0);
    assert_eq!(fs::read(&path).unwrap(), shipped("40-critical-rules.md"));
    assert_eq!(listing(&world.user_rules()), ["40-critical-rules.md"]);
}

#[test]
fn override_force_replaces_a_link_by_renaming_not_by_writing_through_it() {
    let world = World::new();
    let outside = world.write(world.root(), "dotfile.md", "shared text\n");
    fs::create_dir_all(world.project_rules()).unwrap();
    let link = world.project_rules().join("35-memory.md");
    symlink(&outside, &link).unwrap();
    world.expect(&["override", "memory", "--project", "--force"], 0);
    assert!(!fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(fs::read(&link).unwrap(), shipped("35-memory.md"));
    assert_eq!(fs::read_to_string(&outside).unwrap(), "shared text\n");
    assert_eq!(listing(&world.project_rules()), ["35-memory.md"]);
}

#[test]
fn a_project_override_starts_from_the_user_copy() {
    let world = World::new();
    world.write(
        &world.user_rules(),
        "10-agent-routing.md",
        "user routing\r\n",
    );
    let out = world.expect(&["override", "agent-routing", "--project"], 0);
    let path = world.project_rules().join("10-agent-routing.md");
    assert_eq!(stdout(&out), format!("{}\n", path.display()));
    assert_eq!(fs::read(&path).unwrap(), b"user routing\r\n");

    // An unreadable user copy falls back to the package copy, as the loader does.
    let other = World::new();
    fs::create_dir_all(other.user_rules()).unwrap();
    symlink(
        other.root().join("gone"),
        other.user_rules().join("10-agent-routing.md"),
    )
    .unwrap();
    let out = other.expect(&["override", "agent-routing", "--project"], 0);
    assert!(
        stderr(&out).contains("cannot be read") && stderr(&out).contains("next lower layer"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read(other.project_rules().join("10-agent-routing.md")).unwrap(),
        shipped("10-agent-routing.md")
    );
}

#[test]
fn override_says_when_a_higher_copy_still_wins() {
    let world = World::new();
    world.write(&world.project_rules(), "35-memory.md", "project memory\n");
    let out = world.expect(&["override", "memory", "--user"], 0);
    assert!(
        stderr(&out).contains("the project copy") && stderr(&out).contains("still wins"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn override_refusals() {
    let world = World::new();
    world.write(&world.project_rules(), "90-local.md", "local\n");
    // Nothing below the target layer to start from.
    let out = world.expect(&["override", "90-local", "--user"], 3);
    assert!(
        stderr(&out).contains("has no copy below the user layer"),
        "{}",
        stderr(&out)
    );
    // The layer is required, and only one.
    world.expect(&["override", "memory"], 2);
    world.expect(&["override", "memory", "--user", "--project"], 2);
    // An unknown name.
    let out = world.expect(&["override", "memroy", "--user"], 2);
    assert!(stderr(&out).contains("`35-memory.md`"), "{}", stderr(&out));
    // No user layer without HOME.
    let out = world
        .command(&["override", "memory", "--user"])
        .env_remove("HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`HOME` is not set"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_oversized_lower_copy_is_not_copied() {
    let world = World::new();
    world.write(&world.user_rules(), "35-memory.md", vec![b'x'; 200_000]);
    let out = world.expect(&["override", "memory", "--project"], 3);
    assert!(
        stderr(&out).contains("over the 131072-byte limit"),
        "{}",
        stderr(&out)
    );
    assert!(!world.project_rules().join("35-memory.md").exists());
}

/// A rule scoped in the list form Claude Code users write, CRLF and all.
const SCOPED: &str = "---\r\nrequires_setting: dco\r\npaths:\r\n  - \"src/api/**\"\r\n  - '**/*.sql'\r\nagents: claude, pi\r\n---\r\n# API\r\n\r\nValidate input.\r\n";

#[test]
fn show_says_a_rule_s_scope_and_keeps_the_file_byte_for_byte() {
    let world = World::new();
    world.write(&world.project_rules(), "90-api.md", SCOPED);
    let out = world.expect(&["show", "api"], 0);
    assert_eq!(stdout(&out), SCOPED);
    assert_eq!(
        stderr(&out),
        "pi-rules: note: `90-api.md` is scoped: paths `src/api/**`, `**/*.sql`; agents `claude`, `pi`\n"
    );
    // A rule without a scope: nothing more is said.
    let out = world.expect(&["show", "critical-rules"], 0);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));

    let json = |args: &[&str]| -> serde_json::Value {
        serde_json::from_slice(&world.expect(args, 0).stdout).unwrap()
    };
    let got = json(&["show", "api", "--format", "json"]);
    assert_eq!(
        got,
        serde_json::json!({
            "name": "90-api.md",
            "layer": "project",
            "path": world.project_rules().join("90-api.md").display().to_string(),
            "text": SCOPED,
            "scope": {"paths": ["src/api/**", "**/*.sql"], "agents": ["claude", "pi"]},
        })
    );
    let got = json(&["show", "critical-rules", "--format", "json"]);
    assert_eq!(got["path"], serde_json::Value::Null);
    assert_eq!(got["layer"], "package");
    assert_eq!(got["scope"], serde_json::json!({}));
    assert_eq!(
        got["text"].as_str().unwrap().as_bytes(),
        shipped("40-critical-rules.md")
    );
}

#[test]
fn show_dir_shows_a_nested_rule_with_its_directory() {
    let world = World::new();
    let nested = world.project.join("packages/api/.pi/rules");
    world.write(
        &nested,
        "90-handlers.md",
        "---\npaths: src/**\n---\nHandlers.\n",
    );
    world.write(&nested, "91-plain.md", "Plain.\n");
    let out = world.expect(&["show", "handlers", "--dir", "packages/api"], 0);
    assert_eq!(stdout(&out), "---\npaths: src/**\n---\nHandlers.\n");
    assert!(
        stderr(&out).contains("is scoped: paths `src/**`; directory `packages/api` (a nested rule"),
        "{}",
        stderr(&out)
    );
    let out = world.expect(
        &[
            "show",
            "91-plain.md",
            "--dir",
            "packages/api",
            "--format",
            "json",
        ],
        0,
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        got["scope"],
        serde_json::json!({"dir": world.project.join("packages/api").display().to_string()})
    );
    assert_eq!(got["text"], "Plain.\n");
    // Names it does not hold, and directories that are not below the project.
    let out = world.expect(&["show", "nope", "--dir", "packages/api"], 2);
    assert!(
        stderr(&out).contains("no rule is named `nope`")
            && stderr(&out).contains("`90-handlers.md`"),
        "{}",
        stderr(&out)
    );
    let out = world.expect(&["show", "handlers", "--dir", ".."], 2);
    assert!(
        stderr(&out).contains("leads out of the project directory"),
        "{}",
        stderr(&out)
    );
    world.expect(
        &[
            "show",
            "handlers",
            "--dir",
            "packages/api",
            "--layer",
            "user",
        ],
        2,
    );
}

#[test]
fn override_keeps_the_scope_lines_of_the_rule_it_copies() {
    let world = World::new();
    let package = world.package(&[
        ("10-api.md", SCOPED),
        ("20-web.md", "---\npaths: web/**, *.css\n---\nWeb.\n"),
    ]);
    for (name, text) in [
        ("10-api", SCOPED),
        ("20-web", "---\npaths: web/**, *.css\n---\nWeb.\n"),
    ] {
        let out = world.expect(&["override", name, "--user", "--package-dir", &package], 0);
        let dest = world.user_rules().join(format!("{name}.md"));
        assert_eq!(stdout(&out), format!("{}\n", dest.display()));
        assert_eq!(fs::read_to_string(&dest).unwrap(), text);
    }
    // And from the user copy into the project, the scope still there, as `show` says.
    world.expect(
        &["override", "10-api", "--project", "--package-dir", &package],
        0,
    );
    let out = world.expect(&["show", "10-api", "--package-dir", &package], 0);
    assert_eq!(stdout(&out), SCOPED);
    assert!(
        stderr(&out).contains("paths `src/api/**`, `**/*.sql`"),
        "{}",
        stderr(&out)
    );
}

// ---------------------------------------------------------------------------------------------
// new

#[test]
fn new_takes_the_next_prefix_of_the_layer_range_and_passes_check_strict() {
    let world = World::new();
    let out = world.expect(&["new", "team-conventions", "--user"], 0);
    let first = world.user_rules().join("70-team-conventions.md");
    assert_eq!(stdout(&out), format!("{}\n", first.display()));
    let text = fs::read_to_string(&first).unwrap();
    assert!(text.starts_with("## Team conventions\n"), "{text}");

    let out = world.expect(&["new", "review-notes.md", "--user"], 0);
    assert_eq!(
        stdout(&out),
        format!(
            "{}\n",
            world.user_rules().join("71-review-notes.md").display()
        )
    );
    let out = world.expect(&["new", "release", "--project"], 0);
    assert_eq!(
        stdout(&out),
        format!(
            "{}\n",
            world.project_rules().join("90-release.md").display()
        )
    );
    let out = world.expect(&["new", "95-deploy", "--project"], 0);
    assert_eq!(
        stdout(&out),
        format!("{}\n", world.project_rules().join("95-deploy.md").display())
    );
    let out = world.expect(&["new", "hotfix", "--project"], 0);
    assert!(
        stdout(&out).ends_with("/96-hotfix.md\n"),
        "{}",
        stdout(&out)
    );

    let check = world.expect(&["check", "--strict"], 0);
    assert!(stdout(&check).contains("no problems"), "{}", stdout(&check));
    // The new rules are in the block.
    let block = stdout(&world.expect(&["assemble"], 0));
    assert!(block.contains("## Team conventions\n"), "{block}");
    assert!(block.contains("## Hotfix\n"), "{block}");
}

#[test]
fn new_wraps_around_to_the_lowest_free_prefix() {
    let world = World::new();
    world.write(&world.user_rules(), "89-last.md", "last\n");
    world.write(&world.user_rules(), "70-first.md", "first\n");
    let out = world.expect(&["new", "middle", "--user"], 0);
    assert!(
        stdout(&out).ends_with("/71-middle.md\n"),
        "{}",
        stdout(&out)
    );
    for n in 72..=88 {
        world.write(&world.user_rules(), &format!("{n}-x.md"), "x\n");
    }
    let out = world.expect(&["new", "full", "--user"], 3);
    assert!(
        stderr(&out).contains("every prefix from 70 to 89 is in use"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn new_refuses_to_overwrite_or_to_shadow() {
    let world = World::new();
    let path = world.write(&world.project_rules(), "95-deploy.md", "mine\n");
    let out = world.expect(&["new", "95-deploy", "--project"], 3);
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&path).unwrap(), "mine\n");
    assert_eq!(listing(&world.project_rules()), ["95-deploy.md"]);

    let out = world.expect(&["new", "40-critical-rules", "--user"], 3);
    assert!(
        stderr(&out).contains("is already a package rule")
            && stderr(&out).contains("pi-rules override 40-critical-rules.md --user"),
        "{}",
        stderr(&out)
    );
    assert!(!world.user_rules().exists());
}

#[test]
fn new_says_which_layer_has_the_file() {
    let world = World::new();
    // A higher layer overrides it: a new user file would not be used.
    world.expect(&["override", "40-critical-rules", "--project"], 0);
    let out = world.expect(&["new", "40-critical-rules", "--user"], 3);
    let err = stderr(&out);
    assert!(
        err.contains("`40-critical-rules.md` is already a project rule (`")
            && err.contains("which overrides any user file of that name")
            && !err.contains("would override it"),
        "{err}"
    );
    assert!(!world.user_rules().exists());
    // --force writes it anyway, and says that it is overridden.
    let out = world.expect(&["new", "40-critical-rules", "--user", "--force"], 0);
    assert!(
        stderr(&out).contains("the project copy `")
            && stderr(&out).contains("still overrides the new user file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(listing(&world.user_rules()), ["40-critical-rules.md"]);
    // The file exists in this layer: said so, never replaced, even with --force.
    let user_copy = fs::read(world.user_rules().join("40-critical-rules.md")).unwrap();
    for force in [false, true] {
        let args: &[&str] = if force {
            &["new", "40-critical-rules", "--user", "--force"]
        } else {
            &["new", "40-critical-rules", "--user"]
        };
        let out = world.expect(args, 3);
        let err = stderr(&out);
        assert!(
            err.contains("`40-critical-rules.md` already exists in the user layer: `")
                && err.contains("/.pi/agent/rules/40-critical-rules.md`")
                && !err.contains("package")
                && !err.contains("project rule"),
            "{err}"
        );
    }
    assert_eq!(
        fs::read(world.user_rules().join("40-critical-rules.md")).unwrap(),
        user_copy
    );
    // A lower layer has it: a new project file would override that copy.
    let out = world.expect(&["new", "45-file-preview", "--project"], 3);
    let err = stderr(&out);
    assert!(
        err.contains(
            "`45-file-preview.md` is already a package rule (`<embedded>/45-file-preview.md`)"
        ) && err.contains("a new project file of that name would override it whole")
            && err.contains("pi-rules override 45-file-preview.md --project"),
        "{err}"
    );
    assert!(!world.project_rules().join("45-file-preview.md").exists());
}

#[test]
fn new_refuses_a_name_that_is_already_a_rule_under_another_prefix() {
    let world = World::new();
    // Run twice: the second would be `91-team-conventions.md`.
    let first = stdout(&world.expect(&["new", "team-conventions", "--project"], 0));
    assert!(first.ends_with("/90-team-conventions.md\n"), "{first}");
    let out = world.expect(&["new", "team-conventions", "--project"], 3);
    let err = stderr(&out);
    assert!(
        err.contains("a rule named `team-conventions` already exists: `")
            && err.contains("/.pi/rules/90-team-conventions.md` (project layer)")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(listing(&world.project_rules()), ["90-team-conventions.md"]);
    // A package rule's name, in another layer.
    let out = world.expect(&["new", "critical-rules", "--user"], 3);
    let err = stderr(&out);
    assert!(
        err.contains("`<embedded>/40-critical-rules.md` (package layer)")
            && err.contains("pi-rules override 40-critical-rules.md --user"),
        "{err}"
    );
    assert!(!world.user_rules().exists());
    // With --force it is written, with a note, and the short name is then ambiguous.
    let out = world.expect(&["new", "team-conventions", "--project", "--force"], 0);
    assert!(
        stdout(&out).ends_with("/91-team-conventions.md\n"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("`team-conventions` now names several rules"),
        "{}",
        stderr(&out)
    );
    let out = world.expect(&["show", "team-conventions"], 2);
    assert!(
        stderr(&out).contains("names several rules"),
        "{}",
        stderr(&out)
    );
    // A different name is still fine.
    world.expect(&["new", "deploy", "--project"], 0);
    let help = stdout(&world.expect(&["new", "--help"], 0));
    assert!(help.contains("--force"), "{help}");
}

#[test]
fn new_checks_the_name() {
    let world = World::new();
    for (name, why) in [
        ("a/b", "not a path"),
        (".hidden", "hidden"),
        ("", "empty"),
        ("70-", "empty"),
        ("bad\u{1b}[2Jname", "control characters"),
    ] {
        let out = world.expect(&["new", name, "--project"], 2);
        assert!(stderr(&out).contains(why), "{name:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains('\u{1b}'), "{}", stderr(&out));
    }
    assert!(!world.project_rules().exists());
    // A prefix outside the range is kept, with a warning.
    let out = world.expect(&["new", "10-early", "--user"], 0);
    assert!(stdout(&out).ends_with("/10-early.md\n"));
    assert!(stderr(&out).contains("range 70-89"), "{}", stderr(&out));
}

#[test]
fn new_paths_and_agents_write_the_scope_frontmatter() {
    let world = World::new();
    let out = world.expect(
        &[
            "new",
            "api-errors",
            "--project",
            "--paths",
            "src/api/**, **/*.sql",
            "--agents",
            "claude,cursor",
        ],
        0,
    );
    let path = world.project_rules().join("90-api-errors.md");
    assert_eq!(stdout(&out), format!("{}\n", path.display()));
    assert!(
        stderr(&out).contains("scopes are off for pi in this project")
            && stderr(&out).contains("`[rules] scoped = true`"),
        "{}",
        stderr(&out)
    );
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with(
            "---\npaths: src/api/**, **/*.sql\nagents: claude, cursor\n---\n## Api errors\n\n- "
        ),
        "{text}"
    );
    // The frontmatter never reaches the block (with scopes off, the rule is in it as any rule).
    let block = stdout(&world.expect(&["assemble"], 0));
    assert!(block.contains("## Api errors\n"), "{block}");
    assert!(!block.contains("src/api/**"), "{block}");
    // A glob holding a comma is written in the list form; agents alone.
    world.expect(&["new", "web", "--user", "--paths", "web/**/*.{ts,tsx}"], 0);
    assert_eq!(
        fs::read_to_string(world.user_rules().join("70-web.md"))
            .unwrap()
            .split("## ")
            .next()
            .unwrap(),
        "---\npaths:\n  - \"web/**/*.{ts,tsx}\"\n---\n"
    );
    // A rule without a scope gets no note about scopes; with scopes on, neither does one with.
    let out = world.expect(&["new", "plain", "--project"], 0);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    fs::remove_file(world.project_rules().join("91-plain.md")).unwrap();
    world.write(
        &world.project.join(".pi"),
        "pi-rules.toml",
        "[rules]\nscoped = true\n",
    );
    let out = world.expect(&["new", "pi-only", "--project", "--agents", "pi"], 0);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    fs::remove_file(world.project.join(".pi/pi-rules.toml")).unwrap();
    assert!(
        fs::read_to_string(world.project_rules().join("91-pi-only.md"))
            .unwrap()
            .starts_with("---\nagents: pi\n---\n## Pi only\n")
    );
    // Empty lists and names that are not names are usage errors, and nothing is written.
    for args in [
        &["new", "x", "--project", "--paths", " , "][..],
        &["new", "x", "--project", "--agents", ","][..],
        &["new", "x", "--project", "--agents", "claude code"][..],
        &["new", "x", "--project", "--paths", "a\u{1b}[2J"][..],
    ] {
        let out = world.expect(args, 2);
        assert!(!stderr(&out).contains('\u{1b}'), "{}", stderr(&out));
    }
    // Unknown agents get a "did you mean", and globs must compile.
    let out = world.expect(&["new", "x", "--project", "--agents", "pi,claud"], 2);
    assert!(
        stderr(&out).contains("`claud` is not an agent pi-rules knows; did you mean `claude`?"),
        "{}",
        stderr(&out)
    );
    let out = world.expect(&["new", "x", "--project", "--paths", "src/**, src/[a"], 2);
    assert!(
        stderr(&out).contains("`src/[a` is not a glob pi-rules can use: "),
        "{}",
        stderr(&out)
    );
    let long = "a".repeat(1025);
    let out = world.expect(&["new", "x", "--project", "--paths", &long], 2);
    assert!(
        stderr(&out).contains("at most 1024 bytes"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        listing(&world.project_rules()),
        ["90-api-errors.md", "91-pi-only.md"]
    );
}

#[test]
fn new_dir_writes_a_nested_rule_directory() {
    let world = World::new();
    fs::create_dir_all(world.project.join("packages/api")).unwrap();
    let nested = world.project.join("packages/api/.pi/rules");
    let out = world.expect(
        &[
            "new",
            "handlers",
            "--dir",
            "packages/api",
            "--paths",
            "src/**",
        ],
        0,
    );
    assert_eq!(
        stdout(&out),
        format!("{}\n", nested.join("90-handlers.md").display())
    );
    assert!(fs::read_to_string(nested.join("90-handlers.md"))
        .unwrap()
        .starts_with("---\npaths: src/**\n---\n## Handlers\n"));
    assert!(!world.project_rules().exists());
    // The prefix counts the root layers and the nested directory; `./` and an absolute path
    // inside the project name the same directory.
    world.write(&world.project_rules(), "93-root.md", "root\n");
    world.expect(&["new", "db", "--dir", "./packages/api/"], 0);
    let absolute = world.project.join("packages/api");
    world.expect(&["new", "cache", "--dir", absolute.to_str().unwrap()], 0);
    assert_eq!(
        listing(&nested),
        ["90-handlers.md", "94-db.md", "95-cache.md"]
    );
    // A root rule's name: written, with a note that it replaces that rule under the directory.
    let out = world.expect(&["new", "40-critical-rules", "--dir", "packages/api"], 0);
    assert!(
        stderr(&out).contains(
            "under `packages/api` it replaces the package rule `<embedded>/40-critical-rules.md`"
        ),
        "{}",
        stderr(&out)
    );
    // The same name there again: refused, unless --force for another prefix.
    let out = world.expect(&["new", "handlers", "--dir", "packages/api"], 3);
    assert!(
        stderr(&out).contains("a rule named `handlers` already exists there"),
        "{}",
        stderr(&out)
    );
    let out = world.expect(&["new", "90-handlers", "--dir", "packages/api"], 3);
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    // The help says what a nested directory is.
    let help = stdout(&world.expect(&["new", "--help"], 0));
    assert!(
        help.contains("Its rules are for that subtree")
            && help.contains("replaces that rule for files under DIR only")
            && help.contains("[rules] scoped = true"),
        "{help}"
    );
}

#[test]
fn new_dir_refusals() {
    let world = World::new();
    fs::create_dir_all(world.project.join("packages/api")).unwrap();
    let outside = world.root().join("outside");
    fs::create_dir_all(&outside).unwrap();
    symlink(&outside, world.project.join("packages/linked")).unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["new", "x", "--dir", "../outside"],
            2,
            "leads out of the project directory",
        ),
        (
            &["new", "x", "--dir", "."],
            2,
            "is the project directory itself",
        ),
        (
            &["new", "x", "--dir", "/somewhere/else"],
            2,
            "is not inside the project directory",
        ),
        (
            &["new", "x", "--dir", "packages/nope"],
            3,
            "is not a directory of the project",
        ),
        (
            &["new", "x", "--dir", "packages/linked"],
            3,
            "outside the project",
        ),
        (
            &["new", "x", "--dir", "packages/api", "--user"],
            2,
            "cannot be used with",
        ),
        (
            &["new", "x", "--dir", "packages/api", "--project"],
            2,
            "cannot be used with",
        ),
    ];
    for (args, code, why) in cases {
        let out = world.expect(args, *code);
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    }
    // A `.pi` in the nested directory that is a link out of the project.
    symlink(&outside, world.project.join("packages/api/.pi")).unwrap();
    let out = world.expect(&["new", "x", "--dir", "packages/api"], 3);
    assert!(
        stderr(&out).contains("refusing to write through"),
        "{}",
        stderr(&out)
    );
    assert_eq!(listing(&outside), Vec::<String>::new());
    assert!(!world.project.join("packages/nope").exists());
}

// ---------------------------------------------------------------------------------------------
// diff

/// A package layer whose block depends on settings and features.
const GATED: &[(&str, &str)] = &[
    (
        "10-git.md",
        "# Git\n\nCommit in small steps.\n{{IF:dco}}Sign off every commit.\n{{/IF}}{{IF:commit_trailer}}Add the trailer.\n{{/IF}}Push when green.\n",
    ),
    ("20-coms.md", "---\nrequires: coms_active\n---\n# Coms\n\nAnswer peers.\n"),
    (
        "30-agents.md",
        "---\nrequires: external_ai_agents\n---\n# External agents\n",
    ),
    (
        "40-review.md",
        "# Review\n\nAt most {{REVIEW_LOOP_MAX_CYCLES}} cycles.\n",
    ),
];

#[test]
fn diff_a_settings_toggle() {
    let world = World::new();
    let package = world.package(GATED);
    let out = world.expect(&["diff", "--package-dir", &package, "--set", "dco=true"], 1);
    insta::assert_snapshot!("diff_set_dco", stdout(&out));
    // Several at once, a string value, and fewer context lines.
    let out = world.expect(
        &[
            "diff",
            "--package-dir",
            &package,
            "--set",
            "dco=true",
            "--set",
            "commit_trailer=Assisted-by",
            "--set",
            "review_loop_max_cycles=7",
            "-U",
            "0",
        ],
        1,
    );
    insta::assert_snapshot!("diff_set_several", stdout(&out));
    // The same setting as the files already give: no difference, exit 0, nothing printed.
    let out = world.expect(
        &["diff", "--package-dir", &package, "--set", "dco=false"],
        0,
    );
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
}

#[test]
fn diff_a_toggle_on_the_shipped_rules() {
    let world = World::new();
    let out = world.expect(&["diff", "--set", "review_loop_enforcement=true"], 1);
    let text = stdout(&out);
    assert!(text.starts_with("--- now\n+++ now with review_loop_enforcement=true\n"));
    assert!(text.contains("\n-# Code Review (advisory)\n"), "{text}");
    assert!(
        text.contains("\n+# Code Review Loop (mandatory)\n"),
        "{text}"
    );
    // The placeholder inside the mandatory text is filled in.
    assert!(
        text.contains("\n+The budget is **3** cycles per change.\n"),
        "{text}"
    );
    let hunks = text.lines().filter(|l| l.starts_with("@@ ")).count();
    assert_eq!(hunks, 1, "{text}");
}

#[test]
fn diff_values_are_json_when_they_parse_and_strings_otherwise() {
    let world = World::new();
    let package = world.package(GATED);
    let as_string = world.expect(
        &[
            "diff",
            "--package-dir",
            &package,
            "--set",
            "commit_trailer=Assisted-by",
        ],
        1,
    );
    let as_json = world.expect(
        &[
            "diff",
            "--package-dir",
            &package,
            "--set",
            "commit_trailer=\"Assisted-by\"",
        ],
        1,
    );
    assert_eq!(as_string.stdout, as_json.stdout);
    assert!(stdout(&as_string).contains("+Add the trailer."));
    // A digit string is what review_loop_max_cycles accepts from text, too.
    let out = world.expect(
        &[
            "diff",
            "--package-dir",
            &package,
            "--set",
            "review_loop_max_cycles=\"5\"",
        ],
        1,
    );
    assert!(
        stdout(&out).contains("+At most 5 cycles."),
        "{}",
        stdout(&out)
    );
    // An agent list from a comma-separated string turns external_ai_agents on.
    let out = world.expect(
        &[
            "diff",
            "--package-dir",
            &package,
            "--set",
            "acpx_agents=codex,claude",
        ],
        1,
    );
    assert!(
        stdout(&out).contains("+# External agents"),
        "{}",
        stdout(&out)
    );
    let out = world.expect(
        &["diff", "--package-dir", &package, "--set", "acpx_agents=[]"],
        0,
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn diff_set_wins_over_the_settings_files() {
    let world = World::new();
    let package = world.package(GATED);
    world.write(
        &world.project.join(".pi"),
        "pi-config-settings.jsonc",
        "{ // team settings\n \"dco\": true }",
    );
    let out = world.expect(
        &["diff", "--package-dir", &package, "--set", "dco=false"],
        1,
    );
    assert!(
        stdout(&out).contains("-Sign off every commit."),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("+++ now with dco=false"));
}

#[test]
fn diff_usage_errors_name_the_key() {
    let world = World::new();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--set", "review_loop_enforcment=true"],
            "unknown settings key `review_loop_enforcment` in `--set`; did you mean `review_loop_enforcement`?",
        ),
        (
            &["--set", "review_loop_max_cycles=11"],
            "`--set review_loop_max_cycles=11`: the value is rejected: 11 is out of range: it must be between 1 and 10",
        ),
        (
            &["--set", "dco=yes"],
            "`--set dco=yes`: the value is rejected: expected a boolean, found a string",
        ),
        (&["--set", "dco"], "`--set dco` needs the form KEY=VALUE"),
        (&[], "the following required arguments were not provided"),
        (
            &["--coms-active", "--no-coms-active"],
            "cannot be used with",
        ),
    ];
    for (args, message) in cases {
        let mut argv = vec!["diff"];
        argv.extend_from_slice(args);
        let out = world.expect(&argv, 2);
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn diff_the_coms_active_feature_both_ways() {
    let world = World::new();
    let package = world.package(GATED);
    let on = world.expect(&["diff", "--package-dir", &package, "--coms-active"], 1);
    assert!(stdout(&on).contains("+++ now with coms_active on\n"));
    assert!(stdout(&on).contains("+# Coms\n"), "{}", stdout(&on));
    let off = world.expect(&["diff", "--package-dir", &package, "--no-coms-active"], 1);
    assert!(stdout(&off).contains("--- now, coms_active on\n"));
    assert!(stdout(&off).contains("-# Coms\n"), "{}", stdout(&off));
    // With both a setting and the feature, both changes show.
    let both = world.expect(
        &[
            "diff",
            "--package-dir",
            &package,
            "--coms-active",
            "--set",
            "dco=true",
        ],
        1,
    );
    assert!(stdout(&both).contains("+# Coms\n") && stdout(&both).contains("+Sign off"));
}

#[test]
fn diff_against_a_saved_block() {
    let world = World::new();
    let saved = world.expect(&["assemble"], 0).stdout;
    fs::write(world.project.join("before.md"), &saved).unwrap();
    world.expect(&["diff", "--against", "before.md"], 0);
    world.write(
        &world.project_rules(),
        "90-team.md",
        "Use the staging cluster.\n",
    );
    let out = world.expect(&["diff", "--against", "before.md"], 1);
    let text = stdout(&out);
    assert!(text.starts_with("--- before.md\n+++ now\n"), "{text}");
    assert!(text.contains("+Use the staging cluster.\n"), "{text}");
    // From stdin.
    let mut child = world
        .command(&["diff", "--against", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &saved).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("+Use the staging cluster.\n"));
    // A missing file is an input error.
    let out = world.expect(&["diff", "--against", "missing.md"], 3);
    assert!(stderr(&out).contains("`missing.md`"), "{}", stderr(&out));
}

#[test]
fn diff_is_coloured_only_when_asked_or_on_a_terminal() {
    let world = World::new();
    let package = world.package(GATED);
    let args = ["diff", "--package-dir", &package, "--set", "dco=true"];
    let plain = world.expect(&args, 1);
    assert!(!stdout(&plain).contains('\u{1b}'));
    let mut coloured = vec!["--color", "always"];
    coloured.extend_from_slice(&args);
    let out = world.expect(&coloured, 1);
    assert!(
        stdout(&out).contains("\u{1b}[32m+Sign off every commit.\u{1b}[0m"),
        "{}",
        stdout(&out)
    );
    // CLICOLOR_FORCE counts as a terminal's say-so; NO_COLOR wins over it.
    let out = world
        .command(&args)
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    assert!(stdout(&out).contains("\u{1b}[31m") || stdout(&out).contains("\u{1b}[32m"));
}

#[test]
fn diff_escapes_what_the_rules_contain() {
    let world = World::new();
    let package = world.package(&[(
        "10-x.md",
        "{{IF:dco}}title \u{1b}]0;owned\u{7}\tok{{/IF}}\n",
    )]);
    let out = world.expect(&["diff", "--package-dir", &package, "--set", "dco=true"], 1);
    let text = stdout(&out);
    assert!(text.contains("+title \\x1b]0;owned\\x07\tok"), "{text}");
    assert!(!text.contains('\u{1b}'));
}

// ---------------------------------------------------------------------------------------------
// watch

/// A running `pi-rules watch` whose stdout lines arrive on a channel.
struct Watcher {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

/// How long to wait for one report: generous, as the machine may be busy.
const REPORT_TIMEOUT: Duration = Duration::from_secs(20);

impl Watcher {
    fn start(world: &World, args: &[&str]) -> Watcher {
        let mut argv = vec!["watch", "--debounce", "50"];
        argv.extend_from_slice(args);
        let mut child = world
            .command(&argv)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut watcher = Watcher {
            child,
            lines,
            seen: Vec::new(),
        };
        watcher.wait_for(|l| l.starts_with("watching: "));
        watcher
    }

    /// Reads lines until one satisfies `wanted`; returns the lines read, that one included.
    fn wait_for(&mut self, wanted: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + REPORT_TIMEOUT;
        let mut read = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    let done = wanted(&line);
                    read.push(line);
                    if done {
                        return read;
                    }
                }
                Err(_) => panic!("timed out; output so far:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// Sends `signal` and returns the exit code.
    fn stop(mut self, signal: rustix::process::Signal) -> Option<i32> {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, signal).unwrap();
        let deadline = Instant::now() + REPORT_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "watch did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn watch_reports_edits_renames_and_settings_changes() {
    let world = World::new();
    let package = world.package(GATED);
    let rule = world.write(&world.project_rules(), "90-team.md", "Deploy on Fridays.\n");
    let mut watch = Watcher::start(&world, &["--package-dir", &package]);
    assert!(
        watch.seen[0].starts_with("watching: 3 files, "),
        "{:?}",
        watch.seen
    );
    assert!(watch.seen[0].ends_with(" 0 warnings"), "{:?}", watch.seen);

    // An edit in place.
    fs::write(&rule, "Never deploy on Fridays.\n").unwrap();
    let report = watch.wait_for(|l| l == "+Never deploy on Fridays.");
    assert!(
        report.iter().any(|l| l.starts_with("changed: ")),
        "{report:?}"
    );
    assert!(
        report.contains(&"-Deploy on Fridays.".to_owned()),
        "{report:?}"
    );

    // An editor's save: write a temporary file, rename it over the rule.
    let temp = world.project_rules().join(".90-team.md.swp");
    fs::write(&temp, "Deploy on Tuesdays.\n").unwrap();
    fs::rename(&temp, &rule).unwrap();
    let report = watch.wait_for(|l| l == "+Deploy on Tuesdays.");
    assert!(
        report.contains(&"-Never deploy on Fridays.".to_owned()),
        "{report:?}"
    );

    // A settings file created in a directory that did not exist when watch started.
    world.write(
        &world.home.join(".pi"),
        "pi-config-settings.jsonc",
        "{\"dco\": true}",
    );
    watch.wait_for(|l| l == "+Sign off every commit.");
    // ... and changed by rename, as an editor saves it.
    let settings_temp = world.home.join(".pi/settings.tmp");
    fs::write(&settings_temp, "{\"dco\": false}").unwrap();
    fs::rename(
        &settings_temp,
        world.home.join(".pi/pi-config-settings.jsonc"),
    )
    .unwrap();
    watch.wait_for(|l| l == "-Sign off every commit.");

    // A new warning is reported.
    fs::write(&rule, "Deploy on Tuesdays.\n{{/IF}}\n").unwrap();
    let report = watch.wait_for(|l| l.starts_with("new warning: "));
    assert_eq!(
        report.last().unwrap(),
        "new warning: rule assembly: unbalanced conditional marker: {{/IF}}"
    );

    // A new rule in the user layer, whose directory did not exist either.
    world.write(&world.user_rules(), "70-mine.md", "From the user layer.\n");
    let report = watch.wait_for(|l| l == "+From the user layer.");
    assert!(
        report.iter().any(|l| l.starts_with("changed: 4 files, ")),
        "{report:?}"
    );

    assert_eq!(watch.stop(rustix::process::Signal::INT), Some(0));
}

#[test]
fn watch_ignores_reads_and_stops_on_sigterm() {
    let world = World::new();
    let package = world.package(GATED);
    let rule = world.write(&world.project_rules(), "90-team.md", "Team rule.\n");
    let mut watch = Watcher::start(&world, &["--package-dir", &package]);
    // Reading the rules (as a host does) is not a change.
    for _ in 0..3 {
        world.expect(&["assemble", "--package-dir", &package], 0);
        fs::read(&rule).unwrap();
    }
    // Nor is a file in a layer that is not a rule: an editor's swap file, or the temporary file
    // that an atomic save writes before it renames it onto the rule.
    let temp = world.project_rules().join(".90-team.md.4242.0.tmp");
    fs::write(&temp, "Team rule, saved.\n").unwrap();
    fs::write(world.project_rules().join("notes.txt"), "not a rule\n").unwrap();
    // Had a read or a temporary file started a round, its report would be out well within this
    // time.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        watch.lines.try_recv().is_err(),
        "a read or a file that is not a rule was reported: {:?}",
        watch.seen
    );
    // The rename onto the rule is the one change.
    fs::rename(&temp, &rule).unwrap();
    let report = watch.wait_for(|l| l == "+Team rule, saved.");
    assert!(report[0].starts_with("changed: "), "{report:?}");
    fs::write(&rule, "Team rule, edited.\n").unwrap();
    watch.wait_for(|l| l == "+Team rule, edited.");
    assert_eq!(watch.stop(rustix::process::Signal::TERM), Some(0));
}

// ---------------------------------------------------------------------------------------------
// schema

const SCHEMA: &str = r#"{
  "dco": {"type": "bool", "env": "PI_DCO", "default": false, "group": "Git",
          "description": "Add a Signed-off-by trailer."},
  "review_loop_max_cycles": {"type": "int", "env": "PI_REVIEW_LOOP_MAX_CYCLES", "default": 3,
          "min": 1, "max": 10, "group": "Review", "description": "Most review cycles."},
  "log_rules": {"type": "string", "default": "info", "enum": ["off", "info", "debug"],
          "group": "Logging", "description": "Log level."},
  "acpx_agents": {"type": "agent_list", "env": "ACPX_AGENTS", "default": [], "group": "Provider",
          "description": "External agents."}
}"#;

#[test]
fn schema_text_and_json() {
    let world = World::new();
    let keys = world.write(world.root(), "keys.json", SCHEMA);
    let keys = keys.display().to_string();
    let out = world.expect(&["schema", "--keys", &keys], 0);
    insta::assert_snapshot!("schema_text", stdout(&out));
    let out = world.expect(&["schema", "--keys", &keys, "--format", "json"], 0);
    insta::assert_snapshot!("schema_json", stdout(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["format"], 1);
    // Keys named on the command line, in the order given.
    let out = world.expect(
        &[
            "schema",
            "--keys",
            &keys,
            "log_rules",
            "dco",
            "--format",
            "json",
        ],
        0,
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = json["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["log_rules", "dco"]);
}

#[test]
fn schema_covers_the_embedded_schema_and_rejects_unknown_keys() {
    let world = World::new();
    let out = world.expect(&["schema", "--format", "json"], 0);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shipped: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(
        &fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("settings-keys.json")).unwrap(),
    )
    .unwrap();
    let keys = json["keys"].as_array().unwrap();
    assert_eq!(keys.len(), shipped.len());
    for (key, (name, spec)) in keys.iter().zip(&shipped) {
        assert_eq!(key["key"], name.as_str());
        assert_eq!(key["type"], spec["type"]);
        assert_eq!(key["default"], spec["default"]);
        assert_eq!(key["env"], spec.get("env").cloned().unwrap_or_default());
        assert_eq!(key["description"], spec["description"]);
    }
    let out = world.expect(&["schema", "review_loop_enforcment"], 2);
    assert!(
        stderr(&out).contains("unknown settings key `review_loop_enforcment`; did you mean `review_loop_enforcement`?"),
        "{}",
        stderr(&out)
    );
}

// ---------------------------------------------------------------------------------------------
// completions, man, help

#[test]
fn completions_for_three_shells() {
    let world = World::new();
    for (shell, marker) in [
        ("bash", "complete -F _pi__rules"),
        ("zsh", "#compdef pi-rules"),
        ("fish", "complete -c pi-rules"),
        ("elvish", "edit:completion:arg-completer[pi-rules]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = world.expect(&["completions", shell], 0);
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script}");
        for command in ["override", "diff", "watch", "schema", "against", "layer"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    // The bash script is valid bash.
    let script = world.root().join("pi-rules.bash");
    fs::write(&script, world.expect(&["completions", "bash"], 0).stdout).unwrap();
    let status = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap();
    assert!(status.success());
    world.expect(&["completions", "tcsh"], 2);
}

#[test]
fn man_pages_in_roff() {
    let world = World::new();
    let page = stdout(&world.expect(&["man"], 0));
    assert!(page.contains(".TH pi-rules 1"), "{page}");
    for command in ["show", "override", "new", "diff", "watch", "schema"] {
        assert!(page.contains(command), "{command}");
    }
    let page = stdout(&world.expect(&["man", "diff"], 0));
    assert!(page.contains(".TH pi-rules-diff 1"), "{page}");
    assert!(page.contains("\\-\\-against"), "{page}");
    let out = world.expect(&["man", "nope"], 2);
    assert!(stderr(&out).contains("no command is named `nope`"));
}

#[test]
fn every_new_command_has_help_with_examples() {
    let world = World::new();
    for &command in EXAMPLE_COMMANDS {
        let out = world.expect(&[command, "--help"], 0);
        let help = stdout(&out);
        assert!(help.contains("Examples:"), "{command}: {help}");
        assert!(
            help.contains(&format!("pi-rules {command}")),
            "{command}: {help}"
        );
    }
}
