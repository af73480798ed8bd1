//! Export then import, for random scoped rules: [`forms::place`] writes a rule's file for each
//! agent with a glob form, [`import::import`] reads that file back as its kind, and the globs it
//! gives match the files the rule's own globs match (pi-rules' meaning both times, through the
//! core's [`ScopeMatcher`]).

use super::dialect::Dialect;
use super::forms::{self, Placement, ScopedRule};
use super::import::{self, locate};
use super::test_globs::{all_paths, glob_strategy, ours, path_strategy};
use super::Target;
use pi_rules_core::rule_scope::ScopeMatcher;
use proptest::prelude::*;

const TARGETS: [Target; 6] = [
    Target::Claude,
    Target::Copilot,
    Target::Cursor,
    Target::Windsurf,
    Target::Kiro,
    Target::Cline,
];

/// Parts of a glob: names, wildcards, `**`, braces (folder names never look like a file
/// pattern: `translate` gives an agent without folder meaning `*.ts` as files only).
const PARTS: &[&str] = &[
    "src",
    "api",
    "lib",
    "*",
    "**",
    "*.ts",
    "*.md",
    "a*",
    "{src,lib}",
    "*.{ts,md}",
    "{api,web}",
    "[!s]*",
    "?pi",
    "a #b",
    "[ab]*",
    "{a,b/c}",
];
const DIRS: &[&str] = &["src", "api", "lib", "web", "a", "packages", "a #b", "b"];
const FILES: &[&str] = &["a.ts", "b.md", "src", "api", "x.rs", "Makefile"];

/// Whether globs relative to `dir` (`""`: the root; none: the whole directory) match `path`,
/// relative to the root.
fn in_scope(dir: &str, globs: &ScopeMatcher, none: bool, path: &str) -> bool {
    let rel = if dir.is_empty() {
        Some(path)
    } else {
        path.strip_prefix(dir).and_then(|r| r.strip_prefix('/'))
    };
    rel.is_some_and(|rel| none || globs.is_match(rel))
}

/// The file `place` says to write for `target`, as a person would keep it (the generated-by
/// line taken out: import skips the files export wrote), imported as the kind its path says:
/// the directory it is for and its globs; `None` where nothing is written as a file.
fn exported_then_imported(
    target: Target,
    rule: &ScopedRule,
) -> Option<(String, Vec<String>, Vec<String>)> {
    let placed = forms::place(target, rule);
    let Placement::Owned { path, frontmatter } = placed.placement else {
        return None;
    };
    let parts: Vec<&str> = path.split('/').collect();
    let located = locate(&parts).unwrap_or_else(|| panic!("{path} is no agent's file"));
    let bytes = format!("{frontmatter}{}", rule.text);
    let imported = import::import(located.kind, bytes.as_bytes())
        .unwrap_or_else(|skip| panic!("{path}: {skip}\n{bytes}"));
    let dir = parts[..located.dir].join("/");
    Some((dir, imported.paths, placed.warnings))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    /// A scoped rule placed for each agent and read back by import matches the same files
    /// (but where `place` says what the agent cannot keep, other than case).
    #[test]
    fn a_placed_rule_imports_back_to_globs_that_match_the_same_files(
        globs in prop::collection::vec(glob_strategy(PARTS), 1..3),
        nested in any::<bool>(),
        paths in prop::collection::vec(path_strategy(DIRS.to_vec(), FILES), 1..40),
    ) {
        prop_assume!(globs.iter().all(|g| pi_rules_core::rule_scope::compile_glob(g).is_ok()));
        let dir = if nested { "packages" } else { "" };
        let paths: Vec<String> = if nested {
            paths.iter().map(|p| format!("packages/{p}")).chain(paths.iter().cloned()).collect()
        } else {
            paths
        };
        let rule = ScopedRule { name: "50-api", dir, globs: &globs, text: "Api.\n" };
        for target in TARGETS {
            let Some((back_dir, back, warnings)) = exported_then_imported(target, &rule) else {
                continue;
            };
            if warnings.iter().any(|w| !w.contains("ignoring case")) {
                continue;
            }
            let (ours, theirs) = (ours(&globs), ours(&back));
            for path in &paths {
                let want = in_scope(dir, &ours, globs.is_empty(), path);
                let got = in_scope(&back_dir, &theirs, back.is_empty(), path);
                prop_assert_eq!(
                    want, got,
                    "{:?} {:?} in {:?} came back as {:?} in {:?}, at {}",
                    Dialect::of(target), globs, dir, back, back_dir, path
                );
            }
        }
    }
}

