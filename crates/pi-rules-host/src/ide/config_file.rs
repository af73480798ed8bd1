//! pi-rules' configuration file in the editor (`.pi/pi-rules.toml`, `~/.pi/agent/pi-rules.toml`):
//! completion of the sections, keys and values, and hover on a key (what it means, its
//! effective value and which file gives it).
//!
//! What a key means and which values it takes come from the file's JSON schema
//! ([`config::json_schema`]), so that the editor offers what `check` accepts. The text is read
//! line by line, the way TOML lays it out (headers, `key = value`, arrays over several lines);
//! any text and any offset gets an answer, never a panic.

use super::complete::{Completion, CompletionKind};
use super::hover::{code, HoverInfo};
use super::scan::clamp;
use super::{IdeContext, Symbol};
use crate::config::{self, Config, ConfigSource, LoadedConfig};
use pi_rules_core::lint::{self, CODES};
use serde_json::Value;
use std::fmt::Write as _;
use std::ops::Range;

/// The section headers, as the completion inserts them.
const SECTIONS: [&str; 5] = [
    "[rules]",
    "[check]",
    "[check.severity]",
    "[[check.per-path]]",
    "[export]",
];

/// A line's parts that matter here.
struct Line<'t> {
    /// Byte offset of the line in the text.
    start: usize,
    text: &'t str,
}

/// Where an offset is in the file.
#[derive(Debug, PartialEq, Eq)]
enum Spot {
    /// On a section header line, inside its brackets: the bytes a completion replaces.
    Header(Range<usize>),
    /// Where a key goes, in the table `table`; `replace` is the key typed so far.
    Key {
        table: Vec<String>,
        replace: Range<usize>,
    },
    /// In the value of the key `key` (its whole dotted path); `replace` is the item typed so far.
    Value {
        key: Vec<String>,
        replace: Range<usize>,
    },
}

/// The lines of `text`, each without its line break; an empty last one after a final line
/// break (or in an empty text).
fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut start = 0;
    let last = (text.is_empty() || text.ends_with('\n')).then_some(Line {
        start: text.len(),
        text: "",
    });
    text.split_inclusive('\n')
        .map(move |raw| {
            let line = Line {
                start,
                text: raw.trim_end_matches(['\n', '\r']),
            };
            start += raw.len();
            line
        })
        .chain(last)
}

/// The spot of `offset` in the value that starts at `from` (after a key's `=`) of the key
/// `key`: inside an inline table (`{ CODE = "` ...), its own key or value.
fn value_spot(text: &str, key: Vec<String>, from: usize, offset: usize, line_end: usize) -> Spot {
    let typed = &text[from..offset];
    let shape = code_of(typed);
    let mut key = key;
    let mut from = from;
    // The innermost inline table still open before the offset, if any.
    let mut open = None;
    let mut depth = 0i64;
    for (i, c) in shape.char_indices() {
        match c {
            '{' => {
                depth += 1;
                open = Some(i);
            }
            '}' => {
                depth -= 1;
                if depth <= 0 {
                    open = None;
                }
            }
            _ => {}
        }
    }
    if let (Some(_), Some(brace)) = (open, typed.rfind('{')) {
        let inner = &typed[brace + 1..];
        let part_at = inner.rfind(',').map_or(0, |i| i + 1);
        let part = &inner[part_at..];
        match part.find('=') {
            Some(eq) => {
                key.extend(dotted(&part[..eq]));
                from += brace + 1 + part_at + eq + 1;
            }
            None => {
                let start = item_start(text, from + brace + 1 + part_at, offset);
                return Spot::Key {
                    table: key,
                    replace: start..item_end(line_end, text, offset),
                };
            }
        }
    }
    let start = item_start(text, from, offset);
    Spot::Value {
        key,
        replace: start..item_end(line_end, text, offset),
    }
}

/// The dotted names of a key or header (`check.severity`, `"a.b".c`), unquoted.
fn dotted(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in key.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, '.') => parts.push(std::mem::take(&mut current).trim().to_owned()),
            (None, c) => current.push(c),
        }
    }
    parts.push(current.trim().to_owned());
    parts.retain(|p| !p.is_empty());
    parts
}

/// The table a header line names (`[check.severity]`, `[[check.per-path]]`), when it is one.
fn header(line: &str) -> Option<Vec<String>> {
    let inner = line.trim_start().strip_prefix('[')?;
    let inner = inner.strip_prefix('[').unwrap_or(inner);
    let end = inner.find(']').unwrap_or(inner.len());
    Some(dotted(&inner[..end]))
}

/// `text` with what is inside quotes and after a `#` left out, for counting brackets.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut quote = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => break,
            (None, c) => out.push(c),
        }
    }
    out
}

