//! The benchmark inputs, shared by the benches: the files of `../shared/bench`, and the settings
//! and features the reference figures were measured with (`review_loop_enforcement` and `dco` on,
//! `coms_active` on, everything else at its default).
#![allow(dead_code)] // each bench uses its own part

use pi_rules_core::settings::Schema;
use pi_rules_core::{Features, Scope, Settings, Value};
use std::path::{Path, PathBuf};

pub fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench")
}

/// One input file, by name in the bench directory (`stray-closers.md`).
pub fn read(name: &str) -> String {
    let path = bench_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The twelve files of the typical package layer, in name order.
pub fn typical() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(bench_dir().join("typical"))
        .expect("bench/typical")
        .map(|e| {
            format!(
                "typical/{}",
                e.expect("entry").file_name().to_string_lossy()
            )
        })
        .collect();
    names.sort();
    names.iter().map(|name| read(name)).collect()
}

/// Every known key at its default, with `review_loop_enforcement` and `dco` on.
pub fn settings() -> Settings {
    let mut settings: Settings = Schema::embedded()
        .keys()
        .map(|k| (k.name.to_string(), k.default.clone()))
        .collect();
    settings.insert("review_loop_enforcement", Value::Bool(true));
    settings.insert("dco", Value::Bool(true));
    settings
}

/// `coms_active` on, `external_ai_agents` off.
pub fn features() -> Features {
    let mut features = Features::new();
    features.set("coms_active", true);
    features.set("external_ai_agents", false);
    features
}

/// The scope the benchmarks assemble in: `settings` and `features` as above, three review cycles.
pub fn scope<'a>(settings: &'a Settings, features: &'a Features) -> Scope<'a> {
    Scope {
        settings,
        features,
        review_loop_max_cycles: "3",
    }
}
