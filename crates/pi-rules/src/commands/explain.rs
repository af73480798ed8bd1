//! `pi-rules explain`: per file and per conditional block, what is in the rules block and why.
//!
//! The assembly runs once with an [`Observer`] that records every gate and block decision; the
//! report joins those decisions with the loader's per-name report, the settings sources and the
//! full list of markers of each file (so blocks inside dropped blocks, which are never evaluated,
//! are listed too).
//!
//! The JSON form is stable: see `docs/explain-json.md`. Token counts are estimates: one token per
//! four bytes of UTF-8, rounded up.

use crate::assembly::{self, Run};
use crate::invocation::Context;
use crate::invocation::{LayerArgs, OutputFormat};
use crate::loader::{Loaded, NameReport, Outcome, MAX_RULE_BYTES};
use crate::output::{output, Exit};
use anyhow::Result;
use pi_rules_core::event::{BlockDecision, BlockReason, GateDecision, GateReason};
use pi_rules_core::lint::suggest;
use pi_rules_core::markers::{self, BlockKind};
use pi_rules_core::span::line_col;
use pi_rules_core::{frontmatter, Observer, Value, WarningKind};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::ops::Range;

/// Estimated tokens for `bytes` bytes of text: one per four bytes, rounded up.
pub fn estimate_tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

/// Decisions recorded during the assembly, owned so the report can outlive it.
#[derive(Default)]
struct Recorder {
    /// One per assembled file, in file order (the engine decides every file's gate in turn).
    gates: Vec<Json>,
    /// (file, opener start) → (kept, reason as JSON).
    blocks: HashMap<(usize, usize), (bool, Range<usize>, Json)>,
}

impl Observer for Recorder {
    fn gate(&mut self, decision: &GateDecision<'_>) {
        let reason = |r: &GateReason<'_>| match r {
            GateReason::Setting { key, value } => {
                json!({"kind": "setting", "key": key, "value": to_json(value)})
            }
            GateReason::UnknownSetting { key } => json!({"kind": "unknown-setting", "key": key}),
            GateReason::Feature { name, on } => {
                json!({"kind": "feature", "name": name, "value": on})
            }
            GateReason::UnknownFeature { name } => {
                json!({"kind": "unknown-feature", "name": name})
            }
        };
        self.gates.push(json!({
            "file": decision.file,
            "included": decision.included,
            "requires_setting": decision.setting.as_ref().map(reason),
            "requires": decision.feature.as_ref().map(reason),
        }));
    }

    fn block(&mut self, decision: &BlockDecision<'_>) {
        let reason = match &decision.reason {
            BlockReason::Feature { name, on } => {
                json!({"kind": "feature", "key": name, "value": on})
            }
            BlockReason::Truthy { key, value } => json!({
                "kind": "truthy",
                "key": key,
                "value": to_json(value),
                "truthy": value.is_truthy(),
            }),
            BlockReason::Compare { key, equal, value } => {
                json!({"kind": "compare", "key": key, "value": to_json(value), "equal": equal})
            }
            BlockReason::UnknownKey { key } => json!({"kind": "unknown-key", "key": key}),
            BlockReason::Malformed => json!({"kind": "malformed"}),
        };
        self.blocks.insert(
            (decision.file, decision.opener.start),
            (decision.kept, decision.closer.clone(), reason),
        );
    }
}

/// A settings value as JSON (`undefined` becomes `null`).
fn to_json(value: &Value) -> Json {
    value
        .to_json()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Json::Null)
}

/// Explain, per file and per block, what is in the rules block and why.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules explain
  pi-rules explain --cwd ~/src/app --format json

Token counts are estimates: one token per four bytes of UTF-8, rounded up.")]
pub struct Args {
    #[command(flatten)]
    pub layers: LayerArgs,
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

/// The version of the JSON form, documented in `docs/explain-json.md`.
pub const FORMAT_VERSION: u32 = 1;

/// `pi-rules explain`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let mut recorder = Recorder::default();
    let run = assembly::run_args(&args.layers, cx, &mut recorder)?;
    let report = build_report(&run, &recorder);
    match args.format {
        OutputFormat::Json => output(writeln!(cx.out, "{report}"))?,
        OutputFormat::Text => {
            let text = render_text(&report, cx.color_out);
            output(cx.out.write_all(text.as_bytes()))?;
        }
    }
    Ok(Exit::Success)
}

