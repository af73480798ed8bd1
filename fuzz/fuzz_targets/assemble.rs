//! Fuzz target: the engine on arbitrary bytes (decoded lossily) and arbitrary settings.
//!
//! Checks: no panic; output no longer than the input plus what placeholders add; every warning
//! span inside its file. Time linear in size is watched by libFuzzer's `-timeout`/`-rss_limit_mb`
//! with large `-max_len` runs.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pi_rules_core::{assemble, render::render, Features, Scope, Settings, Value};

#[derive(Arbitrary, Debug)]
enum FuzzValue {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    EmptyArray,
    List(Vec<String>),
}

#[derive(Arbitrary, Debug)]
struct Input {
    files: Vec<Vec<u8>>,
    settings: Vec<(String, FuzzValue)>,
    features: Vec<(String, bool)>,
    cycles: u8,
}

fuzz_target!(|input: Input| {
    let files: Vec<String> = input
        .files
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let mut settings = Settings::new();
    for key in ["dco", "review_loop_enforcement", "use_worktrees", "commit_trailer"] {
        settings.insert(key, Value::Bool(false));
    }
    for (key, value) in input.settings {
        let value = match value {
            FuzzValue::Undefined => Value::Undefined,
            FuzzValue::Null => Value::Null,
            FuzzValue::Bool(b) => Value::Bool(b),
            FuzzValue::Number(n) => Value::Number(n),
            FuzzValue::String(s) => Value::String(s),
            FuzzValue::EmptyArray => Value::Array(Vec::new()),
            FuzzValue::List(items) => Value::Array(items.into_iter().map(Value::String).collect()),
        };
        settings.insert(key, value);
    }
    let mut features = Features::new();
    for (name, on) in input.features {
        features.set(name, on);
    }
    let cycles = (input.cycles % 10 + 1).to_string();
    let scope = Scope {
        settings: &settings,
        features: &features,
        review_loop_max_cycles: &cycles,
    };
    let assembly = assemble(&files, &scope);
    let input_len: usize = files.iter().map(|f| f.len() + 2).sum();
    assert!(assembly.text.len() <= input_len + assembly.placeholders * cycles.len());
    for warning in &assembly.warnings {
        assert!(warning.span.end <= files[warning.file].len());
        let _ = warning.to_string();
    }
    for file in &files {
        let _ = render(file, &settings);
    }
});
