//! The scope checks, each finding with its line and column, through the whole linter.

use super::*;
use crate::lint::testing::{lint_layers, schema};
use crate::lint::{lint, Diagnostic, Entry, LintInput, Linter, Report, FEATURES};
use crate::span::LineCol;

fn bytes(text: &str) -> Content {
    Content::Bytes(text.as_bytes().to_vec())
}

/// Lints one project rule `90-x.md` holding `text`, with scopes `scoped`.
fn lint_text(text: &str, scoped: bool) -> Report {
    let schema = schema();
    let collate = |a: &str, b: &str| a.cmp(b);
    lint(LintInput {
        layers: vec![LayerInput::new(
            Layer::Project,
            vec![Entry::new("90-x.md", "90-x.md", bytes(text))],
        )],
        settings: &[],
        schema: &schema,
        features: FEATURES,
        collate: &collate,
        scoped,
    })
}

/// Each finding of `code` in `report`: (line, column, message).
fn found(report: &Report, code: Code) -> Vec<(usize, usize, String)> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.code == code)
        .map(|d| {
            let at = position(report, d);
            (at.line, at.column, d.message.to_string())
        })
        .collect()
}

fn position(report: &Report, d: &Diagnostic) -> LineCol {
    let span = d.span.clone().expect("a positioned finding");
    report
        .lines(&d.path)
        .expect("its lines")
        .line_col(span.start)
}

fn codes(report: &Report) -> Vec<Code> {
    report.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn an_invalid_glob_is_an_error_at_its_line_and_column() {
    let text = "---\npaths: src/ok/**, !neg, src/[bad\n---\nBody.\n";
    let report = lint_text(text, true);
    let got = found(&report, Code::InvalidGlob);
    assert_eq!(got.len(), 2, "{:#?}", report.diagnostics);
    assert_eq!((got[0].0, got[0].1), (2, 19));
    assert!(got[0].2.contains("negation"), "{}", got[0].2);
    assert_eq!((got[1].0, got[1].1), (2, 25));
    assert!(got[1].2.contains("`src/[bad`"), "{}", got[1].2);
    assert!(got[1].2.contains("unclosed"), "{}", got[1].2);
    assert_eq!(report.count(crate::lint::Severity::Error), 2);
}

#[test]
fn a_glob_in_a_list_is_placed_on_its_own_line() {
    let text = "---\npaths:\n  - \"src/api/**\"\n  - \"a/{b\"\n---\nBody.\n";
    let report = lint_text(text, true);
    let got = found(&report, Code::InvalidGlob);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].0, got[0].1), (4, 6));
    // The list lines are the key's value, not lines without a key.
    assert!(!codes(&report).contains(&Code::IneffectiveFrontmatterLine));
    assert!(!codes(&report).contains(&Code::UnknownFrontmatterKey));
}

#[test]
fn a_scope_past_its_bounds_is_reported() {
    let many: Vec<String> = (0..1_005).map(|i| format!("d{i}/**")).collect();
    let long = "x".repeat(MAX_ITEM_LEN + 1);
    let text = format!(
        "---\nagents: pi\npaths: {}, {long}\n---\nBody.\n",
        many.join(", ")
    );
    let report = lint_text(&text, true);
    let got = found(&report, Code::ScopeOverBounds);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0, got[0].1), (3, 1));
    assert!(
        got[0].2.contains("the 6 after the first 1000"),
        "{}",
        got[0].2
    );

    let text = format!("---\npaths:\n  - a/**\n  - {long}\n---\nBody.\n");
    let report = lint_text(&text, true);
    let got = found(&report, Code::ScopeOverBounds);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0, got[0].1), (4, 5));
}

