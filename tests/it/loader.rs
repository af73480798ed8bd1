//! Black-box tests of layer loading (`pi_rules_host::loader`) on temporary trees, and of repository
//! root discovery (`pi_rules_host::repo`) against the installed git.

use crate::common;

use common::{git, mkfifo};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pi_rules::invocation::process_env;
use pi_rules_host::loader::{
    compare_names, load, Candidate, FailureReason, Layer, LayerDirs, Loaded, PackageSource, Pick,
    SpecialKind, MAX_RULE_BYTES, READ_LIMIT,
};
use pi_rules_host::repo::{self, Discovery};
use tempfile::TempDir;

/// A temporary tree with the three layer directories (created on demand).
struct Tree {
    _tmp: TempDir,
    root: PathBuf,
    package: PathBuf,
    user: PathBuf,
    project: PathBuf,
}

impl Tree {
    /// A tree whose three layer directories exist and are empty.
    fn new() -> Tree {
        let tree = Tree::bare();
        for dir in [&tree.package, &tree.user, &tree.project] {
            fs::create_dir_all(dir).unwrap();
        }
        tree
    }

    /// A tree whose layer directories do not exist.
    fn bare() -> Tree {
        let tmp = TempDir::new().unwrap();
        let root = tmp.path().to_path_buf();
        Tree {
            package: root.join("pkg"),
            user: root.join("home/.pi/agent/rules"),
            project: root.join("proj/.pi/rules"),
            root,
            _tmp: tmp,
        }
    }

    fn dir(&self, layer: Layer) -> &Path {
        match layer {
            Layer::Package => &self.package,
            Layer::User => &self.user,
            Layer::Project => &self.project,
        }
    }

    fn write(&self, layer: Layer, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir(layer).join(name);
        fs::write(&path, content).unwrap();
        path
    }

    fn link(&self, layer: Layer, name: &str, target: impl AsRef<Path>) -> PathBuf {
        let path = self.dir(layer).join(name);
        symlink(target, &path).unwrap();
        path
    }

    fn dirs(&self) -> LayerDirs {
        LayerDirs::standard(
            PackageSource::Dir(self.package.clone()),
            Some(&self.root.join("home")),
            &self.root.join("proj"),
        )
    }

    fn load(&self) -> Loaded {
        load(&self.dirs())
    }
}

/// The taken files as (name, layer, text).
fn taken(loaded: &Loaded) -> Vec<(&str, Layer, &str)> {
    loaded
        .files
        .iter()
        .map(|file| (file.name.as_str(), file.layer, file.text.as_ref()))
        .collect()
}

/// The reported names, in order.
fn names(loaded: &Loaded) -> Vec<&str> {
    loaded
        .names
        .iter()
        .map(|report| report.name.as_str())
        .collect()
}

/// The outcome for `name`.
fn outcome<'a>(loaded: &'a Loaded, name: &str) -> &'a Pick {
    &loaded
        .names
        .iter()
        .find(|report| report.name == name)
        .unwrap_or_else(|| panic!("no report for {name}"))
        .outcome
}

fn layers(candidates: &[Candidate]) -> Vec<Layer> {
    candidates.iter().map(|candidate| candidate.layer).collect()
}

/// Loads on another thread and fails the test if that takes more than a second.
fn load_within_a_second(tree: &Tree) -> Loaded {
    let dirs = tree.dirs();
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(load(&dirs));
    });
    receive
        .recv_timeout(Duration::from_secs(1))
        .expect("loading took more than a second")
}

