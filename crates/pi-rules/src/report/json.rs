//! `--format json`: one object,
//! `{"diagnostics": [{"code", "severity", "path", "line", "column", "message", "help", "fix"}],
//! "summary": {"errors", "warnings", "infos", "files"}}`. The field names are stable; `help` and
//! `fix` are `null` when there is none; `line` and `column` are 1-based (columns in characters).
//! A `fix` is `{"description", "edits": [{"start", "end", "line", "column", "end_line",
//! "end_column", "replacement"}]}`, with `start` and `end` byte offsets into the file.

use super::{counts, Positions};
use pi_rules_core::lint::Report;
use serde_json::json;
use std::io::{self, Write};

pub(super) fn render(
    report: &Report,
    positions: &Positions<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let diagnostics: Vec<serde_json::Value> = report
        .diagnostics
        .iter()
        .map(|d| {
            let p = positions.of(d);
            json!({
                "code": d.code.id(),
                "severity": d.severity.as_str(),
                "path": d.path,
                "line": p.line,
                "column": p.column,
                "message": d.message,
                "help": d.help,
                "fix": d.fix.as_ref().map(|fix| {
                    let edits: Vec<serde_json::Value> = fix
                        .edits
                        .iter()
                        .map(|e| {
                            let (line, column) = positions.at(&d.path, e.span.start);
                            let (end_line, end_column) = positions.at(&d.path, e.span.end);
                            json!({
                                "start": e.span.start,
                                "end": e.span.end,
                                "line": line,
                                "column": column,
                                "end_line": end_line,
                                "end_column": end_column,
                                "replacement": e.replacement,
                            })
                        })
                        .collect();
                    json!({ "description": fix.description, "edits": edits })
                }),
            })
        })
        .collect();
    let (errors, warnings, infos) = counts(report);
    let value = json!({
        "diagnostics": diagnostics,
        "summary": {
            "errors": errors,
            "warnings": warnings,
            "infos": infos,
            "files": report.files,
        },
    });
    serde_json::to_writer(&mut *out, &value)?;
    writeln!(out)
}
