//! The walk of the project directory that `check` makes for rule scopes: it finds the nested
//! rule directories (`packages/api/.pi/rules`) and tries every glob of the project and nested
//! rules on every file, to report the globs that match none (`PR1004`).
//!
//! The walk is the `ignore` crate's, which reads the directories and the ignore files itself
//! (not through [`Files`](crate::files::Files): it reads no rule or settings file, and the
//! editor's buffers do not change which files exist). It honours `.gitignore` files and
//! `.git/info/exclude` as git does (up to the repository root, and in a directory that is not in
//! a repository too), never git's global excludes (which would need the process environment),
//! skips `.git`, never follows a link, and stops at [`MAX_FILES`] files and [`MAX_DEPTH`]
//! directories deep. The globs are compiled once per walk into one [`ScopeMatcher`], each glob
//! its own owner, so that a file is tried against all of them at once.

use pi_rules_core::lint::scope::ancestors;
use pi_rules_core::lint::ScopedRule;
use pi_rules_core::rule_scope::{ScopeMatcher, ScopeMatcherBuilder};
use std::collections::HashSet;
use std::path::Path;

/// A walk stops after this many files: what it did not see, it cannot say matched nothing.
pub const MAX_FILES: usize = 1_000_000;
/// A walk goes at most this many directories below its root.
pub const MAX_DEPTH: usize = 64;

/// The bounds of a walk.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_files: usize,
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_files: MAX_FILES,
            max_depth: MAX_DEPTH,
        }
    }
}

/// What one walk saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walked {
    /// The directories below the root that hold a `.pi/rules` (a directory, or a link to one),
    /// from the root with `/` between their parts (`packages/api`), in the walk's order.
    pub nested: Vec<String>,
    /// How many files (and links to files) it handed on.
    pub files: usize,
    /// It stopped at [`Limits::max_files`] before it saw every file.
    pub truncated: bool,
}

/// Walks `root`, handing each file's path from `root` (`/` between its parts, UTF-8 names only)
/// to `each`, and noting the nested rule directories. Entries it cannot read are skipped.
pub fn walk(root: &Path, limits: Limits, mut each: impl FnMut(&str)) -> Walked {
    let mut walked = Walked::default();
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(false)
        .parents(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .max_depth(Some(limits.max_depth))
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(relative) = relative.to_str() else {
            continue;
        };
        if relative.is_empty() {
            continue;
        }
        if entry.file_name() == "rules" && (kind.is_dir() || kind.is_symlink()) {
            if let Some(dir) = relative.strip_suffix("/.pi/rules") {
                walked.nested.push(dir.to_owned());
            }
        }
        if kind.is_dir() {
            continue;
        }
        if walked.files == limits.max_files {
            walked.truncated = true;
            break;
        }
        walked.files += 1;
        each(relative);
    }
    walked
}

/// The globs of some rules, each its own owner in one [`ScopeMatcher`], and which of them have
/// matched a file so far.
pub struct GlobTrial {
    matcher: ScopeMatcher,
    /// Per owner: (rule index, glob index in the rule).
    owners: Vec<(usize, usize)>,
    matched: Vec<bool>,
    unmatched: usize,
    scratch: Vec<usize>,
    hits: Vec<(usize, usize)>,
}

impl GlobTrial {
    /// The globs of `rules[range]`; indexes are into `rules`.
    pub fn new(rules: &[ScopedRule], range: std::ops::Range<usize>) -> GlobTrial {
        let mut builder = ScopeMatcherBuilder::new();
        let mut owners = Vec::new();
        for (r, rule) in rules.iter().enumerate().take(range.end).skip(range.start) {
            for (g, glob) in rule.globs.iter().enumerate() {
                // The linter handed on usable globs only; one that fails here is left out.
                if builder.add(owners.len(), 0, &glob.text).is_ok() {
                    owners.push((r, g));
                }
            }
        }
        let unmatched = owners.len();
        GlobTrial {
            matcher: builder.build(),
            matched: vec![false; owners.len()],
            owners,
            unmatched,
            scratch: Vec::new(),
            hits: Vec::new(),
        }
    }

    /// Whether every glob has matched: the rest of the walk need not try any.
    pub fn is_done(&self) -> bool {
        self.unmatched == 0
    }

    /// Tries every glob on `path` (relative to the globs' directory); `keep` says which rules'
    /// globs may count it (by rule index).
    pub fn try_path(&mut self, path: &str, keep: impl Fn(usize) -> bool) {
        if self.unmatched == 0 {
            return;
        }
        self.matcher
            .matches_into(path, &mut self.scratch, &mut self.hits);
        for &(owner, _) in &self.hits {
            let (rule, _) = self.owners[owner];
            if !self.matched[owner] && keep(rule) {
                self.matched[owner] = true;
                self.unmatched -= 1;
            }
        }
    }

    /// The (rule, glob) pairs that matched nothing, in order.
    pub fn unmatched(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.owners
            .iter()
            .zip(&self.matched)
            .filter(|(_, &m)| !m)
            .map(|(&owner, _)| owner)
    }
}