#[test]
fn higher_layers_override_by_name() {
    let tree = Tree::new();
    tree.write(Layer::Package, "a.md", "pkg a");
    tree.write(Layer::Package, "b.md", "pkg b");
    tree.write(Layer::Package, "c.md", "pkg c");
    tree.write(Layer::User, "b.md", "user b");
    tree.write(Layer::User, "c.md", "user c");
    tree.write(Layer::Project, "c.md", "project c");
    tree.write(Layer::Project, "d.md", "project d");
    let loaded = tree.load();
    assert_eq!(
        taken(&loaded),
        vec![
            ("a.md", Layer::Package, "pkg a"),
            ("b.md", Layer::User, "user b"),
            ("c.md", Layer::Project, "project c"),
            ("d.md", Layer::Project, "project d"),
        ]
    );
    assert!(!loaded.fallback);
    assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
    let c = loaded.names.iter().find(|r| r.name == "c.md").unwrap();
    assert_eq!(
        layers(&c.candidates),
        vec![Layer::Project, Layer::User, Layer::Package]
    );
    match &c.outcome {
        Pick::Taken {
            winner,
            masked,
            fell_back_from,
            shadows,
        } => {
            assert_eq!(winner.layer, Layer::Project);
            assert_eq!(winner.path.as_deref(), Some(&*tree.project.join("c.md")));
            assert!(!masked);
            assert!(fell_back_from.is_empty());
            assert_eq!(layers(shadows), vec![Layer::User, Layer::Package]);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        loaded.files[2].path.as_deref(),
        Some(&*tree.project.join("c.md"))
    );
}

#[test]
fn only_md_files_and_links_are_listed() {
    let tree = Tree::new();
    tree.write(Layer::Project, "x.MD", "upper");
    tree.write(Layer::Project, "notes.txt", "text");
    tree.write(Layer::Project, "a.md.bak", "backup");
    tree.write(Layer::Project, "b.markdown", "markdown");
    tree.write(Layer::Project, ".md", "dot md");
    tree.write(Layer::Project, "y.md", "y");
    fs::create_dir(tree.project.join("x.md")).unwrap();
    tree.link(Layer::Project, "z.md", tree.project.join("notes.txt"));
    let loaded = tree.load();
    assert_eq!(names(&loaded), vec![".md", "y.md", "z.md"]);
    assert_eq!(
        taken(&loaded),
        vec![
            (".md", Layer::Project, "dot md"),
            ("y.md", Layer::Project, "y"),
            ("z.md", Layer::Project, "text"),
        ]
    );
}

#[test]
fn dangling_link_falls_back() {
    let tree = Tree::new();
    tree.write(Layer::Package, "a.md", "package");
    tree.link(Layer::Project, "a.md", tree.project.join("does-not-exist"));
    let loaded = tree.load();
    assert_eq!(taken(&loaded), vec![("a.md", Layer::Package, "package")]);
    match outcome(&loaded, "a.md") {
        Pick::Taken {
            winner,
            fell_back_from,
            shadows,
            ..
        } => {
            assert_eq!(winner.layer, Layer::Package);
            assert_eq!(fell_back_from.len(), 1);
            assert_eq!(fell_back_from[0].candidate.layer, Layer::Project);
            assert!(fell_back_from[0].candidate.is_symlink);
            match &fell_back_from[0].reason {
                FailureReason::Stat(err) => {
                    assert_eq!(err.kind, std::io::ErrorKind::NotFound)
                }
                other => panic!("unexpected {other:?}"),
            }
            assert!(shadows.is_empty());
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(loaded.notes.len(), 1, "{:?}", loaded.notes);
}

#[test]
fn link_to_directory_falls_back() {
    let tree = Tree::new();
    fs::create_dir(tree.root.join("adir")).unwrap();
    tree.write(Layer::User, "a.md", "user");
    tree.link(Layer::Project, "a.md", tree.root.join("adir"));
    let loaded = tree.load();
    assert_eq!(taken(&loaded), vec![("a.md", Layer::User, "user")]);
    match outcome(&loaded, "a.md") {
        Pick::Taken { fell_back_from, .. } => {
            assert_eq!(fell_back_from[0].reason, FailureReason::Directory)
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn oversized_file_hides_lower_copies() {
    let tree = Tree::new();
    tree.write(Layer::Package, "big.md", "package");
    tree.write(Layer::User, "big.md", "user");
    tree.write(Layer::Project, "big.md", vec![b'x'; READ_LIMIT as usize]);
    tree.write(Layer::Project, "small.md", "small");
    let loaded = tree.load();
    assert_eq!(taken(&loaded), vec![("small.md", Layer::Project, "small")]);
    assert!(!loaded.fallback);
    match outcome(&loaded, "big.md") {
        Pick::Oversized {
            winner,
            size,
            by_read,
            fell_back_from,
            hides,
        } => {
            assert_eq!(winner.layer, Layer::Project);
            assert_eq!(*size, 131_073);
            assert!(!by_read);
            assert!(fell_back_from.is_empty());
            assert_eq!(layers(hides), vec![Layer::User, Layer::Package]);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        loaded.notes.iter().any(|note| note.contains("131072")),
        "{:?}",
        loaded.notes
    );
}

#[test]
fn oversized_only_is_fallback() {
    let tree = Tree::new();
    tree.write(Layer::Package, "big.md", vec![b'x'; 200_000]);
    let loaded = tree.load();
    assert!(loaded.files.is_empty());
    assert!(loaded.fallback);
    assert!(matches!(
        outcome(&loaded, "big.md"),
        Pick::Oversized { size: 200_000, .. }
    ));
}

#[test]
fn exactly_the_limit_is_taken() {
    let tree = Tree::new();
    tree.write(Layer::Package, "a.md", "package");
    tree.write(Layer::Project, "a.md", vec![b'y'; MAX_RULE_BYTES as usize]);
    let loaded = tree.load();
    assert_eq!(loaded.files.len(), 1);
    assert_eq!(loaded.files[0].layer, Layer::Project);
    assert_eq!(loaded.files[0].text.len(), 131_072);
}

#[test]
fn link_to_dev_null_masks() {
    let tree = Tree::new();
    tree.write(Layer::Package, "a.md", "package");
    tree.link(Layer::User, "a.md", "/dev/null");
    let loaded = tree.load();
    assert_eq!(taken(&loaded), vec![("a.md", Layer::User, "")]);
    assert!(!loaded.fallback);
    match outcome(&loaded, "a.md") {
        Pick::Taken {
            masked, shadows, ..
        } => {
            assert!(masked);
            assert_eq!(layers(shadows), vec![Layer::Package]);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn link_to_empty_file_is_not_a_mask() {
    let tree = Tree::new();
    fs::write(tree.root.join("empty"), "").unwrap();
    tree.write(Layer::Package, "a.md", "package");
    tree.link(Layer::Project, "a.md", tree.root.join("empty"));
    let loaded = tree.load();
    assert_eq!(taken(&loaded), vec![("a.md", Layer::Project, "")]);
    assert!(matches!(
        outcome(&loaded, "a.md"),
        Pick::Taken { masked: false, .. }
    ));
}

#[test]
fn link_to_dev_zero_is_oversized_quickly() {
    let tree = Tree::new();
    tree.write(Layer::Package, "a.md", "package");
    tree.link(Layer::Project, "a.md", "/dev/zero");
    let loaded = load_within_a_second(&tree);
    assert!(loaded.files.is_empty());
    assert!(loaded.fallback);
    match outcome(&loaded, "a.md") {
        Pick::Oversized {
            size,
            by_read,
            hides,
            ..
        } => {
            assert_eq!(*size, READ_LIMIT);
            assert!(by_read);
            assert_eq!(layers(hides), vec![Layer::Package]);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn link_to_fifo_does_not_block_and_falls_back() {
    let tree = Tree::new();
    let fifo = tree.root.join("pipe");
    mkfifo(&fifo);
    tree.write(Layer::Package, "a.md", "package");
    tree.link(Layer::Project, "a.md", &fifo);
    let loaded = load_within_a_second(&tree);
    assert_eq!(taken(&loaded), vec![("a.md", Layer::Package, "package")]);
    match outcome(&loaded, "a.md") {
        Pick::Taken { fell_back_from, .. } => assert_eq!(
            fell_back_from[0].reason,
            FailureReason::Special(SpecialKind::Fifo)
        ),
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        loaded.notes.iter().any(|note| note.contains("FIFO")),
        "{:?}",
        loaded.notes
    );
}

#[test]
fn fifo_entry_is_not_listed() {
    let tree = Tree::new();
    mkfifo(&tree.project.join("f.md"));
    let loaded = load_within_a_second(&tree);
    assert!(loaded.names.is_empty());
    assert!(loaded.fallback);
}

#[test]
fn only_a_fifo_is_unreadable() {
    let tree = Tree::new();
    let fifo = tree.root.join("pipe");
    mkfifo(&fifo);
    tree.link(Layer::Project, "a.md", &fifo);
    let loaded = load_within_a_second(&tree);
    assert!(loaded.fallback);
    match outcome(&loaded, "a.md") {
        Pick::Unreadable { failures } => assert_eq!(
            failures[0].reason,
            FailureReason::Special(SpecialKind::Fifo)
        ),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn link_to_socket_falls_back() {
    let tree = Tree::new();
    let socket = tree.root.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    tree.write(Layer::User, "s.md", "user");
    tree.link(Layer::Project, "s.md", &socket);
    let loaded = load_within_a_second(&tree);
    assert_eq!(taken(&loaded), vec![("s.md", Layer::User, "user")]);
    match outcome(&loaded, "s.md") {
        Pick::Taken { fell_back_from, .. } => assert_eq!(
            fell_back_from[0].reason,
            FailureReason::Special(SpecialKind::Socket)
        ),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn link_loop_falls_back() {
    let tree = Tree::new();
    tree.write(Layer::User, "a.md", "user");
    tree.link(Layer::Project, "a.md", tree.project.join("loop"));
    tree.link(Layer::Project, "loop", tree.project.join("a.md"));
    let loaded = load_within_a_second(&tree);
    assert_eq!(taken(&loaded), vec![("a.md", Layer::User, "user")]);
    match outcome(&loaded, "a.md") {
        Pick::Taken { fell_back_from, .. } => {
            assert!(matches!(fell_back_from[0].reason, FailureReason::Stat(_)))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn link_into_the_package_layer_reads_the_package_text() {
    let tree = Tree::new();
    let target = tree.write(Layer::Package, "a.md", "package");
    tree.link(Layer::Project, "a.md", target);
    let loaded = tree.load();
    assert_eq!(taken(&loaded), vec![("a.md", Layer::Project, "package")]);
}

#[test]
fn invalid_utf8_becomes_replacement_and_bom_is_kept() {
    let tree = Tree::new();
    tree.write(Layer::Project, "bad.md", b"a\xffb\xe2\x82c");
    tree.write(Layer::Project, "bom.md", b"\xef\xbb\xbfx");
    let loaded = tree.load();
    assert_eq!(loaded.files[0].name, "bad.md");
    assert_eq!(loaded.files[0].text, "a\u{fffd}b\u{fffd}c");
    assert!(loaded.files[0].had_invalid_utf8);
    assert_eq!(loaded.files[1].text, "\u{feff}x");
    assert!(!loaded.files[1].had_invalid_utf8);
}

#[test]
fn missing_layer_dirs_are_silent() {
    let tree = Tree::bare();
    let loaded = tree.load();
    assert!(loaded.names.is_empty());
    assert!(loaded.fallback);
    assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
}

#[test]
fn layer_path_that_is_a_file_is_a_note() {
    let tree = Tree::new();
    fs::remove_dir(&tree.user).unwrap();
    fs::write(&tree.user, "not a directory").unwrap();
    tree.write(Layer::Package, "a.md", "package");
    let loaded = tree.load();
    assert_eq!(taken(&loaded), vec![("a.md", Layer::Package, "package")]);
    assert_eq!(loaded.notes.len(), 1, "{:?}", loaded.notes);
    assert!(
        loaded.notes[0].contains("user layer"),
        "{}",
        loaded.notes[0]
    );
}

#[test]
fn non_utf8_name_is_skipped_with_a_note() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let tree = Tree::new();
    fs::write(tree.project.join(OsStr::from_bytes(b"\xff.md")), "x").unwrap();
    let loaded = tree.load();
    assert!(loaded.names.is_empty());
    assert_eq!(loaded.notes.len(), 1, "{:?}", loaded.notes);
}

/// The order Node 20 (ICU 78) gives with `names.sort((a, b) => a.localeCompare(b))`. SPEC §1's
/// example puts `a.md` and `A.md` before `a_b.md` and `a-b.md`; real `localeCompare` (and ICU4X)
/// puts them after, as here.
const LOCALE_COMPARE_ORDER: &[&str] = &[
    "_x.md",
    "-x.md",
    ".md",
    "0-x.md",
    "00-base.md",
    "00-orchestrator-core.md",
    "00-x.md",
    "05-a.md",
    "10_agent.md",
    "10-agent_routing.md",
    "10-agent-routing.md",
    "10-agent-x.md",
    "10-Agent.md",
    "100-x.md",
    "100-z.md",
    "20-code-review-loop.md",
    "20-y.md",
    "40-critical-rules.md",
    "40-Critical.md",
    "55-coms-protocol.md",
    "60-task-tracking.md",
    "75-mine.md",
    "9-late.md",
    "90-bad.md",
    "90-bom.md",
    "90-crlf.md",
    "95-proj.md",
    "a b.md",
    "a_b.md",
    "a-b.md",
    "a.md",
    "A.md",
    "e.md",
    "é.md",
    "Z.md",
    "日本.md",
];

#[test]
fn names_sort_in_locale_compare_order() {
    let tree = Tree::new();
    // Spread the names over the layers, in reverse, so neither layer nor byte order helps.
    let all = [Layer::Package, Layer::User, Layer::Project];
    for (i, name) in LOCALE_COMPARE_ORDER.iter().rev().enumerate() {
        tree.write(all[i % 3], name, *name);
    }
    let loaded = tree.load();
    assert_eq!(names(&loaded), LOCALE_COMPARE_ORDER);
    let files: Vec<&str> = loaded.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(files, LOCALE_COMPARE_ORDER);
}

#[test]
fn spec_example_order_where_it_agrees_with_locale_compare() {
    let spec = [
        "_x.md",
        "-x.md",
        "0-x.md",
        "00-x.md",
        "10-agent_routing.md",
        "10-agent-routing.md",
        "100-x.md",
        "20-y.md",
        "9-late.md",
        "a_b.md",
        "a-b.md",
        "a.md",
        "A.md",
        "é.md",
        "Z.md",
    ];
    for pair in spec.windows(2) {
        assert_eq!(
            compare_names(pair[0], pair[1]),
            std::cmp::Ordering::Less,
            "{} < {}",
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn empty_layers_are_fallback() {
    let tree = Tree::new();
    let loaded = tree.load();
    assert!(loaded.names.is_empty());
    assert!(loaded.files.is_empty());
    assert!(loaded.fallback);
    assert!(loaded.notes.is_empty());
}

#[test]
fn all_unreadable_is_fallback() {
    let tree = Tree::new();
    fs::create_dir(tree.root.join("adir")).unwrap();
    tree.link(Layer::Project, "a.md", tree.root.join("missing"));
    tree.link(Layer::Package, "a.md", tree.root.join("adir"));
    let loaded = tree.load();
    assert!(loaded.files.is_empty());
    assert!(loaded.fallback);
    match outcome(&loaded, "a.md") {
        Pick::Unreadable { failures } => {
            assert_eq!(failures.len(), 2);
            assert_eq!(failures[0].candidate.layer, Layer::Project);
            assert!(matches!(failures[0].reason, FailureReason::Stat(_)));
            assert_eq!(failures[1].candidate.layer, Layer::Package);
            assert_eq!(failures[1].reason, FailureReason::Directory);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(loaded.names[0].winner().is_none());
}

#[test]
fn embedded_package_layer() {
    static RULES: &[(&str, &str)] = &[("b.md", "B"), ("a.md", "A"), ("notes.txt", "N")];
    let tree = Tree::new();
    tree.write(Layer::User, "b.md", "user b");
    let loaded = load(&LayerDirs {
        package: PackageSource::Embedded(RULES),
        user: Some(tree.user.clone()),
        project: tree.project.clone(),
        files: Default::default(),
    });
    assert_eq!(
        taken(&loaded),
        vec![
            ("a.md", Layer::Package, "A"),
            ("b.md", Layer::User, "user b")
        ]
    );
    assert_eq!(loaded.files[0].path, None);
    match outcome(&loaded, "b.md") {
        Pick::Taken { shadows, .. } => {
            assert_eq!(shadows.len(), 1);
            assert_eq!(shadows[0].path, None);
            assert_eq!(shadows[0].display_path("b.md"), "<embedded>/b.md");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn files_are_read_afresh_on_every_call() {
    let tree = Tree::new();
    let path = tree.write(Layer::Project, "a.md", "first");
    assert_eq!(tree.load().files[0].text, "first");
    fs::write(&path, "second").unwrap();
    assert_eq!(tree.load().files[0].text, "second");
    fs::remove_file(&path).unwrap();
    assert!(tree.load().fallback);
}

#[test]
fn symlinked_layer_directory_is_followed() {
    let tree = Tree::new();
    let real = tree.root.join("real-rules");
    fs::create_dir(&real).unwrap();
    fs::write(real.join("a.md"), "via link").unwrap();
    fs::remove_dir(&tree.project).unwrap();
    symlink(&real, &tree.project).unwrap();
    let loaded = tree.load();
    assert_eq!(taken(&loaded), vec![("a.md", Layer::Project, "via link")]);
}

// ---------------------------------------------------------------------------------------------
// Repository root discovery.

/// `git init` plus one empty commit, in `dir`.
fn init_repo(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", "initial"]);
}

/// Canonical form for comparisons.
fn real(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap()
}

/// Checks that native discovery answers without git and agrees with the spawned git, exactly
/// (same spelling) and canonically; returns the root.
fn assert_native_matches_git(cwd: &Path) -> Option<PathBuf> {
    let from_git = repo::repo_root_from_git(&process_env(), cwd, repo::GIT_TIMEOUT);
    let native = match repo::discover(cwd) {
        Discovery::Root(root) => Some(root),
        Discovery::NotARepository => None,
        Discovery::NeedsGit(reason) => panic!("native discovery gave up in {cwd:?}: {reason}"),
    };
    assert_eq!(native, from_git, "native vs git in {cwd:?}");
    assert_eq!(
        native.as_deref().map(real),
        from_git.as_deref().map(real),
        "canonical native vs git in {cwd:?}"
    );
    native
}

#[test]
fn repo_root_plain_repository() {
    let tmp = TempDir::new().unwrap();
    let top = tmp.path().join("main");
    init_repo(&top);
    fs::create_dir_all(top.join("sub/deep")).unwrap();
    for cwd in [top.clone(), top.join("sub"), top.join("sub/deep")] {
        let root = assert_native_matches_git(&cwd).unwrap();
        assert_eq!(real(&root), real(&top));
    }
    assert_eq!(
        repo::repo_root(&process_env(), &top.join("sub")),
        Some(top.clone())
    );
}

#[test]
fn repo_root_through_a_symlinked_cwd_keeps_the_given_spelling() {
    let tmp = TempDir::new().unwrap();
    let top = tmp.path().join("main");
    init_repo(&top);
    fs::create_dir(top.join("sub")).unwrap();
    let link = tmp.path().join("link");
    symlink(&top, &link).unwrap();
    let root = assert_native_matches_git(&link.join("sub")).unwrap();
    assert_eq!(root, link);
}

#[test]
fn repo_root_linked_worktree_is_the_main_checkout() {
    let tmp = TempDir::new().unwrap();
    let top = tmp.path().join("main");
    init_repo(&top);
    git(&top, &["worktree", "add", "-q", "../wt"]);
    let worktree = tmp.path().join("wt");
    fs::create_dir(worktree.join("sub")).unwrap();
    for cwd in [worktree.clone(), worktree.join("sub")] {
        let root = assert_native_matches_git(&cwd).unwrap();
        assert_eq!(real(&root), real(&top));
    }
}

#[test]
fn repo_root_relative_gitfile_like_a_submodule() {
    let tmp = TempDir::new().unwrap();
    let inner = tmp.path().join("inner");
    init_repo(&inner);
    let store = tmp.path().join("store");
    fs::rename(inner.join(".git"), &store).unwrap();
    fs::write(inner.join(".git"), "gitdir: ../store\n").unwrap();
    fs::create_dir(inner.join("d")).unwrap();
    for cwd in [inner.clone(), inner.join("d")] {
        let root = assert_native_matches_git(&cwd).unwrap();
        assert_eq!(real(&root), real(tmp.path()));
    }
}

#[test]
fn repo_root_separate_git_dir() {
    let tmp = TempDir::new().unwrap();
    let repo_dir = tmp.path().join("repo");
    let store = tmp.path().join("elsewhere/store");
    fs::create_dir(tmp.path().join("elsewhere")).unwrap();
    git(
        tmp.path(),
        &[
            "init",
            "-q",
            &format!("--separate-git-dir={}", store.display()),
            &repo_dir.display().to_string(),
        ],
    );
    let root = assert_native_matches_git(&repo_dir).unwrap();
    assert_eq!(real(&root), real(&tmp.path().join("elsewhere")));
}

#[test]
fn repo_root_outside_any_repository() {
    let tmp = TempDir::new().unwrap();
    fs::create_dir(tmp.path().join("plain")).unwrap();
    assert_eq!(assert_native_matches_git(&tmp.path().join("plain")), None);
    // A `.git` directory that is not a git directory is ignored, as git ignores it.
    fs::create_dir(tmp.path().join("plain/.git")).unwrap();
    assert_eq!(assert_native_matches_git(&tmp.path().join("plain")), None);
    assert_eq!(
        repo::repo_root(&process_env(), &tmp.path().join("plain")),
        None
    );
    assert_eq!(
        repo::repo_root(&process_env(), &tmp.path().join("missing")),
        None
    );
}

#[test]
fn repo_root_of_a_file_is_none() {
    let tmp = TempDir::new().unwrap();
    let top = tmp.path().join("main");
    init_repo(&top);
    fs::write(top.join("file"), "x").unwrap();
    assert_eq!(assert_native_matches_git(&top.join("file")), None);
}

#[test]
fn repo_root_bare_and_inside_git_dir_ask_git() {
    let tmp = TempDir::new().unwrap();
    let bare = tmp.path().join("b.git");
    git(tmp.path(), &["init", "-q", "--bare", "b.git"]);
    assert!(matches!(repo::discover(&bare), Discovery::NeedsGit(_)));
    let expected = repo::repo_root_from_git(&process_env(), &bare, repo::GIT_TIMEOUT);
    assert_eq!(expected.as_deref().map(real), Some(real(tmp.path())));
    assert_eq!(repo::repo_root(&process_env(), &bare), expected);

    let top = tmp.path().join("main");
    init_repo(&top);
    let inside = top.join(".git/refs");
    assert!(matches!(repo::discover(&inside), Discovery::NeedsGit(_)));
    assert_eq!(
        repo::repo_root(&process_env(), &inside)
            .as_deref()
            .map(real),
        Some(real(&top))
    );
}

#[test]
fn repo_root_unusual_format_asks_git() {
    let tmp = TempDir::new().unwrap();
    let top = tmp.path().join("main");
    init_repo(&top);
    git(&top, &["config", "core.repositoryformatversion", "1"]);
    git(&top, &["config", "extensions.unknownthing", "true"]);
    assert!(matches!(repo::discover(&top), Discovery::NeedsGit(_)));
    // Git refuses a repository with an unknown extension.
    assert_eq!(repo::repo_root(&process_env(), &top), None);

    let other = tmp.path().join("other");
    init_repo(&other);
    git(&other, &["config", "core.repositoryformatversion", "1"]);
    git(&other, &["config", "extensions.worktreeConfig", "true"]);
    assert!(matches!(repo::discover(&other), Discovery::NeedsGit(_)));
    assert_eq!(repo::repo_root(&process_env(), &other), Some(other.clone()));
}

#[test]
fn repo_root_foreign_owner_asks_git() {
    if rustix::process::geteuid().as_raw() != 0 {
        return; // Changing ownership needs root.
    }
    let tmp = TempDir::new().unwrap();
    let top = tmp.path().join("main");
    init_repo(&top);
    std::os::unix::fs::chown(&top, Some(4242), Some(4242)).unwrap();
    assert!(matches!(repo::discover(&top), Discovery::NeedsGit(_)));
    assert_eq!(
        repo::repo_root(&process_env(), &top),
        repo::repo_root_from_git(&process_env(), &top, repo::GIT_TIMEOUT)
    );
}

#[test]
fn repo_root_git_that_hangs_is_killed() {
    let tmp = TempDir::new().unwrap();
    let top = tmp.path().join("main");
    init_repo(&top);
    // Git opens HEAD without O_NONBLOCK: a FIFO there makes it block.
    fs::remove_file(top.join(".git/HEAD")).unwrap();
    mkfifo(&top.join(".git/HEAD"));
    assert_eq!(repo::discover(&top), Discovery::NotARepository);
    let started = Instant::now();
    assert_eq!(
        repo::repo_root_from_git(&process_env(), &top, Duration::from_millis(300)),
        None
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}
