//! Property tests for the engine.
//!
//! The strongest one compares the one-pass evaluator with a direct transcription of the
//! specification's recursive algorithm (rescan each kept body, search each closer afresh) on
//! marker-rich random text.

use pi_rules_core::markers::{self, BlockKind};
use pi_rules_core::{assemble, condition, Features, Scope, Settings, Value};
use proptest::prelude::*;

fn scope_parts() -> (Settings, Features) {
    let mut settings = Settings::new();
    settings.insert("on", Value::Bool(true));
    settings.insert("off", Value::Bool(false));
    settings.insert("n", Value::Number(3.0));
    settings.insert("u", Value::Undefined);
    let mut features = Features::new();
    features.set("f", true);
    features.set("g", false);
    (settings, features)
}

/// Text built from pieces that form markers, near-misses, tables and frontmatter.
fn marker_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{{IF:on}}"),
        Just("{{IF:off}}"),
        Just("{{IFNOT:on}}"),
        Just("{{IFNOT:off}}"),
        Just("{{IF:f}}"),
        Just("{{IFNOT:g}}"),
        Just("{{IF:n==3}}"),
        Just("{{IF:n != 3}}"),
        Just("{{IF:typo}}"),
        Just("{{IF:a b}}"),
        Just("{{IF:u}}"),
        Just("{{/IF}}"),
        Just("{{/IFNOT}}"),
        Just("{{IF:}}"),
        Just("{{"),
        Just("}}"),
        Just("}"),
        Just("{{REVIEW_LOOP_MAX_CYCLES}}"),
        Just("| a |"),
        Just("|"),
        Just("\n"),
        Just("\n\n"),
        Just(" \t"),
        Just("\r\n"),
        Just("---\n"),
        Just("requires: f\n"),
        Just("text"),
        Just("é"),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

/// The specification's algorithm, transcribed directly: recursive, rescanning.
fn reference_eval(
    text: &str,
    settings: &Settings,
    features: &Features,
    warnings: &mut Vec<String>,
) -> String {
    let marks = markers::scan(text);
    let mut out = String::new();
    let mut pos = 0;
    let mut i = 0;
    while i < marks.len() {
        let m = &marks[i];
        if m.closer {
            out.push_str(&text[pos..m.span().end]);
            pos = m.span().end;
            warnings.push(format!("stray {}", m.kind.keyword()));
            i += 1;
            continue;
        }
        // Search the closer afresh with a stack of kinds.
        let mut stack = vec![m.kind];
        let mut close = None;
        for (j, n) in marks.iter().enumerate().skip(i + 1) {
            if !n.closer {
                stack.push(n.kind);
            } else if *stack.last().unwrap() == n.kind {
                stack.pop();
                if stack.is_empty() {
                    close = Some(j);
                    break;
                }
            } else {
                break;
            }
        }
        let Some(j) = close else {
            warnings.push(format!("unbalanced {}", m.kind.keyword()));
            out.push_str(&text[pos..]);
            return out;
        };
        out.push_str(&text[pos..m.span().start]);
        let raw = &text[m.condition()];
        let invert = m.kind == BlockKind::IfNot;
        let holds = match condition::parse(raw) {
            None => {
                warnings.push(format!("malformed {raw}"));
                false
            }
            Some(condition::Condition::Bare { key }) => {
                match (features.get(key), settings.get(key)) {
                    (Some(on), _) => on != invert,
                    (None, Some(v)) => v.is_truthy() != invert,
                    (None, None) => {
                        warnings.push(format!("unknown {key}"));
                        false
                    }
                }
            }
            Some(condition::Condition::Compare {
                key, op, literal, ..
            }) => match settings.get(key) {
                Some(v) => {
                    let eq = v.strict_equals(&literal);
                    (eq == (op == condition::Operator::Equals)) != invert
                }
                None => {
                    warnings.push(format!("unknown {key}"));
                    false
                }
            },
        };
        if holds {
            let inner = &text[m.span().end..marks[j].span().start];
            out.push_str(&reference_eval(inner, settings, features, warnings));
        }
        pos = marks[j].span().end;
        i = j + 1;
    }
    out.push_str(&text[pos..]);
    out
}

fn short_warning(w: &pi_rules_core::Warning, text: &str) -> String {
    use pi_rules_core::WarningKind::*;
    let subject = w.message(text).subject();
    match w.kind {
        StrayCloser { kind } => format!("stray {}", kind.keyword()),
        Unbalanced { kind } => format!("unbalanced {}", kind.keyword()),
        MalformedCondition => format!("malformed {subject}"),
        UnknownKey => format!("unknown {subject}"),
        _ => w.message(text).to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn one_pass_evaluation_matches_the_recursive_specification(body in marker_text()) {
        let (settings, features) = scope_parts();
        let scope = Scope { settings: &settings, features: &features, review_loop_max_cycles: "3" };
        // A leading line keeps the text from being read as frontmatter, and no `|` or placeholder
        // survives to be rewritten, so the result is the evaluated body itself.
        let text = format!("x\n{}", body.replace('|', "!").replace("{{REVIEW", "{{R"));
        let got = assemble(&[text.as_str()], &scope);
        let mut warnings = Vec::new();
        let expected = reference_eval(&text, &settings, &features, &mut warnings);
        prop_assert_eq!(&got.text, &expected);
        let got_warnings: Vec<String> = got.warnings.iter().map(|w| short_warning(w, &text)).collect();
        prop_assert_eq!(got_warnings, warnings);
    }

    #[test]
    fn text_without_markers_or_table_rows_is_unchanged(text in "[^{|]{0,200}") {
        let (settings, features) = scope_parts();
        let scope = Scope { settings: &settings, features: &features, review_loop_max_cycles: "3" };
        prop_assume!(!text.starts_with("---"));
        let got = assemble(&[text.as_str()], &scope);
        prop_assert_eq!(got.text, text);
        prop_assert!(got.warnings.is_empty());
    }

    #[test]
    fn output_never_exceeds_input_plus_placeholders(files in prop::collection::vec(marker_text(), 0..4)) {
        let (settings, features) = scope_parts();
        let value = "10";
        let scope = Scope { settings: &settings, features: &features, review_loop_max_cycles: value };
        let got = assemble(&files, &scope);
        let input: usize = files.iter().map(String::len).sum::<usize>() + 2 * files.len();
        let growth = got.placeholders * value.len();
        prop_assert!(got.text.len() <= input + growth, "{} > {} + {}", got.text.len(), input, growth);
        prop_assert_eq!(got.included.len(), files.len());
        for w in &got.warnings {
            prop_assert!(w.file() < files.len());
            prop_assert!(w.span().end <= files[w.file()].len());
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let (settings, features) = scope_parts();
        let scope = Scope { settings: &settings, features: &features, review_loop_max_cycles: "3" };
        let _ = assemble(&[text.as_str()], &scope);
        let _ = pi_rules_core::render::render(&text, &settings);
    }
}
