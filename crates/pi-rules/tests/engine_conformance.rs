//! Engine conformance: every record of `../shared/conformance/engine.jsonl` through `eval`.

use serde_json::Value;
use std::path::PathBuf;

fn data_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/engine.jsonl")
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
        let request = record["request"].to_string();
        let got: Value = serde_json::from_str(&pi_rules::eval::respond(&request)).unwrap();
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
