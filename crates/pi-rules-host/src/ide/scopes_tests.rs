//! Completion and hover of `paths:` and `agents:` on a temporary project.
// Tests set up the file system directly.
#![allow(clippy::disallowed_methods)]

use super::*;
use crate::env::Env;
use crate::ide::IdeOptions;
use crate::loader::Layer;
use crate::session::Session;
use pi_rules_core::settings::Schema;
use std::borrow::Cow;
use std::fs;

/// A project with a few files: `src/api/{a,b}.ts`, `src/web/c.ts`, `docs/x.md`, and what the
/// walk leaves out (`node_modules`, `target`, `.git`, `.hidden`).
struct Project {
    _tmp: tempfile::TempDir,
    cwd: PathBuf,
    home: PathBuf,
}

impl Project {
    fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let cwd = root.join("app");
        let home = root.join("home");
        fs::create_dir_all(home.join(".pi/agent/rules")).unwrap();
        let p = Project {
            _tmp: tmp,
            cwd,
            home,
        };
        for file in [
            ".pi/rules/keep.md",
            "src/api/a.ts",
            "src/api/b.ts",
            "src/web/c.ts",
            "docs/x.md",
            "node_modules/m/index.ts",
            "target/debug/out.ts",
            ".git/HEAD",
            ".hidden/h.ts",
        ] {
            p.write(file, "");
        }
        p
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.cwd.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    fn ctx(&self) -> IdeContext {
        let env = Env::from_vars(
            self.cwd.clone(),
            [("HOME".to_owned(), self.home.display().to_string())],
        );
        let session = Session::in_env(
            env,
            self.cwd.clone(),
            Some(self.home.clone()),
            Cow::Borrowed(Schema::embedded()),
        );
        IdeContext::new(&session, &IdeOptions::default()).unwrap()
    }

    fn rule(&self) -> (DocumentKind, PathBuf) {
        (
            DocumentKind::Rule {
                layer: Layer::Project,
                name: "api.md".to_owned(),
            },
            self.cwd.join(".pi/rules/api.md"),
        )
    }
}

/// The offset just after the first `needle` in `text`.
fn after(text: &str, needle: &str) -> usize {
    text.find(needle).unwrap() + needle.len()
}

fn labels(items: &[Completion]) -> Vec<&str> {
    items.iter().map(|c| c.label.as_str()).collect()
}

#[test]
fn agents_complete_with_the_known_names_not_yet_listed() {
    let p = Project::new();
    let ctx = p.ctx();
    let (kind, path) = p.rule();
    let text = "---\nagents: claude, c\n---\nbody\n";
    let at = after(text, "claude, c");
    let items = scope_completions(&ctx, &kind, &path, text, at).unwrap();
    let got = labels(&items);
    assert!(got.contains(&"codex") && got.contains(&"cursor"), "{got:?}");
    assert!(!got.contains(&"claude"), "already listed: {got:?}");
    assert!(got.iter().all(|l| l.starts_with('c')), "{got:?}");
    let codex = items.iter().find(|c| c.label == "codex").unwrap();
    assert_eq!(codex.replace, at - 1..at);
    assert_eq!(codex.kind, CompletionKind::Agent);

    // Under `agents:` as a list, after a quote.
    let text = "---\nagents:\n  - pi\n  - \"\n---\n";
    let at = after(text, "- \"");
    let got = scope_completions(&ctx, &kind, &path, text, at).unwrap();
    assert!(!labels(&got).contains(&"pi"));
    assert_eq!(got.len(), KNOWN_AGENTS.len() - 1);
}

#[test]
fn paths_complete_with_the_walked_directories() {
    let p = Project::new();
    let ctx = p.ctx();
    let (kind, path) = p.rule();
    let text = "---\npaths:\n  - src/\n---\n";
    let at = after(text, "- src/");
    let items = scope_completions(&ctx, &kind, &path, text, at).unwrap();
    assert_eq!(labels(&items), ["src/**", "src/api/**", "src/web/**"]);
    assert_eq!(items[0].replace, at - 4..at);
    assert_eq!(items[0].kind, CompletionKind::Path);

    // One line, after a comma: every directory, none of those the walk leaves out.
    let text = "---\npaths: docs/**, \n---\n";
    let at = after(text, "docs/**, ");
    let items = scope_completions(&ctx, &kind, &path, text, at).unwrap();
    assert_eq!(
        labels(&items),
        ["docs/**", "src/**", "src/api/**", "src/web/**"]
    );

    // A leading `./` is kept.
    let text = "---\npaths: ./d\n---\n";
    let items = scope_completions(&ctx, &kind, &path, text, after(text, "./d")).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].insert, "./docs/**");
}

