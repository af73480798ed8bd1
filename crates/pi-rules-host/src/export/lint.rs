//! What `check` says about the files `export` wrote: one that holds more than its agent reads
//! (PR901, `export-over-limit`), with the same limits `export` warns about.

use super::{is_present, locate, read, targets, Target};
use pi_rules_core::lint::{Code, Diagnostic};
use std::path::Path;

/// A finding for each exported file under the project `root` that its agent would cut. Paths
/// are shown relative to `cwd` when under it. A target that is not present, or that cannot be
/// read, gives nothing here (`export` itself reports a file it cannot use).
pub fn findings(root: &Path, cwd: &Path) -> Vec<Diagnostic> {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut found = Vec::new();
    for target in Target::ALL {
        let Ok(located) = locate(root, target) else {
            continue;
        };
        let Ok(Some(bytes)) = read(&located) else {
            continue;
        };
        if !is_present(target, &bytes) {
            continue;
        }
        let Some(message) = targets::over_limit(target, &bytes, None) else {
            continue;
        };
        let path = root.join(target.path());
        let shown = path.strip_prefix(&cwd).unwrap_or(&path);
        let mut diagnostic =
            Diagnostic::new(Code::ExportOverLimit, shown.display().to_string(), None);
        diagnostic.message(message).help(
            "shorten the rules, leave out what this agent does not need, or move hand-written \
             text out of the file, then run `pi-rules export`",
        );
        found.push(diagnostic);
    }
    found
}
