//! The editor queries on a temporary project with real settings files and layers, and on the
//! real schema.
// Tests set up and inspect the file system directly.
#![allow(clippy::disallowed_methods)]

use super::*;
use crate::env::Env;
use pi_rules_core::settings::Schema;
use proptest::prelude::*;
use std::fs;

/// A project (no repository) with its own `$HOME` and cache, and the environment variables
/// given.
struct Project {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
    cache: PathBuf,
    vars: Vec<(String, String)>,
}

impl Project {
    fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let cwd = root.join("app");
        let cache = root.join("cache");
        fs::create_dir_all(home.join(".pi/agent/rules")).unwrap();
        fs::create_dir_all(cwd.join(".pi/rules")).unwrap();
        Project {
            _tmp: tmp,
            home,
            cwd,
            cache,
            vars: Vec::new(),
        }
    }

    fn var(mut self, name: &str, value: &str) -> Project {
        self.vars.push((name.to_owned(), value.to_owned()));
        self
    }

    fn env(&self) -> Env {
        let mut vars = self.vars.clone();
        vars.push(("HOME".to_owned(), self.home.display().to_string()));
        vars.push((
            "XDG_CACHE_HOME".to_owned(),
            self.cache.display().to_string(),
        ));
        Env::from_vars(self.cwd.clone(), vars)
    }

    fn session(&self) -> Session {
        Session::in_env(
            self.env(),
            self.cwd.clone(),
            Some(self.home.clone()),
            Cow::Borrowed(Schema::embedded()),
        )
    }

    fn ctx(&self) -> IdeContext {
        IdeContext::new(&self.session(), &IdeOptions::default()).unwrap()
    }

    fn project_settings(&self) -> PathBuf {
        self.cwd.join(".pi/pi-config-settings.json")
    }

    fn global_settings(&self) -> PathBuf {
        self.home.join(".pi/pi-config-settings.json")
    }

    fn write(&self, path: &Path, text: &str) -> PathBuf {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
        path.to_path_buf()
    }

    fn project_rule(&self, name: &str, text: &str) -> PathBuf {
        self.write(&self.cwd.join(".pi/rules").join(name), text)
    }

    fn user_rule(&self, name: &str, text: &str) -> PathBuf {
        self.write(&self.home.join(".pi/agent/rules").join(name), text)
    }
}

fn project_rule(name: &str) -> DocumentKind {
    DocumentKind::Rule {
        layer: Layer::Project,
        name: name.to_owned(),
    }
}

/// The offset of the first `needle` in `text`.
fn at(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in {text:?}"))
}

// ---------------------------------------------------------------------------------------------
// classify

#[test]
fn paths_are_classified_by_layer_and_settings_file() {
    let p = Project::new();
    let session = p.session();
    let classify = |path: &Path| classify(&session, path);
    assert_eq!(
        classify(&p.cwd.join(".pi/rules/50-x.md")),
        project_rule("50-x.md")
    );
    assert_eq!(
        classify(&p.home.join(".pi/agent/rules/a.md")),
        DocumentKind::Rule {
            layer: Layer::User,
            name: "a.md".to_owned()
        }
    );
    assert_eq!(
        classify(&p.project_settings()),
        DocumentKind::Settings {
            scope: SettingsScope::Project
        }
    );
    assert_eq!(
        classify(&p.home.join(".pi/pi-config-settings.jsonc")),
        DocumentKind::Settings {
            scope: SettingsScope::Global
        }
    );
    // Not a rule name, not in a layer, a directory.
    assert_eq!(
        classify(&p.cwd.join(".pi/rules/x.txt")),
        DocumentKind::Other
    );
    assert_eq!(classify(&p.cwd.join("README.md")), DocumentKind::Other);
    assert_eq!(classify(Path::new("/")), DocumentKind::Other);
    // The cache copy of an embedded package rule is the package layer; another name there is not.
    let cached = materialize_package_rule(&session.env, "20-code-review-loop.md").unwrap();
    assert_eq!(
        classify(&cached),
        DocumentKind::Rule {
            layer: Layer::Package,
            name: "20-code-review-loop.md".to_owned()
        }
    );
    assert_eq!(
        classify(&cached.with_file_name("99-not-embedded.md")),
        DocumentKind::Other
    );
    // A package directory given by the front end.
    let dir = p.cwd.join("pkg");
    assert_eq!(
        classify_with(&session, Some(&dir), &dir.join("r.md")),
        DocumentKind::Rule {
            layer: Layer::Package,
            name: "r.md".to_owned()
        }
    );
}

#[test]
fn a_layer_reached_through_a_link_is_recognised() {
    let p = Project::new();
    let link = p.cwd.join("rules-link");
    std::os::unix::fs::symlink(p.cwd.join(".pi/rules"), &link).unwrap();
    assert_eq!(
        classify(&p.session(), &link.join("a.md")),
        project_rule("a.md")
    );
}

