//! The pure findings on tables of files.

use super::*;
use crate::export::{owned, section};
use pi_rules_core::span::line_col;
use std::collections::HashSet;

const RULE: &str = "Run make lint before every commit, and fix what it reports.\n";
const OTHER: &str = "Write a test for every bug before fixing it, then keep it.\n";

fn files<'a>(list: &'a [(&'a str, String)]) -> Vec<AgentFile<'a>> {
    list.iter()
        .map(|(path, text)| AgentFile { path, text })
        .collect()
}

fn with_section(before: &str, block: &str) -> String {
    format!(
        "{before}{}",
        String::from_utf8(section::render(block, "\n")).unwrap()
    )
}

/// (code id, path, line, column or 0, message) of each finding.
fn seen(found: &[Diagnostic], files: &[AgentFile<'_>]) -> Vec<(String, usize, String)> {
    found
        .iter()
        .map(|d| {
            let text = files
                .iter()
                .find(|f| f.path == d.path.as_str())
                .unwrap()
                .text;
            let line = d.span.clone().map_or(0, |s| line_col(text, s.start).line);
            (d.path.to_string(), line, d.message.to_string())
        })
        .collect()
}

#[test]
fn copilot_reads_the_four_files_together_and_drops_only_identical_ones() {
    let agents = with_section("", RULE);
    let claude = with_section("# Mine\n\n", RULE);
    let list = [
        ("AGENTS.md".to_owned(), agents.clone()),
        ("CLAUDE.md".to_owned(), claude),
        // Byte for byte AGENTS.md: Copilot reads it once.
        ("GEMINI.md".to_owned(), agents.clone()),
    ];
    let list: Vec<(&str, String)> = list.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    let f = files(&list);
    let found = read_twice(&f, &[GEMINI_DEFAULT.to_owned()]);
    let got = seen(&found, &f);
    let copilot: Vec<_> = got.iter().filter(|g| g.2.starts_with("Copilot")).collect();
    assert_eq!(copilot.len(), 1, "{got:#?}");
    assert_eq!(copilot[0].0, "CLAUDE.md");
    assert_eq!(
        copilot[0].1, 4,
        "the paragraph after the heading and the marker"
    );
    assert!(copilot[0]
        .2
        .contains("from `AGENTS.md` and from `CLAUDE.md`"));
    // Nobody else reads two of them: Claude Code reads CLAUDE.md (AGENTS.md only without it),
    // Gemini CLI GEMINI.md, Codex AGENTS.md.
    assert!(got.iter().all(|g| g.2.starts_with("Copilot")), "{got:#?}");
    assert!(found[0].help.as_deref().unwrap().contains("--pointer"));
}

#[test]
fn imports_count_as_the_agent_follows_them() {
    let list = [
        ("AGENTS.md", with_section("", RULE)),
        ("CLAUDE.md", with_section("", "@AGENTS.md\n")),
        ("GEMINI.md", with_section("", "@./AGENTS.md\n")),
    ];
    let f = files(&list);
    let got = seen(&read_twice(&f, &[GEMINI_DEFAULT.to_owned()]), &f);
    // Copilot follows `@AGENTS.md` (a second copy), not `@./AGENTS.md`; Claude Code and
    // Gemini CLI read it once through their import.
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!((got[0].0.as_str(), got[0].1), ("CLAUDE.md", 2));
    assert!(
        got[0].2.contains(
            "from `AGENTS.md` and from `AGENTS.md` (through `@AGENTS.md` in `CLAUDE.md`)"
        ),
        "{}",
        got[0].2
    );
}

#[test]
fn cline_gemini_and_the_chains_of_claude_and_codex() {
    let gemini_names = gemini_names(Some(
        "{ // comments are allowed\n \"context\": { \"fileName\": [\"AGENTS.md\", \"GEMINI.md\"] } }",
    ));
    assert_eq!(gemini_names, ["AGENTS.md", "GEMINI.md"]);
    let list = [
        ("AGENTS.md", format!("{RULE}\n{OTHER}")),
        ("GEMINI.md", format!("# G\n\n{RULE}")),
        (".clinerules/pi-rules.md", RULE.to_owned()),
        ("packages/api/AGENTS.md", OTHER.to_owned()),
        ("packages/api/CLAUDE.md", "Only for the api.\n".to_owned()),
    ];
    let f = files(&list);
    let got = seen(&read_twice(&f, &gemini_names), &f);
    // Copilot: AGENTS.md and GEMINI.md share RULE, AGENTS.md and packages/api/AGENTS.md share
    // OTHER. Cline: .clinerules and AGENTS.md. Codex: the chain to packages/api. Gemini CLI,
    // told to read `AGENTS.md` too: AGENTS.md with GEMINI.md and with packages/api/AGENTS.md.
    // Claude Code reads packages/api/CLAUDE.md, not its AGENTS.md. One finding a pair of files.
    let mut messages: Vec<&str> = got.iter().map(|g| g.2.as_str()).collect();
    messages.sort_unstable();
    assert_eq!(
        messages,
        [
            "Cline reads the same rule text from `AGENTS.md` and from `.clinerules/pi-rules.md`",
            "Copilot and Gemini CLI read the same rule text from `AGENTS.md` and from `GEMINI.md`",
            "Copilot, Codex and Gemini CLI read the same rule text from `AGENTS.md` and from \
             `packages/api/AGENTS.md`",
        ],
        "{got:#?}"
    );
    let codex = got.iter().find(|g| g.2.contains("Codex")).unwrap();
    assert_eq!((codex.0.as_str(), codex.1), ("packages/api/AGENTS.md", 1));
    // The default names, and a settings file that says nothing usable.
    assert_eq!(gemini_names_of(None), [GEMINI_DEFAULT]);
    assert_eq!(
        gemini_names_of(Some("{\"context\": {\"fileName\": 3}}")),
        [GEMINI_DEFAULT]
    );
    assert_eq!(gemini_names_of(Some("not json")), [GEMINI_DEFAULT]);
    assert_eq!(
        gemini_names_of(Some("{\"context\": {\"fileName\": \"CONTEXT.md\"}}")),
        ["CONTEXT.md"]
    );
}

fn gemini_names_of(text: Option<&str>) -> Vec<String> {
    gemini_names(text)
}

#[test]
fn claude_rules_reach_copilot_unless_every_pattern_is_anchored() {
    let scoped = |paths: &str| format!("---\npaths:\n{paths}---\n{RULE}");
    let list = [
        ("AGENTS.md", RULE.to_owned()),
        (".claude/rules/pi-rules/a.md", scoped("  - \"/src/**\"\n")),
        (".claude/rules/b.md", scoped("  - \"src/**\"\n")),
    ];
    let f = files(&list);
    let got = seen(&read_twice(&f, &[]), &f);
    // Copilot reads b.md (not a.md, whose pattern is anchored), Claude Code both.
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0].0, ".claude/rules/b.md");
    assert_eq!(got[0].1, 5, "after the frontmatter");
    assert!(
        got[0].2.starts_with("Copilot and Claude Code read"),
        "{}",
        got[0].2
    );
    assert_eq!(
        (got[1].0.as_str(), got[1].1),
        (".claude/rules/pi-rules/a.md", 5)
    );
    assert!(got[1].2.starts_with("Claude Code reads"), "{}", got[1].2);
}

#[test]
fn short_paragraphs_headings_and_one_file_saying_it_twice_are_not_copies() {
    let list = [
        (
            "AGENTS.md",
            format!("# Rules\n\nSee below.\n\n{RULE}\n{RULE}"),
        ),
        ("CLAUDE.md", "# Rules\n\nSee below.\n".to_owned()),
    ];
    let f = files(&list);
    assert!(read_twice(&f, &[]).is_empty());
    // Spaces and line breaks aside, the same paragraph; several are counted in a note.
    let list = [
        ("AGENTS.md", format!("{RULE}\n{OTHER}")),
        (
            "CLAUDE.md",
            format!("{}\n{}", RULE.replace(", and ", ",\n   and "), OTHER),
        ),
    ];
    let f = files(&list);
    let found = read_twice(&f, &[]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].notes[0], "2 paragraphs reach Copilot from both");
}

