//! `explain`'s JSON form (`docs/explain-json.md`), written from the report.
//!
//! Written by hand into one buffered writer, in `serde_json`'s compact form: each file and each
//! block has a record, and serialising them through `serde` escaped every key byte by byte. The
//! small sections (settings, features, placeholders, totals) go through `serde`.
//!
//! A file's `reason` and a block's `why` are the text form's words, escaped as the text form
//! shows them (the host's wording quotes keys, names and values raw and is given the escaper);
//! every other field from a file is raw.

use super::FORMAT_VERSION;
use crate::json::JsonWriter;
use crate::terminal::escape;
use pi_rules_core::frontmatter;
use pi_rules_core::lint::FEATURES;
use pi_rules_host::assembly::NameEntry;
use pi_rules_host::explain::*;
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::io::Write;

#[derive(Serialize)]
struct JsonSetting {
    /// The value as JSON (`null` for undefined).
    value: Box<RawValue>,
    source: String,
}

#[derive(Serialize)]
struct JsonFeature {
    value: bool,
    source: String,
}

#[derive(Serialize)]
struct JsonPlaceholder<'a> {
    name: &'static str,
    count: usize,
    value: &'a str,
    source: String,
}

#[derive(Serialize)]
struct JsonTotals {
    files: usize,
    included: usize,
    bytes: usize,
    tokens: usize,
    warnings: usize,
}

/// `true` or `false`.
fn json_bool(on: bool) -> &'static [u8] {
    if on {
        b"true"
    } else {
        b"false"
    }
}

/// Writes the report's JSON form to `out`.
pub fn write_json(report: &Explanation<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    Json(report).write_json(out)
}

/// The report, seen by this printer.
struct Json<'a, 'r>(&'a Explanation<'r>);

impl<'r> std::ops::Deref for Json<'_, 'r> {
    type Target = Explanation<'r>;

    fn deref(&self) -> &Explanation<'r> {
        self.0
    }
}