/// How many more `[`/`{` than `]`/`}` `text` opens (outside quotes and comments).
fn depth_change(text: &str) -> i64 {
    code_of(text)
        .chars()
        .map(|c| match c {
            '[' | '{' => 1,
            ']' | '}' => -1,
            _ => 0,
        })
        .sum()
}

/// The bytes of an item being typed that end at `offset`: back to a `[`, `,`, `=`, `{` or blank.
fn item_start(text: &str, from: usize, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let mut start = offset;
    while start > from && !matches!(bytes[start - 1], b'[' | b',' | b'=' | b'{' | b' ' | b'\t') {
        start -= 1;
    }
    start
}

/// The end of the item at `offset`: forward to a `,`, `]`, `}`, blank or the line's end, past a
/// closing quote.
fn item_end(line_end: usize, text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let mut end = offset;
    while end < line_end && !matches!(bytes[end], b',' | b']' | b'}' | b' ' | b'\t' | b'#') {
        end += 1;
    }
    end
}

/// Where `offset` is in `text`.
fn spot(text: &str, offset: usize) -> Option<Spot> {
    let mut table: Vec<String> = Vec::new();
    // The key whose value is still open (an array over several lines), and how deep.
    let mut open: Option<Vec<String>> = None;
    let mut depth: i64 = 0;
    for line in lines(text) {
        let end = line.start + line.text.len();
        let at_cursor = line.start <= offset && offset <= end;
        let before = &line.text[..if at_cursor {
            offset - line.start
        } else {
            line.text.len()
        }];
        if depth > 0 {
            if at_cursor {
                let start = item_start(text, line.start, offset);
                return open.map(|key| Spot::Value {
                    key,
                    replace: start..item_end(end, text, offset),
                });
            }
            depth += depth_change(line.text);
            if depth <= 0 {
                (open, depth) = (None, 0);
            }
            continue;
        }
        let trimmed = line.text.trim_start();
        if trimmed.starts_with('[') {
            if at_cursor {
                let from = line.start + (line.text.len() - trimmed.len());
                let to = end.max(offset);
                return Some(Spot::Header(from..to));
            }
            table = header(line.text).unwrap_or_default();
            continue;
        }
        if trimmed.starts_with('#') {
            if at_cursor {
                return None;
            }
            continue;
        }
        match code_of(before).find('=').map(|_| before.find('=')) {
            Some(Some(eq)) => {
                let mut key = table.clone();
                key.extend(dotted(&line.text[..eq]));
                if at_cursor {
                    return Some(value_spot(text, key, line.start + eq + 1, offset, end));
                }
                let change = depth_change(&line.text[eq + 1..]);
                if change > 0 {
                    (open, depth) = (Some(key), change);
                }
            }
            _ if at_cursor => {
                let start = item_start(text, line.start, offset);
                let end = item_end(end, text, offset);
                // `key =` later on the line: the key's bytes only.
                return Some(Spot::Key {
                    table,
                    replace: start..end,
                });
            }
            _ => {}
        }
    }
    None
}

/// The schema's node for `path` (tables, an array's items, `$ref`s followed).
fn node<'s>(schema: &'s Value, path: &[String]) -> Option<&'s Value> {
    let mut here = resolve(schema, schema);
    for part in path {
        if here.get("type") == Some(&Value::String("array".to_owned())) {
            here = resolve(schema, here.get("items")?);
        }
        here = match here.get("properties").and_then(|p| p.get(part.as_str())) {
            Some(next) => resolve(schema, next),
            None => match here.get("additionalProperties") {
                Some(next) if next.is_object() => resolve(schema, next),
                _ => return None,
            },
        };
    }
    if here.get("type") == Some(&Value::String("array".to_owned())) && path.is_empty() {
        return None;
    }
    Some(here)
}

/// `value`, or what its `$ref` (`#/$defs/NAME`) names.
fn resolve<'s>(schema: &'s Value, value: &'s Value) -> &'s Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix("#/")
            .map(|path| path.split('/').try_fold(schema, |v, part| v.get(part)))
            .and_then(|v| v)
            .unwrap_or(value),
        None => value,
    }
}

/// The values the schema allows at `node` (for an array, its items'): `true`/`false`, or the
/// strings of an `enum`, as TOML writes them.
fn values_of(schema: &Value, node: &Value) -> Vec<(String, Option<String>)> {
    let node = match node.get("items") {
        Some(items) => resolve(schema, items),
        None => node,
    };
    if node.get("type") == Some(&Value::String("boolean".to_owned())) {
        return vec![("true".to_owned(), None), ("false".to_owned(), None)];
    }
    let Some(options) = node.get("enum").and_then(Value::as_array) else {
        return Vec::new();
    };
    options
        .iter()
        .filter_map(Value::as_str)
        // Codes are offered by id; their names are the same codes.
        .filter(|v| !v.contains('-') || lint::lookup(v).is_none())
        .map(|v| {
            (
                format!("\"{v}\""),
                lint::lookup(v).map(|i| i.name.to_owned()),
            )
        })
        .collect()
}

