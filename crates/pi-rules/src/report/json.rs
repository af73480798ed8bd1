//! `--format json`: one object,
//! `{"diagnostics": [{"code", "severity", "path", "line", "column", "message", "help"}],
//! "summary": {"errors", "warnings", "infos", "files"}}`. The field names are stable; `help` is
//! `null` when there is none; `line` and `column` are 1-based (columns in characters).

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
