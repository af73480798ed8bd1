//! Completion: settings keys in conditions and `requires_setting`, allowed values after a
//! comparison, features after `requires`, the closer of the innermost open block, and keys and
//! values in a settings file.

use super::hover::code;
use super::json::{self, Spot};
use super::scan::{self, clamp, extend_forward, is_key_byte};
use super::{DocumentKind, IdeContext};
use pi_rules_core::lint::FEATURES;
use pi_rules_core::markers::BlockKind;
use pi_rules_core::settings::{KeyKind, KeySpec};
use std::ops::Range;

/// What a completion inserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    /// A settings key.
    Key,
    /// A value of a key.
    Value,
    /// A feature predicate.
    Feature,
    /// A block's closer.
    Closer,
    /// An agent of `agents:`.
    Agent,
    /// A directory of `paths:`, as a glob.
    Path,
}

/// One completion: `insert` replaces the bytes `replace` of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    /// Markdown.
    pub documentation: Option<String>,
    pub replace: Range<usize>,
    pub insert: String,
}

/// The completions at `offset` of the document `text`.
pub fn completions(
    ctx: &IdeContext,
    kind: &DocumentKind,
    text: &str,
    offset: usize,
) -> Vec<Completion> {
    let offset = clamp(text, offset);
    match kind {
        DocumentKind::Rule { .. } | DocumentKind::NestedRule { .. } => {
            rule_completions(ctx, text, offset)
        }
        DocumentKind::Settings { .. } => settings_completions(ctx, text, offset),
        // [`super::config_completions`].
        DocumentKind::Config { .. } | DocumentKind::Other => Vec::new(),
    }
}

fn rule_completions(ctx: &IdeContext, text: &str, offset: usize) -> Vec<Completion> {
    let line_start = scan::line_start(text, offset);
    let before = &text[line_start..offset];
    // In the frontmatter: `requires_setting:` and `requires:`.
    if let Some(header) = scan::header_region(text) {
        if header.start <= line_start && line_start <= header.end {
            return gate_completions(ctx, text, line_start, offset);
        }
    }
    // After the last `{{` of the line, unless a `}}` closed it.
    let Some(open) = before.rfind("{{") else {
        return Vec::new();
    };
    let inside = &before[open + 2..];
    if inside.contains('}') {
        return Vec::new();
    }
    if let Some(rest) = inside
        .strip_prefix("IFNOT:")
        .or_else(|| inside.strip_prefix("IF:"))
    {
        let rest_start = offset - rest.len();
        return condition_completions(ctx, text, rest, rest_start, offset);
    }
    // `{{`, `{{/`, `{{/IF`...: the closer of the innermost open block.
    if ["/IFNOT", "/IF"]
        .iter()
        .any(|closer| closer.starts_with(inside))
    {
        return closer_completion(text, line_start + open, offset)
            .into_iter()
            .collect();
    }
    Vec::new()
}

/// Completions in a condition, whose text so far is `rest` (from `rest_start` to `offset`).
fn condition_completions(
    ctx: &IdeContext,
    text: &str,
    rest: &str,
    rest_start: usize,
    offset: usize,
) -> Vec<Completion> {
    let trimmed = rest.trim_start();
    let key_start = rest_start + (rest.len() - trimmed.len());
    let key_len = trimmed.bytes().take_while(|&b| is_key_byte(b)).count();
    if key_start + key_len == offset {
        // Typing the key.
        let end = extend_forward(text, offset, is_key_byte);
        let mut out = key_completions(ctx, key_start..end);
        out.extend(feature_completions(key_start..end));
        return out;
    }
    // After `KEY ==` or `KEY !=`: the key's values.
    let key = &trimmed[..key_len];
    let after = trimmed[key_len..].trim_start();
    let Some(value) = after
        .strip_prefix("==")
        .or_else(|| after.strip_prefix("!="))
    else {
        return Vec::new();
    };
    let value = value.trim_start();
    let value_start = offset - value.len();
    let end = extend_forward(text, offset, |b| b != b'}' && b != b'\n' && b != b'\r');
    let Some(spec) = ctx.session.schema.get(key) else {
        return Vec::new();
    };
    values_of(spec)
        .into_iter()
        .map(|(label, detail)| Completion {
            insert: label.clone(),
            label,
            kind: CompletionKind::Value,
            detail: Some(detail),
            documentation: None,
            replace: value_start..end,
        })
        .collect()
}

/// The values worth offering for `spec`: its allowed values, `true` and `false` for a boolean,
/// and its default; each with a detail.
fn values_of(spec: &KeySpec) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let default = spec.default.to_json();
    let detail = |v: &str| {
        if default.as_deref() == Some(v) || default.as_deref() == Some(&format!("\"{v}\"")) {
            "default".to_owned()
        } else {
            format!("{} value", spec.name)
        }
    };
    if let Some(values) = &spec.enum_values {
        out.extend(values.iter().map(|v| (v.to_string(), detail(v))));
    }
    if matches!(
        spec.kind,
        KeyKind::Bool | KeyKind::BoolEnable | KeyKind::BoolOrString
    ) {
        out.extend(["true", "false"].map(|v| (v.to_owned(), detail(v))));
    }
    if out.is_empty() {
        if let Some(default) = spec.default.to_json() {
            let bare = default
                .strip_prefix('"')
                .and_then(|d| d.strip_suffix('"'))
                .unwrap_or(&default)
                .to_owned();
            out.push((bare, "default".to_owned()));
        }
    }
    out
}

