//! Tests of the reasoning: tables of small files and what they give.

use crate::lint::codes::Code;
use crate::lint::testing::schema;
use crate::lint::{lint, Content, Entry, LayerInput, LayerKind, LintInput, FEATURES};

/// The findings of the reasoning codes for one file: (code, message).
pub(crate) fn findings(text: &str) -> Vec<(Code, String)> {
    let layers = vec![LayerInput {
        kind: LayerKind::Project,
        entries: vec![Entry {
            name: "90-x.md".into(),
            path: "90-x.md".into(),
            link: None,
            content: Content::Bytes(text.as_bytes().to_vec()),
        }],
    }];
    let schema = schema();
    let input = LintInput {
        layers: &layers,
        settings: &[],
        schema: &schema,
        features: FEATURES,
        collate: &|a: &str, b: &str| a.cmp(b),
    };
    lint(&input)
        .diagnostics
        .into_iter()
        .filter(|d| {
            matches!(
                d.code,
                Code::ConstantCondition
                    | Code::LeakedMarkerText
                    | Code::UnreachableBlock
                    | Code::RedundantCondition
                    | Code::EmptyTableRow
                    | Code::BlankRun
            )
        })
        .map(|d| (d.code, d.message))
        .collect()
}

fn codes(text: &str) -> Vec<Code> {
    findings(text).into_iter().map(|(c, _)| c).collect()
}

#[test]
fn reasoning_table() {
    use Code::*;
    let cases: &[(&str, &[Code])] = &[
        ("plain text", &[]),
        ("T{{IF:dco}}a{{IFNOT:dco}}b{{/IFNOT}}{{/IF}}", &[UnreachableBlock]),
        (
            "T{{IF:review_loop_max_cycles==3}}{{IF:review_loop_max_cycles==5}}b{{/IF}}{{/IF}}",
            &[UnreachableBlock],
        ),
        ("T{{IFNOT:dco}}{{IF:dco==true}}b{{/IF}}{{/IFNOT}}", &[UnreachableBlock]),
        ("---\nrequires_setting: dco\n---\nT{{IFNOT:dco}}b{{/IFNOT}}", &[UnreachableBlock]),
        ("---\nrequires: coms_active\n---\nT{{IFNOT:coms_active}}b{{/IFNOT}}", &[UnreachableBlock]),
        ("T{{IF:dco}}a{{IF:dco}}b{{/IF}}{{/IF}}", &[RedundantCondition]),
        ("T{{IF:use_worktrees}}a{{IFNOT:dco}}b{{/IFNOT}}{{/IF}}", &[]),
        ("T{{IF:dco}}a{{/IF}}{{IFNOT:dco}}b{{/IFNOT}}", &[]),
        // Nothing is reported inside a block that can never be kept.
        (
            "T{{IF:dco}}{{IFNOT:dco}}{{IF:dco}}x{{/IF}}{{/IFNOT}}{{/IF}}",
            &[UnreachableBlock],
        ),
        ("T{{IF:review_loop_max_cycles}}a{{/IF}}", &[ConstantCondition]),
        ("T{{IF:log_rules == verbose}}a{{/IF}}", &[ConstantCondition]),
        ("T{{IF:log_rules == debug}}a{{/IF}}", &[]),
        // PR105, not PR106.
        ("T{{IF:review_loop_max_cycles == 0}}a{{/IF}}", &[]),
        ("---\nrequires_setting: pidash_port\n---\nx", &[ConstantCondition]),
        (
            "| a | b |\n|---|---|\n| {{IF:external_ai_agents}}x{{/IF}} | {{IF:external_ai_agents}}y{{/IF}} |\n| c | d |",
            &[EmptyTableRow],
        ),
        (
            "| a | b |\n|---|---|\n| {{IF:external_ai_agents}}x{{/IF}} | z |\n| c | d |",
            &[],
        ),
        ("A\n\n{{IF:dco}}B{{/IF}}\n\nC", &[BlankRun]),
        ("A\n\n{{IF:dco}}B\n\n{{/IF}}C", &[]),
        ("A\n{{IF:dco}}\nB\n{{/IF}}\nC", &[]),
        ("A\n", &[BlankRun]),
        ("\nA", &[BlankRun]),
        ("{{IF:dco}}A{{/IF}}", &[BlankRun]),
        ("| a |\n{{IF:dco}}\n| b |\n{{/IF}}\n| c |", &[]),
        ("{{{{IF:dco}}x{{/IF}}IF:a}}", &[LeakedMarkerText]),
        ("{{{{IF:dco}}{{/IF}}/IF}}", &[LeakedMarkerText]),
        ("{{IF x", &[]),
    ];
    for (text, expected) in cases {
        assert_eq!(codes(text), *expected, "{text:?}: {:#?}", findings(text));
    }
}
