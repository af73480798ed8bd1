//! Engine conformance: every record of the conformance data's `engine.jsonl` through `eval`.
//! The data is the repository's `conformance/engine.jsonl.gz`, or `$PI_RULES_CONFORMANCE_DIR`;
//! missing data fails the test (see [`conformance_data`]).

use crate::conformance_data;

use serde_json::Value;

/// The text of the `request` member of a record `{"request": ..., "expected": ...}`. Quotes inside
/// JSON strings are escaped, and `expected` holds no member named `expected`, so the last
/// `, "expected": ` is the one between the two members.
fn raw_request(line: &str) -> &str {
    let start = line.find(':').map_or(0, |i| i + 1);
    let end = line.rfind(", \"expected\":").unwrap_or(line.len());
    line[start..end].trim()
}

#[test]
fn engine_conformance() {
    let data = conformance_data::read("engine.jsonl");
    let mut total = 0;
    let mut failures = Vec::new();
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).expect("conformance record is JSON");
        total += 1;
        // Send the request exactly as written in the data, as a host would, so that number
        // parsing is tested too (re-serialising a parsed value would hide a rounding error).
        let request = raw_request(line);
        assert_eq!(
            serde_json::from_str::<Value>(request).ok().as_ref(),
            Some(&record["request"]),
            "cannot cut the request out of record {total}"
        );
        let got: Value = serde_json::from_str(&pi_rules::eval::respond(request)).unwrap();
        if got != record["expected"] {
            failures.push((total - 1, record, got));
        }
    }
    println!(
        "engine conformance: {}/{total} identical",
        total - failures.len()
    );
    for (index, record, got) in failures.iter().take(5) {
        println!("--- record {index}");
        println!("request:  {}", record["request"]);
        println!("expected: {}", record["expected"]);
        println!("got:      {got}");
    }
    assert!(total > 0, "engine.jsonl holds no records");
    assert!(failures.is_empty(), "{} records differ", failures.len());
}

/// The shared folder the repository's copy was taken from, beside the checkout.
fn shared_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance")
}

/// The repository's copy holds the records the README counts, and, where the shared folder it
/// was taken from is beside the checkout, is that folder's data byte for byte: an update of one
/// without the other fails here instead of drifting silently.
#[test]
fn the_repository_copy_is_the_shared_data() {
    for (name, records) in [("engine.jsonl", 3008), ("layers.jsonl", 803)] {
        let path = conformance_data::embedded_dir().join(format!("{name}.gz"));
        let copy =
            conformance_data::load(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        assert_eq!(
            copy.lines().filter(|l| !l.trim().is_empty()).count(),
            records,
            "{}: the README and conformance/README.md give this count",
            path.display()
        );
        let shared = shared_dir().join(name);
        if !shared_dir().is_dir() {
            continue;
        }
        let original = conformance_data::load(&shared)
            .unwrap_or_else(|err| panic!("{}: {err}", shared.display()));
        assert!(
            copy == original,
            "{} differs from {}: refresh it with `gzip -9 -n -c {} > {}`",
            path.display(),
            shared.display(),
            shared.display(),
            path.display()
        );
    }
}

#[test]
fn data_is_read_plain_or_gzip_compressed_and_missing_data_is_an_error() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let text = "{\"request\": {}, \"expected\": {}}\n";
    let plain = tmp.path().join("engine.jsonl");
    std::fs::write(&plain, text).unwrap();
    assert_eq!(conformance_data::load(&plain).unwrap(), text);
    let packed = tmp.path().join("engine.jsonl.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(text.as_bytes()).unwrap();
    std::fs::write(&packed, encoder.finish().unwrap()).unwrap();
    assert_eq!(conformance_data::load(&packed).unwrap(), text);
    // A plain file named `.gz` is not gzip data: an error, not a silent empty text.
    std::fs::write(&packed, text).unwrap();
    assert!(conformance_data::load(&packed).is_err());
    let missing = tmp.path().join("layers.jsonl.gz");
    assert!(conformance_data::load(&missing).is_err());
}
