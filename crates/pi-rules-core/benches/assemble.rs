//! Assembly benchmarks on `../shared/bench`: the typical twelve-file package layer and the
//! adversarial single files, with the settings the reference figures were measured with
//! (`review_loop_enforcement` and `dco` on, `coms_active` on, everything else at its default).
//!
//! Run with `cargo bench -p pi-rules-core`.

// The benchmark harness reads its inputs; the no-I/O rule is for the library itself.
#![allow(clippy::disallowed_methods)]

use pi_rules_core::settings::Schema;
use pi_rules_core::{assemble, Features, Scope, Settings, Value};
use std::path::{Path, PathBuf};

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn typical() -> Vec<String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(bench_dir().join("typical"))
        .expect("bench/typical")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    paths.iter().map(|p| read(p)).collect()
}

fn settings() -> Settings {
    let schema = Schema::embedded();
    let mut settings: Settings = schema
        .keys()
        .map(|k| (k.name.clone(), k.default.clone()))
        .collect();
    settings.insert("review_loop_enforcement", Value::Bool(true));
    settings.insert("dco", Value::Bool(true));
    settings
}

/// Times assembling `files`, with the settings and features built once outside the loop.
fn bench_files(bencher: divan::Bencher, files: &[String]) {
    let settings = settings();
    let mut features = Features::new();
    features.set("coms_active", true);
    features.set("external_ai_agents", false);
    let scope = Scope {
        settings: &settings,
        features: &features,
        review_loop_max_cycles: "3",
    };
    bencher
        .counter(divan::counter::BytesCount::new(
            files.iter().map(String::len).sum::<usize>(),
        ))
        .bench(|| assemble(divan::black_box(files), &scope).text.len());
}

#[divan::bench]
fn typical_package_layer(bencher: divan::Bencher) {
    bench_files(bencher, &typical());
}

#[divan::bench(args = ["many-blocks.md", "deep-nesting.md", "stray-closers.md"])]
fn adversarial(bencher: divan::Bencher, name: &str) {
    bench_files(bencher, &[read(&bench_dir().join(name))]);
}

fn main() {
    if !bench_dir().exists() {
        eprintln!("benchmarks skipped: {} not found", bench_dir().display());
        return;
    }
    divan::main();
}
