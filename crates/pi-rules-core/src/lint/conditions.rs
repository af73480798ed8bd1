//! Checks on conditions (`{{IF:COND}}`, `{{IFNOT:COND}}`) and on the frontmatter gate keys:
//! unknown keys and features, malformed conditions, comparisons on features, and comparison
//! literals that can never equal the key's value.
//!
//! Conditions are parsed with [`crate::condition::parse`], exactly as the engine parses them.

use super::codes::Code;
use super::diagnostic::{excerpt, offset_in, FileDiagnostics, Fix};
use super::schema::{KeyInfo, SchemaInfo};
use super::suggest;
use crate::condition::{self, Condition, Operator};
use crate::markers::{BlockKind, Marker};
use crate::text::js_trim;
use crate::value::Value;
use std::ops::Range;

/// What conditions are checked against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub schema: &'a SchemaInfo,
    pub features: &'a [&'a str],
    /// Scopes are on for pi (`[rules] scoped`): `paths:` and `agents:` take effect in its block.
    pub scoped: bool,
}

impl Context<'_> {
    fn is_feature(&self, name: &str) -> bool {
        self.features.contains(&name)
    }

    /// "did you mean" over settings keys and features.
    fn suggest_key(&self, word: &str) -> Option<String> {
        let features = self.features.iter().copied();
        suggest::closest(word, self.schema.names().chain(features))
            .map(|s| format!("did you mean `{s}`?"))
    }

    /// The one settings key (or feature, with `features`) within edit distance 2 of `word`, when
    /// exactly one is: a misspelling that can be corrected without guessing.
    fn sole_match(&self, word: &str, features: bool) -> Option<&str> {
        let lower: Vec<char> = word.chars().map(|c| c.to_ascii_lowercase()).collect();
        let feature_names = self.features.iter().copied().filter(|_| features);
        let mut found = None;
        for candidate in self.schema.names().chain(feature_names) {
            let cand: Vec<char> = candidate.chars().map(|c| c.to_ascii_lowercase()).collect();
            if suggest::distance(&lower, &cand, 2).is_some() {
                if found.is_some() {
                    return None;
                }
                found = Some(candidate);
            }
        }
        found.filter(|f| *f != word)
    }

    fn feature_list(&self) -> String {
        let names: Vec<String> = self.features.iter().map(|f| format!("`{f}`")).collect();
        names.join(" and ")
    }
}

/// Checks the condition of opener `marker` (spans into `text`).
pub(crate) fn check_condition(
    cx: &Context<'_>,
    text: &str,
    marker: &Marker,
    out: &mut FileDiagnostics,
) {
    let raw = &text[marker.condition()];
    let Some(parsed) = condition::parse(raw) else {
        malformed(marker, raw, out);
        return;
    };
    let key = parsed.key();
    let key_span = offset_in(text, key).map_or(marker.condition(), |s| s..s + key.len());
    match parsed {
        Condition::Bare { key } => {
            if cx.is_feature(key) || cx.schema.contains(key) {
                return;
            }
            unknown_key(cx, key, key_span, "condition", true, out);
        }
        Condition::Compare {
            key,
            op,
            literal_text,
            literal,
        } => {
            if let Some(info) = cx.schema.get(key) {
                impossible(text, marker, info, op, literal_text, &literal, out);
            } else if cx.is_feature(key) {
                feature_comparison(marker, key, op, &literal, out);
            } else {
                unknown_key(cx, key, key_span, "condition", false, out);
            }
        }
    }
}

fn unknown_key(
    cx: &Context<'_>,
    key: &str,
    span: Range<usize>,
    place: &str,
    features: bool,
    out: &mut FileDiagnostics,
) {
    let Some(d) = out.report(Code::UnknownSettingKey, Some(span.clone())) else {
        return;
    };
    if let Some(to) = cx.sole_match(key, features) {
        d.fix(Fix::replace(
            span,
            to,
            format!("replace `{}` with `{to}`", excerpt(key, 60)),
        ));
    }
    d.message(format!(
        "unknown settings key `{}` in a {place}",
        excerpt(key, 60)
    ))
    .label("not a settings key or a feature")
    .note("an unknown key fails closed: the block is dropped for `IF` and `IFNOT` alike")
    .maybe_help(cx.suggest_key(key));
}

fn malformed(marker: &Marker, raw: &str, out: &mut FileDiagnostics) {
    let span = if js_trim(raw).is_empty() {
        marker.span()
    } else {
        marker.condition()
    };
    let Some(d) = out.report(Code::MalformedCondition, Some(span)) else {
        return;
    };
    let keyword = marker.kind.keyword();
    d.message(format!("malformed condition `{}`", excerpt(raw, 60)))
        .label("not `KEY`, `KEY == LITERAL` or `KEY != LITERAL`")
        .note("a malformed condition drops the block, for `IF` and `IFNOT` alike")
        .help(malformed_help(raw, keyword));
}

