//! Fuzz target: the engine on arbitrary bytes (decoded lossily) and arbitrary settings.
//!
//! Checks: no panic; an assembler reused across two inputs gives what a fresh one gives; the
//! output is no longer than the input plus what placeholders add; every warning span lies inside
//! its file on char boundaries, and its message formats. Time linear in size is watched by
//! libFuzzer's `-timeout` and `-rss_limit_mb` with large `-max_len` runs.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pi_rules_core::{assemble, render::render, Assembler, Features, Scope, Settings, Value};

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
    /// A second input for the same assembler.
    again: Vec<Vec<u8>>,
    settings: Vec<(String, FuzzValue)>,
    features: Vec<(String, bool)>,
    /// The placeholder's value, cut to a few bytes.
    cycles: String,
}

fn decode(files: &[Vec<u8>]) -> Vec<String> {
    files
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect()
}

fn settings(input: Vec<(String, FuzzValue)>) -> Settings {
    let mut settings = Settings::new();
    for key in [
        "dco",
        "review_loop_enforcement",
        "use_worktrees",
        "commit_trailer",
    ] {
        settings.insert(key, Value::Bool(false));
    }
    for (key, value) in input {
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
    settings
}

fuzz_target!(|input: Input| {
    let settings = settings(input.settings);
    let mut features = Features::new();
    for (name, on) in input.features {
        features.set(name, on);
    }
    let cycles: String = input.cycles.chars().take(4).collect();
    let scope = Scope {
        settings: &settings,
        features: &features,
        review_loop_max_cycles: &cycles,
    };
    let mut assembler = Assembler::new();
    for files in [decode(&input.files), decode(&input.again)] {
        let fresh = assemble(&files, &scope);
        let reused = assembler.assemble(&files, &scope);
        assert_eq!(reused, &fresh);
        let input_len: usize = files.iter().map(|f| f.len() + 2).sum();
        assert!(fresh.text.len() <= input_len + fresh.placeholders * cycles.len());
        for (warning, message) in fresh.warnings.iter().zip(fresh.messages(&files)) {
            let text = &files[warning.file()];
            let span = warning.span();
            assert!(span.start <= span.end && text.get(span).is_some());
            let _ = message.to_string();
        }
        for file in &files {
            let _ = render(file, &settings);
        }
    }
});
