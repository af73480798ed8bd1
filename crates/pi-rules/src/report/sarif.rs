//! `--format sarif`: a SARIF 2.1.0 log with one run. The driver lists every code as a rule
//! (id, name, short and full description, default level); each finding is a result with its rule,
//! level, message and location. Columns are Unicode code points (`columnKind`).

use super::Positions;
use pi_rules_core::lint::{Report, Severity, CODES};
use serde_json::{json, Value};
use std::io::{self, Write};

/// The schema URI of SARIF 2.1.0 (OASIS errata 01).
pub const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A path as a URI reference: an absolute path becomes a `file://` URI; everything outside the
/// unreserved characters and `/` is percent-encoded.
pub(crate) fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub(super) fn render(
    report: &Report,
    positions: &Positions<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let rules: Vec<Value> = CODES
        .iter()
        .map(|info| {
            json!({
                "id": info.id,
                "name": info.name,
                "shortDescription": { "text": info.summary },
                "fullDescription": { "text": info.explanation },
                "defaultConfiguration": { "level": level(info.severity) },
            })
        })
        .collect();
    let results: Vec<Value> = report
        .diagnostics
        .iter()
        .map(|d| {
            let text = match &d.help {
                Some(help) => format!("{}\nhelp: {help}", d.message),
                None => d.message.to_string(),
            };
            let mut physical = json!({ "artifactLocation": { "uri": uri(&d.path) } });
            let index = positions.index(&d.path);
            if let (Some(_), Some(index)) = (&d.span, &index) {
                let p = Positions::within(Some(index), d);
                physical["region"] = json!({
                    "startLine": p.line,
                    "startColumn": p.column,
                    "endLine": p.end_line,
                    "endColumn": p.end_column,
                });
            }
            let fixes: Vec<Value> = d
                .fix
                .iter()
                .map(|fix| {
                    let replacements: Vec<Value> = fix
                        .edits
                        .iter()
                        .map(|e| {
                            let (start_line, start_column) =
                                Positions::at(index.as_ref(), e.span.start);
                            let (end_line, end_column) = Positions::at(index.as_ref(), e.span.end);
                            json!({
                                "deletedRegion": {
                                    "startLine": start_line,
                                    "startColumn": start_column,
                                    "endLine": end_line,
                                    "endColumn": end_column,
                                },
                                "insertedContent": { "text": e.replacement },
                            })
                        })
                        .collect();
                    json!({
                        "description": { "text": fix.description },
                        "artifactChanges": [ {
                            "artifactLocation": { "uri": uri(&d.path) },
                            "replacements": replacements,
                        } ],
                    })
                })
                .collect();
            let mut result = json!({
                "ruleId": d.code.id(),
                "ruleIndex": d.code as usize,
                "level": level(d.severity),
                "message": { "text": text },
                "locations": [ { "physicalLocation": physical } ],
            });
            if !fixes.is_empty() {
                result["fixes"] = Value::Array(fixes);
            }
            result
        })
        .collect();
    let log = json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [ {
            "tool": { "driver": {
                "name": "pi-rules",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        } ],
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_table() {
        let cases = [
            (".pi/rules/90-x.md", ".pi/rules/90-x.md"),
            ("/home/u/.pi/a b.md", "file:///home/u/.pi/a%20b.md"),
            ("<embedded>/00-a.md", "%3Cembedded%3E/00-a.md"),
            ("é.md", "%C3%A9.md"),
        ];
        for (path, expected) in cases {
            assert_eq!(uri(path), expected);
        }
    }
}