#[test]
fn a_nested_rule_completes_and_matches_relative_to_its_directory() {
    let p = Project::new();
    let ctx = p.ctx();
    let path = p.cwd.join("src/.pi/rules/n.md");
    assert_eq!(
        scope_dir(&ctx, &DocumentKind::Other, &path),
        Some(p.cwd.join("src"))
    );
    let text = "---\npaths: a\n---\n";
    let items =
        scope_completions(&ctx, &DocumentKind::Other, &path, text, after(text, ": a")).unwrap();
    assert_eq!(labels(&items), ["api/**"]);
    let text = "---\npaths: api/*.ts\n---\n";
    let hover = scope_hover(&ctx, &DocumentKind::Other, &path, text, after(text, ": a")).unwrap();
    assert!(
        hover.markdown.contains("Matches 2 files in `src`"),
        "{}",
        hover.markdown
    );
    // A file that is not a rule gets nothing.
    let readme = p.cwd.join("README.md");
    assert_eq!(scope_dir(&ctx, &DocumentKind::Other, &readme), None);
    assert!(scope_completions(&ctx, &DocumentKind::Other, &readme, text, 8).is_none());
}

#[test]
fn elsewhere_in_the_header_or_the_body_scope_completion_stands_aside() {
    let p = Project::new();
    let ctx = p.ctx();
    let (kind, path) = p.rule();
    let text = "---\nrequires: c\nagents:\n---\nagents: c\n";
    assert!(scope_completions(&ctx, &kind, &path, text, after(text, "requires: c")).is_none());
    assert!(scope_completions(&ctx, &kind, &path, text, text.len() - 1).is_none());
    // A list line under another key.
    let text = "---\ntags:\n  - c\n---\n";
    assert!(scope_completions(&ctx, &kind, &path, text, after(text, "- c")).is_none());
}

#[test]
fn hover_on_a_glob_counts_and_lists_what_it_matches() {
    let p = Project::new();
    let ctx = p.ctx();
    let (kind, path) = p.rule();
    let text =
        "---\npaths:\n  - \"src/**/*.ts\"\n  - \"*.md\"\n  - nothing/**\n  - \"!src\"\n---\n";
    let hover = scope_hover(&ctx, &kind, &path, text, after(text, "\"src/")).unwrap();
    assert_eq!(&text[hover.range.clone()], "src/**/*.ts");
    let md = &hover.markdown;
    assert!(
        md.contains("Matches 3 files in the project directory"),
        "{md}"
    );
    for file in ["src/api/a.ts", "src/api/b.ts", "src/web/c.ts"] {
        assert!(md.contains(&format!("`{file}`")), "{md}");
    }
    assert!(
        !md.contains("node_modules") && !md.contains(".hidden"),
        "{md}"
    );

    // `*.md` matches at any depth, in the files `check` walks (the rule file under `.pi`
    // too, as PR1004 counts it).
    let md = scope_hover(&ctx, &kind, &path, text, after(text, "\"*"))
        .unwrap()
        .markdown;
    assert!(
        md.contains("Matches 2 files in") && md.contains("`docs/x.md`"),
        "{md}"
    );
    let md = scope_hover(&ctx, &kind, &path, text, after(text, "noth"))
        .unwrap()
        .markdown;
    assert!(md.contains("Matches no file"), "{md}");
    let md = scope_hover(&ctx, &kind, &path, text, after(text, "\"!"))
        .unwrap()
        .markdown;
    assert!(
        md.contains("**Not a valid glob:**") && md.contains("negation"),
        "{md}"
    );
    // The key itself has no hover.
    assert!(scope_hover(&ctx, &kind, &path, text, after(text, "pa")).is_none());
}

#[test]
fn hover_lists_five_files_and_counts_the_rest() {
    let p = Project::new();
    for i in 0..8 {
        p.write(&format!("gen/f{i}.rs"), "");
    }
    let ctx = p.ctx();
    let (kind, path) = p.rule();
    let text = "---\npaths: gen\n---\n";
    let md = scope_hover(&ctx, &kind, &path, text, after(text, ": g"))
        .unwrap()
        .markdown;
    assert!(md.contains("Matches 8 files"), "{md}");
    assert_eq!(md.matches("\n- `gen/").count(), HOVER_FILES, "{md}");
    assert!(md.contains("and 3 more"), "{md}");
    // A file `.gitignore` hides is not counted, as `check` does not count it (PR1004).
    p.write(".gitignore", "gen/f7.rs\n");
    let md = scope_hover(&ctx, &kind, &path, text, after(text, ": g"))
        .unwrap()
        .markdown;
    assert!(
        md.contains("Matches 7 files") && !md.contains("f7.rs"),
        "{md}"
    );
}

