//! `--format json`: one object on one line, written as it is built (see `docs/check-json.md`):
//! `{"format", "diagnostics": [{"code", "severity", "path", "line", "column", "message", "help",
//! "fix"}], "summary": {"errors", "warnings", "infos", "files"}}`. The field names are stable;
//! `help` and `fix` are `null` when there is none; `line` and `column` are 1-based (columns in
//! characters). A `fix` is `{"description", "edits": [{"start", "end", "line", "column",
//! "end_line", "end_column", "replacement"}]}`, with `start` and `end` byte offsets into the file.

use super::{counts, Positions};
use crate::json::{self, Seq};
use pi_rules_core::lint::{Diagnostic, Report};
use serde::Serialize;
use std::io::{self, Write};

/// The version of this form.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
#[serde(bound = "")]
struct JsonReport<'a, I: Iterator<Item = JsonDiagnostic<'a>>> {
    format: u32,
    diagnostics: Seq<I>,
    summary: Summary,
}

#[derive(Serialize)]
struct Summary {
    errors: usize,
    warnings: usize,
    infos: usize,
    files: usize,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'static str,
    severity: &'static str,
    path: &'a str,
    line: usize,
    column: usize,
    message: &'a str,
    help: Option<&'a str>,
    fix: Option<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    description: &'a str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    start: usize,
    end: usize,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    replacement: &'a str,
}

fn diagnostic<'a>(d: &'a Diagnostic, positions: &Positions<'_>) -> JsonDiagnostic<'a> {
    let lines = positions.lines(&d.path);
    let p = Positions::within(lines, d);
    JsonDiagnostic {
        code: d.code.id(),
        severity: d.severity.as_str(),
        path: &d.path,
        line: p.line,
        column: p.column,
        message: &d.message,
        help: d.help.as_deref(),
        fix: d.fix.as_ref().map(|fix| JsonFix {
            description: &fix.description,
            edits: fix
                .edits
                .iter()
                .map(|e| {
                    // Edits have positions even when the finding has none.
                    let (line, column) = Positions::at(lines, e.span.start);
                    let (end_line, end_column) = Positions::at(lines, e.span.end);
                    JsonEdit {
                        start: e.span.start,
                        end: e.span.end,
                        line,
                        column,
                        end_line,
                        end_column,
                        replacement: &e.replacement,
                    }
                })
                .collect(),
        }),
    }
}

pub(super) fn render(
    report: &Report,
    positions: &Positions<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (errors, warnings, infos) = counts(report);
    let report_json = JsonReport {
        format: FORMAT_VERSION,
        diagnostics: Seq::new(report.diagnostics.iter().map(|d| diagnostic(d, positions))),
        summary: Summary {
            errors,
            warnings,
            infos,
            files: report.files,
        },
    };
    json::write_line(out, &report_json)
}
