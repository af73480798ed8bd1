//! `serve`'s unchanged turn (`assemble` with `have`): whatever happens to the rule files, the
//! settings files and the links between two turns, and whatever becomes of the file-change
//! events (delivered, dropped, delayed to after the next turn, or merged into one), the block
//! and warnings a client holds after each turn are those of a fresh `assemble` of the same files.
//!
//! The server runs in process with its events injected (`LineServer::with_events`) and a margin
//! of 30 ms for its stamps (two seconds otherwise), so that a step can wait for the files to
//! settle; edits made within the margin before a turn are the kernel's "same tick" case, where a
//! write of the same size leaves every time as it was.

use pi_rules::serve::{ChangeEvents, LineServer};
use pi_rules_host::env::Env;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const MARGIN: Duration = Duration::from_millis(30);

/// Events as the test delivers them: a generation the test moves.
struct Injected(Arc<AtomicU64>);

impl ChangeEvents for Injected {
    fn watch(&mut self, _dirs: &[PathBuf]) {}
    fn generation(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Rule texts: conditions on the settings the test edits, a warning, and texts of the same size
/// (so that an edit can keep the size).
const TEXTS: &[&str] = &[
    "# A\n\n{{IF:dco}}Sign off.{{/IF}}\n",
    "# B\n\n{{IF:dco}}Sign off.{{/IF}}\n",
    "# C\n\nAlways.\n",
    "# D\n\nAlways.\n",
    "{{IF:use_worktrees}}Use worktrees.{{/IF}}{{/IF}}\n",
    "---\nrequires: coms\n---\nComs.\n",
    "",
];

const SETTINGS: &[&str] = &[
    r#"{"dco": true}"#,
    r#"{"dco": false}"#,
    r#"{"dco": 1}"#,
    r#"{"use_worktrees": true, "dco": true}"#,
    "{not json",
];

/// The files a step may touch, relative to the temporary root.
const RULES: &[&str] = &[
    "app/.pi/rules/10-a.md",
    "app/.pi/rules/20-b.md",
    "app/.pi/rules/30-c.md",
    "home/.pi/agent/rules/20-b.md",
    "home/.pi/agent/rules/40-d.md",
    "shared/t1.md",
    "shared/t2.md",
];
const SETTINGS_FILES: &[&str] = &[
    "app/.pi/pi-config-settings.json",
    "app/.pi/pi-config-settings.jsonc",
    "home/.pi/pi-config-settings.json",
];
/// A project rule that is a link to one of the shared files.
const LINK: &str = "app/.pi/rules/50-link.md";

/// What becomes of the event a change makes.
#[derive(Debug, Clone, Copy)]
enum Fate {
    Delivered,
    Dropped,
    /// Delivered after the next turn.
    Delayed,
    /// Delivered with the other merged ones at the next turn, as one.
    Merged,
}

#[derive(Debug, Clone)]
enum Step {
    Write(usize, usize, Fate),
    /// The same number of bytes, other text, the modification time put back.
    SameSize(usize, Fate),
    Remove(usize, Fate),
    Rename(usize, usize, Fate),
    Settings(usize, usize, Fate),
    RemoveSettings(usize, Fate),
    Link(usize, Fate),
    Unlink(Fate),
    /// Waits past the margin, so that the next turn may trust its stamps.
    Settle,
    Turn,
}

fn fate() -> impl Strategy<Value = Fate> {
    prop_oneof![
        Just(Fate::Delivered),
        Just(Fate::Dropped),
        Just(Fate::Delayed),
        Just(Fate::Merged)
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..RULES.len(), 0..TEXTS.len(), fate()).prop_map(|(f, t, e)| Step::Write(f, t, e)),
        2 => (0..RULES.len(), fate()).prop_map(|(f, e)| Step::SameSize(f, e)),
        1 => (0..RULES.len(), fate()).prop_map(|(f, e)| Step::Remove(f, e)),
        1 => (0..RULES.len(), 0..RULES.len(), fate()).prop_map(|(a, b, e)| Step::Rename(a, b, e)),
        2 => (0..SETTINGS_FILES.len(), 0..SETTINGS.len(), fate())
            .prop_map(|(f, t, e)| Step::Settings(f, t, e)),
        1 => (0..SETTINGS_FILES.len(), fate()).prop_map(|(f, e)| Step::RemoveSettings(f, e)),
        1 => (5..7usize, fate()).prop_map(|(t, e)| Step::Link(t, e)),
        1 => fate().prop_map(Step::Unlink),
        2 => Just(Step::Settle),
        4 => Just(Step::Turn),
    ]
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    env: Env,
    server: LineServer,
    generation: Arc<AtomicU64>,
    delayed: u64,
    merged: bool,
    /// What the client holds: the token, the block and the warnings.
    held: Option<(String, Value, Value)>,
    id: u64,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        for dir in [
            "app/.git",
            "app/.pi/rules",
            "home/.pi/agent/rules",
            "shared",
        ] {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        fs::write(root.join(RULES[0]), TEXTS[0]).unwrap();
        fs::write(root.join(SETTINGS_FILES[0]), SETTINGS[0]).unwrap();
        let env = Env::from_vars(
            root.join("app"),
            [("HOME", root.join("home").into_os_string())],
        );
        let generation = Arc::new(AtomicU64::new(0));
        let server = LineServer::new(env.clone(), Duration::from_secs(3600))
            .with_events(Box::new(Injected(Arc::clone(&generation))), MARGIN);
        World {
            _tmp: tmp,
            root,
            env,
            server,
            generation,
            delayed: 0,
            merged: false,
            held: None,
            id: 0,
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn event(&mut self, fate: Fate) {
        match fate {
            Fate::Delivered => {
                self.generation.fetch_add(1, Ordering::SeqCst);
            }
            Fate::Dropped => {}
            Fate::Delayed => self.delayed += 1,
            Fate::Merged => self.merged = true,
        }
    }

    fn apply(&mut self, step: &Step) -> Option<(Value, Value, Value, Value)> {
        match *step {
            Step::Write(file, text, fate) => {
                fs::write(self.path(RULES[file]), TEXTS[text]).unwrap();
                self.event(fate);
            }
            Step::SameSize(file, fate) => {
                let path = self.path(RULES[file]);
                if let Ok(old) = fs::read(&path) {
                    let modified = fs::metadata(&path).unwrap().modified().unwrap();
                    let new: Vec<u8> = old
                        .iter()
                        .map(|&b| {
                            if b == b'A' {
                                b'B'
                            } else if b == b'B' {
                                b'A'
                            } else {
                                b
                            }
                        })
                        .collect();
                    fs::write(&path, new).unwrap();
                    let file = fs::File::options().write(true).open(&path).unwrap();
                    file.set_modified(modified).unwrap();
                    self.event(fate);
                }
            }
            Step::Remove(file, fate) => {
                if fs::remove_file(self.path(RULES[file])).is_ok() {
                    self.event(fate);
                }
            }
            Step::Rename(from, to, fate) => {
                if fs::rename(self.path(RULES[from]), self.path(RULES[to])).is_ok() {
                    self.event(fate);
                }
            }
            Step::Settings(file, text, fate) => {
                fs::write(self.path(SETTINGS_FILES[file]), SETTINGS[text]).unwrap();
                self.event(fate);
            }
            Step::RemoveSettings(file, fate) => {
                if fs::remove_file(self.path(SETTINGS_FILES[file])).is_ok() {
                    self.event(fate);
                }
            }
            Step::Link(target, fate) => {
                let link = self.path(LINK);
                let _ = fs::remove_file(&link);
                std::os::unix::fs::symlink(self.path(RULES[target]), &link).unwrap();
                self.event(fate);
            }
            Step::Unlink(fate) => {
                if fs::remove_file(self.path(LINK)).is_ok() {
                    self.event(fate);
                }
            }
            Step::Settle => std::thread::sleep(MARGIN + Duration::from_millis(10)),
            Step::Turn => return Some(self.turn()),
        }
        None
    }

    fn call(server: &mut LineServer, id: u64, params: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "assemble", "params": params});
        let mut out = Vec::new();
        server
            .handle_line(request.to_string().as_bytes(), &mut out)
            .unwrap();
        let response: Value = serde_json::from_slice(&out).unwrap();
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }

    /// One turn: what the client holds after it, and what a fresh server's `assemble` gives.
    fn turn(&mut self) -> (Value, Value, Value, Value) {
        if self.merged {
            self.merged = false;
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        self.id += 1;
        let cwd = self.path("app");
        let have = self
            .held
            .as_ref()
            .map_or("", |(token, _, _)| token.as_str());
        let result = World::call(&mut self.server, self.id, json!({"cwd": cwd, "have": have}));
        if result == json!({"unchanged": true}) {
            assert!(
                self.held.is_some(),
                "unchanged, but the client holds nothing"
            );
        } else {
            let token = result["token"].as_str().expect("a token").to_owned();
            assert_ne!(
                token, have,
                "the token held came back with the whole result"
            );
            self.held = Some((token, result["block"].clone(), result["warnings"].clone()));
        }
        // Events delayed past the turn arrive now.
        if self.delayed > 0 {
            self.delayed = 0;
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        let mut fresh = LineServer::new(self.env.clone(), Duration::from_secs(3600));
        let expected = World::call(&mut fresh, 1, json!({"cwd": cwd}));
        let (_, block, warnings) = self.held.clone().unwrap();
        (
            block,
            expected["block"].clone(),
            warnings,
            expected["warnings"].clone(),
        )
    }
}

fn check_turn(turn: Option<(Value, Value, Value, Value)>, at: usize) -> Result<(), TestCaseError> {
    if let Some((block, expected_block, warnings, expected_warnings)) = turn {
        prop_assert_eq!(block, expected_block, "block at step {}", at);
        prop_assert_eq!(warnings, expected_warnings, "warnings at step {}", at);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Each turn's block and warnings are a fresh `assemble`'s, and once the files have settled
    /// and every event has come, a turn is answered "unchanged" without a run.
    #[test]
    fn every_turn_gives_what_a_fresh_assemble_gives(steps in prop::collection::vec(step(), 1..16)) {
        let mut world = World::new();
        for (at, step) in steps.iter().enumerate() {
            let turn = world.apply(step);
            check_turn(turn, at)?;
        }
        // The end: every event delivered, the files settled; the first turn may run, the second
        // must not.
        world.apply(&Step::Settle);
        check_turn(world.apply(&Step::Turn), steps.len())?;
        world.apply(&Step::Settle);
        check_turn(world.apply(&Step::Turn), steps.len() + 1)?;
        let before = world.server.turn_counts();
        check_turn(world.apply(&Step::Turn), steps.len() + 2)?;
        let after = world.server.turn_counts();
        prop_assert_eq!(after.unchanged_without_run, before.unchanged_without_run + 1);
        prop_assert_eq!(after.runs, before.runs);
    }
}

/// An edit of the same size right after a turn, its modification time put back, is seen at the
/// next turn: size and modification time alone (what the settings cache compared) would miss it.
/// Where even the change time stays (two writes in one tick of a coarse clock), the stamps taken
/// within the margin are not trusted at all: `files::stamps`' unit tests check that, since a
/// test cannot make the kernel keep a change time.
#[test]
fn an_edit_of_the_same_size_with_the_old_time_put_back_is_seen() {
    let mut world = World::new();
    let (block, _, _, _) = world.turn();
    assert!(block.as_str().unwrap().contains("# A"));
    // At once, with the time put back: the same size and modification time.
    world.apply(&Step::SameSize(0, Fate::Dropped));
    let (block, expected, _, _) = world.turn();
    assert_eq!(block, expected);
    assert!(block.as_str().unwrap().contains("# B"));
}

/// A settings edit shows at the very next turn, as a rule edit does (serve kept the
/// reference's 30-second settings cache before).
#[test]
fn a_settings_edit_shows_at_the_next_turn() {
    let mut world = World::new();
    world.apply(&Step::Settle);
    let (block, _, _, _) = world.turn();
    assert!(block.as_str().unwrap().contains("Sign off."));
    world.apply(&Step::Settle);
    world.turn();
    fs::write(world.path(SETTINGS_FILES[0]), SETTINGS[1]).unwrap();
    let (block, expected, _, _) = world.turn();
    assert_eq!(block, expected);
    assert!(!block.as_str().unwrap().contains("Sign off."));
}

/// An old client's request (no `have`) gets the command's JSON, without a token, as before.
#[test]
fn a_request_without_have_is_answered_as_before() {
    let mut world = World::new();
    let cwd = world.path("app");
    let result = World::call(&mut world.server, 1, json!({"cwd": cwd}));
    assert!(result.get("token").is_none());
    assert!(result["block"].as_str().unwrap().contains("# A"));
}