/// The completions at `offset` of the configuration file `text`.
pub fn config_completions(text: &str, offset: usize) -> Vec<Completion> {
    let offset = clamp(text, offset);
    let schema = config::json_schema();
    let item = |label: &str, kind, detail: Option<String>, replace: &Range<usize>| Completion {
        label: label.to_owned(),
        kind,
        detail,
        documentation: None,
        replace: replace.clone(),
        insert: label.to_owned(),
    };
    match spot(text, offset) {
        Some(Spot::Header(replace)) => SECTIONS
            .iter()
            .map(|s| item(s, CompletionKind::Key, None, &replace))
            .collect(),
        Some(Spot::Key { table, replace }) => {
            if table.is_empty() {
                // Keys at the top belong in a section.
                return SECTIONS
                    .iter()
                    .map(|s| item(s, CompletionKind::Key, None, &replace))
                    .collect();
            }
            let Some(here) = node(&schema, &table) else {
                return Vec::new();
            };
            let here = match here.get("items") {
                Some(items) => resolve(&schema, items),
                None => here,
            };
            let mut found: Vec<Completion> = Vec::new();
            if let Some(properties) = here.get("properties").and_then(Value::as_object) {
                for (key, value) in properties {
                    let detail = value
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    found.push(item(key, CompletionKind::Key, detail, &replace));
                }
            } else if here.get("additionalProperties").is_some() {
                // A table of codes (`[check.severity]`).
                for info in CODES {
                    let mut c = item(
                        info.id,
                        CompletionKind::Key,
                        Some(info.name.to_owned()),
                        &replace,
                    );
                    c.documentation = Some(info.summary.to_owned());
                    found.push(c);
                }
            }
            found
        }
        Some(Spot::Value { key, replace }) => {
            let Some(here) = node(&schema, &key) else {
                return Vec::new();
            };
            values_of(&schema, here)
                .into_iter()
                .map(|(label, detail)| item(&label, CompletionKind::Value, detail, &replace))
                .collect()
        }
        None => Vec::new(),
    }
}

/// The key (its dotted path) and its bytes on the line at `offset`, when `offset` is on a key
/// or a header's name.
fn key_at(text: &str, offset: usize) -> Option<(Vec<String>, Range<usize>)> {
    let mut table: Vec<String> = Vec::new();
    let mut depth: i64 = 0;
    for line in lines(text) {
        let end = line.start + line.text.len();
        let at_cursor = line.start <= offset && offset < end.max(line.start + 1);
        if depth > 0 {
            depth += depth_change(line.text);
            if at_cursor {
                return None;
            }
            continue;
        }
        let trimmed = line.text.trim_start();
        let indent = line.text.len() - trimmed.len();
        if trimmed.starts_with('[') {
            table = header(line.text).unwrap_or_default();
            if at_cursor {
                let close = trimmed.rfind(']').map_or(trimmed.len(), |i| i + 1);
                let from = line.start + indent;
                return Some((table, from..from + close));
            }
            continue;
        }
        let Some(eq) = code_of(line.text).find('=').and(line.text.find('=')) else {
            continue;
        };
        if at_cursor {
            if offset >= line.start + eq {
                return None;
            }
            let raw = &line.text[..eq];
            let from = line.start + (raw.len() - raw.trim_start().len());
            let to = line.start + raw.trim_end().len();
            let mut key = table.clone();
            key.extend(dotted(raw));
            return Some((key, from..to));
        }
        depth = depth_change(&line.text[eq + 1..]).max(0);
    }
    None
}

