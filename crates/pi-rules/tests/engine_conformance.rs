//! Engine conformance: every record of `../shared/conformance/engine.jsonl` through `eval`.
//! Missing data fails the test when `CI` is set (see [`conformance_data`]).

mod conformance_data;

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
    let Some(data) = conformance_data::read("engine.jsonl") else {
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
    assert!(total > 0, "engine.jsonl holds no records");
    assert!(failures.is_empty(), "{} records differ", failures.len());
}

#[test]
fn missing_data_fails_in_ci_and_is_a_note_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("engine.jsonl");
    let mut note = Vec::new();
    assert_eq!(conformance_data::load(&missing, false, &mut note), None);
    let note = String::from_utf8(note).unwrap();
    assert!(note.contains("checked nothing"), "{note}");
    let in_ci =
        std::panic::catch_unwind(|| conformance_data::load(&missing, true, &mut Vec::new()));
    let message = in_ci.expect_err("missing data must fail in CI");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("`CI` is set"), "{text}");
    std::fs::write(&missing, "{}\n").unwrap();
    assert_eq!(
        conformance_data::load(&missing, true, &mut Vec::new()).as_deref(),
        Some("{}\n")
    );
}
