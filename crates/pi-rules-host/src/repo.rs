//! Repository root discovery, as `git rev-parse --git-common-dir` gives it (SPEC §4).
//!
//! The repository root is the parent of the directory that `git rev-parse --git-common-dir`
//! prints when run in `<cwd>`, resolved against `<cwd>` the way Node's `path.resolve` does
//! (lexically). Inside a linked worktree that is the main checkout's root. `None` means "not in a
//! repository" (or git refused); the caller then uses `<cwd>`.
//!
//! [`repo_root`] answers without spawning git in the common cases, by following git's own
//! discovery (`setup.c`): from the physical `<cwd>` upwards, stopping at a filesystem boundary,
//! each directory is checked for `.git` — a directory that passes git's `is_git_directory`
//! (`HEAD` a `refs/...` symlink or a file holding `ref: refs/...` or an object id; `objects/` and
//! `refs/` searchable in the common directory named by an optional `commondir` file), or a file
//! `gitdir: PATH` (linked worktree, submodule, `--separate-git-dir`) naming such a directory —
//! and then for being a git directory itself (a bare repository). The repository must pass
//! git's ownership check (the `.git` file, the worktree and the git directory owned by the
//! effective user) and its `config` must be plain enough to show that git accepts the repository
//! format (`core.repositoryformatversion` 0 or 1, no `[extensions]`).
//!
//! Whenever git's answer could differ from that walk, [`discover`] returns
//! [`Discovery::NeedsGit`] and [`repo_root`] runs `git rev-parse --git-common-dir` itself with a
//! [`GIT_TIMEOUT`] (killed when it runs over, which counts as "not a repository"): when one of
//! [`GIT_DISCOVERY_ENV`] is set (`GIT_DIR`, `GIT_COMMON_DIR`, `GIT_CEILING_DIRECTORIES`, ...),
//! for a bare repository or a working directory inside a git directory (`safe.bareRepository`),
//! when ownership differs (`safe.directory`), for a `.git` file or `commondir` that git would
//! reject, and for a `config` with extensions or lines this walk does not understand.
//!
//! Git never learns about a FIFO it would block on: a `HEAD`, `commondir` or `config` that is a
//! FIFO makes git wait for a writer until it is killed, so the walk decides "not a repository"
//! itself, at once. Every such file is opened without blocking and checked with `fstat` on the
//! open descriptor, never by a `stat` of the path before the open.
//!
//! When git is spawned ([`repo_root_from_git`]), it is found only through absolute `PATH`
//! entries ([`find_git`]) and run by its absolute path, with repository-selected programs
//! switched off ([`GIT_HARDENING`]).
//!
//! Known spelling difference: for a plain `.git` directory git prints a path relative to the
//! physical `<cwd>` (`../.git`), which is resolved against `<cwd>` as given, exactly as the
//! reference does; when `core.worktree` or `core.bare` make git print an absolute path instead,
//! the native answer still uses the relative form. Both name the same directory unless `<cwd>`
//! is reached through a symbolic link inside the working tree.

// Repository discovery asks about `.git` and its links itself: they are not rule or settings
// files.
#![allow(clippy::disallowed_methods)]

use crate::env::Env;
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the spawned `git rev-parse` may run before it is killed.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(2);

/// Environment variables that change git's discovery; when any is set, git is asked.
pub const GIT_DISCOVERY_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_OBJECT_DIRECTORY",
    "GIT_TEST_ASSUME_DIFFERENT_OWNER",
];

/// Options for the spawned git that switch off what a repository's own `config` could make it
/// run. `rev-parse --git-common-dir` runs none of these today; they keep it so should a git
/// version or a future call start to (the fsmonitor hook is run by any command that reads the
/// index). None of them changes where the repository is. System and global configuration are
/// still read: they can hold `safe.directory` and `safe.bareRepository`, which do change the
/// answer, and they belong to the user, not to the project.
pub const GIT_HARDENING: &[&str] = &[
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
];

