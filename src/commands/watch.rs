//! `pi-rules watch`: re-assemble on every change to the rule layers or the settings files and
//! print what changed in the block.
//!
//! Directories are watched, not files: editors save by writing a new file and renaming it over
//! the old one, which a watch on the old file (its inode) would never see. After every batch of
//! events (debounced), everything is read again: the session, both settings files (no cache),
//! the three layers. The set of watched directories is then worked out again, so a layer
//! directory that is created, removed or replaced is picked up: a directory that does not exist
//! is covered by a watch on its nearest existing ancestor, and a watched directory whose inode
//! changed is watched anew. Rule and settings files that are symbolic links also get a watch on
//! the directory of their target.
//!
//! Events are debounced here: after the first event that matters, the loop waits until no event
//! has come for `--debounce` milliseconds (at most twenty times that in all) and reads once.
//! Opening and reading a file is not a change: those events are dropped, or every read of ours
//! (and every read by a host) would start another round.

use crate::invocation::{Context, FreshSettings, LayerArgs, SettingsSource};
use crate::output::{note, note_line, output, Exit};
use crate::terminal::{escape, Paint};
use crate::unified_diff;
use anyhow::Context as _;
use notify::event::{AccessKind, EventKind};
use notify::{RecursiveMode, Watcher};
use pi_rules_host::assembly::{self, RulesBlock};
use pi_rules_host::env::Env;
use pi_rules_host::error::Result;
use pi_rules_host::loader::{is_rule_name, PackageSource};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Re-assemble on every change to the rules or settings, and print the diff of the block.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules watch
  pi-rules watch --cwd ~/src/app --coms-active

Watches the package directory (with --package-dir), the user and project layers and both
settings files. It first prints one line: the files in the block, its bytes, estimated tokens
(bytes / 4, rounded up) and warnings. After each change it prints `changed:` with the same
figures, then the unified diff of the block and any new warnings, or `unchanged:` when the block
stayed the same. Everything is read again on each change; nothing is cached. Ctrl-C stops it
(exit 0).")]
pub struct Args {
    #[command(flatten)]
    pub layers: LayerArgs,
    /// How long to wait for more changes before reading, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub debounce: u64,
}

/// What the watcher thread, the signal thread and the main loop say to each other.
enum Message {
    /// Paths that changed (not merely opened or read).
    Changed(Vec<PathBuf>),
    WatchFailed(String),
    Stop,
}

/// The message for one raw event: `None` for events that do not change anything.
fn message(result: notify::Result<notify::Event>) -> Option<Message> {
    match result {
        Ok(event) => match event.kind {
            EventKind::Access(
                AccessKind::Open(_)
                | AccessKind::Read
                | AccessKind::Close(notify::event::AccessMode::Read),
            ) => None,
            _ => Some(Message::Changed(event.paths)),
        },
        Err(err) => Some(Message::WatchFailed(err.to_string())),
    }
}

/// `pi-rules watch`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let (tx, rx) = mpsc::channel();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])
    .context("cannot handle Ctrl-C")?;
    let signal_handle = signals.handle();
    let stop_tx = tx.clone();
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            let _ = stop_tx.send(Message::Stop);
        }
    });
    let mut watcher = notify::recommended_watcher(move |result| {
        if let Some(message) = message(result) {
            let _ = tx.send(message);
        }
    })
    .context("cannot watch files")?;
    let quiet = Duration::from_millis(args.debounce.max(1));
    let mut watches = Watches::default();
    let paint = Paint { on: cx.color_out() };

    let mut current = settle(cx.env, &args.layers, &mut watcher, &mut watches, cx.err)?;
    for line in &current.notes {
        note(cx.err, format_args!("{line}"));
    }
    let watched: Vec<String> = watches
        .dirs
        .keys()
        .map(|d| escape(&d.display().to_string()).into_owned())
        .collect();
    note(
        cx.err,
        format_args!("pi-rules: watching {}", watched.join(", ")),
    );
    let _ = cx.err.flush();
    output(writeln!(
        cx.out,
        "{} {}",
        paint.paint("1", "watching:"),
        current.summary()
    ))?;
    output(cx.out.flush())?;

    'events: while let Ok(message) = rx.recv() {
        let mut relevant = false;
        let mut pending = Some(message);
        let started = Instant::now();
        // Take what comes until it has been quiet for `quiet`: one read for a burst of events.
        loop {
            let next = match pending.take() {
                Some(message) => Some(message),
                None if !relevant => rx.try_recv().ok(),
                None if started.elapsed() > quiet * 20 => None,
                None => rx.recv_timeout(quiet).ok(),
            };
            let Some(message) = next else { break };
            match message {
                Message::Stop => break 'events,
                Message::WatchFailed(reason) => note(
                    cx.err,
                    format_args!("pi-rules: warning: watching failed: {}", escape(&reason)),
                ),
                Message::Changed(paths) => relevant |= paths.iter().any(|p| current.concerns(p)),
            }
        }
        if !relevant {
            continue;
        }
        let next = settle(cx.env, &args.layers, &mut watcher, &mut watches, cx.err)?;
        for line in next.notes.iter().filter(|l| !current.notes.contains(l)) {
            note(cx.err, format_args!("{line}"));
        }
        let _ = cx.err.flush();
        report(cx, &current, &next, paint)?;
        current = next;
    }
    signal_handle.close();
    Ok(Exit::Success)
}

