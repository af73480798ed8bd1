//! Engine conformance: every record of `../shared/conformance/engine.jsonl` through `eval`.

use serde_json::Value;
use std::path::PathBuf;

fn data_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/engine.jsonl")
}

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
    let path = data_file();
    let Ok(data) = std::fs::read_to_string(&path) else {
        println!("engine conformance: skipped, {} not found", path.display());
        return;
    };
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
    assert!(failures.is_empty(), "{} records differ", failures.len());
}