#[test]
fn the_walk_is_bounded_and_says_so() {
    let p = Project::new();
    for i in 0..MAX_WALK_ENTRIES + 10 {
        p.write(&format!("many/f{i:05}.txt"), "");
    }
    let deep = "d1/d2/d3/d4/d5/d6/d7/deep.txt";
    p.write(deep, "");
    let ctx = p.ctx();
    let walked = walk(ctx.session.files(), &p.cwd);
    assert!(walked.truncated);
    assert_eq!(walked.dirs.len() + walked.files.len(), MAX_WALK_ENTRIES);

    fs::remove_dir_all(p.cwd.join("many")).unwrap();
    let walked = walk(ctx.session.files(), &p.cwd);
    assert!(walked.truncated, "past the depth");
    assert!(walked.dirs.iter().any(|d| d == "d1/d2/d3/d4/d5/d6"));
    assert!(!walked.dirs.iter().any(|d| d.ends_with("d7")));
    assert!(!walked.files.iter().any(|f| f == deep));
}

#[test]
fn hover_on_an_agent_says_whether_it_is_known() {
    let p = Project::new();
    let ctx = p.ctx();
    let (kind, path) = p.rule();
    let text = "---\nagents: Claude, cursr, zzzzzz\n---\n";
    let hover = |needle| {
        scope_hover(&ctx, &kind, &path, text, after(text, needle))
            .unwrap()
            .markdown
    };
    assert!(hover("Cl").contains("a known agent"));
    assert_eq!(
        hover("cur"),
        "`cursr`: unknown agent (did you mean `cursor`?)"
    );
    assert_eq!(hover("zz"), "`zzzzzz`: unknown agent");
}

#[test]
fn any_offset_of_any_header_is_answered_without_a_panic() {
    let p = Project::new();
    let ctx = p.ctx();
    let (kind, path) = p.rule();
    for text in [
        "---\npaths: [\"a\", 'b\nagents:\n - é\n  -\n-\t\"\n---\n",
        "---\nagents: ,,,\npaths:\"",
        "---\r\npaths:\r\n  - src\r\n---\r\n",
    ] {
        for at in 0..=text.len() + 2 {
            let _ = scope_completions(&ctx, &kind, &path, text, at);
            let _ = scope_hover(&ctx, &kind, &path, text, at);
        }
    }
}

#[test]
fn a_nested_rule_is_classified_and_served_as_a_rule() {
    let p = Project::new();
    let ctx = p.ctx();
    let session = ctx.session();
    let path = p.cwd.join("src/api/.pi/rules/10-n.md");
    let kind = crate::ide::classify(session, &path);
    assert_eq!(
        kind,
        DocumentKind::NestedRule {
            dir: p.cwd.join("src/api"),
            name: "10-n.md".to_owned()
        }
    );
    // The project's own layer, a directory that is not `.pi/rules`, and a `.pi/rules` outside
    // the project are not nested rules.
    assert!(matches!(
        crate::ide::classify(session, &p.cwd.join(".pi/rules/10-n.md")),
        DocumentKind::Rule {
            layer: Layer::Project,
            ..
        }
    ));
    for other in [
        p.cwd.join("src/api/.pi/other/10-n.md"),
        p.cwd.join("src/api/.pi/rules/notes.txt"),
        p.cwd.parent().unwrap().join("elsewhere/.pi/rules/10-n.md"),
    ] {
        assert_eq!(crate::ide::classify(session, &other), DocumentKind::Other);
    }
    // Its globs are relative to its directory.
    assert_eq!(scope_dir(&ctx, &kind, &path), Some(p.cwd.join("src/api")));
    let text = "---\npaths: *.ts\n---\n{{IF:dc}}\nx\n{{/IF}}\n";
    let hover = scope_hover(&ctx, &kind, &path, text, after(text, ": *")).unwrap();
    assert!(
        hover.markdown.contains("Matches 2 files"),
        "{}",
        hover.markdown
    );
    // The rule queries answer as in a project rule.
    let items = crate::ide::completions(&ctx, &kind, text, after(text, "{{IF:dc"));
    assert!(labels(&items).contains(&"dco"), "{:?}", labels(&items));
    assert_eq!(
        crate::ide::symbols(&kind, text).len(),
        crate::ide::symbols(&p.rule().0, text).len()
    );
    assert!(!crate::ide::symbols(&kind, text).is_empty());
    assert_eq!(crate::ide::inlay_hints(&ctx, &kind, text).len(), 1);
    // With scopes off, the hover says pi does not read it yet; on, it does not.
    let text = "{{IF:dco}}\nx\n{{/IF}}\n";
    let words = |ctx: &IdeContext| {
        crate::ide::hover(ctx, &kind, text, 6)
            .map(|h| h.markdown)
            .unwrap_or_default()
    };
    assert!(
        words(&ctx).contains("pi does not read nested rules yet"),
        "{}",
        words(&ctx)
    );
    p.write(".pi/pi-rules.toml", "[rules]\nscoped = true\n");
    let ctx = p.ctx();
    assert!(words(&ctx).contains("dco"), "{}", words(&ctx));
    assert!(!words(&ctx).contains("does not read"), "{}", words(&ctx));
}
