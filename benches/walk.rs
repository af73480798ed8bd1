//! `check`'s walk of a repository for rule scopes (`pi_rules_host::check::walk`).
//!
//! A repository of 100,000 files (1,000 directories of 100, three levels deep, with a
//! `.gitignore` that hides one directory of 1,000 more files, a `.git` directory and one nested
//! rule directory) is generated once in a temporary directory.
//!
//! - `walk_and_match`: one walk, every file tried against 20 globs compiled into one matcher,
//!   half of which match nothing (so every file is tried to the end).
//! - `check`: the whole `check` of that repository (the layers, the walk, the nested directory,
//!   the report), with one project rule of 10 globs.
//!
//! Run with `cargo bench -p pi-rules --bench walk`.

use pi_rules_core::lint::{ScopeGlob, ScopedRule};
use pi_rules_host::check::walk::{self, GlobTrial, Limits};
use pi_rules_host::check::{self, CheckOptions};
use pi_rules_host::loader::PackageSource;
use pi_rules_host::session::Session;
use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const FILES: usize = 100_000;

fn main() {
    divan::main();
}

/// The generated repository, made once.
fn repository() -> &'static Path {
    static ROOT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &ROOT
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("tempdir");
            let root = dir.path().canonicalize().expect("canonical");
            fs::create_dir_all(root.join(".git/objects")).expect(".git");
            fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
            fs::write(root.join(".gitignore"), "target/\n*.log\n").expect(".gitignore");
            for d in 0..FILES / 100 {
                let dir = root.join(format!("src/m{:02}/p{:02}/d{d:04}", d / 100, d / 10 % 10));
                fs::create_dir_all(&dir).expect("dir");
                for f in 0..100 {
                    fs::write(dir.join(format!("f{f:03}.ts")), "").expect("file");
                }
            }
            let ignored = root.join("target/debug");
            fs::create_dir_all(&ignored).expect("target");
            for f in 0..1_000 {
                fs::write(ignored.join(format!("o{f:04}.o")), "").expect("ignored file");
            }
            let rules = root.join(".pi/rules");
            fs::create_dir_all(&rules).expect("rules");
            let globs: Vec<String> = globs()
                .iter()
                .take(10)
                .map(|g| format!("  - \"{g}\""))
                .collect();
            let rule = format!("---\npaths:\n{}\n---\nScoped.\n", globs.join("\n"));
            fs::write(rules.join("90-scoped.md"), rule).expect("rule");
            let nested = root.join("src/m00/.pi/rules");
            fs::create_dir_all(&nested).expect("nested");
            fs::write(
                nested.join("90-nested.md"),
                "---\npaths: p00/**\n---\nNested.\n",
            )
            .expect("nested rule");
            (dir, root)
        })
        .1
}

/// Ten globs that match and ten that match nothing.
fn globs() -> Vec<String> {
    let mut globs = Vec::new();
    for i in 0..10 {
        if i % 2 == 0 {
            globs.push(format!("src/m{i:02}/**"));
            globs.push(format!("gone{i}/**/*.rs"));
        } else {
            globs.push(format!("**/d{:04}/*.ts", i * 97));
            globs.push(format!("*.never{i}"));
        }
    }
    globs
}

#[divan::bench(sample_count = 10)]
fn walk_and_match(bencher: divan::Bencher) {
    let root = repository();
    let rules = [ScopedRule {
        path: "r.md".into(),
        dir: String::new(),
        globs: globs()
            .into_iter()
            .map(|text| ScopeGlob { text, span: 0..0 })
            .collect(),
    }];
    bencher.bench(|| {
        let mut trial = GlobTrial::new(&rules, 0..1);
        let walked = walk::walk(root, Limits::default(), |path| {
            trial.try_path(path, |_| true)
        });
        assert!(walked.files > FILES && !walked.truncated);
        assert_eq!(walked.nested, ["src/m00"]);
        assert_eq!(trial.unmatched().count(), 10);
        walked.files
    });
}

#[divan::bench(sample_count = 10)]
fn check(bencher: divan::Bencher) {
    let root = repository();
    let home = root.join("home-not-there");
    bencher.bench(|| {
        let session = Session::from_parts(
            root.to_path_buf(),
            Some(home.clone()),
            Cow::Borrowed(pi_rules_core::settings::Schema::embedded()),
        );
        let opts = CheckOptions {
            session: &session,
            package: PackageSource::Embedded(&[]),
            strict: false,
        };
        let report = check::check(&opts).expect("check");
        assert!(report.files >= 2);
        report.diagnostics.len()
    });
}