#[test]
fn a_whole_section_is_compared_even_when_its_paragraphs_are_short() {
    let block = "Be brief.\n\nUse tabs.\n\nNo emoji.\n\nSay why.\n";
    let list = [
        ("AGENTS.md", with_section("", block)),
        ("CLAUDE.md", with_section("# Mine\n", block)),
    ];
    let f = files(&list);
    let got = seen(&read_twice(&f, &[]), &f);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!((got[0].0.as_str(), got[0].1), ("CLAUDE.md", 3));
}

#[test]
fn export_prints_a_finding_with_its_line_and_column() {
    let list = [
        ("AGENTS.md", with_section("", RULE)),
        ("AGENTS.override.md", "Mine.\n".to_owned()),
        ("GEMINI.md", format!("# Team\n\n  {RULE}")),
    ];
    let f = files(&list);
    let found = project_findings(&f, &[GEMINI_DEFAULT.to_owned()], &HashSet::new());
    let lines: Vec<String> = found.iter().map(|d| located_message(d, &f)).collect();
    assert_eq!(
        lines,
        [
            "GEMINI.md:3:1: Copilot reads the same rule text from `AGENTS.md` and from `GEMINI.md`",
            "AGENTS.override.md: Codex reads `AGENTS.override.md` instead of `AGENTS.md`, which \
             pi-rules exported: the exported rules never reach Codex here",
        ]
    );
}