/// The search path `execvp` uses when `PATH` is not set (glibc's `_CS_PATH`).
const DEFAULT_SEARCH_PATH: &str = "/bin:/usr/bin";

/// The largest `.git` file git reads (1 MiB).
const MAX_GITFILE_BYTES: u64 = 1 << 20;

/// The most bytes of `HEAD` git looks at.
const HEAD_PREFIX_BYTES: u64 = 255;

/// The largest `config` this walk inspects; a larger one is left to git.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// What native discovery found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discovery {
    /// The repository root: the parent of the common git directory.
    Root(PathBuf),
    /// Not inside a repository (git would fail).
    NotARepository,
    /// Git itself must answer; the reason says why.
    NeedsGit(String),
}

/// The repository root for `cwd`, or `None` when `cwd` is not in a repository.
///
/// Native discovery ([`discover`]) when no [`GIT_DISCOVERY_ENV`] variable is set, otherwise and
/// whenever discovery is unsure, `git rev-parse --git-common-dir` ([`repo_root_from_git`]).
pub fn repo_root(env: &Env, cwd: &Path) -> Option<PathBuf> {
    repo_root_of(env, cwd, || fs::canonicalize(cwd).ok())
}

/// [`repo_root`] for a caller that may already hold the physical path of `cwd`
/// (`fs::canonicalize`, `None` when it fails): `physical` is asked only when it is needed.
pub fn repo_root_of(
    env: &Env,
    cwd: &Path,
    physical: impl FnOnce() -> Option<PathBuf>,
) -> Option<PathBuf> {
    if GIT_DISCOVERY_ENV.iter().any(|name| env.is_set(name)) {
        return repo_root_from_git(env, cwd, GIT_TIMEOUT);
    }
    match discover_of(cwd, physical()) {
        Discovery::Root(root) => Some(root),
        Discovery::NotARepository => None,
        Discovery::NeedsGit(_) => repo_root_from_git(env, cwd, GIT_TIMEOUT),
    }
}

/// Native discovery of the repository root for `cwd`, without spawning git and ignoring the
/// environment (as git behaves with none of [`GIT_DISCOVERY_ENV`] set).
pub fn discover(cwd: &Path) -> Discovery {
    discover_of(cwd, fs::canonicalize(cwd).ok())
}

/// [`discover`] given the physical path of `cwd` (`None` when it has none).
fn discover_of(cwd: &Path, physical: Option<PathBuf>) -> Discovery {
    let Some(given) = absolute(cwd) else {
        return Discovery::NeedsGit("the current directory is unknown".to_owned());
    };
    // Git runs in the physical directory (the reference passes `cwd` to the child process).
    let Some(physical) = physical else {
        return Discovery::NotARepository;
    };
    // Git cannot run in something that is not a directory.
    let start = match fs::metadata(&physical) {
        Ok(metadata) if metadata.is_dir() => metadata,
        _ => return Discovery::NotARepository,
    };
    let device = start.dev();
    let mut dir = physical.as_path();
    let mut levels = 0usize;
    loop {
        let dot_git = dir.join(".git");
        match fs::metadata(&dot_git) {
            Ok(metadata) if metadata.is_file() => return from_gitfile(dir, &dot_git, &metadata),
            Ok(_) => match git_directory(&dot_git) {
                GitDir::Yes(common) => {
                    return from_dot_git_dir(&given, levels, dir, &dot_git, common)
                }
                GitDir::No => {}
                GitDir::Unclear(reason) => return Discovery::NeedsGit(reason),
                GitDir::Stuck => return Discovery::NotARepository,
            },
            // Git treats every stat failure as "no .git here".
            Err(_) => {}
        }
        match git_directory(dir) {
            GitDir::Yes(_) => {
                return Discovery::NeedsGit(format!(
                    "`{}` is a bare repository or git directory",
                    dir.display()
                ))
            }
            GitDir::No => {}
            GitDir::Unclear(reason) => return Discovery::NeedsGit(reason),
            GitDir::Stuck => return Discovery::NotARepository,
        }
        let Some(parent) = dir.parent() else {
            return Discovery::NotARepository;
        };
        // Git stops at a filesystem boundary unless GIT_DISCOVERY_ACROSS_FILESYSTEM is set.
        match fs::metadata(parent) {
            Ok(metadata) if metadata.dev() == device => {}
            _ => return Discovery::NotARepository,
        }
        dir = parent;
        levels += 1;
    }
}

