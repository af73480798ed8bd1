//! Layer discovery and bounded rule-file reading (SPEC §1 and §7).
//!
//! [`load`] lists the three layer directories, builds the map from file name to the paths that
//! provide it, sorts the names with JavaScript `localeCompare` order ([`compare_names`]) and, per
//! name, takes the highest-precedence candidate that can be read: project, then user, then
//! package. The result is plain data for the engine ([`Loaded::files`]) plus a report per name
//! ([`Loaded::names`]) and debug notes, for `explain` and `check`.
//!
//! Rules, as in the reference:
//! - only regular files and symbolic links (to anything) named `*.md` are listed; a missing
//!   directory is silent, any other listing error is a note;
//! - a candidate whose `stat` size is over [`MAX_RULE_BYTES`] handles the name: it is skipped and
//!   no lower layer is tried (an oversized override hides the package rule);
//! - a candidate that cannot be `stat`ed or read (dangling link, link to a directory, link loop,
//!   vanished file) falls back to the next lower one;
//! - text is UTF-8 with invalid sequences replaced by U+FFFD; a BOM is kept; a link to
//!   `/dev/null` reads as empty and is taken (masking).
//!
//! Beyond the reference: reads are bounded to [`READ_LIMIT`] bytes whatever `stat` says, so a
//! link to `/dev/zero` is oversized; a FIFO or socket is never opened for reading. The reference
//! would hang on one, so there is no compatible answer; this loader treats it like an unreadable
//! candidate: it is skipped with a note and the next lower layer is tried
//! ([`FailureReason::Special`]). Files are read afresh on every call; nothing is cached.
//!
//! An editor's open documents (the [`Overlay`](crate::files::Overlay) of [`LayerDirs::files`]) stand in for the
//! files at their paths: a rule name in the overlay whose parent is a layer directory is listed
//! there as a regular file, and read as its text.

mod collation;
mod confine;
mod read;

use indexmap::IndexMap;
use std::borrow::Cow;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::files::is_rule_name;
pub use collation::{comparator_for, compare_names, sort_by_name};
pub use confine::{Escape, Policy};
pub use read::{read_raw_checked, read_raw_in, RawRead};

use crate::files::bounded::Directory;
use crate::files::{self, Files};
use read::ReadOutcome;

/// The largest rule file that is read (a file of more bytes is oversized): one limit for the
/// loader and the linter.
pub use pi_rules_core::lint::MAX_RULE_BYTES;

/// The most bytes ever read from one candidate; reaching it means the candidate is oversized.
pub const READ_LIMIT: u64 = MAX_RULE_BYTES + 1;

/// A rule layer, lowest precedence first (so `Ord` is precedence): the core's one type, so that
/// the loader, the linter, `check` and the commands name the layers alike.
pub use pi_rules_core::layer::Layer;

/// Where the package layer comes from.
#[derive(Clone, Debug)]
pub enum PackageSource {
    /// Rules compiled into the binary: (file name, text). Always readable.
    Embedded(&'static [(&'static str, &'static str)]),
    /// A directory listed and read like the other layers.
    Dir(PathBuf),
}

/// The three layer directories.
#[derive(Clone, Debug)]
pub struct LayerDirs {
    /// The package layer.
    pub package: PackageSource,
    /// The user layer, `$HOME/.pi/agent/rules`; `None` without a home directory.
    pub user: Option<PathBuf>,
    /// The project layer, `<cwd>/.pi/rules`.
    pub project: PathBuf,
    /// The files the layers are read through, the editor's buffers among them.
    pub files: Arc<Files>,
}

impl LayerDirs {
    /// The standard layout: `HOME/.pi/agent/rules` and `CWD/.pi/rules` (the working directory
    /// as given, not the repository root).
    pub fn standard(package: PackageSource, home: Option<&Path>, cwd: &Path) -> LayerDirs {
        LayerDirs {
            package,
            user: home.map(|home| home.join(".pi").join("agent").join("rules")),
            project: cwd.join(".pi").join("rules"),
            files: Arc::default(),
        }
    }

    /// The same layers, read through `files`.
    pub fn with_files(self, files: Arc<Files>) -> LayerDirs {
        LayerDirs { files, ..self }
    }
}

/// A taken rule file, in assembly order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleFile {
    /// The file name, e.g. `10-agent-routing.md`.
    pub name: String,
    /// The layer it was taken from.
    pub layer: Layer,
    /// Its path; `None` for an embedded package rule.
    pub path: Option<PathBuf>,
    /// Its text (invalid UTF-8 replaced by U+FFFD, a BOM kept); an embedded rule's text is not
    /// copied.
    pub text: Cow<'static, str>,
    /// Whether the bytes were not valid UTF-8.
    pub had_invalid_utf8: bool,
}

