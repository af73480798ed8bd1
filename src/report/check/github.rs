//! `--format github`: one GitHub Actions workflow command per finding, which the runner turns
//! into an annotation on the file and lines it names:
//! `::error file=PATH,line=L,col=C,endLine=L,endColumn=C,title=CODE::message`. `::warning` and
//! `::notice` carry the other severities. A finding about a whole file names the file alone.
//!
//! The path and the message are escaped for a reader first, as `short` shows them (control,
//! bidirectional and hidden characters written out), then for the runner: in the message,
//! `%`, CR and LF become `%25`, `%0D` and `%0A`; in a property value, `:` and `,` also become
//! `%3A` and `%2C`, since they would end the value. The runner decodes them again, so a path
//! with a comma still names its file. The message carries the help on a second line.

use super::Positions;
use crate::terminal::escape_hidden;
use pi_rules_core::lint::{Diagnostic, Report, Severity};
use std::io::{self, Write};

/// The workflow command of `severity`.
fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

/// Appends `text` to `out` as the runner reads a command's message: `%`, CR and LF
/// percent-encoded.
fn push_data(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
}

/// Appends `text` to `out` as the runner reads a property value: as [`push_data`], and `:` and
/// `,`, which end a value, percent-encoded too.
fn push_property(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            c => out.push(c),
        }
    }
}

/// The workflow command of one finding, without its line break.
fn line(d: &Diagnostic, positions: &Positions<'_>) -> String {
    let mut out = String::with_capacity(d.path.len() + d.message.len() + 64);
    out.push_str("::");
    out.push_str(command(d.severity));
    out.push_str(" file=");
    push_property(&mut out, &escape_hidden(&d.path));
    if d.span.is_some() && positions.lines(&d.path).is_some() {
        let p = positions.of(d);
        out.push_str(&format!(
            ",line={},col={},endLine={},endColumn={}",
            p.line, p.column, p.end_line, p.end_column
        ));
    }
    out.push_str(",title=");
    push_property(&mut out, d.code.id());
    out.push_str("::");
    push_data(&mut out, &escape_hidden(&d.message));
    if let Some(help) = &d.help {
        push_data(&mut out, "\nhelp: ");
        push_data(&mut out, &escape_hidden(help));
    }
    out
}

pub(super) fn render(
    report: &Report,
    positions: &Positions<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    for d in &report.diagnostics {
        writeln!(out, "{}", line(d, positions))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_table() {
        // (text, as data, as a property value)
        let cases = [
            ("plain text", "plain text", "plain text"),
            ("100%", "100%25", "100%25"),
            ("%0A", "%250A", "%250A"),
            ("a\nb", "a%0Ab", "a%0Ab"),
            ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
            ("a:b,c", "a:b,c", "a%3Ab%2Cc"),
            ("::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"),
            ("é, ü", "é, ü", "é%2C ü"),
        ];
        for (text, data, property) in cases {
            let mut out = String::new();
            push_data(&mut out, text);
            assert_eq!(out, data, "data of {text:?}");
            let mut out = String::new();
            push_property(&mut out, text);
            assert_eq!(out, property, "property of {text:?}");
        }
    }
}
