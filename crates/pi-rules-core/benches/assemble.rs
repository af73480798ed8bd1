//! Assembly benchmarks on `../shared/bench`: the typical twelve-file package layer and the
//! adversarial single files, with the settings the reference figures were measured with (see
//! `inputs`).
//!
//! `typical_memcpy_floor` copies the typical layer's bytes into a reused buffer: the floor the
//! typical assembly is measured against (the target is at most ten times it).
//!
//! The typical benchmarks and the floor are sampled alike, and not as divan would choose: each
//! sample is one call, as a host assembles once per agent turn rather than in a tight loop, and
//! there are 1,000 samples so that the medians the ratio is taken from are stable. (Left to
//! itself, divan chooses the calls per sample from its timer's precision: the floor, close to
//! that precision, can be timed one call per sample on one run and several on the next, each
//! finding the last one's cache lines, and the ratio would move with that choice, from 8.8× to
//! 13×, rather than with the code.)
//!
//! Run with `cargo bench -p pi-rules-core --bench assemble`.

// The benchmark harness reads its inputs; the no-I/O rule is for the library itself.
#![allow(clippy::disallowed_methods)]

mod inputs;

use inputs::{bench_dir, features, read, scope, settings, typical};
use pi_rules_core::{assemble, Assembler};

/// Times assembling `files`, with the settings and features built once outside the loop.
fn bench_files(bencher: divan::Bencher, files: &[String]) {
    let settings = settings();
    let features = features();
    let scope = scope(&settings, &features);
    bencher
        .counter(divan::counter::BytesCount::new(
            files.iter().map(String::len).sum::<usize>(),
        ))
        .bench(|| assemble(divan::black_box(files), &scope).text.len());
}

#[divan::bench(sample_count = 1000, sample_size = 1)]
fn typical_package_layer(bencher: divan::Bencher) {
    bench_files(bencher, &typical());
}

/// The same with one [`Assembler`] kept across iterations, as a long-running host does.
#[divan::bench(sample_count = 1000, sample_size = 1)]
fn typical_package_layer_reused(bencher: divan::Bencher) {
    let files = typical();
    let settings = settings();
    let features = features();
    let scope = scope(&settings, &features);
    let mut assembler = Assembler::new();
    bencher
        .counter(divan::counter::BytesCount::new(
            files.iter().map(String::len).sum::<usize>(),
        ))
        .bench_local(|| {
            assembler
                .assemble(divan::black_box(&files), &scope)
                .text
                .len()
        });
}

/// The floor for `typical_package_layer`: copying the same bytes into a reused buffer.
#[divan::bench(sample_count = 1000, sample_size = 1)]
fn typical_memcpy_floor(bencher: divan::Bencher) {
    let files = typical();
    let mut buffer = String::with_capacity(files.iter().map(String::len).sum());
    bencher
        .counter(divan::counter::BytesCount::new(
            files.iter().map(String::len).sum::<usize>(),
        ))
        .bench_local(|| {
            buffer.clear();
            for file in divan::black_box(&files) {
                buffer.push_str(file);
            }
            divan::black_box(&buffer).len()
        });
}

#[divan::bench(args = ["many-blocks.md", "deep-nesting.md", "stray-closers.md"])]
fn adversarial(bencher: divan::Bencher, name: &str) {
    bench_files(bencher, &[read(name)]);
}

/// The same with one [`Assembler`] kept across iterations: no large allocation is made and
/// freed (and its pages faulted in again) on every iteration.
#[divan::bench(args = ["many-blocks.md", "deep-nesting.md", "stray-closers.md"])]
fn adversarial_reused(bencher: divan::Bencher, name: &str) {
    let files = [read(name)];
    let settings = settings();
    let features = features();
    let scope = scope(&settings, &features);
    let mut assembler = Assembler::new();
    bencher
        .counter(divan::counter::BytesCount::new(files[0].len()))
        .bench_local(|| {
            assembler
                .assemble(divan::black_box(&files), &scope)
                .text
                .len()
        });
}

fn main() {
    if !bench_dir().exists() {
        eprintln!("benchmarks skipped: {} not found", bench_dir().display());
        return;
    }
    divan::main();
}
