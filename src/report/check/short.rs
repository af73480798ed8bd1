//! `--format short`: one line per finding, `path:line:col: severity[CODE]: message`.

use super::{Positions, Style};
use crate::terminal::escape_hidden;
use pi_rules_core::lint::Report;
use std::io::{self, Write};

pub(super) fn render(
    report: &Report,
    positions: &Positions<'_>,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let style = Style { on: color };
    for d in &report.diagnostics {
        let p = positions.of(d);
        let place = format!("{}:{}:{}:", escape_hidden(&d.path), p.line, p.column);
        let severity = format!("{}[{}]:", d.severity, d.code.id());
        writeln!(
            out,
            "{} {} {}",
            style.bold(&place),
            style.severity(d.severity, &severity),
            escape_hidden(&d.message)
        )?;
    }
    Ok(())
}
