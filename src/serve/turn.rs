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
            use notify::event::{AccessKind, AccessMode, MetadataKind, ModifyKind};
            use notify::EventKind;
            // A read's own trace (an access time moved) is not a change either.
            let read = matches!(&event, Ok(e) if matches!(e.kind,
                EventKind::Access(
                    AccessKind::Open(_)
                        | AccessKind::Read
                        | AccessKind::Close(AccessMode::Read)
                        | AccessKind::Any
                ) | EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime))
            ));
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
    /// The rule texts of `eval` requests, by their token (see [`Turns::eval`]), the latest last.
    pub eval_rules: Vec<(String, Box<serde_json::value::RawValue>)>,
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
            eval_rules: Vec::new(),
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

/// Whether an `eval` request's text may have the members of a turn, `have` or `rules_token`, at
/// its top: a key in the text outside any string (a rule text's quotes are escaped in it).
pub fn has_turn_members(params: &str) -> bool {
    params.contains("\"have\"") || params.contains("\"rules_token\"")
}

impl Turns {
    /// The most rule sets `eval` keeps, and their most bytes in all.
    pub const EVAL_RULE_SETS: usize = 4;
    pub const EVAL_RULE_BYTES: usize = 16 << 20;

    /// `eval` as a turn: the request's `rules` may be given by the `rules_token` an earlier
    /// answer gave, and `have` (the token of the response the client holds) gets
    /// `{"unchanged":true}` when the response would be the same. The response gets `token` and
    /// `rules_token` as its last members. The rest is an `eval` request as `pi-rules eval` reads
    /// it, answered by the same code.
    pub fn eval(&mut self, params: &str, body: &mut Vec<u8>) -> Result<(), super::RpcError> {
        use serde_json::value::RawValue;
        type Members<'a> = std::collections::BTreeMap<String, &'a RawValue>;
        let Ok(mut members) = serde_json::from_str::<Members<'_>>(params) else {
            body.extend_from_slice(crate::eval::respond(params).as_bytes());
            return Ok(());
        };
        let text =
            |name: &str, members: &mut Members<'_>| -> Result<Option<String>, super::RpcError> {
                match members.remove(name) {
                    None => Ok(None),
                    Some(raw) => serde_json::from_str::<String>(raw.get())
                        .map(Some)
                        .map_err(|_| super::RpcError::params(format!("`{name}` is a string"))),
                }
            };
        let have = text("have", &mut members)?;
        let rules_token = text("rules_token", &mut members)?;
        let kept: Box<RawValue>;
        if let Some(wanted) = &rules_token {
            if members.contains_key("rules") {
                return Err(super::RpcError::params(
                    "`rules_token` stands for `rules`: give one of them",
                ));
            }
            let Some((_, rules)) = self.eval_rules.iter().find(|(t, _)| t == wanted) else {
                return Err(super::RpcError::params(format!(
                    "unknown `rules_token` {wanted:?}: this server does not hold those rules \
                     (it may have been restarted); send `rules` again"
                )));
            };
            kept = rules.clone();
            members.insert("rules".to_owned(), &kept);
        }
        let rules_token = members.get("rules").map(|rules| {
            let token = token(rules.get().as_bytes());
            if !self.eval_rules.iter().any(|(t, _)| *t == token) {
                self.eval_rules.push((token.clone(), (*rules).to_owned()));
                let total = |kept: &[(String, Box<RawValue>)]| {
                    kept.iter().map(|(_, r)| r.get().len()).sum::<usize>()
                };
                while self.eval_rules.len() > Self::EVAL_RULE_SETS
                    || (self.eval_rules.len() > 1
                        && total(&self.eval_rules) > Self::EVAL_RULE_BYTES)
                {
                    self.eval_rules.remove(0);
                }
            }
            token
        });
        let mut request = String::with_capacity(params.len());
        request.push('{');
        for (at, (name, value)) in members.iter().enumerate() {
            if at > 0 {
                request.push(',');
            }
            request.push_str(&serde_json::to_string(name).unwrap_or_default());
            request.push(':');
            request.push_str(value.get());
        }
        request.push('}');
        let response = crate::eval::respond(&request);
        let response_token = token(response.as_bytes());
        if have.as_deref() == Some(response_token.as_str()) {
            body.extend_from_slice(UNCHANGED);
            return Ok(());
        }
        body.extend_from_slice(response.as_bytes());
        if body.last() == Some(&b'}') {
            body.pop();
            body.extend_from_slice(b",\"token\":\"");
            body.extend_from_slice(response_token.as_bytes());
            if let Some(rules_token) = rules_token {
                body.extend_from_slice(b"\",\"rules_token\":\"");
                body.extend_from_slice(rules_token.as_bytes());
            }
            body.extend_from_slice(b"\"}");
        }
        Ok(())
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