#[test]
fn hidden_exports_are_reported_on_the_file_that_hides_them() {
    let exported = with_section("", RULE);
    let list = [
        ("AGENTS.md", exported.clone()),
        ("AGENTS.override.md", "Local notes.\n".to_owned()),
        ("CLAUDE.md", "My own notes.\n".to_owned()),
        ("a/AGENTS.md", exported.clone()),
        ("a/CLAUDE.md", "Mine.\n@AGENTS.md\n".to_owned()),
        ("b/AGENTS.md", exported.clone()),
        ("b/CLAUDE.md", with_section("", RULE)),
        // Hand-written AGENTS.md: nothing of ours is hidden.
        ("c/AGENTS.md", "Mine.\n".to_owned()),
        ("c/AGENTS.override.md", "Mine.\n".to_owned()),
    ];
    let f = files(&list);
    let found = hidden(&f);
    let got: Vec<(&str, &str)> = found
        .iter()
        .map(|d| (d.path.as_str(), &*d.message))
        .collect();
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0].0, "AGENTS.override.md");
    assert!(got[0]
        .1
        .starts_with("Codex reads `AGENTS.override.md` instead of `AGENTS.md`"));
    assert_eq!(got[1].0, "CLAUDE.md");
    assert!(got[1].1.starts_with("Claude Code reads `CLAUDE.md`"));
    assert!(found.iter().all(|d| d.code == Code::ExportHidden));
}

#[test]
fn comments_in_what_claude_reads_are_reported_except_ours() {
    let block = "Do this.\n<!-- and never that -->\n";
    let owned_file = String::from_utf8(owned::render(
        "---\npaths:\n  - \"/src/**\"\n---\n",
        "A <!-- b --> c\n",
    ))
    .unwrap();
    let list = [
        ("CLAUDE.md", with_section("<!-- my own note -->\n", block)),
        (".claude/rules/pi-rules/x.md", owned_file),
        // Not a file Claude Code reads from us.
        ("AGENTS.md", with_section("", block)),
    ];
    let f = files(&list);
    assert!(claude_exported(&f));
    let mut reported = HashSet::new();
    let mut got = Vec::new();
    for file in &f {
        got.extend(seen(&exported_comments(file, &reported), &f));
    }
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!((got[0].0.as_str(), got[0].1), ("CLAUDE.md", 4));
    assert!(got[0].2.contains("\"and never that\""), "{}", got[0].2);
    assert_eq!(got[1].0, ".claude/rules/pi-rules/x.md");
    // A comment already reported on its rule file is not reported again.
    reported.insert(comments::normalise("<!-- and   never that -->"));
    assert!(exported_comments(&f[0], &reported).is_empty());
    // Nothing exported to Claude Code.
    assert!(!claude_exported(&f[2..]));
}

