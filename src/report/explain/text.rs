//! `explain`'s text form: a tree, one file at a time, everything from files and settings
//! escaped for the terminal.

use crate::terminal::Paint;
use crate::terminal::{escape, escape_truncated};
use pi_rules_core::lint::FEATURES;
use pi_rules_host::assembly::NameEntry;
use pi_rules_host::explain::*;
use std::fmt::Write as _;
use std::io::Write;

fn state_colour(state: &str) -> &'static str {
    match state {
        "included" | "kept" => "32",
        "gated" | "dropped" | "masked" => "31",
        "unbalanced" | "leaked" | "oversized" | "unreadable" | "unreadable-fell-back" => "33",
        _ => "2",
    }
}

/// Writes the report's text form to `out`.
pub fn write_text(
    report: &Explanation<'_>,
    out: &mut dyn Write,
    paint: Paint,
) -> std::io::Result<()> {
    Text(report).write_text(out, paint)
}

/// The report, seen by this printer.
struct Text<'a, 'r>(&'a Explanation<'r>);

impl<'r> std::ops::Deref for Text<'_, 'r> {
    type Target = Explanation<'r>;

    fn deref(&self) -> &Explanation<'r> {
        self.0
    }
}

impl<'r> Text<'_, 'r> {
    /// Writes the text tree to `out`, one file at a time.
    fn write_text(&self, out: &mut dyn Write, paint: Paint) -> std::io::Result<()> {
        let run = self.run;
        let cwd = format!(
            "rules for {}",
            escape(&run.session.cwd.display().to_string())
        );
        writeln!(out, "{}", paint.paint("1", &cwd))?;
        if run.loaded.is_none() {
            return writeln!(out, "PI_SUBAGENT_CHILD=1: a subagent gets no rules block");
        }
        for state in &run.settings_files {
            writeln!(
                out,
                "settings {} {}: {}",
                state.scope,
                escape(&state.path),
                state.state
            )?;
        }
        for &name in FEATURES {
            let on = run.features.get(name).unwrap_or(false);
            writeln!(
                out,
                "feature {name} = {on} ({})",
                self.feature_source(name, escape)
            )?;
        }
        if run.loaded.as_ref().is_some_and(|l| l.fallback) {
            let line = "no rule file could be taken: the fallback line is used";
            writeln!(out, "{}", paint.paint("33", line))?;
        }
        let total = self.names().count();
        let mut scratch = self.scratch.borrow_mut();
        for (i, entry) in self.names().enumerate() {
            self.write_file(out, paint, &entry, i + 1 == total, &mut scratch)?;
        }
        let count = run.assembly.as_ref().map_or(0, |a| a.placeholders);
        writeln!(
            out,
            "placeholder {{{{REVIEW_LOOP_MAX_CYCLES}}}} x{count} -> {} ({})",
            escape_truncated(&run.review_loop_max_cycles, MAX_SHOWN_CHARS),
            escape(&self.settings.source("review_loop_max_cycles"))
        )?;
        let Scratch { line, message, .. } = &mut *scratch;
        for warning in self.run.warning_messages() {
            message.clear();
            let _ = write!(message, "{warning}");
            line.clear();
            line.push_str("warning: ");
            line.push_str(&escape(message));
            writeln!(out, "{}", paint.paint("33", line))?;
        }
        if let Some(scope) = &run.scope {
            crate::report::scope::write_text(scope, out)?;
        }
        writeln!(
            out,
            "total: {} of {total} files included, {} bytes, ~{} tokens, {} warnings",
            self.included_count(),
            self.block_bytes(),
            estimate_tokens(self.block_bytes()),
            self.warning_count()
        )
    }

    fn write_file(
        &self,
        out: &mut dyn Write,
        paint: Paint,
        entry: &NameEntry<'_>,
        last: bool,
        scratch: &mut Scratch<'r>,
    ) -> std::io::Result<()> {
        let report = entry.report;
        let name = report.name.as_str();
        let winner = report.winner();
        let status = entry.status();
        let bytes = self.bytes_of(entry);
        writeln!(
            out,
            "{} {}  {}  {} {}  {bytes} B ~{} tokens",
            if last { "└─" } else { "├─" },
            paint.paint("1", &escape(name)),
            paint.paint(state_colour(status), status),
            winner.map_or("-", |w| w.layer.as_str()),
            escape(&winner.map(|w| w.display_path(name)).unwrap_or_default()),
            estimate_tokens(bytes),
        )?;
        let bar = if last { "   " } else { "│  " };
        let line = &mut scratch.line;
        line.clear();
        line.push_str(bar);
        line.push_str("  ");
        self.write_reason(entry, line, escape);
        line.push('\n');
        out.write_all(line.as_bytes())?;
        for shadow in entry.shadowed() {
            writeln!(
                out,
                "{bar}  shadows {} {}",
                shadow.layer.as_str(),
                escape(&shadow.display_path(name))
            )?;
        }
        let (Some(i), Some(true)) = (entry.file, entry.included) else {
            return Ok(());
        };
        self.detail_into(i, scratch);
        let Scratch {
            blocks,
            strays,
            line,
            ..
        } = scratch;
        // One line per block and stray closer, each put together in one buffer and written
        // whole: a layer of many files has thousands of them.
        for block in blocks.iter() {
            line.clear();
            line.push_str(bar);
            line.push_str("  ");
            for _ in 0..block.depth.min(MAX_INDENT) {
                line.push_str("  ");
            }
            if block.depth > MAX_INDENT {
                line.push_str("[depth ");
                line.push_str(itoa::Buffer::new().format(block.depth));
                line.push_str("] ");
            }
            push_position(line, block.line, block.column);
            line.push_str(" {{");
            line.push_str(block.kind.keyword());
            line.push(':');
            line.push_str(&escape_truncated(block.condition, MAX_SHOWN_CHARS));
            line.push_str("}} ");
            let state = block.state.as_str();
            line.push_str(&paint.paint(state_colour(state), state));
            line.push_str(": ");
            self.write_why(block, line, escape);
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        for stray in strays.iter() {
            line.clear();
            line.push_str(bar);
            line.push_str("  ");
            push_position(line, stray.line, stray.column);
            line.push(' ');
            line.push_str(&escape(stray.marker));
            line.push(' ');
            line.push_str(&paint.paint("33", "stray closer, kept verbatim"));
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        Ok(())
    }
}