/// One provider of a file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The layer that provides it.
    pub layer: Layer,
    /// Its path; `None` for an embedded package rule.
    pub path: Option<PathBuf>,
    /// Whether the directory entry is a symbolic link.
    pub is_symlink: bool,
}

impl Candidate {
    /// The path for messages; embedded rules show as `<embedded>/NAME`.
    pub fn display_path(&self, name: &str) -> String {
        match &self.path {
            Some(path) => path.display().to_string(),
            None => format!("<embedded>/{name}"),
        }
    }
}

/// An I/O error kept as data (`io::Error` is neither `Clone` nor `Eq`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoFailure {
    /// The error kind.
    pub kind: io::ErrorKind,
    /// The OS error number, when there is one (e.g. `ELOOP` for a link loop).
    pub raw_os_error: Option<i32>,
    /// The error message.
    pub message: String,
}

impl From<&io::Error> for IoFailure {
    fn from(err: &io::Error) -> Self {
        IoFailure {
            kind: err.kind(),
            raw_os_error: err.raw_os_error(),
            message: err.to_string(),
        }
    }
}

pub use crate::files::bounded::SpecialKind;

/// Why a candidate could not be taken; the next lower candidate is tried after each of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailureReason {
    /// `stat` (following links) failed: a dangling link, a link loop, a vanished file.
    Stat(IoFailure),
    /// A directory, or a link to one.
    Directory,
    /// A FIFO or socket, skipped without being read (the reference would hang).
    Special(SpecialKind),
    /// Opening failed.
    Open(IoFailure),
    /// Reading failed.
    Read(IoFailure),
    /// Refused by `--confine`: it escapes the project, or it is a special file.
    Confined(Escape),
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureReason::Stat(err) => write!(f, "cannot stat it: {}", err.message),
            FailureReason::Directory => f.write_str("it is a directory"),
            FailureReason::Special(kind) => {
                write!(f, "it is a {}, which could block; not read", kind.as_str())
            }
            FailureReason::Open(err) => write!(f, "cannot open it: {}", err.message),
            FailureReason::Read(err) => write!(f, "cannot read it: {}", err.message),
            FailureReason::Confined(escape) => write!(f, "refused by --confine: {escape}"),
        }
    }
}

/// A candidate that failed, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The candidate that was tried.
    pub candidate: Candidate,
    /// Why it was not taken.
    pub reason: FailureReason,
}

/// What the loader picked for one file name: a copy taken, an oversized copy that ends the
/// search, or nothing readable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pick {
    /// A candidate was read and taken.
    Taken {
        /// The candidate taken.
        winner: Candidate,
        /// The winner is a link to a character device that read as empty (`/dev/null`): the
        /// user masks the lower copies.
        masked: bool,
        /// Higher-precedence candidates that failed first, highest first.
        fell_back_from: Vec<Failure>,
        /// Lower-precedence candidates not tried, highest first.
        shadows: Vec<Candidate>,
    },
    /// A candidate was over the limit: the name is handled, nothing is taken, and the lower
    /// candidates are not tried.
    Oversized {
        /// The oversized candidate.
        winner: Candidate,
        /// The size `stat` reported or, when `by_read`, [`READ_LIMIT`]: `stat` said it was small
        /// enough but reading reached the limit (a device such as `/dev/zero`, a growing file).
        size: u64,
        /// Whether the limit was found by reading rather than by `stat`.
        by_read: bool,
        /// Higher-precedence candidates that failed first, highest first.
        fell_back_from: Vec<Failure>,
        /// Lower-precedence candidates hidden by this one, highest first.
        hides: Vec<Candidate>,
    },
    /// Every candidate failed; the name contributes nothing.
    Unreadable {
        /// Each candidate's failure, highest precedence first.
        failures: Vec<Failure>,
    },
}

/// The report for one file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameReport {
    /// The file name.
    pub name: String,
    /// What became of it.
    pub outcome: Pick,
    /// Every provider of the name, highest precedence (project) first.
    pub candidates: Vec<Candidate>,
}

impl NameReport {
    /// The candidate that decided the name (taken or oversized), if any.
    pub fn winner(&self) -> Option<&Candidate> {
        match &self.outcome {
            Pick::Taken { winner, .. } | Pick::Oversized { winner, .. } => Some(winner),
            Pick::Unreadable { .. } => None,
        }
    }

