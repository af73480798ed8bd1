//! Document symbols: a rule file's blocks as a nested outline, or a settings file's keys.

use super::json;
use super::scan;
use super::DocumentKind;
use pi_rules_core::frontmatter;
use std::ops::Range;

/// The deepest nesting the outline shows; blocks deeper than this are listed flat under their
/// ancestor at this depth, so that no client (nor dropping the tree) recurses without bound.
pub const MAX_DEPTH: usize = 32;

/// One entry of the outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub detail: Option<String>,
    /// The whole block (opener to closer), or the opener alone when it has no closer.
    pub range: Range<usize>,
    /// The opener.
    pub selection: Range<usize>,
    pub children: Vec<Symbol>,
}

/// The outline of the document `text`: a rule file's frontmatter and blocks, nested as they
/// are (an opener without a closer is a leaf); a settings file's top-level keys.
pub fn symbols(kind: &DocumentKind, text: &str) -> Vec<Symbol> {
    match kind {
        DocumentKind::Rule { .. } | DocumentKind::NestedRule { .. } => rule_symbols(text),
        DocumentKind::Settings { .. } => json::top_level_keys(text)
            .into_iter()
            .map(|key| Symbol {
                name: key.name,
                detail: None,
                range: key.range.clone(),
                selection: key.range,
                children: Vec::new(),
            })
            .collect(),
        // [`super::config_symbols`].
        DocumentKind::Config { .. } | DocumentKind::Other => Vec::new(),
    }
}

fn rule_symbols(text: &str) -> Vec<Symbol> {
    let mut top = Vec::new();
    let fm = frontmatter::split(text);
    if let Some(header) = &fm.header {
        let gate: Vec<String> = fm
            .attributes
            .iter()
            .filter(|a| a.key == "requires_setting" || a.key == "requires")
            .map(|a| format!("{}: {}", a.key, a.value))
            .collect();
        top.push(Symbol {
            name: "frontmatter".to_owned(),
            detail: (!gate.is_empty()).then(|| gate.join(", ")),
            range: 0..fm.body_start,
            selection: 0..header.start.min(3),
            children: Vec::new(),
        });
    }
    let (_, markers) = scan::body_markers(text);
    let closers = scan::closers(&markers);
    // The open blocks, outermost first: (symbol, end of its closer).
    let mut stack: Vec<(Symbol, usize)> = Vec::new();
    let close_until = |stack: &mut Vec<(Symbol, usize)>, top: &mut Vec<Symbol>, at: usize| {
        while stack.last().is_some_and(|(_, end)| *end <= at) {
            if let Some((symbol, _)) = stack.pop() {
                match stack.last_mut() {
                    Some((parent, _)) => parent.children.push(symbol),
                    None => top.push(symbol),
                }
            }
        }
    };
    for (i, marker) in markers.iter().enumerate() {
        if !marker.is_opener() {
            continue;
        }
        let opener = marker.span();
        close_until(&mut stack, &mut top, opener.start);
        let condition = text.get(marker.condition()).unwrap_or("");
        let name = format!("{} {}", marker.kind.keyword(), condition.trim());
        let end = closers[i].map(|c| markers[c].span().end);
        let symbol = Symbol {
            name,
            detail: end.is_none().then(|| "no closer".to_owned()),
            range: opener.start..end.unwrap_or(opener.end),
            selection: opener.clone(),
            children: Vec::new(),
        };
        match end {
            Some(end) if stack.len() < MAX_DEPTH => stack.push((symbol, end)),
            _ => match stack.last_mut() {
                Some((parent, _)) => parent.children.push(symbol),
                None => top.push(symbol),
            },
        }
    }
    close_until(&mut stack, &mut top, usize::MAX);
    top
}
