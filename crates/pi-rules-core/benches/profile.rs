//! A plain loop over one workload, for profilers (callgrind, perf): no timing harness around it.
//!
//! `cargo bench -p pi-rules-core --bench profile -- typical 1000` assembles the typical layer
//! 1000 times with one `Assembler`; the other workloads are `many-blocks.md`, `deep-nesting.md`,
//! `stray-closers.md` and `schema` (building the embedded schema). For example:
//!
//! ```sh
//! cargo bench -p pi-rules-core --bench profile --no-run
//! valgrind --tool=callgrind target/release/deps/profile-* typical 1000
//! ```

#![allow(clippy::disallowed_methods, clippy::print_stderr, clippy::print_stdout)]

use pi_rules_core::settings::Schema;
use pi_rules_core::{Assembler, Features, Scope, Settings, Value};
use std::path::{Path, PathBuf};

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench")
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let what = args.first().map_or("typical", String::as_str);
    let times: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let files: Vec<String> = if what == "typical" {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(bench_dir().join("typical"))
            .expect("bench/typical")
            .map(|e| e.expect("entry").path())
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("read"))
            .collect()
    } else if what == "schema" {
        Vec::new()
    } else {
        vec![std::fs::read_to_string(bench_dir().join(what)).expect("read")]
    };
    let schema = Schema::embedded();
    let mut settings: Settings = schema
        .keys()
        .map(|k| (k.name.to_string(), k.default.clone()))
        .collect();
    settings.insert("review_loop_enforcement", Value::Bool(true));
    settings.insert("dco", Value::Bool(true));
    let mut features = Features::new();
    features.set("coms_active", true);
    features.set("external_ai_agents", false);
    let scope = Scope {
        settings: &settings,
        features: &features,
        review_loop_max_cycles: "3",
    };
    let mut total = 0;
    if what == "schema" {
        for _ in 0..times {
            total += std::hint::black_box(Schema::build_embedded()).len();
        }
    } else {
        let mut assembler = Assembler::new();
        for _ in 0..times {
            total += assembler
                .assemble(std::hint::black_box(&files), &scope)
                .text
                .len();
        }
    }
    println!("{what}: {times} runs, {total} bytes out");
}
