//! The agent turn where nothing changed: `assemble` with `have`, answered `{"unchanged":true}`
//! in a few dozen bytes when no file the last run read has changed.
//!
//! A client that passes `have` (the token of the result it holds, `""` for none) gets the result
//! with a `token` when it differs, and `{"unchanged":true}` when its token is that of the result
//! it would get. The token is a 128-bit hash of the result without its `stats` (the timings
//! change on every run): the block, the warnings, the files, the notes and what scopes did. It
//! names the content, not a moment, so it is right across a restarted server too.
//!
//! After a run the server keeps the token, the parameters, and the stamps of every path the run
//! read, listed or asked about ([`ReadStamps`]). The next request with the same parameters and
//! that token is answered "unchanged" without a run when:
//! - no file-change event came for a directory of those paths since the run ([`ChangeEvents`]:
//!   `notify` where the platform has it; an event only ever sends the request to a run);
//! - the repository root found for `cwd` is still trusted (`--settings-ttl`);
//! - every stamp still holds: one `lstat` a path. The stamps are the truth: an event that is
//!   dropped, late or merged with others costs nothing but the run it would have saved, since a
//!   request that no event stopped still compares every stamp. Stamps of files changed within
//!   two seconds before the run are not trusted ([`ReadStamps::MARGIN`]): such a request runs
//!   again, and its answer is still "unchanged" when the result's token is the same.

use pi_rules_host::files::ReadStamps;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The result of an unchanged turn.
pub const UNCHANGED: &[u8] = b"{\"unchanged\":true}";

/// Where file-change events come from: told which directories to watch, it moves a generation
/// number whenever something happens in one of them. Injectable, so that tests can deliver,
/// drop, delay or merge events.
pub trait ChangeEvents: Send {
    /// Watches `dirs` (and no longer what was watched before and is not among them).
    fn watch(&mut self, dirs: &[PathBuf]);
    /// A number that changes whenever an event came for a watched directory.
    fn generation(&self) -> u64;
}

/// No events: the stamps alone.
#[derive(Debug, Default)]
pub struct NoEvents;

impl ChangeEvents for NoEvents {
    fn watch(&mut self, _dirs: &[PathBuf]) {}
    fn generation(&self) -> u64 {
        0
    }
}

/// Events from the platform's watcher (`notify`: inotify on Linux, kqueue or FSEvents
/// elsewhere), each directory watched on its own (not recursively). When the watcher cannot be
/// made or a directory cannot be watched, nothing is lost: the stamps decide.
pub struct NotifyEvents {
    watcher: Option<notify::RecommendedWatcher>,
    generation: Arc<AtomicU64>,
    watched: Vec<PathBuf>,
}

impl NotifyEvents {
    /// The most directories watched: a run reads a few (the layers, the settings directories).
    pub const MAX_DIRS: usize = 64;

    pub fn new() -> NotifyEvents {
        let generation = Arc::new(AtomicU64::new(0));
        let moved = Arc::clone(&generation);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            // Reads (opens, closes without writing, accesses) change nothing; anything else
            // (an error included) sends the next request to a run.
            let read = matches!(&event, Ok(e) if matches!(e.kind, notify::EventKind::Access(
                notify::event::AccessKind::Open(_)
                    | notify::event::AccessKind::Read
                    | notify::event::AccessKind::Close(notify::event::AccessMode::Read)
                    | notify::event::AccessKind::Any
            )));
            if !read {
                moved.fetch_add(1, Ordering::Release);
            }
        })
        .ok();
        NotifyEvents {
            watcher,
            generation,
            watched: Vec::new(),
        }
    }
}

impl Default for NotifyEvents {
    fn default() -> Self {
        NotifyEvents::new()
    }
}

impl ChangeEvents for NotifyEvents {
    fn watch(&mut self, dirs: &[PathBuf]) {
        use notify::Watcher as _;
        let Some(watcher) = self.watcher.as_mut() else {
            return;
        };
        let wanted: Vec<PathBuf> = dirs.iter().take(Self::MAX_DIRS).cloned().collect();
        for old in self.watched.iter().filter(|d| !wanted.contains(d)) {
            let _ = watcher.unwatch(old);
        }
        let mut watched = Vec::with_capacity(wanted.len());
        for dir in wanted {
            let kept = self.watched.contains(&dir);
            if kept
                || watcher
                    .watch(&dir, notify::RecursiveMode::NonRecursive)
                    .is_ok()
            {
                watched.push(dir);
            }
        }
        self.watched = watched;
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

/// What a turn's result depends on besides the files: the request's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnKey {
    pub cwd: PathBuf,
    pub package_dir: Option<PathBuf>,
    pub coms_active: bool,
    pub confine: bool,
}

/// The last run of a turn: its parameters, its token, and what it read.
pub struct LastTurn {
    pub key: TurnKey,
    pub token: String,
    pub stamps: ReadStamps,
    /// The events' generation before the run started.
    pub generation: u64,
    /// Until when the repository root found for `cwd` is trusted.
    pub located_until: Instant,
}

/// How turns went, for tests and benchmarks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TurnCounts {
    /// Answered "unchanged" from the stamps, without a run.
    pub unchanged_without_run: u64,
    /// Answered after a run ("unchanged" when the token was the same).
    pub runs: u64,
    /// Of the runs, those answered "unchanged".
    pub unchanged_after_run: u64,
}