/// Runs `git rev-parse --git-common-dir` in `cwd` and returns the parent of what it prints,
/// resolved against `cwd`. `None` when git fails, is missing, or runs over `timeout` (it is then
/// killed). `PATH` and git's own variables ([`GIT_DISCOVERY_ENV`]) come from `env`.
pub fn repo_root_from_git(env: &Env, cwd: &Path, timeout: Duration) -> Option<PathBuf> {
    let search_path = env.var_os("PATH");
    let git = find_git(search_path.as_deref())?;
    let mut command = Command::new(git);
    command
        .args(GIT_HARDENING)
        .args(["rev-parse", "--git-common-dir"])
        .current_dir(cwd)
        // No prompt for anything, and no optional lock files in someone else's repository.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0");
    // Git sees the discovery variables of `env`, which decided that it runs.
    for name in GIT_DISCOVERY_ENV {
        match env.var_os(name) {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    // Whatever git itself would start by name comes from the same absolute entries.
    match absolute_entries(search_path.as_deref()) {
        Some(clean) => command.env("PATH", clean),
        None => command.env_remove("PATH"),
    };
    // In a process group of its own, so that what git (or a wrapper named git) starts ends with
    // it: the group is killed once git has exited or run out of time, before git is reaped, so
    // that the group's id cannot have been given to anyone else.
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let group = rustix::process::Pid::from_child(&child);
    let exited = wait_without_reaping(group, timeout);
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    let status = child.wait().ok()?;
    if !exited {
        return None;
    }
    if !status.success() {
        return None;
    }
    let mut output = Vec::new();
    child
        .stdout
        .take()?
        .take(MAX_GITFILE_BYTES)
        .read_to_end(&mut output)
        .ok()?;
    let printed = output.trim_ascii();
    if printed.is_empty() {
        return None;
    }
    let common = absolute(cwd)?.join(OsStr::from_bytes(printed));
    Some(parent_of(&normalize(&common)))
}

/// Waits up to `timeout` for the child `pid` to exit, leaving it unreaped; whether it did.
fn wait_without_reaping(pid: rustix::process::Pid, timeout: Duration) -> bool {
    use rustix::process::{waitid, WaitId, WaitIdOptions};
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        match waitid(WaitId::Pid(pid), options) {
            Ok(Some(_)) => return true,
            Ok(None) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return false,
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// The `git` to run: the first `git` under an absolute entry of `search_path` (the value of
/// `PATH`; `/bin:/usr/bin` when unset, as `execvp`) that is a file this process may execute.
///
/// Empty and relative entries are skipped: `execvp` resolves them against the child's working
/// directory, which is the project, so `PATH=.:$PATH` would run a `git` planted there.
pub fn find_git(search_path: Option<&OsStr>) -> Option<PathBuf> {
    let search_path = search_path.unwrap_or(OsStr::new(DEFAULT_SEARCH_PATH));
    std::env::split_paths(search_path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("git"))
        .find(|candidate| {
            fs::metadata(candidate).is_ok_and(|m| m.is_file())
                && rustix::fs::access(candidate, rustix::fs::Access::EXEC_OK).is_ok()
        })
}

/// `search_path` with its empty and relative entries removed, for the child's `PATH`; `None`
/// when `PATH` is unset or nothing is left.
fn absolute_entries(search_path: Option<&OsStr>) -> Option<OsString> {
    let kept: Vec<PathBuf> = std::env::split_paths(search_path?)
        .filter(|dir| dir.is_absolute())
        .collect();
    if kept.is_empty() {
        return None;
    }
    std::env::join_paths(kept).ok()
}

/// The result of git's `is_git_directory` on a path.
enum GitDir {
    /// It is a git directory; its common directory is given when a `commondir` file names one.
    Yes(Option<PathBuf>),
    No,
    /// Git would stop with an error here (or this walk cannot tell).
    Unclear(String),
    /// Git would block here (on a FIFO) until it is killed, which makes the answer "not a
    /// repository".
    Stuck,
}

/// Git's `is_git_directory`: a valid `HEAD`, and `objects/` and `refs/` searchable in the common
/// directory (named by `commondir`, else the directory itself).
fn git_directory(suspect: &Path) -> GitDir {
    match valid_head(&suspect.join("HEAD")) {
        Head::Valid => {}
        Head::Invalid => return GitDir::No,
        Head::Fifo => return GitDir::Stuck,
    }
    let common = match read_commondir(suspect, &suspect.join("commondir")) {
        Ok(common) => common,
        Err(stop) => return stop,
    };
    let base = common.as_deref().unwrap_or(suspect);
    for sub in ["objects", "refs"] {
        if rustix::fs::access(base.join(sub), rustix::fs::Access::EXEC_OK).is_err() {
            return GitDir::No;
        }
    }
    GitDir::Yes(common)
}

/// Reads the `commondir` file of `gitdir`, if there is one: its path (trailing newlines
/// removed), relative to `gitdir` unless absolute, resolved to a real path as git does.
///
/// Git tests the file with `stat` and then reads it whole, dying when that gives nothing. Here it
/// is opened without blocking and judged on the open descriptor: a FIFO would make git wait for a
/// writer until it is killed, a device or a directory makes it fail or read forever, and so each
/// is decided at once as "not a repository". Other failures are left to git.
fn read_commondir(gitdir: &Path, file: &Path) -> Result<Option<PathBuf>, GitDir> {
    let unclear = |what: &str| GitDir::Unclear(format!("`{}` {what}", file.display()));
    let bytes = match read_bounded(file, MAX_GITFILE_BYTES + 1) {
        Ok(bytes) => bytes,
        // `stat` fails too, so git uses the git directory itself.
        Err(Unread::Absent) => return Ok(None),
        Err(Unread::Special(_)) => return Err(GitDir::Stuck),
        Err(Unread::Failed) => return Err(unclear("is unreadable")),
    };
    if bytes.is_empty() || bytes.len() as u64 > MAX_GITFILE_BYTES {
        return Err(unclear("is empty or too large"));
    }
    let named = trim_line_ends(&bytes);
    let path = gitdir.join(OsStr::from_bytes(named));
    fs::canonicalize(&path)
        .map(Some)
        .map_err(|_| unclear("names a missing directory"))
}

/// What git's `validate_headref` makes of a `HEAD`.
enum Head {
    Valid,
    Invalid,
    /// A FIFO, which git opens for reading and waits on.
    Fifo,
}

/// Git's `validate_headref`: a symlink to `refs/...`, or a file starting `ref: refs/...` (spaces
/// allowed after the colon) or with an object id in hex.
fn valid_head(path: &Path) -> Head {
    let Ok(metadata) = fs::symlink_metadata(path) else {
        return Head::Invalid;
    };
    if metadata.file_type().is_symlink() {
        let to_refs = fs::read_link(path)
            .is_ok_and(|target| target.as_os_str().as_bytes().starts_with(b"refs/"));
        return if to_refs { Head::Valid } else { Head::Invalid };
    }
    // Judged on the open descriptor, whatever the path became since the `lstat`.
    let head = match read_bounded(path, HEAD_PREFIX_BYTES) {
        Ok(head) => head,
        Err(Unread::Special(kind)) if kind == FIFO => return Head::Fifo,
        // A directory or a device fails to read in git too.
        Err(_) => return Head::Invalid,
    };
    if let Some(rest) = head.strip_prefix(b"ref:") {
        let start = rest
            .iter()
            .position(|&byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
        if rest[start..].starts_with(b"refs/") {
            return Head::Valid;
        }
    }
    if head.len() >= 40 && head[..40].iter().all(u8::is_ascii_hexdigit) {
        Head::Valid
    } else {
        Head::Invalid
    }
}

/// A `.git` directory found `levels` above the physical cwd in `worktree`.
fn from_dot_git_dir(
    given: &Path,
    levels: usize,
    worktree: &Path,
    dot_git: &Path,
    common: Option<PathBuf>,
) -> Discovery {
    if let Some(reason) = foreign_owner(&[dot_git, worktree]) {
        return Discovery::NeedsGit(reason);
    }
    let common_dir = common.as_deref().unwrap_or(dot_git);
    if let Some(stop) = unusual_config(common_dir) {
        return stop;
    }
    match common {
        // `commondir` paths are real paths, printed absolute.
        Some(common) => Discovery::Root(parent_of(&common)),
        // Git prints `../` × levels + `.git`; the reference resolves that against the given cwd.
        None => {
            let mut root = normalize(given);
            for _ in 0..levels {
                if !root.pop() {
                    break;
                }
            }
            Discovery::Root(root)
        }
    }
}

/// A `.git` file in `worktree`: `gitdir: PATH` names the git directory (relative to `worktree`).
fn from_gitfile(worktree: &Path, dot_git: &Path, metadata: &fs::Metadata) -> Discovery {
    let unclear = |what: &str| Discovery::NeedsGit(format!("`{}` {what}", dot_git.display()));
    if metadata.len() > MAX_GITFILE_BYTES {
        return unclear("is too large");
    }
    let Ok(bytes) = read_bounded(dot_git, MAX_GITFILE_BYTES) else {
        return unclear("is unreadable");
    };
    let Some(rest) = bytes.strip_prefix(b"gitdir: ") else {
        return unclear("is not a `gitdir:` file");
    };
    let named = trim_line_ends(rest);
    if named.is_empty() {
        return unclear("names no path");
    }
    let gitdir = worktree.join(OsStr::from_bytes(named));
    let common = match git_directory(&gitdir) {
        GitDir::Yes(common) => common,
        GitDir::No => return unclear("names something that is not a git directory"),
        GitDir::Unclear(reason) => return Discovery::NeedsGit(reason),
        GitDir::Stuck => return Discovery::NotARepository,
    };
    let Ok(real_gitdir) = fs::canonicalize(&gitdir) else {
        return unclear("names a missing directory");
    };
    if let Some(reason) = foreign_owner(&[dot_git, worktree, &real_gitdir]) {
        return Discovery::NeedsGit(reason);
    }
    // A `commondir` is already a real path (resolving `gitdir/..` through a link gives the
    // same directory as through the real path); without one the git directory is the common one.
    let common = common.unwrap_or(real_gitdir);
    if let Some(stop) = unusual_config(&common) {
        return stop;
    }
    Discovery::Root(parent_of(&common))
}

/// Git's ownership check: each path (not following links) must belong to the effective user;
/// otherwise git consults `safe.directory`, which only git can answer.
fn foreign_owner(paths: &[&Path]) -> Option<String> {
    let euid = rustix::process::geteuid().as_raw();
    for path in paths {
        match fs::symlink_metadata(path) {
            Ok(metadata) if metadata.uid() == euid => {}
            _ => {
                return Some(format!(
                    "`{}` is not owned by the current user",
                    path.display()
                ))
            }
        }
    }
    None
}

/// What stops the walk at `common/config`, if anything: [`Discovery::NeedsGit`] when git might
/// reject the repository format, [`Discovery::NotARepository`] when the file is a FIFO (git
/// opens it for reading and waits until it is killed; a directory or device is left to git).
///
/// A missing `config` is accepted (git does too). Otherwise every line must be blank, a comment,
/// a section header or a `key [= value]` line without continuation or unbalanced quotes; there
/// must be no `[extensions]` section; `core.repositoryformatversion` must be 0 or 1.
fn unusual_config(common: &Path) -> Option<Discovery> {
    let path = common.join("config");
    let unclear = |what: &str| Some(Discovery::NeedsGit(format!("`{}` {what}", path.display())));
    let bytes = match read_bounded(&path, MAX_CONFIG_BYTES + 1) {
        Ok(bytes) => bytes,
        Err(Unread::Absent) => return None,
        Err(Unread::Special(kind)) if kind == FIFO => return Some(Discovery::NotARepository),
        Err(_) => return unclear("is unreadable"),
    };
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return unclear("is too large to inspect");
    }
    let mut section = Vec::new();
    for line in bytes.split(|&byte| byte == b'\n') {
        let mut rest = line.trim_ascii();
        if rest.ends_with(b"\\") {
            return unclear("has a continued line");
        }
        if rest.iter().filter(|&&byte| byte == b'"').count() % 2 == 1 {
            return unclear("has a line with unbalanced quotes");
        }
        if let Some(header) = rest.strip_prefix(b"[") {
            let Some(close) = header.iter().position(|&byte| byte == b']') else {
                return unclear("has a malformed section header");
            };
            let name = &header[..close];
            let end = name
                .iter()
                .position(|&byte| matches!(byte, b' ' | b'\t' | b'"' | b'.'))
                .unwrap_or(name.len());
            section = name[..end].to_ascii_lowercase();
            if section == b"extensions" {
                return unclear("declares repository extensions");
            }
            rest = header[close + 1..].trim_ascii();
        }
        if rest.is_empty() || rest.starts_with(b"#") || rest.starts_with(b";") {
            continue;
        }
        let key_end = rest
            .iter()
            .position(|&byte| !(byte.is_ascii_alphanumeric() || byte == b'-'))
            .unwrap_or(rest.len());
        let (key, after) = rest.split_at(key_end);
        if !key.first().is_some_and(u8::is_ascii_alphabetic) {
            return unclear("has a line this check does not understand");
        }
        let after = after.trim_ascii_start();
        let value = match after.first() {
            None | Some(b'#' | b';') => &after[..0],
            Some(b'=') => &after[1..],
            Some(_) => return unclear("has a line this check does not understand"),
        };
        if section == b"core" && key.eq_ignore_ascii_case(b"repositoryformatversion") {
            let end = value
                .iter()
                .position(|&byte| matches!(byte, b'#' | b';'))
                .unwrap_or(value.len());
            if !matches!(value[..end].trim_ascii(), b"0" | b"1") {
                return unclear("has a repository format version other than 0 or 1");
            }
        }
    }
    None
}

/// How [`Unread::Special`] names a FIFO.
const FIFO: &str = "a FIFO";

/// Why [`read_bounded`] gave no bytes.
enum Unread {
    /// `stat` would fail as well: nothing there, a dangling link, a link loop, a file on the way.
    Absent,
    /// Not a regular file, found by `fstat` on the open descriptor: `a FIFO`, `a directory`, ...
    Special(&'static str),
    /// It is there but cannot be opened or read.
    Failed,
}

/// Reads at most `limit` bytes of a regular file. The file is opened without blocking (a FIFO
/// with no writer would block an ordinary open) and its kind is taken from the open descriptor,
/// so a path swapped between a check and the open cannot make this block.
fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, Unread> {
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    // Invariant: open(2) flag bits are small positive values, so the cast cannot wrap.
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path);
    let file: File = match opened {
        Ok(file) => file,
        Err(err) => {
            use rustix::io::Errno;
            return Err(match Errno::from_io_error(&err) {
                Some(Errno::NOENT | Errno::LOOP | Errno::NOTDIR | Errno::NAMETOOLONG) => {
                    Unread::Absent
                }
                _ => Unread::Failed,
            });
        }
    };
    let kind = file.metadata().map_err(|_| Unread::Failed)?.file_type();
    if !kind.is_file() {
        return Err(Unread::Special(if kind.is_fifo() {
            FIFO
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        }));
    }
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|_| Unread::Failed)?;
    Ok(bytes)
}

/// `bytes` without trailing `\n` and `\r`, as git trims `.git` and `commondir` files.
fn trim_line_ends(mut bytes: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = bytes {
        bytes = rest;
    }
    bytes
}

/// `path` made absolute against the process's current directory, when it is relative: the
/// directory the system resolves a relative path against, whatever the `Env` says.
fn absolute(path: &Path) -> Option<PathBuf> {
    if path.is_absolute() {
        Some(path.to_path_buf())
    } else {
        std::path::absolute(path).ok()
    }
}

/// Lexical normalisation of an absolute path, as Node's `path.resolve`: `.` dropped, `..` pops
/// (never above the root), repeated and trailing separators removed.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// The parent directory, as Node's `path.dirname`: the root is its own parent.
fn parent_of(path: &Path) -> PathBuf {
    path.parent().unwrap_or(path).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical() {
        let cases = [
            ("/a/b/../c", "/a/c"),
            ("/a/./b/", "/a/b"),
            ("/../..", "/"),
            ("/a//b/../../..", "/"),
        ];
        for (input, expected) in cases {
            assert_eq!(
                normalize(Path::new(input)),
                PathBuf::from(expected),
                "{input}"
            );
        }
    }

    #[test]
    fn trims_only_line_ends() {
        assert_eq!(trim_line_ends(b"../..\r\n\n"), b"../..");
        assert_eq!(trim_line_ends(b" x \n"), b" x ");
        assert_eq!(trim_line_ends(b"\n"), b"");
    }

    #[test]
    fn find_git_uses_only_absolute_entries_with_an_executable_file() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let tmp = tmp.path();
        let make = |dir: &str, mode: Option<u32>| {
            let dir = tmp.join(dir);
            fs::create_dir_all(&dir).unwrap();
            match mode {
                Some(mode) => {
                    fs::write(dir.join("git"), "#!/bin/sh\n").unwrap();
                    fs::set_permissions(dir.join("git"), fs::Permissions::from_mode(mode)).unwrap();
                }
                None => fs::create_dir_all(dir.join("git")).unwrap(),
            }
            dir
        };
        let not_executable = make("plain", Some(0o644));
        let a_directory = make("dir", None);
        let good = make("good", Some(0o755));
        let later = make("later", Some(0o755));
        let joined = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap();
        let search = joined(&[
            Path::new(""),
            Path::new("."),
            Path::new("relative/bin"),
            &not_executable,
            &a_directory,
            &good,
            &later,
        ]);
        assert_eq!(find_git(Some(&search)), Some(good.join("git")));
        assert_eq!(find_git(Some(OsStr::new(".::bin"))), None);
        assert_eq!(
            absolute_entries(Some(&search)),
            Some(joined(&[&not_executable, &a_directory, &good, &later]))
        );
        assert_eq!(absolute_entries(Some(OsStr::new(".::bin"))), None);
        assert_eq!(absolute_entries(None), None);
    }

    #[test]
    fn parent_of_root_is_root() {
        assert_eq!(parent_of(Path::new("/")), PathBuf::from("/"));
        assert_eq!(parent_of(Path::new("/r/.git")), PathBuf::from("/r"));
    }
}