/// A hint for the most likely cause of a malformed condition.
fn malformed_help(raw: &str, keyword: &str) -> String {
    let cond = js_trim(raw);
    if cond.is_empty() {
        return format!("the condition is empty: write `{{{{{keyword}:key}}}}`");
    }
    if cond.contains("{{") {
        return "the condition runs into another marker: the `}}` that ends this marker is \
                probably missing"
            .to_owned();
    }
    if cond.contains("&&") || cond.contains("||") {
        return "there is no `&&` or `||`: nest blocks for \"and\" \
                (`{{IF:a}}{{IF:b}}…{{/IF}}{{/IF}}`)"
            .to_owned();
    }
    if let Some(rest) = cond.strip_prefix('!') {
        return format!(
            "there is no `!`: write `{{{{IFNOT:{}}}}}` … `{{{{/IFNOT}}}}`",
            excerpt(js_trim(rest), 40)
        );
    }
    if cond.contains(['<', '>']) {
        return "only `==` and `!=` compare".to_owned();
    }
    if let Some((key, value)) = cond.split_once('=') {
        if !key.ends_with('!') && condition::is_identifier(js_trim(key)) {
            return format!(
                "`=` is not an operator: write `{} == {}`",
                js_trim(key),
                excerpt(js_trim(value), 30)
            );
        }
    }
    if cond.contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
        return "a comparison and its literal must be on one line".to_owned();
    }
    "a condition is `KEY`, `KEY == LITERAL` or `KEY != LITERAL`, where KEY is letters, digits \
     and `_`"
        .to_owned()
}

fn feature_comparison(
    marker: &Marker,
    name: &str,
    op: Operator,
    literal: &Value,
    out: &mut FileDiagnostics,
) {
    let Some(d) = out.report(Code::FeatureComparison, Some(marker.condition())) else {
        return;
    };
    let help = match literal {
        Value::Bool(b) => {
            // Whether the block means "shown when the feature is on".
            let when_on = (*b == (op == Operator::Equals)) != (marker.kind == BlockKind::IfNot);
            let keyword = if when_on { "IF" } else { "IFNOT" };
            format!("test the feature bare: `{{{{{keyword}:{name}}}}}`")
        }
        _ => format!(
            "test the feature bare: `{{{{IF:{name}}}}}` when on, `{{{{IFNOT:{name}}}}}` when off"
        ),
    };
    d.message(format!(
        "comparison on the feature `{name}` is always false: the block is always dropped"
    ))
    .label("a comparison looks up a setting, and no setting has this name")
    .help(help);
}

/// Which values a key can hold, as far as `===` against a literal is concerned.
struct Possible {
    bools: bool,
    strings: bool,
    /// `(min, max, integer)` for numbers.
    numbers: Option<(f64, f64, bool)>,
    /// The key's type in words, for messages.
    described: String,
}

/// `None` for a type the linter does not know (nothing is reported for it).
fn possible(info: &KeyInfo) -> Option<Possible> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    let p = |bools, strings, numbers, described: &str| {
        Some(Possible {
            bools,
            strings,
            numbers,
            described: described.to_owned(),
        })
    };
    let n = crate::value::js_number;
    match info.kind.as_str() {
        "bool" | "bool_enable" => p(true, false, None, "a boolean"),
        "bool_or_string" => p(true, true, None, "a boolean or a string"),
        "string" => p(false, true, None, "a string"),
        "number" => p(false, false, Some((f64::MIN, f64::MAX, false)), "a number"),
        "int" => {
            let (min, max) = (info.min.unwrap_or(0.0), info.max.unwrap_or(MAX_SAFE));
            p(
                false,
                false,
                Some((min, max, true)),
                &format!("an integer from {} to {}", n(min), n(max)),
            )
        }
        "port" => {
            let min = info.min.unwrap_or(0.0);
            p(
                false,
                false,
                Some((min, 65535.0, true)),
                &format!("a port number (an integer from {} to 65535)", n(min)),
            )
        }
        "agent_list" => p(false, false, None, "a list of agent names"),
        "agent_overrides" => p(false, false, None, "an object of agent overrides"),
        _ => None,
    }
}

/// Whether PR105 reports `key == literal`: the literal can never equal a value of the key's type.
pub(crate) fn is_impossible_comparison(info: &KeyInfo, literal: &Value) -> bool {
    possible(info).is_some_and(|p| !can_equal(&p, info, literal))
}

fn can_equal(possible: &Possible, info: &KeyInfo, literal: &Value) -> bool {
    if info.default.strict_equals(literal) {
        return true;
    }
    match literal {
        Value::Bool(_) => possible.bools,
        Value::String(_) => possible.strings,
        Value::Number(x) => possible.numbers.is_some_and(|(min, max, integer)| {
            *x >= min && *x <= max && (!integer || x.trunc() == *x)
        }),
        _ => false,
    }
}