    /// Whether a file was taken for this name.
    pub fn is_taken(&self) -> bool {
        matches!(self.outcome, Pick::Taken { .. })
    }
}

/// The result of loading the layers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// The taken files, in assembly (collation) order.
    pub files: Vec<RuleFile>,
    /// One report per file name, in the same order.
    pub names: Vec<NameReport>,
    /// The map was empty or no file was taken: the rules block is the fallback text.
    pub fallback: bool,
    /// Debug-level notes: listing errors other than a missing directory, special files skipped,
    /// oversized candidates, candidates that fell back.
    pub notes: Vec<String>,
    /// Candidates that escape (see [`Escape`]): taken, or refused under `--confine`. The
    /// commands name each on stderr.
    pub escapes: Vec<EscapingRule>,
}

/// A candidate that escapes the project or is a special file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EscapingRule {
    pub name: String,
    pub candidate: Candidate,
    pub escape: Escape,
    /// Refused under `--confine` (else it was read and is in the block).
    pub refused: bool,
}

impl fmt::Display for EscapingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.candidate.display_path(&self.name);
        let layer = self.candidate.layer.as_str();
        if self.refused {
            write!(f, "{layer} rule `{path}` is not read: {}", self.escape)?;
            f.write_str(" (--confine)")
        } else {
            write!(f, "{layer} rule `{path}` is read although {}", self.escape)?;
            f.write_str("; --confine (or PI_RULES_CONFINE=1) refuses it")
        }
    }
}