fn key_completions(ctx: &IdeContext, replace: Range<usize>) -> Vec<Completion> {
    ctx.session
        .schema
        .keys()
        .map(|spec| key_completion(ctx, spec, replace.clone(), spec.name.to_string()))
        .collect()
}

fn key_completion(
    ctx: &IdeContext,
    spec: &KeySpec,
    replace: Range<usize>,
    insert: String,
) -> Completion {
    let now = ctx.value_json(&spec.name);
    let mut documentation = spec
        .description
        .as_deref()
        .map(str::to_owned)
        .unwrap_or_default();
    if !documentation.is_empty() {
        documentation.push_str("\n\n");
    }
    documentation.push_str(&format!("Now: {}", code(&now)));
    Completion {
        label: spec.name.to_string(),
        kind: CompletionKind::Key,
        detail: Some(spec.kind.to_string()),
        documentation: Some(documentation),
        replace,
        insert,
    }
}

fn feature_completions(replace: Range<usize>) -> Vec<Completion> {
    FEATURES
        .iter()
        .map(|name| Completion {
            label: (*name).to_owned(),
            kind: CompletionKind::Feature,
            detail: Some("feature".to_owned()),
            documentation: Some(
                match *name {
                    "coms_active" => "Peer-to-peer messaging is running (the host says so).",
                    _ => "`acpx_agents` or `cli_agents` resolves to a non-empty list.",
                }
                .to_owned(),
            ),
            replace: replace.clone(),
            insert: (*name).to_owned(),
        })
        .collect()
}

/// `requires_setting: ` and `requires: ` in the frontmatter line from `line_start` to `offset`.
fn gate_completions(
    ctx: &IdeContext,
    text: &str,
    line_start: usize,
    offset: usize,
) -> Vec<Completion> {
    let before = &text[line_start..offset];
    let trimmed = before.trim_start();
    let (attribute, rest) = match trimmed.split_once(':') {
        Some((key, rest)) => (key.trim(), rest),
        None => return Vec::new(),
    };
    let value = rest.trim_start();
    if !value.bytes().all(is_key_byte) {
        return Vec::new();
    }
    let start = offset - value.len();
    let end = extend_forward(text, offset, is_key_byte);
    match attribute {
        "requires_setting" => key_completions(ctx, start..end),
        "requires" => feature_completions(start..end),
        _ => Vec::new(),
    }
}

/// The closer of the block open at `offset`, replacing the `{{…` typed from `marker_start`.
fn closer_completion(text: &str, marker_start: usize, offset: usize) -> Option<Completion> {
    let (_, markers) = scan::body_markers(text);
    let mut open: Vec<BlockKind> = Vec::new();
    for marker in markers.iter().take_while(|m| m.span().end <= marker_start) {
        if marker.is_opener() {
            open.push(marker.kind);
        } else if open.last() == Some(&marker.kind) {
            open.pop();
        } else {
            open.clear();
        }
    }
    let kind = *open.last()?;
    let closer = match kind {
        BlockKind::If => "{{/IF}}",
        BlockKind::IfNot => "{{/IFNOT}}",
    };
    let mut end = extend_forward(text, offset, |b| b.is_ascii_uppercase() || b == b'/');
    if text[end..].starts_with("}}") {
        end += 2;
    }
    Some(Completion {
        label: closer.to_owned(),
        kind: CompletionKind::Closer,
        detail: Some(format!("closes the innermost {} block", kind.keyword())),
        documentation: None,
        replace: marker_start..end,
        insert: closer.to_owned(),
    })
}

fn settings_completions(ctx: &IdeContext, text: &str, offset: usize) -> Vec<Completion> {
    match json::spot_at(text, offset) {
        Some(Spot::Key { replace }) => {
            let present = json::top_level_keys(text);
            let after = text[replace.end..].trim_start();
            let colon = after.starts_with(':');
            ctx.session
                .schema
                .keys()
                .filter(|spec| {
                    !present
                        .iter()
                        .any(|k| k.name == spec.name && k.range != replace)
                })
                .map(|spec| {
                    let insert = if colon {
                        format!("\"{}\"", spec.name)
                    } else {
                        format!("\"{}\": ", spec.name)
                    };
                    key_completion(ctx, spec, replace.clone(), insert)
                })
                .collect()
        }
        Some(Spot::Value { key, replace }) => {
            let Some(spec) = ctx.session.schema.get(&key) else {
                return Vec::new();
            };
            let quote = !matches!(spec.kind, KeyKind::Int | KeyKind::Number | KeyKind::Port);
            values_of(spec)
                .into_iter()
                .map(|(label, detail)| {
                    let boolean = label == "true" || label == "false";
                    let json_text = if quote && !boolean && !label.starts_with(['[', '{']) {
                        format!("\"{label}\"")
                    } else {
                        label.clone()
                    };
                    Completion {
                        label: json_text.clone(),
                        kind: CompletionKind::Value,
                        detail: Some(detail),
                        documentation: None,
                        replace: replace.clone(),
                        insert: json_text,
                    }
                })
                .collect()
        }
        None => Vec::new(),
    }
}