#[test]
fn an_unknown_agent_is_an_error_with_a_did_you_mean() {
    let text = "---\nagents: claude, claud, Cursor, zzzzzzzz\n---\nBody.\n";
    let report = lint_text(text, true);
    let unknown: Vec<&Diagnostic> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::UnknownAgent)
        .collect();
    assert_eq!(unknown.len(), 2, "{:#?}", report.diagnostics);
    assert_eq!(
        position(&report, unknown[0]),
        LineCol {
            line: 2,
            column: 17
        }
    );
    assert_eq!(unknown[0].help.as_deref(), Some("did you mean `claude`?"));
    assert_eq!(
        position(&report, unknown[1]),
        LineCol {
            line: 2,
            column: 32
        }
    );
    assert!(unknown[1]
        .help
        .as_deref()
        .unwrap()
        .starts_with("known agents: pi, "));
    assert_eq!(unknown[0].severity, crate::lint::Severity::Error);
}

#[test]
fn a_glob_with_a_comma_names_the_agents_that_cut_it() {
    let text = "---\npaths:\n  - \"src/**/*.{ts,tsx}\"\n  - \"docs/a,b.md\"\n---\nBody.\n";
    let report = lint_text(text, true);
    let d: Vec<&Diagnostic> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::GlobNotPortable)
        .collect();
    assert_eq!(d.len(), 2, "{:#?}", report.diagnostics);
    assert_eq!(position(&report, d[0]), LineCol { line: 3, column: 6 });
    let message = &d[0].message;
    assert!(
        message.contains("Cursor's `globs` and Windsurf's `globs`"),
        "{message}"
    );
    assert!(
        !message.contains("Copilot"),
        "a brace keeps its comma in `applyTo`: {message}"
    );
    assert_eq!(
        d[0].help.as_deref(),
        Some("write it as separate globs for those agents: `src/**/*.ts`, `src/**/*.tsx`")
    );
    // The comma is the secondary label.
    let comma = d[0].labels[0].span.start;
    assert_eq!(&text[comma..=comma], ",");
    assert_eq!(position(&report, d[1]), LineCol { line: 4, column: 6 });
    assert!(
        d[1].message.contains("Copilot's `applyTo`"),
        "{}",
        d[1].message
    );
    assert_eq!(d[1].severity, crate::lint::Severity::Info);
    // No finding on a glob without a comma.
    let report = lint_text("---\npaths: src/**/*.ts\n---\nBody.\n", true);
    assert!(report.diagnostics.is_empty(), "{:#?}", report.diagnostics);
}

#[test]
fn a_glob_an_agent_matches_otherwise_names_the_agents_and_why() {
    let text = "---\npaths:\n  - docs/API/**\n  - \"src/[!x]*.ts\"\n  - \"!gen/**\"\n---\nBody.\n";
    let report = lint_text(text, true);
    let got = found(&report, Code::GlobNotPortable);
    assert_eq!(got.len(), 2, "{:#?}", report.diagnostics);
    // Upper case: the agents that ignore case, at the glob.
    assert_eq!((got[0].0, got[0].1), (3, 5));
    assert!(
        got[0]
            .2
            .contains("Claude Code and Copilot in VS Code match globs without regard to case"),
        "{}",
        got[0].2
    );
    // The negated class: Claude Code, and the class is the secondary label.
    assert_eq!((got[1].0, got[1].1), (4, 6));
    assert!(
        got[1].2.contains("negated class, which Claude Code"),
        "{}",
        got[1].2
    );
    let d = report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::GlobNotPortable)
        .nth(1)
        .unwrap();
    let class = d.labels[0].span.clone();
    assert_eq!(&text[class], "[!");
    // A negation of the whole glob stays an error, and says no agent can take it either.
    let invalid: Vec<&Diagnostic> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::InvalidGlob)
        .collect();
    assert_eq!(invalid.len(), 1);
    assert!(
        invalid[0].notes[0].contains("no agent `export` writes for"),
        "{:?}",
        invalid[0].notes
    );
    // Lower case, no class: nothing.
    assert!(lint_text("---\npaths: src/[ab]*.ts\n---\nBody.\n", true)
        .diagnostics
        .is_empty());
}

