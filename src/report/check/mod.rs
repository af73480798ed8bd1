//! `check`'s report: a lint [`Report`] rendered in one of five formats: `human` (a source
//! snippet with carets, in the style of codespan), `short` (`path:line:col: severity[CODE]:
//! message`), `json` (one object with stable field names), `sarif` (SARIF 2.1.0, for CI
//! annotations) and `github` (GitHub Actions workflow commands, one per finding); and
//! [`CheckRun`], a check with its format and colour.
//!
//! Spans are byte ranges; lines and columns (1-based, columns in characters) are computed here,
//! from the lines the report keeps of each file ([`SourceLines`]).

mod github;
mod human;
mod json;

pub use json::FORMAT_VERSION as JSON_FORMAT_VERSION;
mod sarif;
mod short;

use crate::terminal::Paint;
use pi_rules_core::lint::{Diagnostic, Report, Severity, SourceLines};
use pi_rules_host::check::{self, CheckOptions, CheckStatus};
use std::io::{self, Write};

/// An output format of `pi-rules check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Short,
    Json,
    Sarif,
    Github,
}

/// A check and how its report is shown.
pub struct CheckRun<'a> {
    /// What is checked.
    pub check: CheckOptions<'a>,
    pub format: Format,
    /// Colour the `human` and `short` formats.
    pub color: bool,
}

impl CheckRun<'_> {
    /// Writes `report` to `out` in the format and colour of this run.
    pub fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let color = self.color && matches!(self.format, Format::Human | Format::Short);
        render(report, self.format, color, out)
    }

    /// Runs the check and writes the report to `out`. A failed check or write is an error of
    /// the `io` kind, which the caller maps to exit code 4.
    pub fn run(&self, out: &mut dyn Write) -> io::Result<CheckStatus> {
        let report = check::check(&self.check).map_err(io::Error::other)?;
        self.render(&report, out)?;
        Ok(CheckStatus::of(&report, self.check.strict))
    }
}

/// Writes `report` to `out` in `format`. `color` applies to `human` and `short`.
pub fn render(report: &Report, format: Format, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let positions = Positions::new(report);
    match format {
        Format::Human => human::render(report, &positions, color, out),
        Format::Short => short::render(report, &positions, color, out),
        Format::Json => json::render(report, &positions, out),
        Format::Sarif => sarif::render(report, &positions, out),
        Format::Github => github::render(report, &positions, out),
    }
}

/// The styles of the human and short printers, painted with [`Paint`].
#[derive(Clone, Copy)]
pub(crate) struct Style {
    pub(crate) on: bool,
}

impl Style {
    pub(crate) fn paint(self, code: &str, text: &str) -> String {
        Paint { on: self.on }.paint(code, text).into_owned()
    }

    pub(crate) fn severity(self, severity: Severity, text: &str) -> String {
        self.paint(self.severity_code(severity), text)
    }

    /// The style code of `severity`.
    pub(crate) fn severity_code(self, severity: Severity) -> &'static str {
        match severity {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "1;36",
        }
    }

    /// Appends `text` in style `code` to `out`, as [`Style::paint`] would show it.
    pub(crate) fn push(self, out: &mut String, code: &str, text: &str) {
        if self.on {
            out.push_str("\x1b[");
            out.push_str(code);
            out.push('m');
            out.push_str(text);
            out.push_str("\x1b[0m");
        } else {
            out.push_str(text);
        }
    }

    pub(crate) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
}

/// A diagnostic's position: start and end, each as (line, column), 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

impl Position {
    const FILE: Position = Position {
        line: 1,
        column: 1,
        end_line: 1,
        end_column: 1,
    };
}

/// Lines and columns of the report's findings, from the lines the report keeps of each file
/// with findings that have a position (noted when the file was checked, while its text was at
/// hand).
pub(crate) struct Positions<'r> {
    report: &'r Report,
}

impl<'r> Positions<'r> {
    fn new(report: &'r Report) -> Self {
        Positions { report }
    }

    /// The kept lines of the file at `path`, when a finding of it has a position.
    pub(crate) fn lines(&self, path: &str) -> Option<SourceLines<'r>> {
        self.report.lines(path)
    }

    /// Where `d` starts and ends; a finding about a whole file is at 1:1.
    pub(crate) fn of(&self, d: &Diagnostic) -> Position {
        match &d.span {
            Some(_) => Self::within(self.lines(&d.path), d),
            None => Position::FILE,
        }
    }

    /// Where `d` starts and ends, in `lines`, its file's kept lines.
    pub(crate) fn within(lines: Option<SourceLines<'_>>, d: &Diagnostic) -> Position {
        let (Some(span), Some(lines)) = (&d.span, lines) else {
            return Position::FILE;
        };
        let start = lines.line_col(span.start);
        let end = lines.line_col(span.end);
        Position {
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        }
    }

    /// The 1-based (line, column) of byte `offset` in `lines`, or 1:1 without them.
    pub(crate) fn at(lines: Option<SourceLines<'_>>, offset: usize) -> (usize, usize) {
        lines.map_or((1, 1), |lines| {
            let p = lines.line_col(offset);
            (p.line, p.column)
        })
    }
}

/// The summary counts: (errors, warnings, infos).
pub(crate) fn counts(report: &Report) -> (usize, usize, usize) {
    use pi_rules_core::lint::Severity::*;
    (
        report.count(Error),
        report.count(Warning),
        report.count(Info),
    )
}