/// Prints what changed between two snapshots, and flushes.
fn report(cx: &mut Context<'_>, before: &Snapshot, after: &Snapshot, paint: Paint) -> Result<()> {
    let label = if before.block == after.block {
        "unchanged:"
    } else {
        "changed:"
    };
    output(writeln!(
        cx.out,
        "{} {}",
        paint.paint("1", label),
        after.summary()
    ))?;
    output(unified_diff::write(
        cx.out,
        ("before", before.block.text()),
        ("after", after.block.text()),
        unified_diff::DEFAULT_CONTEXT,
        paint,
    ))?;
    let mut old = before.warnings.clone();
    for warning in &after.warnings {
        match old.iter().position(|w| w == warning) {
            Some(at) => {
                old.swap_remove(at);
            }
            None => output(writeln!(
                cx.out,
                "{} rule assembly: {}",
                paint.paint("33", "new warning:"),
                escape(warning)
            ))?,
        }
    }
    output(cx.out.flush())
}

/// The block and what to watch, read once.
struct Snapshot {
    /// The block, in both its forms.
    block: RulesBlock,
    warnings: Vec<String>,
    /// Files whose gate let them in.
    files: usize,
    /// What reading said on stderr (ignored settings, escaping rules).
    notes: Vec<String>,
    /// Directories and files whose changes matter; changes elsewhere in a watched directory are
    /// ignored.
    targets: Vec<PathBuf>,
    /// The rule layers' directories, where only rule names (and link targets) matter.
    layers: Vec<PathBuf>,
}

impl Snapshot {
    /// Reads everything afresh.
    fn read(env: &Env, args: &LayerArgs) -> Result<Snapshot> {
        let session = args.project.session(env)?;
        let mut targets = Vec::new();
        for dir in
            std::iter::once(session.project_settings_dir()).chain(session.global_settings_dir())
        {
            for name in pi_rules_core::settings::SETTINGS_FILE_NAMES {
                push_link_target(&mut targets, &dir.join(name));
            }
            targets.push(dir);
        }
        let settings = FreshSettings.read(&session);
        let run = assembly::run(session, &args.options(), settings, &mut ())?;
        let dirs = run.session.layer_dirs(args.package_dir.as_deref());
        let mut layers = Vec::new();
        if let PackageSource::Dir(dir) = dirs.package {
            layers.push(dir);
        }
        layers.extend(dirs.user);
        layers.push(dirs.project);
        // The nested rule directories `--path` brought in. (pi-rules' configuration files are in
        // the settings directories, watched above.)
        layers.extend(run.scope.iter().flat_map(|s| s.nested_dirs.iter().cloned()));
        targets.extend(layers.iter().cloned());
        for report in run.loaded.iter().flat_map(|l| &l.names) {
            for candidate in report.candidates.iter().filter(|c| c.is_symlink) {
                if let Some(path) = &candidate.path {
                    push_link_target(&mut targets, path);
                }
            }
        }
        let warnings = run.warning_messages().map(|m| m.to_string()).collect();
        let files = run
            .assembly
            .as_ref()
            .map_or(0, |a| a.included.iter().filter(|i| **i).count());
        Ok(Snapshot {
            block: run.block,
            warnings,
            files,
            notes: run.notes.iter().map(note_line).collect(),
            targets,
            layers,
        })
    }