/// The hover on a key or section header at `offset` of the configuration file `text`: what it
/// means, and its effective value with the file it comes from (the editor's text of both files
/// as they are now).
pub fn config_hover(ctx: &IdeContext, text: &str, offset: usize) -> Option<HoverInfo> {
    let offset = clamp(text, offset);
    let (key, range) = key_at(text, offset)?;
    let schema = config::json_schema();
    let here = node(&schema, &key)?;
    let loaded = Config::read(&ctx.session);
    let mut md = String::new();
    let dotted_key = key.join(".");
    let _ = write!(md, "{}", code(&dotted_key));
    // The entries of `[[check.per-path]]` have keys of their own: the path without the index.
    let code_key = key
        .last()
        .and_then(|k| lint::lookup(k))
        .filter(|_| key.len() >= 2 && key[key.len() - 2] == "severity");
    if let Some(info) = code_key {
        let _ = write!(
            md,
            " ({}, {} by default)\n\n{}",
            info.name,
            info.severity.as_str(),
            info.summary
        );
    } else if let Some(description) = here.get("description").and_then(Value::as_str) {
        let _ = write!(md, "\n\n{description}");
    }
    if let Some((value, source)) = effective(&loaded, &key) {
        let _ = write!(
            md,
            "\n\n**Now:** {value}, {}",
            describe_source(&loaded, source)
        );
    }
    Some(HoverInfo {
        range,
        markdown: md,
    })
}

/// Where a value comes from, in words: the file's path, or the default.
fn describe_source(loaded: &LoadedConfig, source: ConfigSource) -> String {
    match loaded
        .file(source)
        .filter(|_| source != ConfigSource::Default)
    {
        Some(file) => format!(
            "from the {} file ({})",
            source.as_str(),
            code(&file.path.display().to_string())
        ),
        None => "the default".to_owned(),
    }
}

/// The effective value of `key` (a dotted path) in words, and where it comes from.
fn effective(loaded: &LoadedConfig, key: &[String]) -> Option<(String, ConfigSource)> {
    let config = &loaded.config;
    let parts: Vec<&str> = key.iter().map(String::as_str).collect();
    let list = |items: Vec<&str>| {
        if items.is_empty() {
            "none".to_owned()
        } else {
            items.iter().map(|i| code(i)).collect::<Vec<_>>().join(", ")
        }
    };
    Some(match parts[..] {
        ["rules", "scoped"] => (
            code(&config.rules.scoped.to_string()),
            loaded.source("rules.scoped"),
        ),
        ["check", "ignore"] => (
            list(config.check.ignore.iter().map(|c| c.id()).collect()),
            loaded.source("check.ignore"),
        ),
        ["check", "severity"] => {
            let set: Vec<String> = (config.check.severity.iter())
                .map(|(c, level)| format!("{} = {}", c.id(), level.as_str()))
                .collect();
            let source = (config.check.severity.iter())
                .map(|(c, _)| loaded.source(&format!("check.severity.{}", c.id())))
                .max()
                .unwrap_or(ConfigSource::Default);
            (list(set.iter().map(String::as_str).collect()), source)
        }
        ["check", "severity", name] => {
            let info = lint::lookup(name)?;
            let id = info.id;
            match config.check.severity.iter().find(|(c, _)| c.id() == id) {
                Some((_, level)) => (
                    code(level.as_str()),
                    loaded.source(&format!("check.severity.{id}")),
                ),
                None => (code(info.severity.as_str()), ConfigSource::Default),
            }
        }
        ["check", "per-path", ..] => {
            let n = config.check.per_path.len();
            let words = match n {
                1 => "1 entry".to_owned(),
                n => format!("{n} entries"),
            };
            (words, loaded.source("check.per-path"))
        }
        ["export", "layers"] => (
            list(config.export.layers.iter().map(|l| l.as_str()).collect()),
            loaded.source("export.layers"),
        ),
        ["export", "targets"] => (
            list(config.export.targets.iter().map(String::as_str).collect()),
            loaded.source("export.targets"),
        ),
        ["export", "settings"] => (
            code(config.export.settings.map_or("project", |s| s.as_str())),
            loaded.source("export.settings"),
        ),
        ["export", "set", ..] => (
            list(config.export.set.iter().map(String::as_str).collect()),
            loaded.source("export.set"),
        ),
        _ => return None,
    })
}

/// The outline of the configuration file: its section headers, each over its lines up to the
/// next.
pub fn config_symbols(text: &str) -> Vec<Symbol> {
    let mut found: Vec<Symbol> = Vec::new();
    let mut depth: i64 = 0;
    for line in lines(text) {
        if depth > 0 {
            depth += depth_change(line.text);
            continue;
        }
        let trimmed = line.text.trim_start();
        if trimmed.starts_with('[') {
            let start = line.start + (line.text.len() - trimmed.len());
            let end = line.start + line.text.len();
            if let Some(last) = found.last_mut() {
                last.range.end = line.start;
            }
            found.push(Symbol {
                name: header(line.text).unwrap_or_default().join("."),
                detail: None,
                range: start..text.len(),
                selection: start..end,
                children: Vec::new(),
            });
        } else if let Some(eq) = code_of(line.text).find('=').and(line.text.find('=')) {
            depth = depth_change(&line.text[eq + 1..]).max(0);
        }
    }
    found
}

#[cfg(test)]
mod tests;