/// Each construct of the grammar, for each agent, at the root and nested: a file is written,
/// nothing is said lost but case, and import gives back globs that match the same files (the
/// property above skips what it cannot compare; this says that each construct is compared).
#[test]
fn each_construct_round_trips_for_each_agent() {
    let paths = all_paths(DIRS, FILES);
    for glob in [
        "*.ts",
        "Makefile",
        "src/api/**",
        "/src/**",
        "./lib/**",
        "src/api",
        "/api",
        "src/",
        "**/*.md",
        "src/**/*.ts",
        "*.{ts,md}",
        "{src,lib}/**",
        "{api,web}/*.ts",
        "a*/**",
    ] {
        for dir in ["", "packages", "packages/web"] {
            let globs = [glob.to_owned()];
            let rule = ScopedRule {
                name: "50-api",
                dir,
                globs: &globs,
                text: "Api.\n",
            };
            for target in TARGETS {
                let what = format!("{target:?} {glob} in {dir:?}");
                let (back_dir, back, warnings) =
                    exported_then_imported(target, &rule).unwrap_or_else(|| panic!("{what}"));
                // A name anchored at the root (`/api`) has no slash left for the agents that
                // read a slashless pattern at any depth: said, and not compared.
                let slashless = glob == "/api"
                    && dir.is_empty()
                    && Dialect::of(target).is_some_and(Dialect::comma_separated);
                if slashless {
                    assert!(
                        warnings.iter().any(|w| w.contains("cannot be anchored")),
                        "{what}: {warnings:?}"
                    );
                    continue;
                }
                assert!(
                    warnings.iter().all(|w| w.contains("ignoring case")),
                    "{what}: {warnings:?}"
                );
                let (ours, theirs) = (ours(&globs), ours(&back));
                for path in &paths {
                    assert_eq!(
                        in_scope(dir, &ours, false, path),
                        in_scope(&back_dir, &theirs, back.is_empty(), path),
                        "{what}: came back as {back:?} in {back_dir:?}, at {path}"
                    );
                }
            }
        }
    }
}

/// Regression (found by the round trip): an agent without folder meaning read `src/api` as a
/// file of that name, and import gave the folder's files without a word; it now says so, as it
/// says of `src/*`. A name at any depth or with a dot is a file's, and is not said.
#[test]
fn import_says_a_folder_path_now_matches_the_folder_s_files() {
    for d in [
        Dialect::Copilot,
        Dialect::Cursor,
        Dialect::Windsurf,
        Dialect::Kiro,
        Dialect::Cline,
    ] {
        let (globs, warnings) = super::dialect::read_value(d, "src/api");
        assert_eq!(globs, ["/src/api"], "{d:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("`/src/api` also matches the files in the folders it names")),
            "{d:?}: {warnings:?}"
        );
        for quiet in [
            "Makefile",
            "**/Makefile",
            "src/main.rs",
            "src/**",
            "src/api/**",
        ] {
            let (_, warnings) = super::dialect::read_value(d, quiet);
            assert!(
                !warnings.iter().any(|w| w.contains("folders it names")),
                "{d:?} {quiet}: {warnings:?}"
            );
        }
    }
    // Claude Code reads a folder's path as the folder: nothing to say.
    let (_, warnings) = super::dialect::read_value(Dialect::Claude, "src/api");
    assert!(warnings.is_empty(), "{warnings:?}");
}