/// The explain report as JSON (the stable form; the text form is drawn from it).
fn build_report(run: &Run, recorder: &Recorder) -> Json {
    let resolved = &run.resolved;
    let source = |key: &str| {
        resolved.get(key).map_or_else(
            || "unknown".to_owned(),
            |v| run.session.source_label(&v.source),
        )
    };
    let known: Vec<&str> = run.session.schema.names().collect();
    let features = json!({
        "coms_active": {"value": run.features.get("coms_active").unwrap_or(false), "source": "host flag --coms-active"},
        "external_ai_agents": {
            "value": run.features.get("external_ai_agents").unwrap_or(false),
            "source": format!(
                "acpx_agents ({}), cli_agents ({})",
                source("acpx_agents"),
                source("cli_agents")
            ),
        },
    });
    let warnings: Vec<String> = run
        .assembly
        .iter()
        .flat_map(|a| a.warnings.iter().map(|w| w.to_string()))
        .collect();
    let files = match &run.loaded {
        Some(loaded) => file_entries(loaded, run, recorder, &known, &source),
        None => Vec::new(),
    };
    let included: Vec<&Json> = files.iter().filter(|f| f["status"] == "included").collect();
    let bytes: usize = files
        .iter()
        .filter_map(|f| f["bytes"].as_u64())
        .sum::<u64>() as usize;
    json!({
        "cwd": run.session.cwd.display().to_string(),
        "subagent": run.loaded.is_none(),
        "fallback": run.loaded.as_ref().is_some_and(|l| l.fallback),
        "block": run.block,
        "features": features,
        "files": files,
        "placeholders": [{
            "name": "REVIEW_LOOP_MAX_CYCLES",
            "count": run.assembly.as_ref().map_or(0, |a| a.placeholders),
            "value": run.review_loop_max_cycles,
            "source": source("review_loop_max_cycles"),
        }],
        "warnings": warnings,
        "totals": {
            "files": files.len(),
            "included": included.len(),
            "bytes": bytes,
            "tokens": estimate_tokens(run.block.len()),
            "warnings": warnings.len(),
        },
    })
}

fn file_entries(
    loaded: &Loaded,
    run: &Run,
    recorder: &Recorder,
    known: &[&str],
    source: &dyn Fn(&str) -> String,
) -> Vec<Json> {
    let mut entries = Vec::new();
    for named in assembly::name_entries(loaded, run.assembly.as_ref()) {
        let report = named.report;
        let winner = report.winner();
        let shadowed: Vec<Json> = named
            .shadowed()
            .map(|c| json!({"layer": c.layer.as_str(), "path": c.display_path(&report.name)}))
            .collect();
        let gate = named.file.and_then(|i| recorder.gates.get(i));
        let mut entry = json!({
            "name": report.name,
            "layer": winner.map(|w| w.layer.as_str()),
            "path": winner.map(|w| w.display_path(&report.name)),
            "shadowed": shadowed,
            "status": named.status(),
            "reason": outcome_reason(report, gate, source),
            "bytes": 0,
            "tokens": 0,
            "blocks": [],
            "stray_closers": [],
        });
        if let (Some(i), Some(assembly)) = (named.file, run.assembly.as_ref()) {
            let bytes = assembly.contributed.get(i).copied().unwrap_or(0);
            entry["bytes"] = json!(bytes);
            entry["tokens"] = json!(estimate_tokens(bytes));
            let text = &loaded.files[i].text;
            let body_start = frontmatter::split(text).body_start;
            entry["body_start"] = json!(body_start);
            if named.included == Some(true) {
                let (blocks, strays) = blocks(i, text, body_start, run, recorder, known, source);
                entry["blocks"] = Json::Array(blocks);
                entry["stray_closers"] = Json::Array(strays);
            }
        }
        entries.push(entry);
    }
    entries
}

