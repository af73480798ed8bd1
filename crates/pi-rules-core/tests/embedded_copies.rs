//! The engine and the host embed the rules and the settings schema from copies inside their own
//! directories (a published crate holds only those). The repository's `rules/` and
//! `settings-keys.json` stay the one source of truth: this test fails while a copy differs from
//! it, or a file is missing or left over; `scripts/sync-embedded` fixes that. (The binary crate
//! is the repository root, and embeds `docs/` itself: no copy.)

// The test reads the checkout; the no-I/O rule is for the library.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `*.md` files of a folder: name to bytes.
fn markdown(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    entries
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("read"))
        })
        .collect()
}

fn same_folder(source: &str, copy: &str) {
    let (source, copy) = (root().join(source), root().join(copy));
    let want = markdown(&source);
    assert!(!want.is_empty(), "{} has no .md files", source.display());
    let got = markdown(&copy);
    let names = |files: &BTreeMap<String, Vec<u8>>| files.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&got),
        names(&want),
        "{} lists other files than {}: run scripts/sync-embedded",
        copy.display(),
        source.display()
    );
    for (name, bytes) in &want {
        assert!(
            got[name] == *bytes,
            "{} differs from {}: run scripts/sync-embedded",
            copy.join(name).display(),
            source.join(name).display()
        );
    }
}

fn same_file(source: &str, copy: &str) {
    let read = |path: &str| {
        let path = root().join(path);
        std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
    };
    assert!(
        read(source) == read(copy),
        "{copy} differs from {source}: run scripts/sync-embedded"
    );
}

#[test]
fn the_core_schema_is_the_repository_one() {
    same_file(
        "settings-keys.json",
        "crates/pi-rules-core/settings-keys.json",
    );
}

#[test]
fn the_host_schema_and_rules_are_the_repository_ones() {
    same_file(
        "settings-keys.json",
        "crates/pi-rules-host/settings-keys.json",
    );
    same_folder("rules", "crates/pi-rules-host/rules");
}
