//! `pi-rules import`, through the binary: each kind of file, scopes kept as `paths:`, nested
//! directories, names past the free prefixes, files skipped with a warning while the rest is
//! imported, and a corpus of synthetic projects with the quirks real ones hold
//! (`tests/fixtures/import-corpus/`).

use crate::common;

use common::{code, files_below, stderr, stdout, World};
use pi_rules_core::{frontmatter, rule_scope};
use std::fs;
use std::path::{Path, PathBuf};

fn put(w: &World, path: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let dest = w.project.join(path);
    fs::create_dir_all(dest.parent().unwrap()).unwrap();
    fs::write(&dest, content).unwrap();
    dest
}

/// The globs of a rule's `paths:`, as the core reads them, each as [`same`] writes it.
fn globs_of(text: &str) -> Vec<String> {
    let fm = frontmatter::split(text);
    rule_scope::parse(text, &fm).globs().map(same).collect()
}

/// A glob of ours in one spelling, whatever spelling the dialect reading chose: `**/` before a
/// name without `/` means nothing more, nor a trailing `/**` after an anchored glob (it matches
/// everything below what it names), nor a leading `/` before a glob that another `/` anchors.
fn same(glob: &str) -> String {
    if let Some(rest) = glob.strip_prefix("**/") {
        if !rest.is_empty() && !rest.contains('/') {
            return rest.to_owned();
        }
    }
    let anchored = glob.starts_with('/') || glob.trim_end_matches('/').contains('/');
    if !anchored {
        return glob.to_owned();
    }
    let g = glob.strip_prefix('/').unwrap_or(glob);
    let g = g.strip_suffix("/**").unwrap_or(g);
    if g.contains('/') {
        g.to_owned()
    } else {
        format!("/{g}")
    }
}

/// A rule's text after its frontmatter.
fn body_of(text: &str) -> &str {
    &text[frontmatter::split(text).body_start..]
}

fn import(w: &World, files: &[&str]) -> std::process::Output {
    let mut args = vec!["import", "--project"];
    args.extend_from_slice(files);
    w.run(&args)
}

#[test]
fn each_kind_of_file_becomes_a_rule() {
    let w = World::new();
    // (source, content, rule written, its globs)
    let sources: &[(&str, &str, &str, &[&str])] = &[
        (
            "CLAUDE.md",
            "# Claude\n\nClaude notes.\n",
            "90-claude.md",
            &[],
        ),
        (
            "AGENTS.md",
            "Codex notes.\n<!-- pi-rules:begin x -->\ngenerated\n<!-- pi-rules:end -->\n",
            "91-agents.md",
            &[],
        ),
        ("GEMINI.md", "Gemini notes.\n", "92-gemini.md", &[]),
        (
            ".github/copilot-instructions.md",
            "Copilot notes.\n",
            "93-copilot-instructions.md",
            &[],
        ),
        (".goosehints", "Goose notes.\n", "94-goosehints.md", &[]),
        (
            ".cursor/rules/ts.mdc",
            "---\ndescription: TS\nglobs: src/**/*.ts\nalwaysApply: false\n---\nCursor notes.\n",
            "95-ts.md",
            &["src/**/*.ts"],
        ),
        (
            ".windsurf/rules/py.md",
            "---\ntrigger: glob\nglobs: \"py/**\"\n---\nWindsurf notes.\n",
            "96-py.md",
            &["py/**"],
        ),
        (".clinerules/style.md", "Cline notes.\n", "97-style.md", &[]),
        (
            ".kiro/steering/rust.md",
            "---\ninclusion: fileMatch\nfileMatchPattern: \"crates/**/*.rs\"\n---\nKiro notes.\n",
            "98-rust.md",
            &["crates/**/*.rs"],
        ),
        (
            ".claude/rules/api/handlers.md",
            "---\npaths:\n  - \"src/api/**\"\n  - \"src/**/*.{ts,tsx}\"\n---\nClaude rule notes.\n",
            "99-api-handlers.md",
            // Claude Code reads `a/**` as `a`, and expands braces.
            &["src/api", "src/**/*.ts", "src/**/*.tsx"],
        ),
    ];
    for (path, content, _, _) in sources {
        put(&w, path, content);
    }
    let files: Vec<&str> = sources.iter().map(|s| s.0).collect();
    let out = import(&w, &files);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let printed: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    for (i, (path, _, name, globs)) in sources.iter().enumerate() {
        let rule = w.project_rules().join(name);
        assert_eq!(printed[i], rule.display().to_string(), "{path}");
        let text = fs::read_to_string(&rule).unwrap();
        assert!(!text.contains("generated"), "{name}: {text}");
        assert!(
            body_of(&text).trim_end().ends_with("notes."),
            "{name}: {text}"
        );
        let want: Vec<String> = globs.iter().map(|g| same(g)).collect();
        assert_eq!(globs_of(&text), want, "{name}: {text}");
    }
    // The only word on stderr: scopes are off for pi.
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("scopes are off for pi in this project"),
        "{err}"
    );
    // The rules load: the block holds each body, never a frontmatter.
    let block = stdout(&w.run(&["assemble"]));
    assert!(
        block.contains("Cursor notes.")
            && block.contains("Kiro notes.")
            && !block.contains("paths:"),
        "{block}"
    );
}