// ---------------------------------------------------------------------------------------------
// hover

#[test]
fn hover_on_a_condition_gives_the_key_its_value_its_source_and_the_block_state() {
    let p = Project::new();
    let settings = p.write(&p.project_settings(), r#"{ "dco": true }"#);
    let text =
        "# R\n\n{{IF:dco}}\nSign.\n{{/IF}}\n{{IFNOT:use_worktrees}}\nNo trees.\n{{/IFNOT}}\n";
    let ctx = p.ctx();
    let kind = project_rule("50-r.md");
    let offset = at(text, "dco}}") + 1;
    let info = hover(&ctx, &kind, text, offset).unwrap();
    assert_eq!(&text[info.range.clone()], "{{IF:dco}}");
    let md = &info.markdown;
    assert!(md.contains("Signed-off-by"), "{md}");
    assert!(md.contains("- default: `false`"), "{md}");
    assert!(md.contains("`PI_DCO`"), "{md}");
    let shown = settings.display().to_string();
    assert!(
        md.contains(&format!("**Now:** `true` (from `{shown}`)")),
        "{md}"
    );
    // Explain's words for the block.
    assert!(
        md.contains(&format!(
            "**This block:** kept — `dco` = true from {shown} is truthy"
        )),
        "{md}"
    );

    // The other block, on its default, inverted.
    let info = hover(&ctx, &kind, text, at(text, "use_worktrees")).unwrap();
    assert!(info
        .markdown
        .contains("**Now:** `false` (the schema's default)"));
    assert!(info.markdown.contains(
        "**This block:** kept — `use_worktrees` = false from default is falsy, inverted by IFNOT"
    ));
    // On a closer: the block it closes.
    let info = hover(&ctx, &kind, text, at(text, "{{/IFNOT}}") + 3).unwrap();
    assert_eq!(&text[info.range], "{{/IFNOT}}");
    assert!(info.markdown.contains("**IFNOT** block on `use_worktrees`"));
    // Plain text: nothing.
    assert_eq!(hover(&ctx, &kind, text, at(text, "Sign.")), None);
}

#[test]
fn hover_names_an_environment_variable_as_the_source() {
    let p = Project::new().var("PI_DCO", "1");
    let text = "{{IF:dco}}x{{/IF}}";
    let info = hover(&p.ctx(), &project_rule("a.md"), text, 6).unwrap();
    assert!(
        info.markdown
            .contains("**Now:** `true` (from the environment variable `PI_DCO`)"),
        "{}",
        info.markdown
    );
}

#[test]
fn hover_on_a_comparison_on_an_enum_key_lists_its_values() {
    let p = Project::new();
    p.write(&p.global_settings(), r#"{ "log_rules": "debug" }"#);
    let text = "{{IF:log_rules == debug}}x{{/IF}}{{IF:log_rules != \"off\"}}y{{/IF}}";
    let ctx = p.ctx();
    let info = hover(&ctx, &project_rule("a.md"), text, 7).unwrap();
    let md = &info.markdown;
    assert!(
        md.contains("- allowed values: `off`, `debug`, `info`, `warn`, `error`"),
        "{md}"
    );
    assert!(md.contains("**Now:** `\"debug\"`"), "{md}");
    assert!(md.contains("the comparison is true"), "{md}");
    let second = at(text, "log_rules !=");
    let info = hover(&ctx, &project_rule("a.md"), text, second).unwrap();
    assert!(info.markdown.contains("**This block:** kept"));
}

#[test]
fn hover_on_an_unknown_key_suggests_the_near_one_and_says_it_fails_closed() {
    let p = Project::new();
    let text = "{{IF:dcoo}}x{{/IF}}";
    let info = hover(&p.ctx(), &project_rule("a.md"), text, 6).unwrap();
    let md = &info.markdown;
    assert!(
        md.contains("`dcoo` is not a settings key; did you mean `dco`?"),
        "{md}"
    );
    assert!(md.contains("**This block:** dropped"), "{md}");
    assert!(md.contains("fails closed"), "{md}");
}

#[test]
fn hover_on_the_frontmatter_gate() {
    let p = Project::new();
    let ctx = IdeContext::new(
        &p.session(),
        &IdeOptions {
            coms_active: Some(true),
            ..IdeOptions::default()
        },
    )
    .unwrap();
    let text = "---\nrequires: coms_active\nrequires_setting: review_loop_enforcement\n---\nbody\n";
    let kind = project_rule("a.md");
    let info = hover(&ctx, &kind, text, at(text, "coms_active") + 2).unwrap();
    assert_eq!(&text[info.range.clone()], "coms_active");
    let md = &info.markdown;
    assert!(md.contains("peer-to-peer messaging is running"), "{md}");
    assert!(
        md.contains("**Now:** on (from the host: --coms-active)"),
        "{md}"
    );
    // The gate as explain words it: the setting is false, so the file is gated.
    assert!(
        md.contains(
            "**This file:** gated (requires_setting: review_loop_enforcement = false from \
             default)"
        ),
        "{md}"
    );
    let info = hover(&ctx, &kind, text, at(text, "review_loop_enforcement")).unwrap();
    assert!(info.markdown.contains("code-review loop mandatory"));
    // Past the value on the same line still names it; the fence lines do not.
    assert!(hover(&ctx, &kind, text, 1).is_none());
}

#[test]
fn hover_on_the_placeholder_gives_its_value() {
    let p = Project::new();
    p.write(&p.project_settings(), r#"{ "review_loop_max_cycles": 7 }"#);
    let text = "At most {{REVIEW_LOOP_MAX_CYCLES}} cycles.";
    let ctx = p.ctx();
    let start = at(text, "{{REVIEW");
    for offset in [start, start + 10, start + 25] {
        let info = hover(&ctx, &project_rule("a.md"), text, offset).unwrap();
        assert_eq!(&text[info.range], "{{REVIEW_LOOP_MAX_CYCLES}}");
        assert!(
            info.markdown.starts_with("Becomes `7`"),
            "{}",
            info.markdown
        );
    }
    assert!(hover(&ctx, &project_rule("a.md"), text, start + 26).is_none());
}

#[test]
fn hover_says_when_another_layer_takes_precedence() {
    let p = Project::new();
    p.project_rule("20-code-review-loop.md", "{{IF:dco}}x{{/IF}}");
    let ctx = p.ctx();
    let kind = DocumentKind::Rule {
        layer: Layer::Package,
        name: "20-code-review-loop.md".to_owned(),
    };
    let info = hover(&ctx, &kind, "{{IF:dco}}x{{/IF}}", 5).unwrap();
    assert!(
        info.markdown
            .contains("**Not in the prompt:** this package copy is not read: the project copy"),
        "{}",
        info.markdown
    );
}

#[test]
fn hover_in_a_settings_file_says_whether_the_value_is_accepted() {
    let p = Project::new();
    let text = "{\n  // c\n  \"review_loop_max_cycles\": 12,\n  \"dco\": true,\n  \"dcoo\": 1,\n  \"log_rules\": \"info\",\n  \"log_rules\": \"warn\"\n}\n";
    let path = p.write(&p.project_settings(), text);
    let ctx = p.ctx();
    let kind = DocumentKind::Settings {
        scope: SettingsScope::Project,
    };
    let info = hover(&ctx, &kind, text, at(text, "review_loop_max_cycles") + 3).unwrap();
    assert_eq!(&text[info.range.clone()], "\"review_loop_max_cycles\"");
    assert!(
        info.markdown
            .contains("**Rejected:** 12 is out of range: it must be between 1 and 10"),
        "{}",
        info.markdown
    );
    assert!(info
        .markdown
        .contains("**Now:** `3` (the schema's default)"));
    let info = hover(&ctx, &kind, text, at(text, "\"dco\"")).unwrap();
    assert!(info.markdown.contains("**Accepted:** `true`"));
    assert!(info
        .markdown
        .contains(&format!("(from `{}`)", path.display())));
    let info = hover(&ctx, &kind, text, at(text, "dcoo")).unwrap();
    assert!(info
        .markdown
        .contains("`dcoo` is not a settings key: it is ignored; did you mean `dco`?"));
    let info = hover(&ctx, &kind, text, at(text, "log_rules")).unwrap();
    assert!(info.markdown.contains("**Repeated:**"), "{}", info.markdown);
    let info = hover(&ctx, &kind, text, text.rfind("log_rules").unwrap()).unwrap();
    assert!(info.markdown.contains("**Accepted:** `\"warn\"`"));
    // A value, a comment: nothing.
    assert!(hover(&ctx, &kind, text, at(text, "true")).is_none());
    assert!(hover(&ctx, &kind, text, at(text, "// c")).is_none());
    // Unsaved text that does not parse.
    let broken = "{ \"dco\": tru";
    let info = hover(&ctx, &kind, broken, 3).unwrap();
    assert!(info.markdown.contains("**Not read:**"), "{}", info.markdown);
}

#[test]
fn a_global_value_under_a_project_one_says_so() {
    let p = Project::new();
    p.write(&p.project_settings(), r#"{"dco": false}"#);
    let global = p.write(&p.global_settings(), r#"{"dco": true}"#);
    let text = fs::read_to_string(global).unwrap();
    let kind = DocumentKind::Settings {
        scope: SettingsScope::Global,
    };
    let info = hover(&p.ctx(), &kind, &text, 3).unwrap();
    assert!(
        info.markdown.contains("its value wins"),
        "{}",
        info.markdown
    );
    assert!(info.markdown.contains("**Now:** `false`"));
}

// ---------------------------------------------------------------------------------------------
// completion

fn labels(items: &[Completion]) -> Vec<&str> {
    items.iter().map(|c| c.label.as_str()).collect()
}

#[test]
fn keys_and_features_complete_after_an_opener() {
    let p = Project::new();
    let ctx = p.ctx();
    let text = "x\n{{IF:us}}\n";
    let offset = at(text, "us") + 2;
    let items = completions(&ctx, &project_rule("a.md"), text, offset);
    let worktrees = items.iter().find(|c| c.label == "use_worktrees").unwrap();
    assert_eq!(worktrees.kind, CompletionKind::Key);
    assert_eq!(&text[worktrees.replace.clone()], "us");
    assert_eq!(worktrees.insert, "use_worktrees");
    assert_eq!(worktrees.detail.as_deref(), Some("bool"));
    assert!(worktrees
        .documentation
        .as_deref()
        .unwrap()
        .contains("Now: `false`"));
    assert!(labels(&items).contains(&"coms_active"));
    assert_eq!(
        items.len(),
        Schema::embedded().len() + FEATURES_COUNT,
        "every key and feature"
    );
    // While typing, with nothing after the cursor, and in IFNOT.
    let text = "{{IFNOT:";
    let items = completions(&ctx, &project_rule("a.md"), text, text.len());
    assert!(labels(&items).contains(&"dco"));
    assert_eq!(items[0].replace, 8..8);
}

const FEATURES_COUNT: usize = pi_rules_core::lint::FEATURES.len();

#[test]
fn allowed_values_complete_after_a_comparison() {
    let p = Project::new();
    let ctx = p.ctx();
    let text = "{{IF:log_rules == de}}";
    let offset = at(text, "de}}") + 2;
    let items = completions(&ctx, &project_rule("a.md"), text, offset);
    assert_eq!(labels(&items), ["off", "debug", "info", "warn", "error"]);
    assert_eq!(&text[items[0].replace.clone()], "de");
    assert_eq!(items[2].detail.as_deref(), Some("default"));
    let text = "{{IFNOT:dco != ";
    let items = completions(&ctx, &project_rule("a.md"), text, text.len());
    assert_eq!(labels(&items), ["true", "false"]);
    // An unknown key: nothing to offer.
    let text = "{{IF:nope == ";
    assert!(completions(&ctx, &project_rule("a.md"), text, text.len()).is_empty());
}

#[test]
fn features_and_keys_complete_in_the_frontmatter() {
    let p = Project::new();
    let ctx = p.ctx();
    let text = "---\nrequires: co\nrequires_setting: \n---\nbody";
    let offset = at(text, "co\n") + 2;
    let items = completions(&ctx, &project_rule("a.md"), text, offset);
    assert_eq!(labels(&items), ["coms_active", "external_ai_agents"]);
    assert_eq!(&text[items[0].replace.clone()], "co");
    let offset = at(text, "requires_setting: ") + "requires_setting: ".len();
    let items = completions(&ctx, &project_rule("a.md"), text, offset);
    assert_eq!(items.len(), Schema::embedded().len());
    // A header still being written (no closing fence yet).
    let text = "---\nrequires_setting: d";
    let items = completions(&ctx, &project_rule("a.md"), text, text.len());
    assert!(labels(&items).contains(&"dco"));
    // Body text is not the header.
    let text = "---\na: b\n---\nrequires: ";
    assert!(completions(&ctx, &project_rule("a.md"), text, text.len()).is_empty());
}

#[test]
fn the_innermost_open_block_is_closed() {
    let p = Project::new();
    let ctx = p.ctx();
    let kind = project_rule("a.md");
    let text = "{{IF:dco}}\n{{IFNOT:use_worktrees}}\nx\n{{/";
    let items = completions(&ctx, &kind, text, text.len());
    assert_eq!(labels(&items), ["{{/IFNOT}}"]);
    assert_eq!(&text[items[0].replace.clone()], "{{/");
    let text = "{{IF:dco}}\n{{IFNOT:use_worktrees}}\nx\n{{/IFNOT}}\n{{}}";
    let offset = text.len() - 2;
    let items = completions(&ctx, &kind, text, offset);
    assert_eq!(labels(&items), ["{{/IF}}"]);
    assert_eq!(&text[items[0].replace.clone()], "{{}}");
    // Nothing open: nothing to close.
    let text = "{{IF:dco}}x{{/IF}}\n{{/";
    assert!(completions(&ctx, &kind, text, text.len()).is_empty());
}

#[test]
fn keys_and_values_complete_in_a_settings_file() {
    let p = Project::new();
    let ctx = p.ctx();
    let kind = DocumentKind::Settings {
        scope: SettingsScope::Project,
    };
    let text = "{\n  \"dco\": true,\n  \"log_r\"\n}";
    let offset = at(text, "log_r") + 5;
    let items = completions(&ctx, &kind, text, offset);
    let log_rules = items.iter().find(|c| c.label == "log_rules").unwrap();
    assert_eq!(&text[log_rules.replace.clone()], "\"log_r\"");
    assert_eq!(log_rules.insert, "\"log_rules\": ");
    // A key already set is not offered again.
    assert!(!labels(&items).contains(&"dco"));
    // A value of an enum key; of a boolean key.
    let text = "{ \"log_rules\": \"";
    let items = completions(&ctx, &kind, text, text.len());
    assert_eq!(
        labels(&items),
        ["\"off\"", "\"debug\"", "\"info\"", "\"warn\"", "\"error\""]
    );
    assert_eq!(&text[items[0].replace.clone()], "\"");
    let text = "{ \"dco\":  }";
    let items = completions(&ctx, &kind, text, at(text, "}") - 1);
    assert_eq!(labels(&items), ["true", "false"]);
    // Inside a nested object: nothing.
    let text = "{ \"agent_overrides\": { \"";
    assert!(completions(&ctx, &kind, text, text.len()).is_empty());
    // After `{` on an empty file.
    let items = completions(&ctx, &kind, "{", 1);
    assert_eq!(items.len(), Schema::embedded().len());
}

// ---------------------------------------------------------------------------------------------
// inlay hints and symbols

#[test]
fn hints_follow_each_opener_with_the_deciding_value() {
    let p = Project::new();
    p.write(&p.project_settings(), r#"{"use_worktrees": true}"#);
    let ctx = p.ctx();
    let text = "{{IF:dco}}\n{{IF:use_worktrees}}a{{/IF}}\n{{/IF}}\n{{IF:use_worktrees}}b{{/IF}}\n{{IF:coms_active}}c{{/IF}}";
    let hints = inlay_hints(&ctx, &project_rule("a.md"), text);
    let got: Vec<(&str, &str)> = hints
        .iter()
        .map(|h| (&text[..h.offset], h.label.as_str()))
        .map(|(before, label)| (&before[before.rfind("{{").unwrap()..], label))
        .collect();
    assert_eq!(
        got,
        [
            ("{{IF:dco}}", "dropped: dco = false, default"),
            ("{{IF:use_worktrees}}", "not evaluated"),
            (
                "{{IF:use_worktrees}}",
                "kept: use_worktrees = true, project settings"
            ),
            ("{{IF:coms_active}}", "dropped: coms_active is off"),
        ]
    );
    assert!(hints[1]
        .tooltip
        .as_deref()
        .unwrap()
        .starts_with("inside the dropped block at 1:1"));
    // Not a rule file: none.
    assert!(inlay_hints(&ctx, &DocumentKind::Other, text).is_empty());
}

#[test]
fn symbols_nest_as_the_blocks_do() {
    let text = "---\nrequires: coms_active\n---\n{{IF:a}}\n{{IFNOT:b == 1}}x{{/IFNOT}}\n{{/IF}}\n{{IF:c}}y{{/IF}}\n{{IF:open}}";
    let outline = symbols(&project_rule("a.md"), text);
    let names: Vec<&str> = outline.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["frontmatter", "IF a", "IF c", "IF open"]);
    assert_eq!(outline[0].detail.as_deref(), Some("requires: coms_active"));
    let a = &outline[1];
    assert_eq!(&text[a.selection.clone()], "{{IF:a}}");
    assert!(text[a.range.clone()].ends_with("{{/IF}}"));
    assert_eq!(a.children.len(), 1);
    assert_eq!(a.children[0].name, "IFNOT b == 1");
    assert_eq!(
        &text[a.children[0].range.clone()],
        "{{IFNOT:b == 1}}x{{/IFNOT}}"
    );
    assert_eq!(outline[3].detail.as_deref(), Some("no closer"));
    assert_eq!(&text[outline[3].range.clone()], "{{IF:open}}");
    // A settings file: its keys.
    let settings = symbols(
        &DocumentKind::Settings {
            scope: SettingsScope::Global,
        },
        "{\"a\": {\"b\": 1}, \"c\": 2}",
    );
    let names: Vec<&str> = settings.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "c"]);
}

#[test]
fn deep_nesting_is_cut_at_the_outline_depth() {
    let depth = 100_000;
    let text = "{{IF:a}}".repeat(depth) + &"{{/IF}}".repeat(depth);
    let outline = symbols(&project_rule("a.md"), &text);
    let mut level = &outline;
    let mut seen = 0;
    while let Some(first) = level.first() {
        seen += 1;
        level = &first.children;
    }
    assert_eq!(seen, symbols::MAX_DEPTH + 1);
}

// ---------------------------------------------------------------------------------------------
// definition and references

#[test]
fn definition_reaches_the_overridden_package_rule_in_the_cache() {
    let p = Project::new();
    let name = "20-code-review-loop.md";
    let text = "{{IF:dco}}mine{{/IF}}";
    let project = p.project_rule(name, text);
    let user = p.user_rule(name, "user");
    let ctx = p.ctx();
    let kind = project_rule(name);
    let targets = definition(&ctx, &kind, text, at(text, "mine"));
    assert_eq!(targets.len(), 2, "{targets:?}");
    assert_eq!(targets[0].path, user);
    let cached = &targets[1].path;
    assert_eq!(
        cached,
        &p.cache
            .join("pi-rules")
            .join(env!("CARGO_PKG_VERSION"))
            .join("package")
            .join(name)
    );
    let embedded = crate::embedded::PACKAGE_RULES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap()
        .1;
    assert_eq!(fs::read_to_string(cached).unwrap(), embedded);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(cached).unwrap().permissions().mode() & 0o777,
        0o444
    );
    // References: every copy, this one included, highest first.
    let refs = references(&ctx, &kind, text, at(text, "mine"));
    let paths: Vec<&Path> = refs.iter().map(|t| t.path.as_path()).collect();
    assert_eq!(paths, [project.as_path(), user.as_path(), cached.as_path()]);
    // From the package copy there is nothing lower.
    let package = DocumentKind::Rule {
        layer: Layer::Package,
        name: name.to_owned(),
    };
    assert!(definition(&ctx, &package, embedded, 0).is_empty());
}

#[test]
fn definition_of_a_key_is_the_settings_line_that_sets_it() {
    let p = Project::new();
    let project_text = "{\n  \"dco\": false,\n  \"dco\": true\n}";
    let project = p.write(&p.project_settings(), project_text);
    let global = p.write(
        &p.global_settings(),
        "{\"dco\": true, \"log_rules\": \"warn\"}",
    );
    let ctx = p.ctx();
    let text = "---\nrequires_setting: log_rules\n---\n{{IF:dco}}x{{/IF}}";
    let kind = project_rule("a.md");
    let targets = definition(&ctx, &kind, text, at(text, "dco"));
    assert_eq!(targets.len(), 2);
    assert_eq!(targets[0].path, project);
    // The last line of the project file, whose value counts.
    let range = targets[0].range.clone().unwrap();
    assert_eq!(range.start, project_text.rfind("\"dco\"").unwrap());
    assert_eq!(&project_text[range], "\"dco\"");
    assert_eq!(targets[1].path, global);
    let targets = definition(&ctx, &kind, text, at(text, "log_rules") + 1);
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].path, global);
    assert_eq!(
        references(&ctx, &kind, text, at(text, "log_rules")),
        targets
    );
    // A key no file sets: nowhere.
    let text = "{{IF:use_worktrees}}x{{/IF}}";
    assert!(definition(&ctx, &kind, text, 5).is_empty());
}

