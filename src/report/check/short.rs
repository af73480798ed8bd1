//! `--format short`: one line per finding, `path:line:col: severity[CODE]: message`.

use super::{Positions, Style};
use pi_rules_core::lint::{visible, Report};
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
        let place = format!("{}:{}:{}:", visible(&d.path), p.line, p.column);
        let severity = format!("{}[{}]:", d.severity, d.code.id());
        writeln!(
            out,
            "{} {} {}",
            style.bold(&place),
            style.severity(d.severity, &severity),
            visible(&d.message)
        )?;
    }
    Ok(())
}