#[test]
fn comments_in_a_rule_for_claude_are_reported_on_the_rule() {
    let text =
        "---\nrequires: x\n---\nDo it.\n<!-- but not on Fridays -->\n```\n<!-- code -->\n```\n";
    let found = rule_comments(".pi/rules/90-x.md", text);
    assert_eq!(found.len(), 1);
    let span = found[0].span.clone().unwrap();
    assert_eq!(&text[span.clone()], "<!-- but not on Fridays -->");
    assert_eq!(line_col(text, span.start).line, 5);
    assert_eq!(found[0].code, Code::ExportCommentDropped);
    // A rule for other agents only never reaches Claude Code.
    let other = "---\nagents: [codex]\n---\n<!-- x -->\n";
    assert!(rule_comments("r.md", other).is_empty());
    let named = "---\nagents: [codex, claude]\n---\n<!-- x -->\n";
    assert_eq!(rule_comments("r.md", named).len(), 1);
}

#[test]
fn a_chain_over_codex_s_limit_is_reported_once_at_its_deepest_file() {
    let big = |n: usize| "x".repeat(n - 1) + "\n";
    let list = [
        ("AGENTS.md", big(20_000)),
        ("a/AGENTS.md", big(10_000)),
        // Over: 20,000 + 10,000 + 5,000.
        ("a/b/AGENTS.md", format!("short\n{}", big(4_994))),
        // Over too, but the chain above is already over: not again.
        ("a/b/c/AGENTS.md", big(10)),
        // The override is what Codex reads in d: 20,000 + 100.
        ("d/AGENTS.md", big(20_000)),
        ("d/AGENTS.override.md", big(100)),
    ];
    let f = files(&list);
    let found = chains_over_limit(&f);
    let got = seen(&found, &f);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!((got[0].0.as_str(), got[0].1), ("a/b/AGENTS.md", 2));
    assert!(
        got[0].2.starts_with(
            "Codex working in `a/b` joins `AGENTS.md`, `a/AGENTS.md`, `a/b/AGENTS.md` holding 35000 bytes"
        ),
        "{}",
        got[0].2
    );
    // The cut is at byte 32768 of the join.
    assert_eq!(found[0].span.clone().unwrap().start, 32 * 1024 - 30_000);
    // A root file over the limit alone is PR901's.
    let list = [("AGENTS.md", big(40_000)), ("a/AGENTS.md", big(10))];
    assert!(chains_over_limit(&files(&list)).is_empty());
}