#[test]
fn materializing_twice_writes_once_and_a_changed_copy_is_restored() {
    let p = Project::new();
    let env = p.env();
    let name = "00-orchestrator-core.md";
    let path = materialize_package_rule(&env, name).unwrap();
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&fs::metadata(p).unwrap());
    let first = inode(&path);
    assert_eq!(materialize_package_rule(&env, name).unwrap(), path);
    assert_eq!(inode(&path), first, "an equal copy is left alone");
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    fs::write(&path, "tampered").unwrap();
    materialize_package_rule(&env, name).unwrap();
    assert_ne!(fs::read_to_string(&path).unwrap(), "tampered");
    assert!(materialize_package_rule(&env, "nope.md").is_err());
    assert!(materialize_package_rule(&env, "../x.md").is_err());
    // The message is raw: the front end that shows it escapes it.
    let err = materialize_package_rule(&env, "\u{1b}[2J.md").unwrap_err();
    assert!(err.to_string().contains("`\u{1b}[2J.md`"), "{err}");
}

#[test]
fn a_cache_link_that_leads_out_of_its_base_is_refused() {
    let p = Project::new();
    let outside = p.cwd.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(&p.cache).unwrap();
    std::os::unix::fs::symlink(&outside, p.cache.join("pi-rules")).unwrap();
    let err = materialize_package_rule(&p.env(), "00-orchestrator-core.md").unwrap_err();
    assert!(err.to_string().contains("refusing"), "{err}");
    assert!(fs::read_dir(&outside).unwrap().next().is_none());
}

