//! Fuzz target: `pi-rules serve` on arbitrary request lines, as a pi session or another host
//! would send them (`eval` requests carry whole rule files inline).
//!
//! Checks: no panic; every line gets at most one response line; each response is valid JSON: a
//! JSON-RPC 2.0 object, or an array of them for a batch.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_rules::invocation::process_env_snapshot;
use pi_rules::serve::LineServer;
use serde_json::Value;
use std::time::Duration;

/// Whether `value` is one JSON-RPC 2.0 response.
fn is_response(value: &Value) -> bool {
    value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && value.get("id").is_some()
        && (value.get("result").is_some() != value.get("error").is_some())
}

fuzz_target!(|data: &[u8]| {
    let mut server = LineServer::new(process_env_snapshot(), Duration::from_secs(3600));
    let mut out = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        out.clear();
        server
            .handle_line(line, &mut out)
            .expect("writing to a Vec");
        let Some((&last, response)) = out.split_last() else {
            continue;
        };
        assert_eq!(last, b'\n', "a response ends its line");
        assert!(!response.contains(&b'\n'), "one line per request");
        let value: Value = serde_json::from_slice(response).expect("a response is JSON");
        match &value {
            Value::Array(batch) => {
                assert!(!batch.is_empty());
                assert!(batch.iter().all(is_response));
            }
            other => assert!(is_response(other), "{other}"),
        }
    }
});
