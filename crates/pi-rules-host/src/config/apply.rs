//! `[check]` applied to a lint report: the codes ignored, each code's severity, and the
//! overrides of the `[[check.per-path]]` entries whose globs match a finding's file.
//!
//! For one finding, the most specific word wins: the file-wide keys first (`severity`, then
//! `ignore`, which wins over it), then each per-path entry that matches, in order, the same
//! way. So a per-path `severity` can bring back a code ignored everywhere else, and `"off"`
//! is `ignore`. A rule's own `lint-ignore:` is applied by the linter, before any of this.

use super::{CheckConfig, Level};
use pi_rules_core::lint::{Code, Diagnostic, FilePath, Report, Severity};
use std::collections::HashMap;
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
        let matching = self.matching(relative);
        self.severity_with(code, default, &matching)
    }

    /// The indexes of the per-path entries that match `relative`.
    fn matching(&self, relative: Option<&Path>) -> Vec<usize> {
        let Some(relative) = relative else {
            return Vec::new();
        };
        (self.per_path.iter().enumerate())
            .filter(|(_, entry)| entry.matches(relative))
            .map(|(i, _)| i)
            .collect()
    }

    /// [`CheckConfig::severity_of`], for a file the per-path entries `matching` match.
    fn severity_with(&self, code: Code, default: Severity, matching: &[usize]) -> Option<Severity> {
        let mut level = None;
        decide(&mut level, code, &self.severity, &self.ignore);
        for entry in matching.iter().filter_map(|&i| self.per_path.get(i)) {
            decide(&mut level, code, &entry.severity, &entry.ignore);
        }
        match level {
            None => Some(default),
            Some(level) => level.severity(),
        }
    }

    /// Applies the configuration to `report`: drops the findings it turns off and sets the
    /// severity of the others. `relative` names a finding's file relative to the project root;
    /// it is asked only when there are per-path entries, once per file.
    pub fn apply(&self, report: &mut Report, relative: &Relative<'_>) {
        if self.is_default() {
            return;
        }
        // The entries that match each file, by the finding's path: asked once per file.
        let mut by_file: HashMap<FilePath, Vec<usize>> = HashMap::new();
        report.diagnostics.retain_mut(|d| {
            let matching = if self.per_path.is_empty() {
                &[][..]
            } else {
                let path = d.path.clone();
                by_file
                    .entry(path)
                    .or_insert_with(|| self.matching(relative(d).as_deref()))
            };
            match self.severity_with(d.code, d.severity, matching) {
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