#[test]
fn the_walk_keeps_the_files_these_checks_read() {
    let names = [GEMINI_DEFAULT.to_owned(), "CONTEXT.md".to_owned()];
    for path in [
        "AGENTS.md",
        "a/b/AGENTS.override.md",
        "x/CLAUDE.md",
        "GEMINI.md",
        "a/CONTEXT.md",
        ".github/copilot-instructions.md",
        ".claude/rules/pi-rules/x.md",
        ".github/instructions/a.instructions.md",
        ".clinerules/x.md",
        ".cursor/rules/pi-rules.mdc",
    ] {
        assert!(is_agent_file(path, &names), "{path}");
    }
    for path in [
        "src/main.rs",
        "README.md",
        "docs/AGENTS.txt",
        ".github/x.md",
    ] {
        assert!(!is_agent_file(path, &names), "{path}");
    }
    assert_eq!(
        resolve_import("a/CLAUDE.md", "./AGENTS.md").as_deref(),
        Some("a/AGENTS.md")
    );
    assert_eq!(
        resolve_import("a/CLAUDE.md", "../AGENTS.md").as_deref(),
        Some("AGENTS.md")
    );
    assert_eq!(resolve_import("CLAUDE.md", "../x.md"), None);
    assert_eq!(chain_of("a/b").collect::<Vec<_>>(), ["", "a", "a/b"]);
    assert_eq!(chain_of("").collect::<Vec<_>>(), [""]);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Pieces that the checks look at, joined at random.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            RULE,
            OTHER,
            "\n",
            "\r\n",
            "\n\n",
            "<!-- pi-rules:begin -->\n",
            "<!-- pi-rules:end -->\n",
            owned::GENERATED_LINE,
            "---\n",
            "paths:\n  - \"/src/**\"\n",
            "@AGENTS.md\n",
            "@./AGENTS.md\n",
            "@../AGENTS.md\n",
            "<!-- a note -->",
            "<!--",
            "-->",
            "```\n",
            "é☃",
            "# Heading\n",
        ])
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(piece(), 0..24).prop_map(|p| p.concat())
    }

    fn path() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "AGENTS.md",
            "AGENTS.override.md",
            "CLAUDE.md",
            "GEMINI.md",
            "a/AGENTS.md",
            "a/CLAUDE.md",
            "a/b/AGENTS.md",
            "a/b/AGENTS.override.md",
            ".github/copilot-instructions.md",
            ".claude/rules/pi-rules/x.md",
            ".claude/rules/y.md",
            ".clinerules/pi-rules.md",
        ])
    }

    proptest! {
        #[test]
        fn no_input_panics_and_every_span_is_in_its_file(
            list in prop::collection::btree_map(path(), text(), 0..8),
            big in 0usize..40_000,
        ) {
            let mut list: Vec<(&str, String)> = list.into_iter().collect();
            // A large file now and then, for Codex's chain.
            if let Some((_, text)) = list.iter_mut().find(|(p, _)| p.ends_with("AGENTS.md")) {
                text.push_str(&"é".repeat(big / 2));
            }
            let f = files(&list);
            let mut found = read_twice(&f, &[GEMINI_DEFAULT.to_owned(), "AGENTS.md".to_owned()]);
            found.extend(project_findings(&f, &[], &HashSet::new()));
            for file in &f {
                found.extend(rule_comments(file.path, file.text));
            }
            for d in &found {
                let file = f.iter().find(|file| file.path == d.path.as_str()).unwrap();
                if let Some(span) = &d.span {
                    prop_assert!(span.start <= span.end && span.end <= file.text.len());
                    prop_assert!(file.text.is_char_boundary(span.start));
                    prop_assert!(file.text.is_char_boundary(span.end));
                }
            }
        }
    }
}

#[test]
fn with_claude_s_memory_in_dot_claude_claude_code_reads_no_agents_md() {
    let names = gemini_names(None);
    // The layout export writes with agents-md: the block in AGENTS.md and .claude/CLAUDE.md,
    // the team's CLAUDE.md beside them.
    let list = [
        ("AGENTS.md", with_section("", RULE)),
        (".claude/CLAUDE.md", with_section("", RULE)),
        ("CLAUDE.md", "My own notes.\n".to_owned()),
        ("packages/api/AGENTS.md", with_section("", OTHER)),
        (
            ".claude/rules/pi-rules/packages/api/10-api.md",
            format!("---\npaths:\n  - \"/packages/api/**\"\n---\n{OTHER}"),
        ),
    ];
    let f = files(&list);
    let got = seen(&read_twice(&f, &names), &f);
    assert!(got.iter().all(|g| !g.2.contains("Claude Code")), "{got:#?}");
    // Claude is exported: the team's CLAUDE.md hides nothing from it.
    assert!(hidden(&f).is_empty(), "{:#?}", hidden(&f));
    // Without .claude/CLAUDE.md, Claude Code reads the nested AGENTS.md beside its rule.
    let f = files(&list[2..]);
    let got = seen(&read_twice(&f, &names), &f);
    assert!(got.iter().any(|g| g.2.contains("Claude Code")), "{got:#?}");
}
