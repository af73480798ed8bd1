//! `export` of a monorepo: 100,000 files in 500 packages, each package with a nested
//! `.pi/rules` directory holding one path-scoped rule, and one unscoped and one scoped rule at
//! the root; the targets `agents-md`, `claude` and `cursor` (so 1,500 scoped files: a section in
//! each `packages/pNNN/AGENTS.md`, a `.claude/rules/pi-rules/...` file and a `.cursor/rules`
//! file per package). The host's work as the command does it: the assembly, the model (with the
//! walk for nested directories), the plan, the writes.
//!
//! - `export_from_scratch`: every exported file taken out before each sample (not timed), then
//!   one export, every file written (atomic, durable, synced together).
//! - `check_fresh`: `export --check` on an exported tree: everything read and compared, nothing
//!   written.
//!
//! The issue bounds each at 1 s. Run with `cargo bench -p pi-rules --bench export`.

use pi_rules_host::assembly::{self, LayerOptions, ScopeOptions};
use pi_rules_host::export::model::{self, Model, WalkOptions};
use pi_rules_host::export::{self, Options, Target};
use pi_rules_host::selection::{LayerChoice, ProjectSettings};
use pi_rules_host::session::Session;
use pi_rules_host::settings_source::SettingsSource;
use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const PACKAGES: usize = 500;
const FILES_PER_PACKAGE: usize = 200;
const TARGETS: [Target; 3] = [Target::AgentsMd, Target::Claude, Target::Cursor];

fn main() {
    divan::main();
}

/// The generated monorepo, made once.
fn repository() -> &'static Path {
    static ROOT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &ROOT
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("tempdir");
            let root = dir.path().canonicalize().expect("canonical");
            fs::create_dir_all(root.join(".git/objects")).expect(".git");
            fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
            fs::write(root.join(".gitignore"), "target/\n").expect(".gitignore");
            let rules = root.join(".pi/rules");
            fs::create_dir_all(&rules).expect("rules");
            fs::write(
                rules.join("10-team.md"),
                "Run make lint before every commit.\n",
            )
            .expect("rule");
            fs::write(
                rules.join("50-api.md"),
                "---\npaths: [\"packages/*/src/api/**\"]\n---\nValidate every input.\n",
            )
            .expect("rule");
            for p in 0..PACKAGES {
                let package = root.join(format!("packages/p{p:03}"));
                let src = package.join("src");
                fs::create_dir_all(&src).expect("src");
                for f in 0..FILES_PER_PACKAGE {
                    fs::write(src.join(format!("f{f:03}.ts")), "").expect("file");
                }
                let nested = package.join(".pi/rules");
                fs::create_dir_all(&nested).expect("nested");
                fs::write(
                    nested.join("20-pkg.md"),
                    format!("---\npaths: [\"src/**\"]\n---\nPackage {p} keeps its API stable.\n"),
                )
                .expect("nested rule");
            }
            (dir, root)
        })
        .1
}

/// The plan of one export of `root`, as the command makes it.
fn plan(root: &Path) -> Vec<export::Planned> {
    let session = Session::from_parts(
        root.to_path_buf(),
        None,
        Cow::Borrowed(pi_rules_core::settings::Schema::embedded()),
    );
    let settings = ProjectSettings::default().read(&session);
    let options = LayerOptions {
        confine: true,
        export_layers: Some(LayerChoice::EXPORT),
        scope: ScopeOptions {
            scoped_in_pi: Some(false),
            ..ScopeOptions::default()
        },
        ..LayerOptions::default()
    };
    let run = assembly::run(session, &options, settings, &mut ()).expect("assembly");
    let model = Model::build(&run, root, WalkOptions::default());
    assert_eq!(model.scoped.len(), PACKAGES + 1);
    let export = Options {
        pointer: true,
        ..Options::default()
    };
    export::plan_model(root, &TARGETS, &model, &export)
        .expect("plan")
        .0
}

/// Takes out everything export wrote.
fn clean(root: &Path) {
    let candidates = model::walk_candidates(root, Default::default());
    let planned = export::plan_remove(root, &TARGETS, &candidates).expect("plan remove");
    export::apply(&planned).expect("remove");
}

#[divan::bench(sample_count = 10)]
fn export_from_scratch(bencher: divan::Bencher) {
    let root = repository();
    bencher.with_inputs(|| clean(root)).bench_values(|()| {
        let planned = plan(root);
        let applied = export::apply(&planned).expect("apply");
        assert!(applied.len() >= 3 * PACKAGES, "{}", applied.len());
        applied.len()
    });
}

#[divan::bench(sample_count = 10)]
fn check_fresh(bencher: divan::Bencher) {
    let root = repository();
    clean(root);
    export::apply(&plan(root)).expect("export");
    bencher.bench(|| {
        let planned = plan(root);
        assert!(planned.iter().all(|p| !p.changes()));
        planned.len()
    });
}
