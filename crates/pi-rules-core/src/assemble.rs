//! Assembly: from the taken rule files to the rules text.
//!
//! For each file in order: split the frontmatter, apply its gate, evaluate the blocks of its body
//! and repair its tables. Then join the kept bodies with a blank line, repair tables across the
//! joins, and substitute `{{REVIEW_LOOP_MAX_CYCLES}}`.

use crate::blocks::{self, Body, Scratch};
use crate::event::{GateDecision, GateReason, Observer, Warning, WarningKind};
use crate::frontmatter;
use crate::placeholder;
use crate::scope::Scope;
use crate::table;
use std::borrow::Cow;

/// What the frontmatter line before the body joins files with.
pub const JOIN: &str = "\n\n";

/// The result of an assembly.
#[derive(Debug, Clone, PartialEq)]
pub struct Assembly {
    /// The assembled rules, without the leading blank line a host puts before them.
    pub text: String,
    /// Warnings in the order the reference emits them.
    pub warnings: Vec<Warning>,
    /// For each input file, whether its frontmatter gate let it in.
    pub included: Vec<bool>,
    /// For each input file, the bytes its evaluated body added before the join (0 when gated).
    pub contributed: Vec<usize>,
    /// How many `{{REVIEW_LOOP_MAX_CYCLES}}` placeholders were replaced.
    pub placeholders: usize,
}

/// Assembles `files` (whole texts, in order) against `scope`.
pub fn assemble<S: AsRef<str>>(files: &[S], scope: &Scope<'_>) -> Assembly {
    assemble_observed(files, scope, &mut ())
}

/// Like [`assemble`], reporting every gate and block decision to `observer`.
pub fn assemble_observed<S: AsRef<str>, O: Observer>(
    files: &[S],
    scope: &Scope<'_>,
    observer: &mut O,
) -> Assembly {
    let total: usize = files.iter().map(|f| f.as_ref().len() + JOIN.len()).sum();
    let mut joined = String::with_capacity(total);
    let mut evaluated = String::new();
    let mut warnings = Vec::new();
    let mut included = Vec::with_capacity(files.len());
    let mut contributed = vec![0; files.len()];
    let mut separators = Vec::with_capacity(files.len());
    let mut scratch = Scratch::default();
    let mut any = false;

    for (index, file) in files.iter().enumerate() {
        let text = file.as_ref();
        let front = frontmatter::split(text);
        let keep = gate(index, &front, scope, &mut warnings, observer);
        included.push(keep);
        if !keep {
            continue;
        }
        evaluated.clear();
        let body = Body {
            file: index,
            text,
            start: front.body_start,
        };
        blocks::evaluate(
            &body,
            scope,
            &mut scratch,
            &mut evaluated,
            &mut warnings,
            observer,
        );
        if any {
            separators.push(joined.len());
            joined.push_str(JOIN);
        }
        any = true;
        let before = joined.len();
        table::repair_into(&evaluated, &mut joined);
        contributed[index] = joined.len() - before;
    }

    let repaired = match table::repair_joined(&joined, &separators) {
        Cow::Borrowed(_) => None,
        Cow::Owned(repaired) => Some(repaired),
    };
    let (text, placeholders) = finish(repaired.unwrap_or(joined), scope.review_loop_max_cycles);
    Assembly {
        text,
        warnings,
        included,
        contributed,
        placeholders,
    }
}

/// Substitutes the placeholder, reusing `text` when it holds none.
fn finish(text: String, value: &str) -> (String, usize) {
    let (replaced, count) = match placeholder::substitute(&text, value) {
        (Cow::Borrowed(_), count) => (None, count),
        (Cow::Owned(replaced), count) => (Some(replaced), count),
    };
    (replaced.unwrap_or(text), count)
}

/// Applies the frontmatter gate of file `index` (SPEC §2.2).
fn gate<O: Observer>(
    index: usize,
    front: &frontmatter::Frontmatter<'_>,
    scope: &Scope<'_>,
    warnings: &mut Vec<Warning>,
    observer: &mut O,
) -> bool {
    let gate = front.gate();
    if gate.requires_setting.is_none() && gate.requires.is_none() {
        observer.gate(&GateDecision {
            file: index,
            included: true,
            setting: None,
            feature: None,
        });
        return true;
    }
    let span_of = |key: &str| front.attribute(key).map_or(0..0, |a| a.line.clone());
    let mut decision = GateDecision {
        file: index,
        included: true,
        setting: None,
        feature: None,
    };
    if let Some(key) = gate.requires_setting {
        let reason = match scope.settings.get(key) {
            Some(value) => GateReason::Setting { key, value },
            None => {
                warnings.push(Warning {
                    file: index,
                    span: span_of("requires_setting"),
                    kind: WarningKind::UnknownRequiresSetting {
                        key: key.to_owned(),
                    },
                });
                GateReason::UnknownSetting { key }
            }
        };
        decision.included =
            matches!(reason, GateReason::Setting { value, .. } if value.is_truthy());
        decision.setting = Some(reason);
    }
    if decision.included {
        if let Some(name) = gate.requires {
            let reason = match scope.features.get(name) {
                Some(on) => GateReason::Feature { name, on },
                None => {
                    warnings.push(Warning {
                        file: index,
                        span: span_of("requires"),
                        kind: WarningKind::UnknownFeature {
                            name: name.to_owned(),
                        },
                    });
                    GateReason::UnknownFeature { name }
                }
            };
            decision.included = matches!(reason, GateReason::Feature { on: true, .. });
            decision.feature = Some(reason);
        }
    }
    observer.gate(&decision);
    decision.included
}