fn impossible(
    text: &str,
    marker: &Marker,
    info: &KeyInfo,
    op: Operator,
    literal_text: &str,
    literal: &Value,
    out: &mut FileDiagnostics,
) {
    let Some(possible) = possible(info) else {
        return;
    };
    if can_equal(&possible, info, literal) {
        return;
    }
    let span = offset_in(text, literal_text)
        .filter(|_| !literal_text.is_empty())
        .map_or(marker.condition(), |s| s..s + literal_text.len());
    let Some(d) = out.report(Code::ImpossibleComparison, Some(span)) else {
        return;
    };
    let outcome = match op {
        Operator::Equals => "never true",
        Operator::NotEquals => "always true",
    };
    let key = &info.name;
    let literal_shown = if literal_text.is_empty() {
        "an empty literal".to_owned()
    } else {
        format!("`{}`", excerpt(literal_text, 40))
    };
    d.message(format!(
        "`{key}` is {}, so `{} {}` is {outcome}",
        possible.described,
        op.as_str(),
        excerpt(literal_text, 40)
    ))
    .label(format!("{literal_shown} is {}", literal_kind(literal)))
    .maybe_help(impossible_help(&possible, key, literal_text, literal));
}

fn literal_kind(literal: &Value) -> String {
    match literal {
        Value::Bool(_) => "a boolean".to_owned(),
        Value::Null => "null, which no setting ever is".to_owned(),
        Value::Number(_) => "a number".to_owned(),
        Value::String(_) => "a string".to_owned(),
        other => other.type_name().to_owned(),
    }
}

fn impossible_help(
    possible: &Possible,
    key: &str,
    literal_text: &str,
    literal: &Value,
) -> Option<String> {
    if literal_text.starts_with('=') {
        return Some("`===` is not an operator: write `==`".to_owned());
    }
    if !possible.bools && !possible.strings && possible.numbers.is_none() {
        return Some(format!(
            "a list or object never equals a literal; test it bare: `{{{{IF:{key}}}}}` holds \
             when it is not empty"
        ));
    }
    let Value::String(s) = literal else {
        return None;
    };
    let unquoted = s.trim();
    if possible.bools {
        let lower = unquoted.to_ascii_lowercase();
        if matches!(lower.as_str(), "true" | "yes" | "on" | "1") {
            return Some(format!(
                "compare with an unquoted lower-case boolean, `{key} == true`, or test it bare: \
                 `{{{{IF:{key}}}}}`"
            ));
        }
        if matches!(lower.as_str(), "false" | "no" | "off" | "0") {
            return Some(format!(
                "compare with an unquoted lower-case boolean, `{key} == false`, or use \
                 `{{{{IFNOT:{key}}}}}`"
            ));
        }
    }
    if possible.numbers.is_some() {
        if let Ok(n) = unquoted.parse::<f64>() {
            if n.is_finite() {
                return Some(format!(
                    "write the number unquoted and without leading zeros or exponent: `{key} == {}`",
                    crate::value::js_number(n)
                ));
            }
        }
    }
    None
}

/// Checks `requires_setting: VALUE` (`value` is a subslice of `text`).
pub(crate) fn check_requires_setting(
    cx: &Context<'_>,
    text: &str,
    value: &str,
    out: &mut FileDiagnostics,
) {
    if cx.schema.contains(value) {
        return;
    }
    let span = offset_in(text, value).map(|s| s..s + value.len());
    let fix = match (&span, cx.sole_match(value, false)) {
        (Some(span), Some(to)) if !cx.is_feature(value) => Some(Fix::replace(
            span.clone(),
            to,
            format!("replace `{}` with `{to}`", excerpt(value, 60)),
        )),
        _ => None,
    };
    let Some(d) = out.report(Code::UnknownSettingKey, span) else {
        return;
    };
    if let Some(fix) = fix {
        d.fix(fix);
    }
    let help = if cx.is_feature(value) {
        Some(format!(
            "`{value}` is a feature predicate: gate on it with `requires: {value}`"
        ))
    } else if value.contains(|c: char| c.is_whitespace() || c == '=') {
        Some("`requires_setting` takes one settings key, tested for truthiness".to_owned())
    } else {
        cx.suggest_key(value)
    };
    d.message(format!(
        "unknown settings key `{}` in `requires_setting`",
        excerpt(value, 60)
    ))
    .label("not a settings key")
    .note("an unknown `requires_setting` key drops the file, always")
    .maybe_help(help);
}

