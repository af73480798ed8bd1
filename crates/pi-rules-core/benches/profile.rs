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
use pi_rules_core::Assembler;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let what = args.first().map_or("typical", String::as_str);
    let times: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let files: Vec<String> = match what {
        "typical" | "typical-oneshot" | "typical-text" => inputs::typical(),
        "schema" => Vec::new(),
        phase if phase.starts_with("phase-") => Vec::new(),
        file => vec![inputs::read(file)],
    };
    let settings = inputs::settings();
    let features = inputs::features();
    let scope = inputs::scope(&settings, &features);
    let mut total = 0;
    if let Some(phase) = what.strip_prefix("phase-") {
        // One phase of the typical assembly alone, on the whole files: `phase-scan` (markers),
        // `phase-gaps` (table gaps), `phase-placeholders`, `phase-copy` (the memcpy floor).
        let typical = inputs::typical();
        let mut markers = Vec::new();
        let mut found = Vec::new();
        let mut copy = String::new();
        for _ in 0..times {
            for file in std::hint::black_box(&typical) {
                markers.clear();
                found.clear();
                match phase {
                    "scan" => {
                        let start = pi_rules_core::frontmatter::split(file).body_start;
                        pi_rules_core::markers::scan_into(file, start, &mut markers);
                    }
                    "gaps" => {
                        let mut gaps = Vec::new();
                        pi_rules_core::table::find_gaps(file, 0, &mut gaps);
                        total += gaps.len();
                    }
                    "placeholders" => pi_rules_core::placeholder::find(file, 0, &mut found),
                    _ => copy.push_str(file),
                }
                total += markers.len() + found.len();
            }
            total += copy.len();
            copy.clear();
        }
    } else if what == "typical-text" {
        // The typical assembly's text itself, to look at what the later phases see.
        print!("{}", pi_rules_core::assemble(&files, &scope).text);
        return;
    } else if what == "typical-oneshot" {
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