/// A file with nothing to import is skipped with a warning naming it; the rest is imported.
#[test]
fn files_with_nothing_to_import_are_skipped_and_the_rest_is_imported() {
    let w = World::new();
    put(&w, ".cursor/rules/empty.mdc", "");
    put(
        &w,
        ".cursor/rules/only-frontmatter.mdc",
        "---\nalwaysApply: true\n---\n",
    );
    put(&w, "README.md", "# Not a rule file\n");
    put(
        &w,
        "AGENTS.md",
        "Mine.\n<!-- pi-rules:begin x -->\nnever ended\n",
    );
    put(
        &w,
        ".cursor/rules/good.mdc",
        "---\nalwaysApply: true\n---\nGood.\n",
    );
    // 100 MiB, never read whole.
    let huge = put(&w, ".cursor/rules/huge.mdc", "");
    fs::File::options()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    put(
        &w,
        ".clinerules/pi-rules.md",
        "<!-- Generated by pi-rules (`pi-rules export`): edit the rules and run it again, not this file. -->\n\nx\n",
    );
    let out = import(
        &w,
        &[
            ".cursor/rules/empty.mdc",
            ".cursor/rules/only-frontmatter.mdc",
            "README.md",
            "AGENTS.md",
            "missing/CLAUDE.md",
            ".clinerules/pi-rules.md",
            ".cursor/rules/huge.mdc",
            ".cursor/rules/good.mdc",
            ".cursor/rules/good.mdc",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("{}\n", w.project_rules().join("90-good.md").display())
    );
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    let expect = [
        "`.cursor/rules/empty.mdc`: skipped: it holds no text",
        "`.cursor/rules/only-frontmatter.mdc`: skipped: it holds no text",
        "`README.md`: skipped: it is not an agent's instruction file",
        "`AGENTS.md`: skipped: line 2: a pi-rules begin marker without an end",
        "`missing/CLAUDE.md`: skipped: no such file",
        "`.clinerules/pi-rules.md`: skipped: it was written by `pi-rules export`",
        "`.cursor/rules/huge.mdc`: skipped: 104857600 bytes, over the 1048576-byte limit",
        "`.cursor/rules/good.mdc`: given twice; imported once",
    ];
    assert_eq!(lines.len(), expect.len(), "{err}");
    for (line, want) in lines.iter().zip(expect) {
        assert!(
            line.starts_with(&format!("pi-rules: warning: {want}")),
            "{line}\n{err}"
        );
    }
    // Nothing at all to import: an error, and nothing written.
    let w = World::new();
    put(&w, "CLAUDE.md", "  \n");
    let out = import(&w, &["CLAUDE.md", "README.md"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing to import"),
        "{}",
        stderr(&out)
    );
    assert!(!w.project_rules().exists());
}

/// Warnings name the file and the line; the rule keeps what can be kept.
#[test]
fn what_cannot_be_kept_is_a_warning_with_its_line() {
    let w = World::new();
    put(
        &w,
        ".github/instructions/k8s.instructions.md",
        "---\ndescription: k8s\napplyTo: \"!manifests/**, deploy/**\"\n---\nK8s.\n",
    );
    put(
        &w,
        ".claude/rules/mixed.md",
        "---\nglobs: src/**\npaths:\n  - \"src/**\"\n---\nMixed.\n",
    );
    let out = import(
        &w,
        &[
            ".github/instructions/k8s.instructions.md",
            ".claude/rules/mixed.md",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "pi-rules: warning: `.github/instructions/k8s.instructions.md`: line 3: `!manifests/**`"
        ),
        "{err}"
    );
    assert!(
        err.contains("pi-rules: warning: `.claude/rules/mixed.md`: line 2: `globs:` is not a key Claude Code reads"),
        "{err}"
    );
    let k8s = fs::read_to_string(w.project_rules().join("90-k8s.md")).unwrap();
    assert_eq!(globs_of(&k8s), [same("deploy/**")]);
    let mixed = fs::read_to_string(w.project_rules().join("91-mixed.md")).unwrap();
    assert_eq!(globs_of(&mixed), ["src"]);
}

/// `D/AGENTS.md` and the other nested files go into `D/.pi/rules`, under names that replace no
/// rule of the directories above.
#[test]
fn nested_files_go_into_nested_rule_directories() {
    let w = World::new();
    put(&w, "AGENTS.md", "Root.\n");
    put(&w, "packages/api/AGENTS.md", "Api.\n");
    put(&w, "packages/api/CLAUDE.md", "Api for Claude.\n");
    put(
        &w,
        "packages/web/.cursor/rules/react.mdc",
        "---\nglobs: src/**/*.tsx\n---\nReact.\n",
    );
    let out = import(
        &w,
        &[
            "AGENTS.md",
            "packages/api/AGENTS.md",
            "./packages/api/CLAUDE.md",
            &w.project
                .join("packages/web/.cursor/rules/react.mdc")
                .display()
                .to_string(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let api = w.project.join("packages/api/.pi/rules");
    let web = w.project.join("packages/web/.pi/rules");
    let expected = [
        w.project_rules().join("90-agents.md"),
        api.join("91-agents.md"),
        api.join("92-claude.md"),
        web.join("91-react.md"),
    ];
    let printed: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    let want: Vec<String> = expected.iter().map(|p| p.display().to_string()).collect();
    assert_eq!(printed, want);
    assert_eq!(
        globs_of(&fs::read_to_string(web.join("91-react.md")).unwrap()),
        ["src/**/*.tsx"]
    );
    // For a file in packages/api, pi reads the root's rule and the nested ones.
    put(&w, ".pi/pi-rules.toml", "[rules]\nscoped = true\n");
    put(&w, "packages/api/src/x.ts", "");
    let out = w.run(&["assemble", "--path", "packages/api/src/x.ts"]);
    let block = stdout(&out);
    assert!(
        block.contains("Root.") && block.contains("Api.") && block.contains("Api for Claude."),
        "{block}\n{}",
        stderr(&out)
    );
    // With --user, a nested file's rule is for every directory, and a warning says so.
    let out = w.run(&["import", "--user", "packages/api/AGENTS.md"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reads it for `packages/api` only; the user layer has no nested"),
        "{}",
        stderr(&out)
    );
    assert!(w.user_rules().join("70-agents.md").exists());
}

/// More rules than free prefixes: they share prefixes, and the block keeps the sources' order.
#[test]
fn more_rules_than_prefixes_share_them_in_the_sources_order() {
    let w = World::new();
    w.rule("95-existing.md", "Existing.\n");
    let mut files = Vec::new();
    // Names in an order that is not their sort order.
    for i in 0..25 {
        let name = format!(".cursor/rules/{}-r{i}.mdc", (b'z' - i as u8) as char);
        put(
            &w,
            &name,
            format!("---\nalwaysApply: true\n---\nRule number {i}.\n"),
        );
        files.push(name);
    }
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = import(&w, &refs);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 25);
    assert!(
        stdout(&out)
            .lines()
            .next()
            .unwrap()
            .ends_with("96-1-z-r0.md"),
        "{}",
        stdout(&out)
    );
    let block = stdout(&w.run(&["assemble"]));
    let mut at = block.find("Existing.").unwrap();
    for i in 0..25 {
        let next = block.find(&format!("Rule number {i}.")).unwrap();
        assert!(next > at, "rule {i} is out of order:\n{block}");
        at = next;
    }
    // `check` finds nothing wrong with the names.
    let out = w.run(&["check", "--format", "short"]);
    assert!(
        !stdout(&out).contains("PR40"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

// The corpus.

/// What a corpus file says it should become: its `Expect:` line (`always`, `skip`, or globs
/// separated by ` | `).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    Skip,
    Always,
    Paths(Vec<String>),
}

/// The text after a leading `---` block, as a simple reader finds it (first line `---`, the
/// next line `---` ends it); the whole text without one.
fn after_block(text: &str) -> &str {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {
            let mut at = first.len();
            for line in lines {
                at += line.len();
                if line.trim_end() == "---" {
                    return &text[at..];
                }
            }
            text
        }
        _ => text,
    }
}

fn expectation(text: &str) -> Expect {
    let Some(line) = text.lines().find_map(|l| l.trim().strip_prefix("Expect: ")) else {
        return Expect::Skip;
    };
    match line.trim() {
        "always" => Expect::Always,
        globs => Expect::Paths(globs.split(" | ").map(same).collect()),
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for file in files_below(from) {
        let dest = to.join(&file);
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::copy(from.join(&file), dest).unwrap();
    }
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import-corpus")
}

/// The corpus's projects, in name order.
pub(crate) fn corpus_projects() -> Vec<PathBuf> {
    let mut projects: Vec<PathBuf> = fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    projects.sort();
    projects
}

/// A corpus project imported whole, for the round trip through `export` too: the world it is
/// in (the project copied, every file of it given to `pi-rules import --project`), the import's
/// output, and per source file (relative, in name order) the rule it gave (`None`: skipped).
pub fn import_corpus_project(
    project: &Path,
) -> (World, std::process::Output, Vec<(String, Option<PathBuf>)>) {
    let w = World::new();
    copy_tree(project, &w.project);
    let files = files_below(&w.project);
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = import(&w, &refs);
    let stdout = stdout(&out);
    let mut written = stdout.lines().map(PathBuf::from);
    let skipped = stderr(&out);
    let rules = files
        .into_iter()
        .map(|file| {
            let rule = if skipped.contains(&format!("`{file}`: skipped")) {
                None
            } else {
                written.next()
            };
            (file, rule)
        })
        .collect();
    (w, out, rules)
}

/// Each synthetic project of the corpus, imported whole: exit 0, every file's text kept, every
/// path scope kept as `paths:` and every always-on rule unscoped, nested files in their nested
/// directories.
#[test]
fn the_corpus_imports_everywhere_keeping_texts_and_scopes() {
    let projects = corpus_projects();
    assert!(projects.len() >= 5, "{projects:?}");
    let mut rules = 0;
    for project in projects {
        let (w, out, imported) = import_corpus_project(&project);
        let name = project.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(code(&out), 0, "{name}: {}", stderr(&out));
        assert_eq!(
            imported.iter().filter(|(_, r)| r.is_some()).count(),
            stdout(&out).lines().count(),
            "{name}: more rules than files"
        );
        for (file, rule_path) in &imported {
            let source = fs::read(w.project.join(file)).unwrap();
            let source = String::from_utf8_lossy(&source);
            let expect = expectation(&source);
            if expect == Expect::Skip {
                assert!(
                    rule_path.is_none(),
                    "{name}: {file} is not said to be skipped"
                );
                continue;
            }
            let rule_path = rule_path
                .as_deref()
                .unwrap_or_else(|| panic!("{name}: no rule for {file}"));
            // Nested files go into their directory's `.pi/rules`.
            let top = ["AGENTS.md", "CLAUDE.md", "GEMINI.md"];
            if top.iter().any(|t| file.ends_with(&format!("/{t}"))) && !file.contains("/.") {
                let dir = Path::new(file).parent().unwrap();
                assert!(
                    rule_path.starts_with(w.project.join(dir).join(".pi/rules")),
                    "{name}: {file} went to {}",
                    rule_path.display()
                );
            }
            let rule = fs::read_to_string(rule_path).unwrap();
            let globs = globs_of(&rule);
            match &expect {
                Expect::Always => assert!(globs.is_empty(), "{name}: {file}: {rule}"),
                Expect::Paths(want) => assert_eq!(&globs, want, "{name}: {file}: {rule}"),
                Expect::Skip => unreachable!(),
            }
            // The text: the file's own (its agent's frontmatter aside), whole.
            let plain = [
                "AGENTS.md",
                "CLAUDE.md",
                "GEMINI.md",
                "copilot-instructions.md",
                ".goosehints",
                ".cursorrules",
                ".windsurfrules",
            ];
            let theirs = if plain.iter().any(|p| file.ends_with(p)) {
                &source[..]
            } else {
                after_block(&source)
            };
            let theirs = theirs.strip_prefix('\u{feff}').unwrap_or(theirs);
            let ours = body_of(&rule);
            // An unscoped rule whose text opens with `---` is guarded by an empty header.
            assert_eq!(ours.trim(), theirs.trim(), "{name}: {file}: {rule}");
            rules += 1;
        }
        // The project checks without errors.
        let out = w.run(&["check", "--format", "short"]);
        assert!(
            !stdout(&out).contains(": error["),
            "{name}: {}",
            stdout(&out)
        );
    }
    assert!(rules > 302, "{rules}");
}

/// A directory given stands for the agent files below it: `import .` imports a whole project as
/// its files named one by one do, and nothing that is not an agent's file.
#[test]
fn a_directory_stands_for_the_agent_files_below_it() {
    for project in corpus_projects() {
        let (_, by_file, imported) = import_corpus_project(&project);
        let w = World::new();
        copy_tree(&project, &w.project);
        put(&w, ".gitignore", "ignored/\n");
        put(&w, "ignored/AGENTS.md", "Not imported: git ignores it.\n");
        let out = import(&w, &["."]);
        let name = project.display();
        assert_eq!(code(&out), 0, "{name}: {}", stderr(&out));
        let rules = |out: &std::process::Output| -> Vec<String> {
            stdout(out)
                .lines()
                .map(|l| {
                    Path::new(l)
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect()
        };
        assert_eq!(rules(&out), rules(&by_file), "{name}");
        let skipped = imported.iter().filter(|(_, r)| r.is_none()).count();
        assert!(!stderr(&out).contains("README.md"), "{}", stderr(&out));
        assert!(
            stderr(&out).matches("skipped").count() < skipped.max(1),
            "{name}: {}",
            stderr(&out)
        );
    }
    // A directory with no agent file in it.
    let w = World::new();
    put(&w, "docs/README.md", "# Docs\n");
    let out = import(&w, &["docs"]);
    assert_eq!(code(&out), 3);
    assert!(
        stderr(&out).contains("pi-rules: warning: `docs`: no agent file below it"),
        "{}",
        stderr(&out)
    );
}

/// `--format json`: the rules written, with their sources and scopes, the files skipped, and
/// what was said of each, as one object on stdout; nothing on stderr.
#[test]
fn the_json_form_lists_rules_skipped_files_and_notes() {
    let w = World::new();
    put(
        &w,
        ".cursor/rules/api.mdc",
        "---\nglobs: src/api/**, !src/api/gen/**\n---\nApi.\n",
    );
    put(&w, "packages/web/AGENTS.md", "Web.\n");
    put(&w, ".cursor/rules/empty.mdc", "");
    let out = w.run(&[
        "import",
        "--project",
        "--format",
        "json",
        ".cursor/rules/api.mdc",
        ".cursor/rules/empty.mdc",
        "packages/web/AGENTS.md",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rules = report["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0]["source"], ".cursor/rules/api.mdc");
    assert_eq!(rules[0]["dir"], "");
    let api = fs::read_to_string(rules[0]["path"].as_str().unwrap()).unwrap();
    let paths: Vec<String> = rules[0]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        globs_of(&api),
        paths.iter().map(|g| same(g)).collect::<Vec<_>>()
    );
    assert_eq!(rules[1]["dir"], "packages/web");
    assert!(rules[1]["path"]
        .as_str()
        .unwrap()
        .ends_with("packages/web/.pi/rules/91-agents.md"));
    assert_eq!(
        report["skipped"],
        serde_json::json!([".cursor/rules/empty.mdc"])
    );
    let notes = report["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n["source"] == ".cursor/rules/api.mdc"
        && n["level"] == "warning"
        && n["message"]
            .as_str()
            .unwrap()
            .starts_with("line 2: `!src/api/gen/**`")));
    assert!(notes
        .iter()
        .any(|n| n.get("source").is_none() && n["level"] == "note"));
}
