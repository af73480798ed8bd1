//! Settings schema construction: the embedded schema (generated at build time) against parsing
//! the same `settings-keys.json` at run time.
//!
//! Run with `cargo bench -p pi-rules-core --bench schema`.

use pi_rules_core::settings::Schema;

const SETTINGS_KEYS: &str = include_str!("../../../settings-keys.json");

/// What `Schema::embedded()` does once per process.
#[divan::bench]
fn embedded() -> Schema {
    Schema::build_embedded()
}

/// What `--keys FILE` does with the same text.
#[divan::bench]
fn parsed(bencher: divan::Bencher) {
    bencher
        .counter(divan::counter::BytesCount::of_str(SETTINGS_KEYS))
        .bench(|| Schema::parse(divan::black_box(SETTINGS_KEYS)));
}

/// A lookup by name, as settings resolution does once per key.
#[divan::bench]
fn lookup(bencher: divan::Bencher) {
    let schema = Schema::embedded();
    bencher.bench(|| {
        schema
            .get(divan::black_box("review_loop_max_cycles"))
            .is_some()
    });
}

fn main() {
    divan::main();
}