#[test]
fn every_format_row_is_of_a_known_agent() {
    for row in AGENT_GLOBS {
        assert!(rule_scope::is_known_agent(row.agent), "{}", row.agent);
    }
}

#[test]
fn with_scopes_off_the_keys_have_no_effect_in_pi() {
    let text = "---\npaths: src/**\nagents: claude\n---\nBody.\n";
    let report = lint_text(text, false);
    let got = found(&report, Code::ScopeHasNoEffect);
    assert_eq!(got.len(), 2, "{:#?}", report.diagnostics);
    assert_eq!((got[0].0, got[0].1), (2, 1));
    assert!(got[0].2.starts_with("`paths:` has no effect in pi yet"));
    assert_eq!((got[1].0, got[1].1), (3, 1));
    assert!(got[1].2.starts_with("`agents:` has no effect in pi yet"));
    let help = report.diagnostics[0].help.as_deref().unwrap();
    assert!(
        help.contains("`[rules] scoped = true` in `.pi/pi-rules.toml`"),
        "{help}"
    );
    // On, nothing; an `agents:` that names pi changes nothing in pi either way.
    assert!(lint_text(text, true).diagnostics.is_empty());
    let report = lint_text("---\nagents: pi, claude\n---\nBody.\n", false);
    assert!(report.diagnostics.is_empty(), "{:#?}", report.diagnostics);
    // Without a scope, nothing, on or off.
    assert!(lint_text("---\nrequires: coms_active\n---\nBody.\n", false)
        .diagnostics
        .is_empty());
}

/// A linter over one project layer and nested directories, each `(dir, [(name, text)])`.
fn lint_nested(
    project: &[(&str, &str)],
    nested: &[(&str, &[(&str, &str)])],
    scoped: bool,
) -> Report {
    let schema = schema();
    let mut linter = Linter::new(&schema, FEATURES).scoped(scoped);
    let entries = |dir: &str, files: &[(&str, &str)]| -> Vec<Entry> {
        files
            .iter()
            .map(|(name, text)| {
                let path = if dir.is_empty() {
                    format!(".pi/rules/{name}")
                } else {
                    format!("{dir}/.pi/rules/{name}")
                };
                Entry::new(*name, path, bytes(text))
            })
            .collect()
    };
    let mut root = LayerInput::new(Layer::Project, entries("", project));
    for entry in &mut root.entries {
        linter.check_rule_in(entry, Some(""));
    }
    for (dir, files) in nested {
        let mut layer = LayerInput::new(Layer::Project, entries(dir, files));
        for entry in &mut layer.entries {
            linter.check_rule_in(entry, Some(dir));
        }
        linter.add_nested(NestedInput {
            dir: (*dir).to_owned(),
            label: format!("{dir}/.pi/rules"),
            layer,
        });
    }
    linter.finish(&[root], &[], &|a: &str, b: &str| a.cmp(b))
}

#[test]
fn a_nested_rule_names_the_rule_it_replaces() {
    let report = lint_nested(
        &[("90-api.md", "Root.\n"), ("91-other.md", "Other.\n")],
        &[
            (
                "packages/api",
                &[("90-api.md", "Nested.\n"), ("92-new.md", "New.\n")],
            ),
            ("packages/api/v2", &[("90-api.md", "Deeper.\n")]),
        ],
        true,
    );
    let got: Vec<(&str, &str)> = report
        .diagnostics
        .iter()
        .map(|d| (d.path.as_str(), d.message.as_ref()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "packages/api/.pi/rules/90-api.md",
                "this rule replaces `.pi/rules/90-api.md` (project layer) for files in \
                 `packages/api`"
            ),
            (
                "packages/api/v2/.pi/rules/90-api.md",
                "this rule replaces `packages/api/.pi/rules/90-api.md` (nested directory \
                 `packages/api`) for files in `packages/api/v2`"
            ),
        ]
    );
    assert!(report
        .diagnostics
        .iter()
        .all(|d| d.code == Code::NestedRuleReplaces && d.severity == crate::lint::Severity::Info));
}