    /// `12 files, 34567 bytes, ~8642 tokens, 0 warnings`.
    fn summary(&self) -> String {
        // The bytes a host appends, as `explain` and `assemble --format json` count them.
        let bytes = self.block.appended().len();
        let plural = |n: usize, word: &str| {
            if n == 1 {
                format!("{n} {word}")
            } else {
                format!("{n} {word}s")
            }
        };
        format!(
            "{}, {}, ~{}, {}",
            plural(self.files, "file"),
            plural(bytes, "byte"),
            plural(bytes.div_ceil(4), "token"),
            plural(self.warnings.len(), "warning")
        )
    }

    /// Whether a change at `path` may change the block: it is in or at a target, or on the way
    /// to one that does not exist yet. In a layer's directory, only a rule name or a link's
    /// target: a temporary file that an editor or `new` writes there before renaming it onto a
    /// rule changes nothing, and its round would report the block unchanged before the rename.
    fn concerns(&self, path: &Path) -> bool {
        let in_layer = path
            .parent()
            .is_some_and(|dir| self.layers.iter().any(|layer| layer == dir));
        if in_layer && !self.targets.iter().any(|t| t == path) {
            let name = path.file_name().unwrap_or_default();
            let rule = name
                .to_str()
                .map_or(name.as_bytes().ends_with(b".md"), is_rule_name);
            if !rule {
                return false;
            }
        }
        self.targets
            .iter()
            .any(|t| path.starts_with(t) || t.starts_with(path))
    }

    /// The directories to watch: each target directory, or its nearest existing ancestor, and
    /// the directory of each target file.
    fn watch_dirs(&self) -> BTreeSet<PathBuf> {
        self.targets
            .iter()
            .filter_map(|target| {
                let mut dir = target.as_path();
                loop {
                    match fs::metadata(dir) {
                        Ok(meta) if meta.is_dir() => return Some(dir.to_path_buf()),
                        Ok(_) => {}
                        Err(_) => {}
                    }
                    dir = dir.parent()?;
                }
            })
            .collect()
    }
}

/// Adds the real path of `path` to `targets` when `path` is a symbolic link that resolves.
fn push_link_target(targets: &mut Vec<PathBuf>, path: &Path) {
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        if let Ok(real) = fs::canonicalize(path) {
            targets.push(real);
        }
    }
}

/// The directories being watched, with the identity (device, inode) each had when its watch
/// was set.
#[derive(Default)]
struct Watches {
    dirs: BTreeMap<PathBuf, (u64, u64)>,
    /// Directories whose watch failed, said once.
    failed: BTreeSet<PathBuf>,
}

impl Watches {
    /// Watches exactly `wanted`; returns whether a watch was added or renewed (a change in it
    /// may have been missed before the watch was set).
    fn update(
        &mut self,
        wanted: &BTreeSet<PathBuf>,
        watcher: &mut dyn Watcher,
        err: &mut dyn std::io::Write,
    ) -> bool {
        let stale: Vec<PathBuf> = self
            .dirs
            .keys()
            .filter(|d| !wanted.contains(*d))
            .cloned()
            .collect();
        for dir in stale {
            let _ = watcher.unwatch(&dir);
            self.dirs.remove(&dir);
        }
        let mut added = false;
        for dir in wanted {
            let Ok(meta) = fs::metadata(dir) else {
                continue;
            };
            let id = (meta.dev(), meta.ino());
            if self.dirs.get(dir) == Some(&id) {
                continue;
            }
            if self.dirs.remove(dir).is_some() {
                let _ = watcher.unwatch(dir);
            }
            match watcher.watch(dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.dirs.insert(dir.clone(), id);
                    added = true;
                }
                Err(error) => {
                    if self.failed.insert(dir.clone()) {
                        note(
                            err,
                            format_args!(
                                "pi-rules: warning: cannot watch `{}`: {}",
                                escape(&dir.display().to_string()),
                                escape(&error.to_string())
                            ),
                        );
                    }
                }
            }
        }
        added
    }
}

/// Reads a snapshot and fits the watches to it, reading again while new watches were needed
/// (a file created in a directory before its watch was set is then seen).
fn settle(
    env: &Env,
    args: &LayerArgs,
    watcher: &mut dyn Watcher,
    watches: &mut Watches,
    err: &mut dyn std::io::Write,
) -> Result<Snapshot> {
    let mut snapshot = Snapshot::read(env, args)?;
    for _ in 0..8 {
        if !watches.update(&snapshot.watch_dirs(), watcher, err) {
            break;
        }
        snapshot = Snapshot::read(env, args)?;
    }
    Ok(snapshot)
}
