//! The configuration file's completion and hover, on the real schema and real files.
// Tests set up the file system directly.
#![allow(clippy::disallowed_methods)]

use super::*;
use crate::env::Env;
use crate::ide::IdeOptions;
use crate::session::Session;
use pi_rules_core::settings::Schema;
use std::borrow::Cow;
use std::fs;

fn labels(items: &[Completion]) -> Vec<&str> {
    items.iter().map(|c| c.label.as_str()).collect()
}

/// The offset just after the first `needle` in `text`.
fn after(text: &str, needle: &str) -> usize {
    text.find(needle).unwrap() + needle.len()
}

#[test]
fn sections_complete_on_a_header_line_and_at_the_top() {
    let text = "[ch";
    let items = config_completions(text, 3);
    assert_eq!(labels(&items), SECTIONS);
    assert_eq!(items[0].replace, 0..3);
    let text = "# mine\nsc";
    assert_eq!(labels(&config_completions(text, text.len())), SECTIONS);
}

#[test]
fn keys_complete_in_their_table() {
    let text = "[rules]\nsc\n";
    let items = config_completions(text, after(text, "sc"));
    assert_eq!(labels(&items), ["scoped"]);
    assert_eq!(items[0].replace, 8..10);
    assert!(items[0].detail.as_deref().unwrap().contains("scopes"));
    let text = "[check]\n\n[export]\nl";
    let items = config_completions(text, 8);
    let mut keys = labels(&items);
    keys.sort_unstable();
    assert_eq!(keys, ["ignore", "per-path", "severity"]);
    let items = config_completions(text, text.len());
    let mut keys = labels(&items);
    keys.sort_unstable();
    assert_eq!(keys, ["layers", "set", "settings", "targets"]);
    let text = "[[check.per-path]]\npaths = [\"a/**\"]\n";
    let items = config_completions(text, text.len());
    let mut keys = labels(&items);
    keys.sort_unstable();
    assert_eq!(keys, ["ignore", "paths", "severity"]);
    // `[check.severity]` takes codes as keys.
    let text = "[check.severity]\nPR8";
    let items = config_completions(text, text.len());
    assert!(labels(&items).contains(&"PR804"), "{:?}", labels(&items));
    assert_eq!(items.len(), CODES.len());
}

#[test]
fn values_complete_after_the_equals_sign() {
    let text = "[rules]\nscoped = t\n";
    let items = config_completions(text, after(text, "= t"));
    assert_eq!(labels(&items), ["true", "false"]);
    assert_eq!(items[0].replace, after(text, "= ")..after(text, "= t"));
    let text = "[check.severity]\nPR804 = \"w\"\n";
    let items = config_completions(text, after(text, "\"w"));
    assert_eq!(
        labels(&items),
        ["\"error\"", "\"warning\"", "\"info\"", "\"off\""]
    );
    // The item typed so far, its quotes included, is replaced.
    assert_eq!(items[0].replace, after(text, "= ")..after(text, "\"w\""));
    let text = "[export]\nlayers = [\"project\", ]\n";
    let items = config_completions(text, after(text, "\", "));
    assert_eq!(labels(&items), ["\"package\"", "\"user\"", "\"project\""]);
    // Codes in `ignore`, on a line of an array that spans several, by id with the name beside.
    let text = "[check]\nignore = [\n  \"PR5\n]\n";
    let items = config_completions(text, after(text, "\"PR5"));
    let ids = labels(&items);
    assert!(ids.contains(&"\"PR512\""), "{ids:?}");
    assert!(ids.iter().all(|id| id.starts_with("\"PR")), "{ids:?}");
    assert!(items.iter().all(|c| c.detail.is_some()));
    // In a per-path entry, its own severity table.
    let text = "[[check.per-path]]\npaths = [\"x/**\"]\nseverity = { PR804 = \"";
    assert_eq!(config_completions(text, text.len()).len(), 4);
}

#[test]
fn any_offset_of_any_text_is_answered_without_a_panic() {
    for text in [
        "",
        "[",
        "[[",
        "]]]",
        "=",
        "a = [[[",
        "[check]\nignore = [\"é\", 'x\n]\n# ]\n[rules]\nscoped = 😀",
        "\"\"\"\n[rules]\n\"\"\"",
        "[\"a.b\".c]\nx.y = 1\n",
    ] {
        for offset in 0..=text.len() + 2 {
            let _ = config_completions(text, offset);
            let _ = key_at(text, clamp(text, offset));
        }
    }
}

#[test]
fn hover_on_a_key_says_what_it_means_its_value_and_where_it_comes_from() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let (cwd, home) = (root.join("app"), root.join("home"));
    fs::create_dir_all(cwd.join(".pi")).unwrap();
    fs::create_dir_all(home.join(".pi/agent")).unwrap();
    let project = "[rules]\nscoped = true\n\n[check.severity]\nPR804 = \"warning\"\n";
    fs::write(cwd.join(".pi/pi-rules.toml"), project).unwrap();
    fs::write(
        home.join(".pi/agent/pi-rules.toml"),
        "[check]\nignore = [\"PR512\"]\n",
    )
    .unwrap();
    let env = Env::from_vars(cwd.clone(), [("HOME", home.as_os_str())]);
    let session = Session::in_env(
        env,
        cwd.clone(),
        Some(home.clone()),
        Cow::Borrowed(Schema::embedded()),
    );
    let ctx = IdeContext::new(&session, &IdeOptions::default()).unwrap();

    let hover = config_hover(&ctx, project, after(project, "sco")).unwrap();
    assert_eq!(
        hover.range,
        after(project, "[rules]\n")..after(project, "scoped")
    );
    assert!(
        hover.markdown.contains("`rules.scoped`"),
        "{}",
        hover.markdown
    );
    assert!(hover.markdown.contains("scopes"), "{}", hover.markdown);
    assert!(
        hover
            .markdown
            .contains("**Now:** `true`, from the project file"),
        "{}",
        hover.markdown
    );
    let hover = config_hover(&ctx, project, after(project, "PR8")).unwrap();
    assert!(
        hover
            .markdown
            .contains("**Now:** `warning`, from the project file"),
        "{}",
        hover.markdown
    );
    // The user's file gives `ignore`, seen from the project's file's `[check]` too.
    let text = "[check]\nignore = []\n";
    let hover = config_hover(&ctx, text, 9).unwrap();
    assert!(
        hover
            .markdown
            .contains("**Now:** `PR512`, from the user file"),
        "{}",
        hover.markdown
    );
    // A key no file sets: its default.
    let text = "[export]\nlayers = []\n";
    let hover = config_hover(&ctx, text, 10).unwrap();
    assert!(
        hover.markdown.contains("**Now:** `project`, the default"),
        "{}",
        hover.markdown
    );
    // A header names its table.
    let hover = config_hover(&ctx, project, after(project, "[che")).unwrap();
    assert!(
        hover.markdown.contains("`check.severity`"),
        "{}",
        hover.markdown
    );
    // A value, or an unknown key: nothing.
    assert!(config_hover(&ctx, project, after(project, "= tr")).is_none());
    assert!(config_hover(&ctx, "[rules]\nnope = 1\n", 9).is_none());
}

#[test]
fn the_outline_lists_the_sections() {
    let text = "[rules]\nscoped = true\n[check]\nignore = [\n  \"[x]\",\n]\n[[check.per-path]]\npaths = []\n";
    let names: Vec<String> = config_symbols(text).into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["rules", "check", "check.per-path"]);
    let first = &config_symbols(text)[0];
    assert_eq!(first.range, 0..after(text, "true\n"));
    assert_eq!(first.selection, 0..7);
}