/// The turns of one server: the last one, the event source, and the counts.
pub struct Turns {
    pub last: Option<LastTurn>,
    pub events: Box<dyn ChangeEvents>,
    /// Whether `events` is the platform's, made on the first turn (a server that never gets
    /// `have` never watches anything).
    pub platform_events: bool,
    pub counts: TurnCounts,
    /// The margin of [`ReadStamps`] (shorter in tests).
    pub margin: Duration,
}

impl Default for Turns {
    fn default() -> Self {
        Turns {
            last: None,
            events: Box::new(NoEvents),
            platform_events: true,
            counts: TurnCounts::default(),
            margin: ReadStamps::MARGIN,
        }
    }
}

impl Turns {
    /// Whether the client holding `have` for `key` holds what a run would give now.
    pub fn unchanged(&self, key: &TurnKey, have: &str, now: Instant) -> bool {
        let Some(last) = &self.last else {
            return false;
        };
        last.key == *key
            && !have.is_empty()
            && last.token == have
            && now < last.located_until
            && self.events.generation() == last.generation
            && last.stamps.still_hold()
    }

    /// Keeps what a run read and gave, and watches the directories of what it read.
    pub fn keep(&mut self, last: LastTurn) {
        if self.platform_events {
            self.platform_events = false;
            self.events = Box::new(NotifyEvents::new());
        }
        let mut dirs = last.stamps.watch_dirs();
        // Only directories that exist can be watched; the others are the stamps' alone.
        dirs.retain(|d| is_dir(d));
        self.events.watch(&dirs);
        self.last = Some(last);
    }
}

/// Whether `path` is a directory (links followed).
fn is_dir(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_dir())
}

/// The token of an `assemble` result: a 128-bit hash of its JSON without the `stats` object, as
/// 32 hexadecimal digits.
pub fn token(result: &[u8]) -> String {
    let (head, tail) = without_stats(result);
    let hash = |seed: u64| {
        let state = foldhash::quality::FixedState::with_seed(seed);
        let mut hasher = std::hash::BuildHasher::build_hasher(&state);
        std::hash::Hasher::write(&mut hasher, head);
        std::hash::Hasher::write_u8(&mut hasher, 0xff);
        std::hash::Hasher::write(&mut hasher, tail);
        std::hash::Hasher::finish(&hasher)
    };
    format!(
        "{:016x}{:016x}",
        hash(0x7069_2d72_756c_6573),
        hash(0x7475_726e_5f74_6f6b)
    )
}

/// `result` cut around its `"stats":{...}` member: a string in JSON never holds a bare `"`, so
/// the first `,"stats":{` is the member itself, and its object holds numbers alone, so it ends
/// at the first `}`.
fn without_stats(result: &[u8]) -> (&[u8], &[u8]) {
    const KEY: &[u8] = b",\"stats\":{";
    let Some(start) = result.windows(KEY.len()).position(|w| w == KEY) else {
        return (result, &[]);
    };
    let Some(length) = result[start..].iter().position(|&b| b == b'}') else {
        return (result, &[]);
    };
    (&result[..start], &result[start + length + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_leaves_the_stats_out_and_nothing_else() {
        let a = br#"{"format":1,"block":"x","warnings":[],"files":[],"notes":[],"stats":{"files_read":1,"read_us":12}}"#;
        let b = br#"{"format":1,"block":"x","warnings":[],"files":[],"notes":[],"stats":{"files_read":1,"read_us":99}}"#;
        let c = br#"{"format":1,"block":"y","warnings":[],"files":[],"notes":[],"stats":{"files_read":1,"read_us":12}}"#;
        let d = br#"{"format":1,"block":"x","warnings":[],"files":[],"notes":[],"stats":{"files_read":1,"read_us":12},"scope":{"on":true}}"#;
        assert_eq!(token(a), token(b));
        assert_ne!(token(a), token(c));
        assert_ne!(token(a), token(d));
        assert_eq!(token(a).len(), 32);
        // A block that quotes the member is a string: escaped, so not the member.
        let quoted = br#"{"block":",\"stats\":{}","stats":{"n":1}}"#;
        let (head, tail) = without_stats(quoted);
        assert_eq!(head, br#"{"block":",\"stats\":{}""#);
        assert_eq!(tail, b"}");
    }
}
