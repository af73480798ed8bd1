//! Inlay hints: after each opener, whether its block is kept or dropped now, and on what.

use super::{DocumentKind, IdeContext};
use crate::explain::State;

/// A hint shown at `offset` (right after an opener).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    pub offset: usize,
    /// `kept: dco = true, project settings`, `dropped: coms_active is off`, `not evaluated`...
    pub label: String,
    /// Explain's reason, in full.
    pub tooltip: Option<String>,
}

/// One hint after each opener of the rule document `text`, in order.
pub fn inlay_hints(ctx: &IdeContext, kind: &DocumentKind, text: &str) -> Vec<InlayHint> {
    if !matches!(
        kind,
        DocumentKind::Rule { .. } | DocumentKind::NestedRule { .. }
    ) {
        return Vec::new();
    }
    let evaluation = ctx.evaluate(kind, text);
    // A gated file's blocks are never reached: the gate is the reason.
    let gated = match &evaluation.gate {
        Some((false, words)) => Some(words.clone()),
        _ => None,
    };
    evaluation
        .blocks
        .into_iter()
        .map(|block| {
            if let (Some(words), State::NotEvaluated) = (&gated, block.state) {
                return InlayHint {
                    offset: block.opener.end,
                    label: "not evaluated: the file is gated".to_owned(),
                    tooltip: Some(words.clone()),
                };
            }
            let state = match block.state {
                State::Kept => "kept",
                State::Dropped => "dropped",
                State::Unbalanced => "unbalanced",
                State::Leaked => "verbatim",
                State::NotEvaluated => "not evaluated",
            };
            let label = match (&block.deciding, block.state) {
                (Some(deciding), State::Kept | State::Dropped) => format!("{state}: {deciding}"),
                _ => state.to_owned(),
            };
            InlayHint {
                offset: block.opener.end,
                label,
                tooltip: Some(block.why),
            }
        })
        .collect()
}
