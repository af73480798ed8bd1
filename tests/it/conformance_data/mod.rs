//! Where the conformance data lives.
//!
//! The data is kept in the repository, gzip-compressed: `conformance/NAME.gz` at the root of the
//! checkout (`conformance/README.md` says where it comes from). `PI_RULES_CONFORMANCE_DIR` names
//! another directory instead, holding the plain `NAME` files (`engine.jsonl`, `layers.jsonl`) as
//! the shared folder does. Data that cannot be read is a test failure, everywhere: a conformance
//! run that checks nothing must not pass.
//!
//! Every conformance test reads through [`read`], so the choice is made in one place.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The environment variable that names another data directory (plain `.jsonl` files).
pub const DIR_ENV: &str = "PI_RULES_CONFORMANCE_DIR";

/// The repository's copy: `conformance/` at the root of the checkout. This module is compiled
/// into the root crate's tests and into `pi-rules-core`'s (`crates/pi-rules-core`), so the root
/// is the nearest directory, from the crate's own up, that holds `conformance/`.
pub fn embedded_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .map(|dir| dir.join("conformance"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| manifest.join("conformance"))
}

/// Where data file `name` is read from: `$PI_RULES_CONFORMANCE_DIR/NAME` when that is set and not
/// empty, else the repository's `conformance/NAME.gz`.
pub fn source(name: &str) -> PathBuf {
    match std::env::var_os(DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join(name),
        None => embedded_dir().join(format!("{name}.gz")),
    }
}

/// The text of data file `name` (`engine.jsonl`). Panics, failing the test, when it cannot be read.
pub fn read(name: &str) -> String {
    let path = source(name);
    match load(&path) {
        Ok(text) => text,
        Err(err) => panic!(
            "conformance data `{}` cannot be read: {err} (the repository keeps it in \
             `conformance/`; `{DIR_ENV}` names a folder of plain .jsonl files instead)",
            path.display()
        ),
    }
}

/// The text of one data file: decompressed when its name ends in `.gz`, else read as it is.
pub fn load(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(bytes.as_slice()).read_to_string(&mut text)?;
        Ok(text)
    } else {
        String::from_utf8(bytes)
            .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidData, err))
    }
}
