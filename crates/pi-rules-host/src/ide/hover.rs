//! Hover: what a key, a feature, a block or the placeholder under the cursor means and what it
//! is now.

use super::json;
use super::scan::{self, clamp};
use super::{DocumentKind, IdeContext, SettingsScope};
use crate::escape::escape;
use crate::explain::State;
use pi_rules_core::lint::{suggest, FEATURES};
use pi_rules_core::settings::{KeySpec, Source};
use pi_rules_core::value::js_number;
use std::fmt::Write as _;
use std::ops::Range;

/// A hover: the range it is about and its text, in Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoverInfo {
    pub range: Range<usize>,
    pub markdown: String,
}

/// The hover at `offset` of the document `text`, when there is something to say.
pub fn hover(
    ctx: &IdeContext,
    kind: &DocumentKind,
    text: &str,
    offset: usize,
) -> Option<HoverInfo> {
    let offset = clamp(text, offset);
    match kind {
        DocumentKind::Rule { .. } | DocumentKind::NestedRule { .. } => {
            rule_hover(ctx, kind, text, offset)
        }
        DocumentKind::Settings { scope } => settings_hover(ctx, *scope, text, offset),
        // [`super::config_hover`].
        DocumentKind::Config { .. } | DocumentKind::Other => None,
    }
}

fn rule_hover(
    ctx: &IdeContext,
    kind: &DocumentKind,
    text: &str,
    offset: usize,
) -> Option<HoverInfo> {
    if let Some(attribute) = scan::gate_attribute_at(text, offset) {
        let value = attribute.value;
        if value.is_empty() {
            return None;
        }
        let mut md = String::new();
        if attribute.key == "requires_setting" {
            describe_key(ctx, value, &mut md);
        } else {
            describe_feature(ctx, value, &mut md);
        }
        let evaluation = ctx.evaluate(kind, text);
        if let Some((_, words)) = &evaluation.gate {
            // Explain's words start with `included` or `gated`.
            let _ = write!(md, "\n\n**This file:** {words}");
        }
        push_not_in_prompt(ctx, kind, &mut md);
        return Some(HoverInfo {
            range: attribute.value_span,
            markdown: md,
        });
    }
    let (body_start, markers) = scan::body_markers(text);
    if let Some((index, marker)) = scan::marker_at(&markers, offset) {
        // On a closer, the block it closes.
        let (opener, range) = if marker.is_opener() {
            (Some(marker), marker.span())
        } else {
            let closers = scan::closers(&markers);
            let opener = closers
                .iter()
                .position(|c| *c == Some(index))
                .map(|o| &markers[o]);
            (opener, marker.span())
        };
        let mut md = String::new();
        match opener {
            Some(opener) => {
                let condition = text.get(opener.condition()).unwrap_or("");
                let _ = write!(
                    md,
                    "**{}** block on {}",
                    opener.kind.keyword(),
                    code(condition)
                );
                if let Some((key, _)) = scan::condition_key(text, opener) {
                    md.push_str("\n\n");
                    if FEATURES.contains(&key.as_str())
                        && matches!(
                            scan::condition_of(text, opener),
                            Some(pi_rules_core::condition::Condition::Bare { .. })
                        )
                    {
                        describe_feature(ctx, &key, &mut md);
                    } else {
                        describe_key(ctx, &key, &mut md);
                    }
                }
                let evaluation = ctx.evaluate(kind, text);
                if let Some(block) = evaluation.block_at(opener.span().start) {
                    let _ = write!(
                        md,
                        "\n\n**This block:** {} — {}",
                        state_words(block.state),
                        block.why
                    );
                }
                if let Some((false, words)) = &evaluation.gate {
                    let _ = write!(md, "\n\n**This file:** {words}");
                }
                push_not_in_prompt(ctx, kind, &mut md);
            }
            None => {
                let _ = write!(
                    md,
                    "{} has no opener before it: it is kept verbatim",
                    code(text.get(marker.span()).unwrap_or(""))
                );
            }
        }
        return Some(HoverInfo {
            range,
            markdown: md,
        });
    }
    if let Some(range) = scan::placeholder_at(text, body_start, offset) {
        let key = "review_loop_max_cycles";
        let mut md = format!(
            "Becomes {} (`{key}`, {}).",
            code(ctx.review_loop_max_cycles()),
            source_words(ctx, key)
        );
        if let Some(spec) = ctx.session.schema.get(key) {
            if let Some(description) = &spec.description {
                let _ = write!(md, "\n\n{description}");
            }
        }
        return Some(HoverInfo {
            range,
            markdown: md,
        });
    }
    None
}

fn push_not_in_prompt(ctx: &IdeContext, kind: &DocumentKind, md: &mut String) {
    if let Some(words) = ctx.not_in_prompt(kind) {
        let _ = write!(md, "\n\n**Not in the prompt:** {words}");
    }
}

fn state_words(state: State) -> &'static str {
    match state {
        State::Kept => "kept",
        State::Dropped => "dropped",
        State::Unbalanced => "unbalanced",
        State::Leaked => "kept verbatim",
        State::NotEvaluated => "not evaluated",
    }
}

/// Where `key`'s value comes from, in words: the settings file's path, the environment
/// variable, or the default.
fn source_words(ctx: &IdeContext, key: &str) -> String {
    match ctx.resolved.get(key) {
        Some(resolution) => match resolution.source {
            Source::Env(name) => format!("from the environment variable {}", code(name)),
            Source::Default => "the schema's default".to_owned(),
            Source::Fallback => "no rule gives it a value".to_owned(),
            source => format!("from {}", code(&escape(&ctx.session.source_label(source)))),
        },
        None => "unknown".to_owned(),
    }
}

