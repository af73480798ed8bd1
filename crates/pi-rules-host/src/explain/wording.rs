//! The report in words: why a file was included, gated or skipped, why a block was kept or
//! dropped, and where a feature's value came from.
//!
//! The host keeps text raw: what the wording quotes from files and settings (keys, feature
//! names, values) goes through the [`Show`] its caller passes, [`raw`] for the text as it is, or
//! the front end's escaper for a terminal.

use super::cut;
use super::model::{BlockView, Described, Explanation, SettingsView, State};
use super::recorder::{Gate, GatePart, Reason};
use super::MAX_SHOWN_CHARS;
use crate::assembly::NameEntry;
use crate::loader::{Candidate, NameReport, Pick, MAX_RULE_BYTES};
use pi_rules_core::lint::{suggest, FEATURES};
use pi_rules_core::markers::BlockKind;
use std::borrow::Cow;
use std::fmt::Write as _;

/// How the wording shows the text it quotes (keys, feature names, values): [`raw`], or a front
/// end's escaper.
pub type Show = fn(&str) -> Cow<'_, str>;

/// Shows text as it is.
pub fn raw(text: &str) -> Cow<'_, str> {
    Cow::Borrowed(text)
}

/// Appends `line:column`.
pub fn push_position(out: &mut String, line: usize, column: usize) {
    out.push_str(itoa::Buffer::new().format(line));
    out.push(':');
    out.push_str(itoa::Buffer::new().format(column));
}

/// Appends ``key` = VALUE from SOURCE`, the start of a reason that a setting's value gave.
pub fn push_setting(out: &mut String, key: &str, described: &Described, show: Show) {
    out.push('`');
    out.push_str(&show(key));
    out.push_str("` = ");
    out.push_str(&show(&described.shown));
    out.push_str(" from ");
    out.push_str(&show(&described.source));
}

impl Explanation<'_> {
    /// Why a block was kept or dropped (or not evaluated), in words, appended to `out`; values
    /// cut for one line.
    pub fn write_why(&self, block: &BlockView<'_>, out: &mut String, show: Show) {
        let invert = if block.kind == BlockKind::IfNot {
            ", inverted by IFNOT"
        } else {
            ""
        };
        let Some(decided) = block.decided else {
            match block.state {
                State::Unbalanced => out.push_str(
                    "no matching closer: this marker and the rest of the file are kept verbatim",
                ),
                State::Leaked => {
                    out.push_str("after an unbalanced opener: kept verbatim, never evaluated")
                }
                _ => match block.inside {
                    None => out.push_str("not reached"),
                    Some((line, column)) => {
                        out.push_str("inside the dropped block at ");
                        push_position(out, line, column);
                    }
                },
            }
            return;
        };
        let settings = &self.settings;
        let names = &self.recorder.names;
        // The common reasons are put together piece by piece: a layer of many files has one
        // per block, and `write!` costs several times as much. Writing to a `String` cannot fail.
        let _ = match &decided.reason {
            Reason::Feature { name, on } => {
                out.push_str("feature `");
                out.push_str(&show(names.name(*name)));
                out.push_str(if *on { "` is on" } else { "` is off" });
                out.push_str(invert);
                Ok(())
            }
            Reason::Truthy { key, truthy } => {
                let key = names.name(*key);
                push_setting(out, key, &settings.described(key), show);
                out.push_str(if *truthy { " is truthy" } else { " is falsy" });
                out.push_str(invert);
                Ok(())
            }
            Reason::Compare { key, .. } => {
                let key = names.name(*key);
                push_setting(out, key, &settings.described(key), show);
                let held = decided.kept != (block.kind == BlockKind::IfNot);
                out.push_str(if held {
                    ": the comparison is true"
                } else {
                    ": the comparison is false"
                });
                out.push_str(invert);
                Ok(())
            }
            Reason::UnknownKey { key } if FEATURES.contains(&names.name(*key)) => {
                let key = names.name(*key);
                write!(
                    out,
                    "`{}` is a feature, which a condition can only test bare (`{{{{{}:{}}}}}`); a \
                 comparison on it looks for a settings key and fails closed",
                    show(key),
                    block.kind.keyword(),
                    show(key)
                )
            }
            Reason::UnknownKey { key } => {
                let key = names.name(*key);
                let known = self.run.session.schema.names();
                let hint = suggest::closest(key, known)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                write!(
                    out,
                    "`{}` is neither a settings key nor a feature: fails closed{hint}",
                    show(&cut(key, MAX_SHOWN_CHARS))
                )
            }
            Reason::Malformed => {
                out.push_str("malformed condition: fails closed");
                Ok(())
            }
        };
    }

    /// A file's status in words, appended to `out`.
    pub fn write_reason(&self, entry: &NameEntry<'_>, out: &mut String, show: Show) {
        let gate = entry.file.and_then(|i| self.recorder.gates.get(i));
        write_outcome_reason(out, entry.report, gate, &self.settings, show);
    }

    pub fn feature_source(&self, name: &str, show: Show) -> String {
        match name {
            "coms_active" if self.coms_flag => "from the host: --coms-active".to_owned(),
            "coms_active" => "from the host: --coms-active was not given".to_owned(),
            _ => format!(
                "acpx_agents ({}), cli_agents ({})",
                show(&self.settings.source("acpx_agents")),
                show(&self.settings.source("cli_agents"))
            ),
        }
    }
}