/// The reason for a file's status, in words.
fn outcome_reason(
    report: &NameReport,
    gate: Option<&Json>,
    source: &dyn Fn(&str) -> String,
) -> String {
    let layer_list = |c: &[crate::loader::Candidate]| {
        c.iter()
            .map(|c| c.layer.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &report.outcome {
        Outcome::Oversized {
            size,
            hides,
            winner,
            ..
        } => {
            let hidden = if hides.is_empty() {
                String::new()
            } else {
                format!(", hiding the {} copy", layer_list(hides))
            };
            format!(
                "oversized at {size} bytes (limit {MAX_RULE_BYTES}) in the {} layer{hidden}",
                winner.layer
            )
        }
        Outcome::Unreadable { failures } => {
            let reasons: Vec<String> = failures
                .iter()
                .map(|f| format!("{}: {}", f.candidate.layer, f.reason))
                .collect();
            format!("unreadable in every layer ({})", reasons.join("; "))
        }
        Outcome::Taken {
            masked: true,
            shadows,
            ..
        } => format!(
            "masked: an empty link to a device hides the {} copy",
            if shadows.is_empty() {
                "(no)".to_owned()
            } else {
                layer_list(shadows)
            }
        ),
        Outcome::Taken {
            fell_back_from,
            winner,
            ..
        } => {
            let mut parts = Vec::new();
            if !fell_back_from.is_empty() {
                let failed: Vec<String> = fell_back_from
                    .iter()
                    .map(|f| format!("{} copy unreadable ({})", f.candidate.layer, f.reason))
                    .collect();
                parts.push(format!(
                    "{}, fell back to {}",
                    failed.join("; "),
                    winner.layer
                ));
            }
            parts.push(gate.map_or_else(|| "included".to_owned(), |g| gate_reason(g, source)));
            parts.join("; ")
        }
    }
}

fn gate_reason(gate: &Json, source: &dyn Fn(&str) -> String) -> String {
    let mut parts = Vec::new();
    for field in ["requires_setting", "requires"] {
        let r = &gate[field];
        let text = match r["kind"].as_str() {
            Some("setting") => {
                let key = r["key"].as_str().unwrap_or_default();
                format!(
                    "requires_setting: {key} = {} from {}",
                    r["value"],
                    source(key)
                )
            }
            Some("unknown-setting") => format!(
                "requires_setting: {} is not a settings key",
                r["key"].as_str().unwrap_or_default()
            ),
            Some("feature") => format!(
                "requires: {} is {}",
                r["name"].as_str().unwrap_or_default(),
                if r["value"] == true { "on" } else { "off" }
            ),
            Some("unknown-feature") => format!(
                "requires: {} is not a feature predicate",
                r["name"].as_str().unwrap_or_default()
            ),
            _ => continue,
        };
        parts.push(text);
    }
    let verdict = if gate["included"] == true {
        "included"
    } else {
        "gated"
    };
    if parts.is_empty() {
        format!("{verdict} (no frontmatter gate)")
    } else {
        format!("{verdict} ({})", parts.join(", "))
    }
}

/// Every block of an included file's body, in order, with its state; and the stray closers.
fn blocks(
    file: usize,
    text: &str,
    body_start: usize,
    run: &Run,
    recorder: &Recorder,
    known: &[&str],
    source: &dyn Fn(&str) -> String,
) -> (Vec<Json>, Vec<Json>) {
    let warnings = run.assembly.as_ref().map_or(&[][..], |a| &a.warnings[..]);
    let unbalanced_at = warnings.iter().find_map(|w| match w.kind {
        WarningKind::Unbalanced { .. } if w.file == file => Some(w.span.start),
        _ => None,
    });
    let strays: Vec<Json> = warnings
        .iter()
        .filter(|w| w.file == file && matches!(w.kind, WarningKind::StrayCloser { .. }))
        .map(|w| {
            let at = line_col(text, w.span.start);
            json!({"line": at.line, "column": at.column, "marker": &text[w.span.clone()],
                   "state": "kept-verbatim"})
        })
        .collect();
    // Closers of every block, nested ones in dropped blocks included, for the nesting depth.
    let found = markers::scan(&text[body_start..]);
    let mut closer_of = vec![None; found.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, marker) in found.iter().enumerate() {
        if !marker.closer {
            open.push(i);
        } else if open.last().is_some_and(|&o| found[o].kind == marker.kind) {
            if let Some(o) = open.pop() {
                closer_of[o] = Some(found[i].span.end + body_start);
            }
        } else {
            open.clear();
        }
    }
    // Enclosing blocks: (closer end, dropped block's line:col if dropped) for depth and "inside".
    let mut stack: Vec<(usize, Option<String>)> = Vec::new();
    let mut out = Vec::new();
    for (i, marker) in found.iter().enumerate() {
        if marker.closer {
            continue;
        }
        let start = marker.span.start + body_start;
        let end = marker.span.end + body_start;
        while stack.last().is_some_and(|(close, _)| *close <= start) {
            stack.pop();
        }
        let at = line_col(text, start);
        let condition =
            &text[marker.condition.start + body_start..marker.condition.end + body_start];
        let mut entry = json!({
            "line": at.line,
            "column": at.column,
            "kind": marker.kind.keyword(),
            "condition": condition,
            "opener": [start, end],
            "depth": stack.len(),
        });
        if let Some((kept, closer, reason)) = recorder.blocks.get(&(file, start)) {
            entry["state"] = json!(if *kept { "kept" } else { "dropped" });
            entry["closer"] = json!([closer.start, closer.end]);
            let why = block_reason(marker.kind, *kept, reason, known, source);
            entry["why"] = json!(why);
            entry["reason"] = reason.clone();
            if let Some(key) = reason["key"].as_str() {
                if reason["kind"] != "feature" && reason["kind"] != "unknown-key" {
                    entry["source"] = json!(source(key));
                }
            }
            let dropped = (!*kept).then(|| format!("{}:{}", at.line, at.column));
            stack.push((closer.end, dropped));
        } else if unbalanced_at == Some(start) {
            entry["state"] = json!("unbalanced");
            entry["why"] =
                json!("no matching closer: this marker and the rest of the file are kept verbatim");
        } else if unbalanced_at.is_some_and(|u| u < start) {
            entry["state"] = json!("leaked");
            entry["why"] = json!("after an unbalanced opener: kept verbatim, never evaluated");
        } else {
            let parent = stack.iter().rev().find_map(|(_, dropped)| dropped.as_ref());
            entry["state"] = json!("not-evaluated");
            entry["why"] = json!(parent.map_or_else(
                || "not reached".to_owned(),
                |p| format!("inside the dropped block at {p}")
            ));
            if let Some(close) = closer_of[i] {
                stack.push((close, None));
            }
        }
        out.push(entry);
    }
    (out, strays)
}

/// Why a block was kept or dropped, in words.
fn block_reason(
    kind: BlockKind,
    kept: bool,
    reason: &Json,
    known: &[&str],
    source: &dyn Fn(&str) -> String,
) -> String {
    let key = reason["key"].as_str().unwrap_or_default();
    let invert = if kind == BlockKind::IfNot {
        ", inverted by IFNOT"
    } else {
        ""
    };
    match reason["kind"].as_str() {
        Some("feature") => format!(
            "feature `{key}` is {}{invert}",
            if reason["value"] == true { "on" } else { "off" }
        ),
        Some("truthy") => format!(
            "`{key}` = {} from {} is {}{invert}",
            reason["value"],
            source(key),
            if reason["truthy"] == true {
                "truthy"
            } else {
                "falsy"
            }
        ),
        Some("compare") => format!(
            "`{key}` = {} from {}: the comparison is {}{invert}",
            reason["value"],
            source(key),
            if kept != (kind == BlockKind::IfNot) {
                "true"
            } else {
                "false"
            }
        ),
        Some("unknown-key") => {
            let hint = suggest::closest(key, known.iter().copied())
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            format!("`{key}` is neither a settings key nor a feature: fails closed{hint}")
        }
        _ => "malformed condition: fails closed".to_owned(),
    }
}

/// The text form: a tree per file, coloured when `colour`.
fn render_text(report: &Json, colour: bool) -> String {
    let paint = |code: &str, text: &str| {
        if colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    };
    let state_colour = |state: &str| match state {
        "included" | "kept" => "32",
        "gated" | "dropped" | "masked" => "31",
        "unbalanced" | "leaked" | "oversized" | "unreadable" | "unreadable-fell-back" => "33",
        _ => "2",
    };
    let mut out = String::new();
    let push = |out: &mut String, line: String| {
        out.push_str(&line);
        out.push('\n');
    };
    push(
        &mut out,
        paint(
            "1",
            &format!("rules for {}", report["cwd"].as_str().unwrap_or("")),
        ),
    );
    if report["subagent"] == true {
        push(
            &mut out,
            "PI_SUBAGENT_CHILD=1: a subagent gets no rules block".to_owned(),
        );
        return out;
    }
    for (name, f) in report["features"].as_object().into_iter().flatten() {
        push(
            &mut out,
            format!(
                "feature {name} = {} ({})",
                f["value"],
                f["source"].as_str().unwrap_or("")
            ),
        );
    }
    if report["fallback"] == true {
        push(
            &mut out,
            paint(
                "33",
                "no rule file could be taken: the fallback line is used",
            ),
        );
    }
    let files = report["files"].as_array().map_or(&[][..], |v| &v[..]);
    for (i, file) in files.iter().enumerate() {
        let last_file = i + 1 == files.len();
        let status = file["status"].as_str().unwrap_or("");
        push(
            &mut out,
            format!(
                "{} {}  {}  {} {}  {} B ~{} tokens",
                if last_file { "└─" } else { "├─" },
                paint("1", file["name"].as_str().unwrap_or("")),
                paint(state_colour(status), status),
                file["layer"].as_str().unwrap_or("-"),
                file["path"].as_str().unwrap_or(""),
                file["bytes"],
                file["tokens"],
            ),
        );
        let bar = if last_file { "   " } else { "│  " };
        push(
            &mut out,
            format!("{bar}  {}", file["reason"].as_str().unwrap_or("")),
        );
        for shadow in file["shadowed"].as_array().into_iter().flatten() {
            push(
                &mut out,
                format!(
                    "{bar}  shadows {} {}",
                    shadow["layer"].as_str().unwrap_or(""),
                    shadow["path"].as_str().unwrap_or("")
                ),
            );
        }
        for block in file["blocks"].as_array().into_iter().flatten() {
            let depth = block["depth"].as_u64().unwrap_or(0) as usize;
            let state = block["state"].as_str().unwrap_or("");
            push(
                &mut out,
                format!(
                    "{bar}  {}{}:{} {{{{{}:{}}}}} {}: {}",
                    "  ".repeat(depth),
                    block["line"],
                    block["column"],
                    block["kind"].as_str().unwrap_or(""),
                    block["condition"]
                        .as_str()
                        .unwrap_or("")
                        .replace('\n', "\\n"),
                    paint(state_colour(state), state),
                    block["why"].as_str().unwrap_or(""),
                ),
            );
        }
        for stray in file["stray_closers"].as_array().into_iter().flatten() {
            push(
                &mut out,
                format!(
                    "{bar}  {}:{} {} {}",
                    stray["line"],
                    stray["column"],
                    stray["marker"].as_str().unwrap_or(""),
                    paint("33", "stray closer, kept verbatim"),
                ),
            );
        }
    }
    for p in report["placeholders"].as_array().into_iter().flatten() {
        push(
            &mut out,
            format!(
                "placeholder {{{{{}}}}} x{} -> {} ({})",
                p["name"].as_str().unwrap_or(""),
                p["count"],
                p["value"].as_str().unwrap_or(""),
                p["source"].as_str().unwrap_or("")
            ),
        );
    }
    for w in report["warnings"].as_array().into_iter().flatten() {
        push(
            &mut out,
            paint("33", &format!("warning: {}", w.as_str().unwrap_or(""))),
        );
    }
    let t = &report["totals"];
    push(
        &mut out,
        format!(
            "total: {} of {} files included, {} bytes, ~{} tokens, {} warnings",
            t["included"], t["files"], t["bytes"], t["tokens"], t["warnings"]
        ),
    );
    out
}