/// Checks `requires: VALUE` (`value` is a subslice of `text`).
pub(crate) fn check_requires(cx: &Context<'_>, text: &str, value: &str, out: &mut FileDiagnostics) {
    if cx.is_feature(value) {
        return;
    }
    let span = offset_in(text, value).map(|s| s..s + value.len());
    let Some(d) = out.report(Code::UnknownFeature, span) else {
        return;
    };
    let help = if cx.schema.contains(value) {
        format!("`{value}` is a setting: gate on it with `requires_setting: {value}`")
    } else {
        match suggest::closest(value, cx.features.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("the feature predicates are {}", cx.feature_list()),
        }
    };
    d.message(format!(
        "unknown feature `{}` in `requires`",
        excerpt(value, 60)
    ))
    .label("not a feature predicate")
    .note("an unknown feature drops the file, always")
    .help(help);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::testing::{codes_of, schema};
    use crate::markers;

    fn check(cond_text: &str) -> Vec<(Code, Option<String>)> {
        let schema = schema();
        let cx = Context {
            schema: &schema,
            features: crate::lint::FEATURES,
            scoped: false,
        };
        let text = cond_text;
        let mut out = FileDiagnostics::new("x.md");
        for m in markers::scan(text).iter().filter(|m| m.is_opener()) {
            check_condition(&cx, text, m, &mut out);
        }
        out.finish(None)
            .into_iter()
            .map(|d| (d.code, d.help.map(String::from)))
            .collect()
    }

    #[test]
    fn condition_table() {
        use Code::*;
        // (text, expected codes)
        let cases: &[(&str, &[Code])] = &[
            ("{{IF:dco}}", &[]),
            ("{{IFNOT:coms_active}}", &[]),
            ("{{IF:external_ai_agents}}", &[]),
            ("{{IF:dco == true}}{{IF:dco != false}}", &[]),
            (
                "{{IF:commit_trailer == \"Assisted-by\"}}{{IF:commit_trailer == false}}",
                &[],
            ),
            (
                "{{IF:review_loop_max_cycles == 3}}{{IF:review_loop_max_cycles != 10}}",
                &[],
            ),
            (
                "{{IF:pidash_port == 19190}}{{IF:dream_interval_hours == 2.5}}",
                &[],
            ),
            ("{{IF:log_rules == debug}}{{IF:image_model == ''}}", &[]),
            ("{{IF:review_loop_enforcment}}", &[UnknownSettingKey]),
            ("{{IF:Use_worktrees == true}}", &[UnknownSettingKey]),
            ("{{IF: }}", &[MalformedCondition]),
            (
                "{{IF:a && b}}{{IF:!dco}}{{IF:d-co}}{{IF:dco = 1}}",
                &[MalformedCondition; 4],
            ),
            ("{{IF:coms_active == true}}", &[FeatureComparison]),
            (
                "{{IF:dco == yes}}{{IF:dco == \"true\"}}{{IF:dco == 1}}{{IF:dco == null}}",
                &[ImpossibleComparison; 4],
            ),
            (
                "{{IF:review_loop_max_cycles == \"3\"}}{{IF:review_loop_max_cycles == 03}}",
                &[ImpossibleComparison; 2],
            ),
            (
                "{{IF:review_loop_max_cycles == 20}}{{IF:review_loop_max_cycles == 2.5}}",
                &[ImpossibleComparison; 2],
            ),
            (
                "{{IF:image_model == 3}}{{IF:acpx_agents == claude}}{{IF:dco === true}}",
                &[ImpossibleComparison; 3],
            ),
            ("{{IF:commit_trailer == 1}}", &[ImpossibleComparison]),
        ];
        for (text, expected) in cases {
            assert_eq!(codes_of(&check(text)), *expected, "{text:?}");
        }
    }

    #[test]
    fn helps_table() {
        let cases = [
            (
                "{{IF:review_loop_enforcment}}",
                "did you mean `review_loop_enforcement`?",
            ),
            (
                "{{IF:coms_active == true}}",
                "test the feature bare: `{{IF:coms_active}}`",
            ),
            (
                "{{IF:coms_active == false}}",
                "test the feature bare: `{{IFNOT:coms_active}}`",
            ),
            (
                "{{IFNOT:coms_active != true}}",
                "test the feature bare: `{{IF:coms_active}}`",
            ),
            (
                "{{IF:dco === true}}",
                "`===` is not an operator: write `==`",
            ),
            (
                "{{IF:dco = true}}",
                "`=` is not an operator: write `dco == true`",
            ),
            ("{{IF:a{{IF:b}}", "the condition runs into another marker"),
            (
                "{{IF:review_loop_max_cycles == \"03\"}}",
                "`review_loop_max_cycles == 3`",
            ),
            ("{{IF:dco == yes}}", "`dco == true`"),
        ];
        for (text, help) in cases {
            let got = check(text);
            let h = got.first().and_then(|(_, h)| h.clone()).unwrap_or_default();
            assert!(h.contains(help), "{text:?}: {h:?}");
        }
    }
}