impl<'r> Json<'_, 'r> {
    /// Writes the JSON form (`docs/explain-json.md`) to `out` as one line.
    fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let run = self.run;
        let mut out = JsonWriter::new(out);
        out.raw(b"{\"format\":")?;
        out.uint(FORMAT_VERSION as usize)?;
        out.raw(b",\"cwd\":")?;
        out.string(&run.session.cwd.to_string_lossy())?;
        out.raw(b",\"subagent\":")?;
        out.raw(json_bool(run.loaded.is_none()))?;
        out.raw(b",\"fallback\":")?;
        out.raw(json_bool(run.loaded.as_ref().is_some_and(|l| l.fallback)))?;
        out.raw(b",\"block\":")?;
        out.string(run.block.appended())?;
        out.raw(b",\"settings_files\":")?;
        out.value(&run.settings_files)?;
        out.raw(b",\"settings\":")?;
        let settings: BTreeMap<&str, JsonSetting> = self
            .keys_read()
            .into_iter()
            .map(|key| {
                let json = self.settings.value(key).to_json();
                let setting = JsonSetting {
                    // Invariant: `to_json` writes valid JSON.
                    value: RawValue::from_string(json.unwrap_or_else(|| "null".to_owned()))
                        .unwrap_or_else(|_| RawValue::NULL.to_owned()),
                    source: escape(&self.settings.source(key)).into_owned(),
                };
                (key, setting)
            })
            .collect();
        out.value(&settings)?;
        out.raw(b",\"features\":")?;
        let features: BTreeMap<&str, JsonFeature> = FEATURES
            .iter()
            .map(|&name| {
                let feature = JsonFeature {
                    value: run.features.get(name).unwrap_or(false),
                    source: self.feature_source(name, escape),
                };
                (name, feature)
            })
            .collect();
        out.value(&features)?;
        out.raw(b",\"files\":[")?;
        let mut scratch = self.scratch.borrow_mut();
        for (i, entry) in self.names().enumerate() {
            if i > 0 {
                out.raw(b",")?;
            }
            self.write_json_file(&mut out, &entry, &mut scratch)?;
        }
        out.raw(b"],\"placeholders\":")?;
        out.value(&[JsonPlaceholder {
            name: "REVIEW_LOOP_MAX_CYCLES",
            count: run.assembly.as_ref().map_or(0, |a| a.placeholders),
            value: &run.review_loop_max_cycles,
            source: escape(&self.settings.source("review_loop_max_cycles")).into_owned(),
        }])?;
        out.raw(b",\"warnings\":[")?;
        for (i, message) in run.warning_messages().enumerate() {
            out.warning(i > 0, message)?;
        }
        out.raw(b"],\"notes\":")?;
        out.value(&run.loaded.as_ref().map_or(&[][..], |l| &l.notes[..]))?;
        out.raw(b",\"totals\":")?;
        out.value(&JsonTotals {
            files: self.names().count(),
            included: self.included_count(),
            bytes: self.block_bytes(),
            tokens: estimate_tokens(self.block_bytes()),
            warnings: self.warning_count(),
        })?;
        if let Some(scope) = &run.scope {
            out.raw(b",\"scope\":")?;
            out.value(&crate::report::scope::ScopeJson::new(scope))?;
        }
        out.raw(b"}")?;
        out.end_line()
    }

    /// Writes one file's record: the fields of `docs/explain-json.md`, in order.
    fn write_json_file<W: Write>(
        &self,
        out: &mut JsonWriter<W>,
        entry: &NameEntry<'r>,
        scratch: &mut Scratch<'r>,
    ) -> std::io::Result<()> {
        let name = entry.report.name.as_str();
        let winner = entry.report.winner();
        out.raw(b"{\"name\":")?;
        out.string(name)?;
        out.raw(b",\"layer\":")?;
        match winner {
            Some(w) => out.string(w.layer.as_str())?,
            None => out.raw(b"null")?,
        }
        out.raw(b",\"path\":")?;
        match winner {
            Some(w) => out.string(&w.display_path(name))?,
            None => out.raw(b"null")?,
        }
        out.raw(b",\"shadowed\":[")?;
        for (i, shadow) in entry.shadowed().enumerate() {
            out.raw(if i > 0 {
                b",{\"layer\":"
            } else {
                b"{\"layer\":"
            })?;
            out.string(shadow.layer.as_str())?;
            out.raw(b",\"path\":")?;
            out.string(&shadow.display_path(name))?;
            out.raw(b"}")?;
        }
        out.raw(b"],\"status\":")?;
        out.string(entry.status())?;
        out.raw(b",\"reason\":")?;
        scratch.line.clear();
        self.write_reason(entry, &mut scratch.line, escape);
        out.string(&scratch.line)?;
        let bytes = self.bytes_of(entry);
        out.raw(b",\"bytes\":")?;
        out.uint(bytes)?;
        out.raw(b",\"tokens\":")?;
        out.uint(estimate_tokens(bytes))?;
        if let Some(i) = entry.file {
            out.raw(b",\"body_start\":")?;
            out.uint(frontmatter::split(self.text_of(i)).body_start)?;
        }
        match (entry.file, entry.included) {
            (Some(i), Some(true)) => self.detail_into(i, scratch),
            _ => {
                scratch.blocks.clear();
                scratch.strays.clear();
            }
        }
        out.raw(b",\"blocks\":[")?;
        for (i, block) in scratch.blocks.iter().enumerate() {
            if i > 0 {
                out.raw(b",")?;
            }
            scratch.line.clear();
            self.write_why(block, &mut scratch.line, escape);
            self.write_json_block(out, block, &scratch.line)?;
        }
        out.raw(b"],\"stray_closers\":[")?;
        for (i, stray) in scratch.strays.iter().enumerate() {
            out.raw(if i > 0 { b",{\"line\":" } else { b"{\"line\":" })?;
            out.uint(stray.line)?;
            out.raw(b",\"column\":")?;
            out.uint(stray.column)?;
            out.raw(b",\"marker\":")?;
            out.string(stray.marker)?;
            out.raw(b",\"state\":\"kept-verbatim\"}")?;
        }
        out.raw(b"]}")
    }

    /// Writes one block's record, with `why` already put in words.
    fn write_json_block<W: Write>(
        &self,
        out: &mut JsonWriter<W>,
        block: &BlockView<'_>,
        why: &str,
    ) -> std::io::Result<()> {
        out.raw(b"{\"line\":")?;
        out.uint(block.line)?;
        out.raw(b",\"column\":")?;
        out.uint(block.column)?;
        out.raw(b",\"kind\":")?;
        out.string(block.kind.keyword())?;
        out.raw(b",\"condition\":")?;
        out.string(block.condition)?;
        out.raw(b",\"opener\":[")?;
        out.uint(block.opener.start)?;
        out.raw(b",")?;
        out.uint(block.opener.end)?;
        out.raw(b"]")?;
        if let Some(decided) = block.decided {
            let closer = decided.closer();
            out.raw(b",\"closer\":[")?;
            out.uint(closer.start)?;
            out.raw(b",")?;
            out.uint(closer.end)?;
            out.raw(b"]")?;
        }
        out.raw(b",\"depth\":")?;
        out.uint(block.depth)?;
        out.raw(b",\"state\":")?;
        out.string(block.state.as_str())?;
        out.raw(b",\"why\":")?;
        out.string(why)?;
        if let Some(decided) = block.decided {
            let names = &self.recorder.names;
            let (kind, key, field) = match &decided.reason {
                Reason::Feature { name, on } => ("feature", Some(*name), Some(("value", *on))),
                Reason::Truthy { key, truthy } => ("truthy", Some(*key), Some(("truthy", *truthy))),
                Reason::Compare { key, equal } => ("compare", Some(*key), Some(("equal", *equal))),
                Reason::UnknownKey { key } => ("unknown-key", Some(*key), None),
                Reason::Malformed => ("malformed", None, None),
            };
            out.raw(b",\"reason\":{\"kind\":")?;
            out.string(kind)?;
            if let Some(key) = key {
                out.raw(b",\"key\":")?;
                out.string(names.name(key))?;
            }
            if let Some((field, on)) = field {
                out.raw(b",\"")?;
                out.raw(field.as_bytes())?;
                out.raw(b"\":")?;
                out.raw(json_bool(on))?;
            }
            out.raw(b"}")?;
        }
        out.raw(b"}")
    }
}
