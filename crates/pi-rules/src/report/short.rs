//! `--format short`: one line per finding, `path:line:col: severity[CODE]: message`.

use super::Positions;
use pi_rules_core::lint::{visible, Report};
use std::io::{self, Write};

pub(super) fn render(
    report: &Report,
    positions: &Positions<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    for d in &report.diagnostics {
        let p = positions.of(d);
        writeln!(
            out,
            "{}:{}:{}: {}[{}]: {}",
            visible(&d.path),
            p.line,
            p.column,
            d.severity,
            d.code.id(),
            visible(&d.message)
        )?;
    }
    Ok(())
}