/// Tries the globs of the nested rules `rules[range]` on the files below their directories,
/// each glob on the paths from its own rule's directory: the directories that no other one
/// holds are walked, once each. Returns the walks' total, and whether any stopped short.
pub fn try_nested(
    project: &Path,
    rules: &[ScopedRule],
    range: std::ops::Range<usize>,
    limits: Limits,
    trial: &mut GlobTrial,
) -> (usize, bool) {
    let dirs: HashSet<&str> = rules[range.clone()]
        .iter()
        .map(|r| r.dir.as_str())
        .collect();
    let mut tops: Vec<&str> = dirs
        .iter()
        .copied()
        .filter(|dir| !ancestors(dir).any(|up| dirs.contains(up)))
        .collect();
    tops.sort_unstable();
    let (mut files, mut truncated) = (0, false);
    let mut full = String::new();
    for top in tops {
        let left = limits.max_files.saturating_sub(files);
        let bounds = Limits {
            max_files: left,
            ..limits
        };
        let walked = walk(&project.join(top), bounds, |relative| {
            full.clear();
            full.push_str(top);
            full.push('/');
            full.push_str(relative);
            // Each directory above the file that is a rule's directory tries its globs on the
            // path from there.
            for (cut, _) in full.match_indices('/') {
                let dir = &full[..cut];
                if dirs.contains(dir) {
                    let from_dir = &full[cut + 1..];
                    trial.try_path(from_dir, |rule| rules[rule].dir == dir);
                }
            }
        });
        files += walked.files;
        truncated |= walked.truncated;
    }
    (files, truncated)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use pi_rules_core::lint::ScopeGlob;
    use std::fs;

    fn touch(root: &Path, path: &str) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
    }

    fn rule(dir: &str, globs: &[&str]) -> ScopedRule {
        ScopedRule {
            path: format!("{dir}/r.md").as_str().into(),
            dir: dir.to_owned(),
            globs: globs
                .iter()
                .map(|g| ScopeGlob {
                    text: (*g).to_owned(),
                    span: 0..0,
                })
                .collect(),
        }
    }

    #[test]
    fn the_walk_honours_gitignore_skips_git_and_finds_nested_rule_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for path in [
            "src/a.rs",
            "target/debug/x",
            ".git/HEAD",
            "packages/api/.pi/rules/90-x.md",
            "packages/api/src/h.ts",
            "ignored/.pi/rules/90-y.md",
            "docs/keep.log",
            ".pi/rules/90-root.md",
        ] {
            touch(root, path);
        }
        fs::write(root.join(".gitignore"), "target/\nignored/\n*.log\n").unwrap();
        fs::write(root.join("docs/.gitignore"), "!keep.log\n").unwrap();
        let mut seen = Vec::new();
        let walked = walk(root, Limits::default(), |p| seen.push(p.to_owned()));
        seen.sort();
        assert_eq!(
            seen,
            [
                ".gitignore",
                ".pi/rules/90-root.md",
                "docs/.gitignore",
                "docs/keep.log",
                "packages/api/.pi/rules/90-x.md",
                "packages/api/src/h.ts",
                "src/a.rs",
            ]
        );
        assert_eq!(walked.nested, ["packages/api"]);
        assert_eq!(walked.files, 7);
        assert!(!walked.truncated);
    }

    #[test]
    fn the_walk_stops_at_its_bounds_and_never_follows_links() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        for i in 0..10 {
            touch(&root, &format!("f{i}"));
        }
        touch(&root, "a/b/c/d/deep");
        touch(tmp.path(), "outside/o1");
        std::os::unix::fs::symlink(tmp.path().join("outside"), root.join("out")).unwrap();
        let limits = Limits {
            max_files: 4,
            max_depth: 64,
        };
        let walked = walk(&root, limits, |_| {});
        assert_eq!((walked.files, walked.truncated), (4, true));
        let mut seen = Vec::new();
        let limits = Limits {
            max_files: 100,
            max_depth: 3,
        };
        walk(&root, limits, |p| seen.push(p.to_owned()));
        // `out` is handed on as a link, never walked; `a/b/c/d/deep` is too deep.
        assert!(seen.contains(&"out".to_owned()), "{seen:?}");
        assert!(!seen
            .iter()
            .any(|p| p.starts_with("out/") || p.contains("deep")));
    }

    #[test]
    fn each_glob_is_tried_on_the_paths_from_its_own_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for path in ["packages/api/src/h.ts", "packages/api/v2/x.sql", "web/a.ts"] {
            touch(root, path);
        }
        let rules = [
            rule("", &["web/**", "nowhere/**", "*.ts"]),
            rule("packages/api", &["src/**", "v2/*.sql", "web/**"]),
            rule("packages/api/v2", &["*.sql", "src/**"]),
        ];
        let mut root_trial = GlobTrial::new(&rules, 0..1);
        walk(root, Limits::default(), |p| {
            root_trial.try_path(p, |_| true)
        });
        assert_eq!(root_trial.unmatched().collect::<Vec<_>>(), [(0, 1)]);
        let mut nested = GlobTrial::new(&rules, 1..3);
        let (files, truncated) = try_nested(root, &rules, 1..3, Limits::default(), &mut nested);
        assert_eq!((files, truncated), (2, false));
        // `web/**` is relative to `packages/api`; `src/**` to `packages/api/v2`.
        assert_eq!(nested.unmatched().collect::<Vec<_>>(), [(1, 2), (2, 1)]);
    }
}
