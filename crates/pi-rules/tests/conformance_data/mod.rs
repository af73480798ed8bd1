//! Where the conformance data lives, and what it means when it is not there.
//!
//! The data is `../shared/conformance/` beside the checkout, or the directory named by
//! `PI_RULES_CONFORMANCE_DIR`. When a data file cannot be read:
//! - with the `CI` environment variable set (non-empty), the test fails: a conformance run that
//!   checks nothing must not pass in CI;
//! - otherwise the test prints a note straight to the process's standard error (libtest captures
//!   `println!` and `eprintln!` of passing tests, so a note written with them is never seen) and
//!   passes.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable that names another data directory.
pub const DIR_ENV: &str = "PI_RULES_CONFORMANCE_DIR";

/// The data directory: `$PI_RULES_CONFORMANCE_DIR`, else `../shared/conformance` beside the
/// checkout.
pub fn dir() -> PathBuf {
    match std::env::var_os(DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"),
    }
}

/// Whether this run is in CI: `CI` is set and not empty.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The text of data file `name` (`engine.jsonl`), or `None` after a note when it cannot be read
/// outside CI. Panics in CI.
pub fn read(name: &str) -> Option<String> {
    load(&dir().join(name), in_ci(), &mut std::io::stderr())
}

/// [`read`] with the path, the CI decision and where the note goes given.
pub fn load(path: &Path, ci: bool, note: &mut dyn Write) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(err) => {
            assert!(
                !ci,
                "conformance data `{}` cannot be read ({err}) and `CI` is set: put the shared \
                 conformance folder beside the checkout, or name it in `{DIR_ENV}`",
                path.display()
            );
            // Invariant: a failed write of a note has nowhere else to go; the test passes anyway.
            let _ = writeln!(
                note,
                "note: conformance data `{}` cannot be read ({err}); this conformance test \
                 checked nothing (in CI it fails)",
                path.display()
            );
            None
        }
    }
}