/// Where a candidate's text comes from.
#[derive(Clone, Debug)]
enum Source {
    Embedded(&'static str),
    File(PathBuf),
    /// An editor buffer standing in for the file at the path.
    Overlay(PathBuf, Arc<str>),
}

/// A provider of a name, as listed.
#[derive(Clone, Debug)]
struct Provider {
    layer: Layer,
    source: Source,
    is_symlink: bool,
}

impl Provider {
    fn candidate(&self) -> Candidate {
        Candidate {
            layer: self.layer,
            path: match &self.source {
                Source::Embedded(_) => None,
                Source::File(path) | Source::Overlay(path, _) => Some(path.clone()),
            },
            is_symlink: self.is_symlink,
        }
    }
}

/// Loads the three layers: lists, sorts and reads the rule files (see the module docs).
pub fn load(dirs: &LayerDirs) -> Loaded {
    load_with(dirs, &Policy::default())
}

/// Like [`load`], finding the candidates that escape under `policy`, and refusing them when it
/// confines.
pub fn load_with(dirs: &LayerDirs, policy: &Policy) -> Loaded {
    let mut notes = Vec::new();
    // File name → providers, lowest precedence first; names in first-seen order (package, then
    // user, then project, each in byte order) so that equal-collating names keep that order.
    // One map holds each name once. Its hasher is a fast one: std's asks the kernel for its
    // keys on first use, a system call that costs more than hashing these names.
    let mut names: IndexMap<String, Vec<Provider>, foldhash::fast::RandomState> =
        IndexMap::default();
    let mut add = |name: String, provider: Provider| names.entry(name).or_default().push(provider);
    // Each layer directory that was listed, held open until its entries are read.
    let mut open: [Option<Directory>; 3] = Default::default();

    match &dirs.package {
        PackageSource::Embedded(rules) => {
            let mut rules: Vec<&(&str, &str)> = rules
                .iter()
                .filter(|(name, _)| is_rule_name(name))
                .collect();
            rules.sort_by(|a, b| a.0.cmp(b.0));
            for (name, text) in rules {
                add(
                    (*name).to_owned(),
                    Provider {
                        layer: Layer::Package,
                        source: Source::Embedded(text),
                        is_symlink: false,
                    },
                );
            }
        }
        PackageSource::Dir(dir) => {
            open[Layer::Package as usize] =
                list_into(Layer::Package, dir, &dirs.files, &mut notes, &mut add);
        }
    }
    if let Some(user) = &dirs.user {
        open[Layer::User as usize] =
            list_into(Layer::User, user, &dirs.files, &mut notes, &mut add);
    }
    open[Layer::Project as usize] = list_into(
        Layer::Project,
        &dirs.project,
        &dirs.files,
        &mut notes,
        &mut add,
    );

    let mut loaded = Loaded {
        files: Vec::with_capacity(names.len()),
        names: Vec::with_capacity(names.len()),
        notes,
        ..Loaded::default()
    };
    // Sorted as `sort_by_name` sorts, stably; the map is consumed without rebuilding its index.
    let compare = comparator_for(names.keys().map(String::as_str));
    for (name, providers) in names.sorted_by(|a, _, b, _| compare(a, b)) {
        resolve_name(name, providers, &dirs.files, policy, &open, &mut loaded);
    }
    loaded.fallback = loaded.files.is_empty();
    loaded
}

/// Lists one layer directory and adds its entries to the map; returns the directory, held open.
fn list_into(
    layer: Layer,
    dir: &Path,
    files: &Files,
    notes: &mut Vec<String>,
    add: &mut impl FnMut(String, Provider),
) -> Option<Directory> {
    files.note(dir, true);
    let (entries, open) = files::list_layer(layer, dir, files.overlay(), notes);
    for entry in entries {
        let source = match entry.overlay {
            Some(text) => Source::Overlay(entry.path, text),
            None => Source::File(entry.path),
        };
        add(
            entry.name,
            Provider {
                layer,
                source,
                is_symlink: entry.is_symlink,
            },
        );
    }
    open
}

/// Tries the providers of one name from highest precedence down and records the outcome.
fn resolve_name(
    name: String,
    mut providers: Vec<Provider>,
    files: &Files,
    policy: &Policy,
    open: &[Option<Directory>; 3],
    loaded: &mut Loaded,
) {
    providers.reverse();
    let candidates: Vec<Candidate> = providers.iter().map(Provider::candidate).collect();
    let mut failures: Vec<Failure> = Vec::new();
    let mut outcome = None;
    for (at, provider) in providers.iter().enumerate() {
        let candidate = &candidates[at];
        let lower = || candidates[at + 1..].to_vec();
        let (result, escape) = match &provider.source {
            Source::Embedded(text) => (embedded(text), None),
            Source::Overlay(path, text) => {
                read::read_overlaid(files, path, text, provider.layer, policy)
            }
            Source::File(path) => read::read_candidate(
                files,
                path,
                provider.is_symlink,
                open[provider.layer as usize].as_ref(),
                provider.layer,
                policy,
            ),
        };
        let refused = match &result {
            ReadOutcome::Failed(FailureReason::Confined(escape)) => Some(escape.clone()),
            _ => None,
        };
        if let Some(escape) = refused.or(escape) {
            loaded.escapes.push(EscapingRule {
                name: name.clone(),
                candidate: candidate.clone(),
                refused: matches!(result, ReadOutcome::Failed(FailureReason::Confined(_))),
                escape,
            });
        }
        match result {
            ReadOutcome::Text {
                text,
                had_invalid_utf8,
                masked,
            } => {
                loaded.files.push(RuleFile {
                    name: name.clone(),
                    layer: provider.layer,
                    path: candidate.path.clone(),
                    text,
                    had_invalid_utf8,
                });
                outcome = Some(Pick::Taken {
                    winner: candidate.clone(),
                    masked,
                    fell_back_from: std::mem::take(&mut failures),
                    shadows: lower(),
                });
                break;
            }
            ReadOutcome::Oversized { size, by_read } => {
                let hides = lower();
                loaded.notes.push(format!(
                    "skipped `{name}`: `{}` {} over the {MAX_RULE_BYTES}-byte limit{}",
                    candidate.display_path(&name),
                    if by_read {
                        "reads".to_owned()
                    } else {
                        format!("is {size} bytes,")
                    },
                    match hides.len() {
                        0 => String::new(),
                        1 => "; it hides the lower copy".to_owned(),
                        n => format!("; it hides {n} lower copies"),
                    },
                ));
                outcome = Some(Pick::Oversized {
                    winner: candidate.clone(),
                    size,
                    by_read,
                    fell_back_from: std::mem::take(&mut failures),
                    hides,
                });
                break;
            }
            ReadOutcome::Failed(reason) => {
                loaded.notes.push(format!(
                    "cannot use `{}` for `{name}`: {reason}; {}",
                    candidate.display_path(&name),
                    if at + 1 < candidates.len() {
                        "trying the next lower layer"
                    } else {
                        "no lower layer provides it"
                    }
                ));
                failures.push(Failure {
                    candidate: candidate.clone(),
                    reason,
                });
            }
        }
    }
    let outcome = outcome.unwrap_or(Pick::Unreadable { failures });
    loaded.names.push(NameReport {
        name,
        outcome,
        candidates,
    });
}

/// An embedded package rule: always readable, still subject to the size limit.
fn embedded(text: &'static str) -> ReadOutcome {
    let size = text.len() as u64;
    if size > MAX_RULE_BYTES {
        ReadOutcome::Oversized {
            size,
            by_read: false,
        }
    } else {
        ReadOutcome::Text {
            text: Cow::Borrowed(text),
            had_invalid_utf8: false,
            masked: false,
        }
    }
}
