//! The typical layer against its `memcpy` floor, timed in turn: one copy of the layer's bytes,
//! one one-shot assembly, one assembly with a reused [`Assembler`], again and again. The three
//! medians come from the same seconds of the machine's life, so a burst of load from another
//! tenant falls on all three alike, where separate benchmarks (`--bench assemble`) each catch
//! their own moment. The clock's own cost (its median for an empty interval) is taken off every
//! interval.
//!
//! `cargo bench -p pi-rules-core --bench floor [-- ROUNDS]` (default 20,000 rounds) prints the
//! medians and the ratios; the target is ten times the floor at most.

// The benchmark harness reads its inputs and prints; the rules are for the library itself.
#![allow(clippy::disallowed_methods, clippy::print_stdout, clippy::print_stderr)]

mod inputs;

use pi_rules_core::{assemble, Assembler};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The median of `samples`, which it sorts.
fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// How long `work` takes, timed once.
fn time(mut work: impl FnMut()) -> Duration {
    let start = Instant::now();
    work();
    start.elapsed()
}

fn main() {
    if !inputs::bench_dir().exists() {
        eprintln!(
            "benchmark skipped: {} not found",
            inputs::bench_dir().display()
        );
        return;
    }
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let files = inputs::typical();
    let settings = inputs::settings();
    let features = inputs::features();
    let scope = inputs::scope(&settings, &features);
    let bytes: usize = files.iter().map(String::len).sum();
    let mut copy = String::with_capacity(bytes);
    let mut assembler = Assembler::new();
    let (mut clock, mut floor, mut oneshot, mut reused) = (
        Vec::with_capacity(rounds),
        Vec::with_capacity(rounds),
        Vec::with_capacity(rounds),
        Vec::with_capacity(rounds),
    );
    for _ in 0..rounds {
        clock.push(time(|| {}));
        floor.push(time(|| {
            copy.clear();
            for file in black_box(&files) {
                copy.push_str(file);
            }
            black_box(&copy);
        }));
        oneshot.push(time(|| {
            black_box(assemble(black_box(&files), &scope));
        }));
        reused.push(time(|| {
            black_box(assembler.assemble(black_box(&files), &scope).text.len());
        }));
    }
    let clock = median(&mut clock);
    let net = |samples: &mut Vec<Duration>| median(samples).saturating_sub(clock);
    let (floor, oneshot, reused) = (net(&mut floor), net(&mut oneshot), net(&mut reused));
    let ratio = |d: Duration| d.as_secs_f64() / floor.as_secs_f64();
    println!(
        "typical layer ({bytes} bytes, {rounds} rounds in turn; clock {clock:?} taken off): \
         memcpy floor {floor:?}, one-shot assembly {oneshot:?} ({:.1}x the floor), reused \
         assembler {reused:?} ({:.1}x) (target <= 10x)",
        ratio(oneshot),
        ratio(reused),
    );
}
