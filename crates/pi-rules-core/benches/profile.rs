//! A plain loop over one workload, for profilers (callgrind, perf): no timing harness around it.
//!
//! `cargo bench -p pi-rules-core --bench profile -- typical 1000` assembles the typical layer
//! 1000 times with one `Assembler`; `typical-oneshot` does the same with a new one each time (as
//! `assemble` does), and the other workloads are `many-blocks.md`, `deep-nesting.md`,
//! `stray-closers.md` and `schema` (building the embedded schema). For example:
//!
//! ```sh
//! cargo bench -p pi-rules-core --bench profile --no-run
//! valgrind --tool=callgrind target/release/deps/profile-* typical 1000
//! ```

#![allow(clippy::disallowed_methods, clippy::print_stderr, clippy::print_stdout)]

mod inputs;

use pi_rules_core::settings::Schema;
use pi_rules_core::{Assembler, Scope};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let what = args.first().map_or("typical", String::as_str);
    let times: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let files: Vec<String> = match what {
        "typical" | "typical-oneshot" => inputs::typical(),
        "schema" => Vec::new(),
        file => vec![inputs::read(file)],
    };
    let settings = inputs::settings();
    let features = inputs::features();
    let scope = Scope {
        settings: &settings,
        features: &features,
        review_loop_max_cycles: "3",
    };
    let mut total = 0;
    if what == "typical-oneshot" {
        for _ in 0..times {
            total += pi_rules_core::assemble(std::hint::black_box(&files), &scope)
                .text
                .len();
        }
    } else if what == "schema" {
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