/// A settings key: what the schema says, and its value now with its source.
fn describe_key(ctx: &IdeContext, key: &str, md: &mut String) {
    let Some(spec) = ctx.session.schema.get(key) else {
        if FEATURES.contains(&key) {
            let _ = write!(
                md,
                "{} is a feature, not a settings key: a comparison on it, or \
                 `requires_setting` on it, looks for a settings key and fails closed",
                code(key)
            );
            return;
        }
        let _ = write!(md, "{} is not a settings key", code(key));
        if let Some(near) = suggest::closest(key, ctx.session.schema.names()) {
            let _ = write!(md, "; did you mean {}?", code(near));
        }
        return;
    };
    schema_text(spec, md);
    push_now(ctx, key, md);
}

/// `key`'s value now, as JSON, and where it comes from.
fn push_now(ctx: &IdeContext, key: &str, md: &mut String) {
    let _ = write!(
        md,
        "\n\n**Now:** {} ({})",
        code(&ctx.value_json(key)),
        source_words(ctx, key)
    );
}

/// The schema's account of a key: name, type, description, default, bounds, values, variable.
fn schema_text(spec: &KeySpec, md: &mut String) {
    let _ = write!(md, "**{}** (setting, `{}`)", code(&spec.name), spec.kind);
    if let Some(description) = &spec.description {
        let _ = write!(md, "\n\n{description}");
    }
    md.push('\n');
    if let Some(default) = spec.default.to_json() {
        let _ = write!(md, "\n- default: {}", code(&default));
    }
    if let Some(values) = &spec.enum_values {
        let list: Vec<String> = values.iter().map(|v| code(v)).collect();
        let _ = write!(md, "\n- allowed values: {}", list.join(", "));
    }
    match (spec.min, spec.max) {
        (Some(min), Some(max)) => {
            let _ = write!(md, "\n- from {} to {}", js_number(min), js_number(max));
        }
        (Some(min), None) => {
            let _ = write!(md, "\n- at least {}", js_number(min));
        }
        (None, Some(max)) => {
            let _ = write!(md, "\n- at most {}", js_number(max));
        }
        (None, None) => {}
    }
    if let Some(env) = &spec.env {
        let _ = write!(md, "\n- environment variable: {}", code(env));
    }
}

/// A feature predicate: what it means and its value now.
fn describe_feature(ctx: &IdeContext, name: &str, md: &mut String) {
    let meaning = match name {
        "coms_active" => "peer-to-peer messaging is running; the host says so (`--coms-active`)",
        "external_ai_agents" => "`acpx_agents` or `cli_agents` resolves to a non-empty list",
        _ => {
            let _ = write!(md, "{} is not a feature predicate", code(name));
            if let Some(near) = suggest::closest(name, FEATURES.iter().copied()) {
                let _ = write!(md, "; did you mean {}?", code(near));
            }
            return;
        }
    };
    let on = ctx.features.get(name).unwrap_or(false);
    let _ = write!(
        md,
        "**{}** (feature): {meaning}.\n\n**Now:** {} ({})",
        code(name),
        if on { "on" } else { "off" },
        ctx.feature_source(name)
    );
}

fn settings_hover(
    ctx: &IdeContext,
    scope: SettingsScope,
    text: &str,
    offset: usize,
) -> Option<HoverInfo> {
    let keys = json::top_level_keys(text);
    let key = keys
        .iter()
        .find(|k| k.range.start <= offset && offset < k.range.end)?;
    let mut md = String::new();
    let Some(spec) = ctx.session.schema.get(&key.name) else {
        let _ = write!(
            md,
            "{} is not a settings key: it is ignored",
            code(&key.name)
        );
        if let Some(near) = suggest::closest(&key.name, ctx.session.schema.names()) {
            let _ = write!(md, "; did you mean {}?", code(near));
        }
        return Some(HoverInfo {
            range: key.range.clone(),
            markdown: md,
        });
    };
    schema_text(spec, &mut md);
    md.push_str("\n\n");
    let file = pi_rules_core::settings::SettingsFile::parse(&ctx.session.schema, text);
    let last = keys.iter().rev().find(|k| k.name == key.name);
    if let Some(problem) = file.problem() {
        let _ = write!(md, "**Not read:** the file contributes nothing ({problem})");
    } else if last.is_some_and(|l| l.range != key.range) {
        md.push_str("**Repeated:** a later line sets this key again, and the last one counts");
    } else if let Some(rejected) = file.rejected().iter().find(|r| r.key == key.name) {
        let _ = write!(
            md,
            "**Rejected:** {}; this value is ignored",
            rejected.reason
        );
    } else if let Some(value) = file.get(&key.name) {
        let shown = value.to_json().unwrap_or_else(|| "undefined".to_owned());
        let _ = write!(md, "**Accepted:** {}", code(&shown));
        if scope == SettingsScope::Global && ctx.project_file.file.get(&key.name).is_some() {
            md.push_str("; the project settings file sets it too, and its value wins");
        }
    }
    push_now(ctx, &key.name, &mut md);
    Some(HoverInfo {
        range: key.range.clone(),
        markdown: md,
    })
}

/// `text` as a Markdown code span: fenced with more backticks than it holds in a row, and cut
/// to one line of at most 200 characters.
pub(crate) fn code(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    let mut longest = 0;
    let mut run = 0;
    for c in line.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if line.starts_with('`') || line.ends_with('`') || line.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{line}{pad}{fence}")
}