#[test]
fn without_xdg_the_cache_is_under_home() {
    let p = Project::new();
    let env = Env::from_vars(p.cwd.clone(), [("HOME", p.home.display().to_string())]);
    let dir = package_cache_dir(&env).unwrap();
    assert_eq!(
        dir,
        p.home
            .join(".cache/pi-rules")
            .join(env!("CARGO_PKG_VERSION"))
            .join("package")
    );
    // A relative XDG_CACHE_HOME is ignored, as the base directory spec says.
    let env = Env::from_vars(
        p.cwd.clone(),
        [
            ("HOME", p.home.display().to_string()),
            ("XDG_CACHE_HOME", "rel".to_owned()),
        ],
    );
    assert_eq!(package_cache_dir(&env).unwrap(), dir);
    let none = Env::from_vars(p.cwd.clone(), std::iter::empty::<(String, String)>());
    assert!(package_cache_dir(&none).is_none());
    assert!(materialize_package_rule(&none, "00-orchestrator-core.md").is_err());
}

// ---------------------------------------------------------------------------------------------
// totality

fn any_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{{IF:".to_owned()),
        Just("{{IFNOT:".to_owned()),
        Just("{{/IF}}".to_owned()),
        Just("{{/IFNOT}}".to_owned()),
        Just("}}".to_owned()),
        Just("{{".to_owned()),
        Just("---\n".to_owned()),
        Just("requires_setting: ".to_owned()),
        Just("requires: ".to_owned()),
        Just("dco".to_owned()),
        Just("log_rules == ".to_owned()),
        Just("{{REVIEW_LOOP_MAX_CYCLES}}".to_owned()),
        Just("\"".to_owned()),
        Just(":".to_owned()),
        Just(",".to_owned()),
        Just("{".to_owned()),
        Just("/*".to_owned()),
        Just("//".to_owned()),
        Just("\\".to_owned()),
        Just("\r\n".to_owned()),
        Just("é😀".to_owned()),
        "[a-z_ =!]{0,4}",
        any::<String>().prop_map(|s| s.chars().take(3).collect::<String>()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every query answers on any text and any offset, and every range it gives is inside the
    /// text and on character boundaries.
    #[test]
    fn every_query_is_total(text in any_text(), offsets in prop::collection::vec(0usize..400, 1..6)) {
        let p = Project::new();
        let ctx = p.ctx();
        let good = |r: &Range<usize>| {
            r.start <= r.end && r.end <= text.len()
                && text.is_char_boundary(r.start) && text.is_char_boundary(r.end)
        };
        for kind in [
            project_rule("a.md"),
            DocumentKind::Settings { scope: SettingsScope::Project },
            DocumentKind::Other,
        ] {
            for &offset in &offsets {
                if let Some(info) = hover(&ctx, &kind, &text, offset) {
                    prop_assert!(good(&info.range), "{:?}", info.range);
                }
                for item in completions(&ctx, &kind, &text, offset) {
                    prop_assert!(good(&item.replace), "{:?}", item.replace);
                }
                for target in definition(&ctx, &kind, &text, offset)
                    .into_iter()
                    .chain(references(&ctx, &kind, &text, offset))
                {
                    prop_assert!(target.path.is_absolute());
                }
            }
            for hint in inlay_hints(&ctx, &kind, &text) {
                prop_assert!(hint.offset <= text.len() && text.is_char_boundary(hint.offset));
            }
            let all = symbols(&kind, &text);
            let mut stack: Vec<&Symbol> = all.iter().collect();
            while let Some(symbol) = stack.pop() {
                prop_assert!(good(&symbol.range) && good(&symbol.selection));
                for child in &symbol.children {
                    prop_assert!(child.range.start >= symbol.range.start && child.range.end <= symbol.range.end);
                    stack.push(child);
                }
            }
        }
    }
}

#[test]
fn unsaved_buffers_count_through_the_overlay() {
    let p = Project::new();
    p.write(&p.project_settings(), r#"{"dco": false}"#);
    let name = "20-code-review-loop.md";
    let rule = p.cwd.join(".pi/rules").join(name);
    let mut overlay = crate::files::Overlay::new();
    overlay.insert(p.project_settings(), r#"{"dco": true}"#);
    overlay.insert(rule.clone(), "{{IF:dco}}x{{/IF}}");
    let session = Session::in_env(
        p.env(),
        p.cwd.clone(),
        Some(p.home.clone()),
        Cow::Borrowed(Schema::embedded()),
    )
    .with_overlay(std::sync::Arc::new(overlay));
    let ctx = IdeContext::new(&session, &IdeOptions::default()).unwrap();
    let text = "{{IF:dco}}x{{/IF}}";
    let info = hover(&ctx, &project_rule(name), text, 5).unwrap();
    assert!(
        info.markdown.contains("**Now:** `true`"),
        "{}",
        info.markdown
    );
    // The rule exists only in the buffer, and overrides the package rule.
    assert!(!rule.exists());
    let refs = references(&ctx, &project_rule(name), text, 11);
    assert_eq!(refs.len(), 2, "{refs:?}");
    assert_eq!(refs[0].path, rule);
}

/// Not a test: prints how long each query takes on a typical package rule and on 128 KiB of
/// adversarial text (`cargo test --release -p pi-rules-host --lib ide::tests::timings --
/// --ignored --nocapture`).
#[test]
#[ignore]
#[allow(clippy::print_stdout)]
fn timings() {
    let p = Project::new();
    let ctx = p.ctx();
    let typical = crate::embedded::PACKAGE_RULES
        .iter()
        .find(|(n, _)| *n == "20-code-review-loop.md")
        .unwrap()
        .1;
    let nested = "{{IF:dco}}".repeat(6000) + &"{{/IF}}".repeat(6000);
    let blocks = "{{IF:log_rules == debug}}x{{/IF}}\n".repeat(3800);
    let strays = "{{/IF}}".repeat(18700);
    for (label, text) in [
        ("typical", typical.to_owned()),
        ("nested", nested),
        ("blocks", blocks),
        ("strays", strays),
    ] {
        let kind = project_rule("a.md");
        let middle = clamp_mid(&text);
        // On a key when the text has one.
        let on_key = text.find("{{IF:").map_or(middle, |at| at + 5);
        let time = |what: &str, f: &mut dyn FnMut()| {
            let runs = 20;
            let start = std::time::Instant::now();
            for _ in 0..runs {
                f();
            }
            println!(
                "{label:8} {:6} bytes {what:12} {:?}",
                text.len(),
                start.elapsed() / runs
            );
        };
        time("context", &mut || drop(p.ctx()));
        time("hover", &mut || drop(hover(&ctx, &kind, &text, on_key)));
        time("fresh+hover", &mut || {
            drop(hover(&p.ctx(), &kind, &text, on_key))
        });
        time("completion", &mut || {
            drop(completions(&ctx, &kind, &text, middle))
        });
        time("inlay", &mut || drop(inlay_hints(&ctx, &kind, &text)));
        time("symbols", &mut || drop(symbols(&kind, &text)));
        time("definition", &mut || {
            drop(definition(&ctx, &kind, &text, middle))
        });
    }
}

fn clamp_mid(text: &str) -> usize {
    let mut at = text.len() / 2;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A block deep inside a dropped one names the innermost dropped block around it, however deep.
#[test]
fn a_nested_block_names_the_dropped_block_it_is_in() {
    let p = Project::new();
    p.write(&p.project_settings(), r#"{"use_worktrees": true}"#);
    let text =
        "{{IF:use_worktrees}}\n{{IF:dco}}\n{{IF:a}}\n{{IF:b}}x{{/IF}}\n{{/IF}}\n{{/IF}}\n{{/IF}}";
    let hints = inlay_hints(&p.ctx(), &project_rule("a.md"), text);
    let tooltips: Vec<&str> = hints
        .iter()
        .map(|h| h.tooltip.as_deref().unwrap())
        .collect();
    assert!(tooltips[0].ends_with("is truthy"), "{tooltips:?}");
    assert!(tooltips[1].ends_with("is falsy"), "{tooltips:?}");
    assert_eq!(
        tooltips[2..],
        [
            "inside the dropped block at 2:1",
            "inside the dropped block at 2:1"
        ]
    );
}

/// The copy's path is named as the environment names the cache, through a link in it, so
/// that a front end comparing it with `package_cache_dir` recognises it.
#[test]
fn the_cache_copy_is_named_as_the_environment_names_it() {
    let p = Project::new();
    let real = p.cwd.join("real-cache");
    fs::create_dir_all(&real).unwrap();
    let linked = p.home.join("linked-cache");
    std::os::unix::fs::symlink(&real, &linked).unwrap();
    let env = Env::from_vars(
        p.cwd.clone(),
        [
            ("HOME", p.home.display().to_string()),
            ("XDG_CACHE_HOME", linked.display().to_string()),
        ],
    );
    let path = materialize_package_rule(&env, "00-orchestrator-core.md").unwrap();
    assert_eq!(path.parent(), package_cache_dir(&env).as_deref());
    assert!(path.starts_with(&linked));
    assert!(real
        .join("pi-rules")
        .join(env!("CARGO_PKG_VERSION"))
        .join("package/00-orchestrator-core.md")
        .is_file());
}

#[test]
fn a_gated_files_blocks_say_so() {
    let p = Project::new();
    let text = "---\nrequires: coms_active\n---\n{{IF:dco}}x{{/IF}}";
    let hints = inlay_hints(&p.ctx(), &project_rule("a.md"), text);
    assert_eq!(hints.len(), 1);
    assert_eq!(hints[0].label, "not evaluated: the file is gated");
    assert_eq!(
        hints[0].tooltip.as_deref(),
        Some("gated (requires: coms_active is off)")
    );
}
