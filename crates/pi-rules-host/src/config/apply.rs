//! `[check]` applied to a lint report: the codes ignored, each code's severity, and the
//! overrides of the `[[check.per-path]]` entries whose globs match a finding's file.
//!
//! For one finding, the most specific word wins: the file-wide keys first (`severity`, then
//! `ignore`, which wins over it), then each per-path entry that matches, in order, the same
//! way. So a per-path `severity` can bring back a code ignored everywhere else, and `"off"`
//! is `ignore`. A rule's own `lint-ignore:` is applied by the linter, before any of this.

use super::{CheckConfig, Level};
use pi_rules_core::lint::{Code, Diagnostic, Report, Severity};
use std::path::{Path, PathBuf};

/// A finding's file relative to the project root (for per-path entries); `None` when it is not
/// in the project (an embedded package rule, a user rule).
pub type Relative<'a> = dyn Fn(&Diagnostic) -> Option<PathBuf> + 'a;

impl CheckConfig {
    /// Whether nothing is overridden: the report is left as it is.
    pub fn is_default(&self) -> bool {
        self.ignore.is_empty() && self.severity.is_empty() && self.per_path.is_empty()
    }

    /// The severity a finding of `code` gets, at `default` severity without the configuration,
    /// on the file `relative` to the project root: `None` when it is not reported.
    pub fn severity_of(
        &self,
        code: Code,
        default: Severity,
        relative: Option<&Path>,
    ) -> Option<Severity> {
        let mut level = None;
        decide(&mut level, code, &self.severity, &self.ignore);
        if let Some(relative) = relative {
            for entry in self.per_path.iter().filter(|e| e.matches(relative)) {
                decide(&mut level, code, &entry.severity, &entry.ignore);
            }
        }
        match level {
            None => Some(default),
            Some(level) => level.severity(),
        }
    }

    /// Applies the configuration to `report`: drops the findings it turns off and sets the
    /// severity of the others. `relative` names a finding's file relative to the project root;
    /// it is asked only when there are per-path entries.
    pub fn apply(&self, report: &mut Report, relative: &Relative<'_>) {
        if self.is_default() {
            return;
        }
        let per_path = !self.per_path.is_empty();
        report.diagnostics.retain_mut(|d| {
            let path = if per_path { relative(d) } else { None };
            match self.severity_of(d.code, d.severity, path.as_deref()) {
                Some(severity) => {
                    d.severity = severity;
                    true
                }
                None => false,
            }
        });
    }
}

/// One level of the configuration's word on `code`: its severity, then its ignore list.
fn decide(level: &mut Option<Level>, code: Code, severity: &[(Code, Level)], ignore: &[Code]) {
    if let Some((_, set)) = severity.iter().find(|(c, _)| *c == code) {
        *level = Some(*set);
    }
    if ignore.contains(&code) {
        *level = Some(Level::Off);
    }
}
