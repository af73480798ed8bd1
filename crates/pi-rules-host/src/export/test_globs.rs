//! What the export's property tests share (the dialect's translation against each agent's
//! matcher, and the round trip through import): generated globs and paths from a small grammar,
//! every path of a small tree, and our own matcher for a list of globs.

use pi_rules_core::rule_scope::{ScopeMatcher, ScopeMatcherBuilder};
use proptest::prelude::*;

/// A glob of up to three of `parts` joined by `/`: slashless, anchored (a leading `/` or `./`,
/// or a `/` inside), or a folder (a trailing `/`).
pub(super) fn glob_strategy(parts: &'static [&'static str]) -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "/", "./"]),
        prop::collection::vec(prop::sample::select(parts), 1..4),
        any::<bool>(),
    )
        .prop_map(|(lead, parts, folder)| {
            let mut g = format!("{lead}{}", parts.join("/"));
            if folder {
                g.push('/');
            }
            g
        })
}

/// A path of up to three folders of `dirs` and a file of `files`.
pub(super) fn path_strategy(
    dirs: Vec<&'static str>,
    files: &'static [&'static str],
) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(dirs), 0..4),
        prop::sample::select(files),
    )
        .prop_map(|(mut parts, file)| {
            parts.push(file);
            parts.join("/")
        })
}

/// Every path of up to three folders of `dirs` and a file of `files`.
pub(super) fn all_paths(dirs: &[&str], files: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = vec![String::new()];
    let mut level = all.clone();
    for _ in 0..3 {
        level = level
            .iter()
            .flat_map(|d| dirs.iter().map(move |p| format!("{d}{p}/")))
            .collect();
        all.extend(level.iter().cloned());
    }
    all.iter()
        .flat_map(|d| files.iter().map(move |f| format!("{d}{f}")))
        .collect()
}

/// Our matcher for `globs`, each a rule's glob at the root.
pub(super) fn ours<S: AsRef<str>>(globs: &[S]) -> ScopeMatcher {
    let mut builder = ScopeMatcherBuilder::new();
    for (i, g) in globs.iter().enumerate() {
        builder.add(0, i, g.as_ref()).unwrap();
    }
    builder.build()
}