/// Appends the reason for a file's status, in words. (Writing to a `String` cannot fail.)
pub fn write_outcome_reason(
    out: &mut String,
    report: &NameReport,
    gate: Option<&Gate>,
    settings: &SettingsView<'_>,
    show: Show,
) {
    let push_layers = |out: &mut String, candidates: &[Candidate]| {
        for (i, c) in candidates.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(c.layer.as_str());
        }
    };
    match &report.outcome {
        Pick::Oversized {
            size,
            hides,
            winner,
            ..
        } => {
            let _ = write!(
                out,
                "oversized at {size} bytes (limit {MAX_RULE_BYTES}) in the {} layer",
                winner.layer.as_str()
            );
            if !hides.is_empty() {
                out.push_str(", hiding the ");
                push_layers(out, hides);
                out.push_str(" copy");
            }
        }
        Pick::Unreadable { failures } => {
            out.push_str("unreadable in every layer (");
            for (i, f) in failures.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                let _ = write!(out, "{}: {}", f.candidate.layer.as_str(), f.reason);
            }
            out.push(')');
        }
        Pick::Taken {
            masked: true,
            shadows,
            ..
        } => {
            out.push_str("masked: an empty link to a device hides the ");
            if shadows.is_empty() {
                out.push_str("(no)");
            } else {
                push_layers(out, shadows);
            }
            out.push_str(" copy");
        }
        Pick::Taken {
            fell_back_from,
            winner,
            ..
        } => {
            for (i, f) in fell_back_from.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                let _ = write!(
                    out,
                    "{} copy unreadable ({})",
                    f.candidate.layer.as_str(),
                    f.reason
                );
            }
            if !fell_back_from.is_empty() {
                let _ = write!(out, ", fell back to {}; ", winner.layer.as_str());
            }
            match gate {
                None => out.push_str("included"),
                Some(gate) => write_gate_reason(out, gate, settings, show),
            }
        }
    }
}

/// Appends what a frontmatter gate decided, and on what.
pub fn write_gate_reason(out: &mut String, gate: &Gate, settings: &SettingsView<'_>, show: Show) {
    out.push_str(if gate.included { "included" } else { "gated" });
    let mut parts = [&gate.setting, &gate.feature]
        .into_iter()
        .flatten()
        .peekable();
    if parts.peek().is_none() {
        out.push_str(" (no frontmatter gate)");
        return;
    }
    out.push_str(" (");
    for (i, part) in parts.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = match part {
            GatePart::Setting { key } => {
                let described = settings.described(key);
                write!(
                    out,
                    "requires_setting: {} = {} from {}",
                    show(key),
                    show(&described.shown),
                    show(&described.source)
                )
            }
            GatePart::UnknownSetting { key } => {
                write!(out, "requires_setting: {} is not a settings key", show(key))
            }
            GatePart::Feature { name, on } => write!(
                out,
                "requires: {} is {}",
                show(name),
                if *on { "on" } else { "off" }
            ),
            GatePart::UnknownFeature { name } => {
                write!(out, "requires: {} is not a feature predicate", show(name))
            }
        };
    }
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::escape;

    /// The wording quotes a key and its value as its caller shows them: as they are, or escaped
    /// for a terminal; its own words are the same either way.
    #[test]
    fn quoted_text_is_shown_as_the_caller_says() {
        let described = Described {
            shown: "\"on\u{202e}\u{1b}[2J\"".into(),
            source: "default".into(),
        };
        let mut plain = String::new();
        push_setting(&mut plain, "dc\u{1b}o", &described, raw);
        assert_eq!(plain, "`dc\u{1b}o` = \"on\u{202e}\u{1b}[2J\" from default");
        let mut escaped = String::new();
        push_setting(&mut escaped, "dc\u{1b}o", &described, escape);
        let expected = format!(
            "`{}` = {} from default",
            escape("dc\u{1b}o"),
            escape(&described.shown)
        );
        assert_eq!(escaped, expected);
        assert!(!escaped.contains('\u{1b}') && !escaped.contains('\u{202e}'));
    }
}