#[test]
fn with_scopes_off_each_nested_directory_has_no_effect_in_pi() {
    let report = lint_nested(
        &[],
        &[
            ("a", &[("90-x.md", "X.\n")]),
            ("b/c", &[("90-y.md", "Y.\n")]),
        ],
        false,
    );
    let got: Vec<(&str, Code)> = report
        .diagnostics
        .iter()
        .map(|d| (d.path.as_str(), d.code))
        .collect();
    assert_eq!(
        got,
        [
            ("a/.pi/rules", Code::NestedRulesHaveNoEffect),
            ("b/c/.pi/rules", Code::NestedRulesHaveNoEffect),
        ]
    );
    assert_eq!(report.diagnostics[0].span, None);
}

#[test]
fn nested_rule_files_get_the_checks_of_any_rule_file() {
    let report = lint_nested(&[], &[("a", &[("90-x.md", "{{IF:dcoo}}x{{/IF}}\n")])], true);
    let d = report
        .diagnostics
        .iter()
        .find(|d| d.code == Code::UnknownSettingKey)
        .expect("the unknown key is reported");
    assert_eq!(d.path.as_str(), "a/.pi/rules/90-x.md");
    assert_eq!(position(&report, d), LineCol { line: 1, column: 6 });
}

#[test]
fn a_glob_reported_after_the_text_is_gone_has_its_line() {
    let schema = schema();
    let mut linter = Linter::new(&schema, FEATURES).scoped(true);
    let text = "---\nname: x\npaths:\n  - src/**\n  - \"gone/**\"\n---\nBody.\n";
    let mut layer = LayerInput::new(
        Layer::Project,
        vec![Entry::new("90-x.md", ".pi/rules/90-x.md", bytes(text))],
    );
    linter.check_rule_in(&mut layer.entries[0], Some(""));
    // Package and user rules are not tried on the repository.
    let mut user = Entry::new("80-u.md", "u/80-u.md", bytes("---\npaths: x/**\n---\n"));
    linter.check_rule(&mut user);
    let rules = linter.scoped_rules();
    assert_eq!(rules.len(), 1);
    let globs: Vec<&str> = rules[0].globs.iter().map(|g| g.text.as_str()).collect();
    assert_eq!(globs, ["src/**", "gone/**"]);
    linter.matched_nothing(0, 1);
    let report = linter.finish(&[layer], &[], &|a: &str, b: &str| a.cmp(b));
    let got = found(&report, Code::GlobMatchesNothing);
    assert_eq!(got.len(), 1, "{:#?}", report.diagnostics);
    assert_eq!((got[0].0, got[0].1), (5, 6));
    assert_eq!(got[0].2, "glob `gone/**` matches no file of the repository");
    let lines = report.lines(".pi/rules/90-x.md").unwrap();
    assert_eq!(lines.line(5).map(|l| l.1), Some("  - \"gone/**\""));
}

#[test]
fn brace_alternatives_table() {
    let cases: [(&str, Option<&[&str]>); 5] = [
        ("src/*.{ts,tsx}", Some(&["src/*.ts", "src/*.tsx"])),
        ("{a,b}/x", Some(&["a/x", "b/x"])),
        ("{a,{b,c}}", None),
        ("{a,b}/{c,d}", None),
        ("a,b", None),
    ];
    for (glob, expected) in cases {
        let got = brace_alternatives(glob);
        let expected = expected.map(|e| e.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(got, expected, "{glob}");
    }
}

#[test]
fn a_layer_without_scopes_is_unchanged() {
    // The same findings as before scopes existed: an unknown key stays one.
    let layers = [LayerInput::new(
        Layer::Project,
        vec![Entry::new(
            "90-x.md",
            "90-x.md",
            bytes("---\nglobs: a/**\n---\nBody.\n"),
        )],
    )];
    let report = lint_layers(&layers, None);
    assert_eq!(codes(&report), [Code::UnknownFrontmatterKey]);
}
