//! `export`: the rules block written into the files other agents read, and `import`, the way in
//! from them.
//!
//! The pure parts take text and give text or a plan, with typed errors naming the line:
//! [`targets`] (each agent's file, form and limit), [`section`] (the managed section of a file
//! people also write), [`owned`] (a file pi-rules writes whole), [`import`] (another agent's file
//! as a rule). This module is the thin I/O around them: it finds each target's file under the
//! project root without leaving it ([`locate`]), reads it bounded, plans the new bytes ([`plan`])
//! and writes the changed ones with [`crate::writing`]'s atomic writer, the project root as the
//! bound and the target's directory as the directory written in ([`apply`]).

// `export` and `import` check the files they write, and read back what they wrote, themselves.
#![allow(clippy::disallowed_methods)]

pub mod dialect;
pub mod forms;
pub mod gemini_settings;
pub mod import;
pub mod lint;
pub mod model;
pub mod owned;
pub mod section;
pub mod targets;
pub mod user;

#[cfg(test)]
mod roundtrip_tests;
#[cfg(test)]
mod test_globs;

use crate::writing::{Bound, DirLock, LayerDir, Place, Staged, WriteError};
use model::Model;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
pub use targets::{Form, Target};

/// The most of an existing target file that is read; a larger one is an error.
pub const MAX_TARGET_BYTES: u64 = 8 * 1024 * 1024;

/// How long an export waits for another one writing into the same project.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Why an export did not happen. Every message names the file; messages are raw (the front end
/// escapes them).
#[derive(Debug)]
pub enum ExportError {
    /// An owned target's path holds a file pi-rules did not write.
    NotOurs { path: String },
    /// A managed file's markers are broken.
    Markers {
        path: String,
        err: section::MarkerError,
    },
    /// The file, or a directory on its way, is a link that leaves the project.
    Refused { path: String, reason: String },
    /// The file is read-only.
    ReadOnly { path: String },
    /// The directory the file is in (or would be made in) is read-only.
    ReadOnlyDir { path: String, dir: String },
    /// The file changed after export read it (someone else wrote it): it is left as it is.
    Changed { path: String },
    /// Another export held the lock on the project (or `$HOME`) for too long.
    Busy { root: String },
    /// Any other failure to read or write.
    Io { path: String, reason: String },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::NotOurs { path } => write!(
                f,
                "`{path}` exists and was not written by pi-rules (its first line after the \
                 frontmatter is not pi-rules' generated-by line); move it away, import it with \
                 `pi-rules import {path} --project`, or pass --force to replace it"
            ),
            ExportError::Markers { path, err } => {
                write!(f, "`{path}`: {err}; the file is left as it is")
            }
            ExportError::Refused { path, reason } => write!(f, "`{path}`: {reason}"),
            ExportError::ReadOnly { path } => write!(
                f,
                "`{path}` is read-only; make it writable to export into it"
            ),
            ExportError::ReadOnlyDir { path, dir } => write!(
                f,
                "`{path}`: its directory `{dir}` is read-only; make it writable to export into it"
            ),
            ExportError::Changed { path } => write!(
                f,
                "`{path}` changed after export read it (someone else wrote it meanwhile); it is \
                 left as it is, and nothing of this export was written after it: run export \
                 again"
            ),
            ExportError::Busy { root } => write!(
                f,
                "another `pi-rules export` has been writing into `{root}` for over {} s; \
                 nothing was written: try again when it is done",
                LOCK_WAIT.as_secs()
            ),
            ExportError::Io { path, reason } => write!(f, "`{path}`: {reason}"),
        }
    }
}

impl std::error::Error for ExportError {}

/// An export that did not happen is an input error: a target's file cannot be written.
impl From<ExportError> for crate::error::Error {
    fn from(err: ExportError) -> crate::error::Error {
        crate::error::Error::input(err.to_string())
    }
}

/// Where a file export writes is: the place of its directory (below the project root) and its
/// name. When the file is a link that stays in the project, this is where it leads.
#[derive(Debug, Clone)]
pub struct Located {
    /// The path relative to the project root, `/`-separated, for people.
    pub shown: String,
    place: Place,
    dir: PathBuf,
    name: String,
    exists: bool,
}

impl Located {
    /// The real path the file has, or will have.
    pub fn real_path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }
}

/// Finds `target`'s file under the canonical project `root` ([`locate_path`]).
pub fn locate(root: &Path, target: Target) -> Result<Located, ExportError> {
    locate_path(root, target.path())
}

/// Finds the file `path` (relative, `/`-separated) under the canonical directory `root`. A
/// directory on the way, or the file itself, that is a link leading out of `root` is refused.
pub fn locate_path(root: &Path, path: &str) -> Result<Located, ExportError> {
    locate_bound(Bound::Project, root, path)
}

fn locate_bound(bound: Bound, root: &Path, path: &str) -> Result<Located, ExportError> {
    let shown = path.to_owned();
    let mut dirs: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let name = dirs.pop().unwrap_or_default();
    if name.is_empty() || dirs.iter().chain([&name]).any(|p| *p == "." || *p == "..") {
        return Err(ExportError::Refused {
            path: shown,
            reason: "not a plain path below the project root".to_owned(),
        });
    }
    let below: Vec<OsString> = dirs.iter().map(OsString::from).collect();
    let place = Place::new(bound, root.to_path_buf(), below);
    let refused = |reason: String| ExportError::Refused {
        path: shown.clone(),
        reason,
    };
    let resolved = place.resolve().map_err(|e| match e {
        WriteError::Refused(reason) => refused(reason),
        other => ExportError::Io {
            path: shown.clone(),
            reason: other.to_string(),
        },
    })?;
    let dir = resolved.path();
    let mut located = Located {
        shown: shown.clone(),
        place,
        dir: dir.clone(),
        name: name.to_owned(),
        exists: false,
    };
    if !resolved.missing.is_empty() {
        return Ok(located);
    }
    let full = dir.join(name);
    let metadata = match fs::symlink_metadata(&full) {
        Ok(m) => m,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(located),
        Err(err) => {
            return Err(ExportError::Io {
                path: shown,
                reason: format!("cannot examine it: {err}"),
            })
        }
    };
    if metadata.file_type().is_symlink() {
        let real = fs::canonicalize(&full).map_err(|_| {
            refused("it is a link that does not resolve; refusing to write through it".to_owned())
        })?;
        if !real.starts_with(root) {
            return Err(refused(format!(
                "it is a link to `{}`, outside the project `{}`; refusing to write through it",
                real.display(),
                root.display()
            )));
        }
        let (Some(parent), Some(file)) = (real.parent(), real.file_name()) else {
            return Err(refused("it is a link to the project root".to_owned()));
        };
        let below = parent
            .strip_prefix(root)
            .unwrap_or(Path::new(""))
            .components()
            .map(|c| c.as_os_str().to_owned())
            .collect();
        located.place = Place::new(bound, root.to_path_buf(), below);
        located.dir = parent.to_path_buf();
        located.name = file.to_string_lossy().into_owned();
        located.exists = real.is_file();
        if real.exists() && !real.is_file() {
            return Err(ExportError::Io {
                path: shown,
                reason: "it leads to something that is not a regular file".to_owned(),
            });
        }
        return Ok(located);
    }
    if !metadata.is_file() {
        return Err(ExportError::Io {
            path: shown,
            reason: "it is not a regular file".to_owned(),
        });
    }
    located.exists = true;
    Ok(located)
}

/// The bytes of a located file, `None` when it does not exist.
pub fn read(located: &Located) -> Result<Option<Vec<u8>>, ExportError> {
    if !located.exists {
        return Ok(None);
    }
    let io_err = |reason: String| ExportError::Io {
        path: located.shown.clone(),
        reason,
    };
    let dir = located
        .place
        .open(false)
        .map_err(|e| io_err(e.to_string()))?;
    let bytes = dir
        .read(&located.name, MAX_TARGET_BYTES + 1)
        .map_err(|e| io_err(format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > MAX_TARGET_BYTES {
        return Err(io_err(format!(
            "it is over the {MAX_TARGET_BYTES}-byte limit of a file export reads"
        )));
    }
    Ok(Some(bytes))
}

/// Whether a target is present in a project: a managed file with a section, or an owned file
/// pi-rules wrote.
pub fn is_present(target: Target, bytes: &[u8]) -> bool {
    match target.form() {
        Form::Section => matches!(section::find(bytes), Ok(Some(_)) | Err(_)),
        Form::Owned { .. } => owned::is_ours(bytes),
    }
}

/// How an export writes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `claude` and `gemini` import `AGENTS.md` instead of holding a copy, and every target
    /// keeps its own forms beside `agents-md` (not the layout of [`wanted`]).
    pub pointer: bool,
    /// Replace an owned target's file that pi-rules did not write.
    pub force: bool,
    /// A limit in bytes for every target instead of its agent's.
    pub max_bytes: Option<u64>,
}

/// One file, as export plans it: kept as it is, written, or deleted.
#[derive(Debug)]
pub struct Planned {
    pub located: Located,
    /// The target the file is for.
    pub target: Target,
    /// What writing would change; `None` when the file holds exactly what export would write
    /// (it is then compared, not made again, and its bytes are not kept).
    pub change: Option<Change>,
    /// The target's agent would not read all of it.
    pub over_limit: Option<String>,
}

/// A file that export would change: its bytes now and the ones it would write.
#[derive(Debug)]
pub struct Change {
    /// `None` when the file does not exist.
    pub old: Option<Vec<u8>>,
    /// `None` when the file goes: an owned file no longer made, or a file that held nothing
    /// but export's section.
    pub new: Option<Vec<u8>>,
}

impl Planned {
    /// Whether writing would change the file.
    pub fn changes(&self) -> bool {
        self.change.is_some()
    }

    /// Whether the file would be deleted.
    pub fn deletes(&self) -> bool {
        self.change.as_ref().is_some_and(|c| c.new.is_none())
    }
}

/// Receives bytes as they are made: a `Vec` keeps them, a [`Compare`] checks them against bytes
/// that exist, so that a file already right is found without making its new bytes.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Compares what is put with `expected`, from its start.
pub(crate) struct Compare<'a> {
    rest: &'a [u8],
    same: bool,
}

impl<'a> Compare<'a> {
    pub(crate) fn new(expected: &'a [u8]) -> Compare<'a> {
        Compare {
            rest: expected,
            same: true,
        }
    }

    /// Whether everything put was `expected`, and nothing more or less.
    pub(crate) fn is_whole(&self) -> bool {
        self.same && self.rest.is_empty()
    }
}

impl Sink for Compare<'_> {
    fn put(&mut self, bytes: &[u8]) {
        if !self.same {
            return;
        }
        match self.rest.strip_prefix(bytes) {
            Some(rest) => self.rest = rest,
            None => self.same = false,
        }
    }
}

/// The new bytes of `target`'s file, holding `content` (the block as `assemble` prints it),
/// given its `old` bytes. Pure.
pub fn render(
    target: Target,
    old: Option<&[u8]>,
    content: &str,
    options: &Options,
    shown: &str,
) -> Result<Vec<u8>, ExportError> {
    Ok(match render_change(target, old, content, options, shown)? {
        Some(new) => new,
        None => old.unwrap_or_default().to_vec(),
    })
}

/// Like [`render`], but `None` when `old` already holds the new bytes: they are then compared
/// with what would be written, piece by piece, and not made. Pure.
pub fn render_change(
    target: Target,
    old: Option<&[u8]>,
    content: &str,
    options: &Options,
    shown: &str,
) -> Result<Option<Vec<u8>>, ExportError> {
    match target.form() {
        Form::Section => {
            let pointer = target.pointer().filter(|_| options.pointer);
            render_section(old, content, pointer, target.pointer(), shown)
        }
        Form::Owned { frontmatter } => {
            render_owned(old, frontmatter, content, options.force, shown)
        }
    }
}

/// A managed section holding `content`, or `pointer` instead: a section that holds `kept`
/// (the target's pointer) stays a pointer, as the file says how it is kept.
fn render_section(
    old: Option<&[u8]>,
    content: &str,
    pointer: Option<&str>,
    kept: Option<&str>,
    shown: &str,
) -> Result<Option<Vec<u8>>, ExportError> {
    let markers = |err| ExportError::Markers {
        path: shown.to_owned(),
        err,
    };
    let found = match old {
        Some(old) => section::find(old).map_err(markers)?,
        None => None,
    };
    let existing = old
        .zip(found.as_ref())
        .map(|(old, f)| &old[f.inner.clone()]);
    // `@AGENTS.md`, Claude's pointer before it became `@./AGENTS.md`, is kept as a pointer too.
    let pointer = pointer.or_else(|| {
        kept.filter(|kept| {
            existing.is_some_and(|text| {
                let text = String::from_utf8_lossy(text);
                let text = text.trim();
                text == *kept || (*kept == "@./AGENTS.md" && text == "@AGENTS.md")
            })
        })
    });
    let content: Cow<'_, str> = match pointer {
        Some(pointer) => Cow::Owned(format!("{pointer}\n")),
        None => Cow::Borrowed(content),
    };
    if let (Some(old), Some(found)) = (old, &found) {
        let eol = section::line_ending(old);
        if section::is_rendered(&old[found.whole.clone()], &content, eol) {
            return Ok(None);
        }
    }
    section::splice(old, &content).map(Some).map_err(markers)
}

/// A file written whole; a file at its path that pi-rules did not write is refused unless
/// `force`.
fn render_owned(
    old: Option<&[u8]>,
    frontmatter: &str,
    content: &str,
    force: bool,
    shown: &str,
) -> Result<Option<Vec<u8>>, ExportError> {
    if let Some(old) = old {
        if !force && !owned::is_ours(old) {
            return Err(ExportError::NotOurs {
                path: shown.to_owned(),
            });
        }
        if owned::is_rendered(old, frontmatter, content) {
            return Ok(None);
        }
    }
    Ok(Some(owned::render(frontmatter, content)))
}

/// What one file export makes holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A managed section with this text; a nested file's section that is empty goes.
    Section(String),
    /// A file written whole: its frontmatter, then the generated-by line and the text.
    Owned { frontmatter: String, text: String },
    /// `.gemini/settings.json`, the team's file, with `AGENTS.md` named in `context.fileName`
    /// ([`gemini_settings`]).
    GeminiSettings,
}

/// One file export makes, for a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Relative to the project root, `/`-separated.
    pub path: String,
    pub target: Target,
    /// The target's own file (`AGENTS.md`, `.cursor/rules/pi-rules.mdc`, ...), as opposed to
    /// a scoped rule's file or a nested file.
    pub main: bool,
    pub content: Content,
}

/// What `.github/copilot-instructions.md` holds when `AGENTS.md` is exported too: Copilot reads
/// `AGENTS.md` itself (GitHub docs, "Adding repository custom instructions for GitHub Copilot",
/// agent instructions), so a copy here would reach it twice.
pub const COPILOT_POINTER: &str =
    "The rules of this project are in `AGENTS.md` at the repository root; GitHub Copilot reads it too.\n";

/// Claude Code's project memory in `.claude/`, where export writes Claude's unscoped rules when
/// `AGENTS.md` is exported too ([`together`]): Claude Code reads `./CLAUDE.md` and
/// `./.claude/CLAUDE.md` (Claude Code docs, "Manage Claude's memory", project memory), and,
/// with either, not `AGENTS.md`; Copilot CLI, which reads the root `CLAUDE.md`, does not read
/// this one (both measured with Claude Code 2.1.332 and Copilot CLI 1.0.102 in tests/agents).
pub const CLAUDE_DOT_PATH: &str = ".claude/CLAUDE.md";

/// Whether `targets` are written in the layout for agents that read each other's files
/// ([`wanted`]): `agents-md` among them, and no `--pointer`.
pub fn together(targets: &[Target], pointer: bool) -> bool {
    targets.contains(&Target::AgentsMd) && !pointer
}

/// Every file `targets` get from `model`, in target order, each path once, and the warnings of
/// the forms (what an agent cannot express). Pure.
///
/// Each agent gets each rule once, among the files it reads together. With `agents-md` among the
/// targets ([`together`]), every agent that reads `AGENTS.md` takes the rules from it (the
/// unscoped block and the headed subsections of the root file, and `D/AGENTS.md`), measured with
/// the real agents (tests/agents, issue 35):
/// - Copilot CLI reads `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` (root and nested),
///   `copilot-instructions.md`, `.claude/rules/*.md` and `.github/instructions`, and follows
///   `@./AGENTS.md`: `copilot-instructions.md` holds one line that points to `AGENTS.md`
///   ([`COPILOT_POINTER`], no import), and no `.github/instructions` file is written;
/// - Cline reads `.clinerules/` beside `AGENTS.md`: no `.clinerules` file is written;
/// - Gemini CLI reads `AGENTS.md` when `.gemini/settings.json` names it in `context.fileName`:
///   that name is added ([`gemini_settings`]), and no `GEMINI.md` is written;
/// - Claude Code does not read `AGENTS.md` beside a `CLAUDE.md`: its unscoped block goes into
///   [`CLAUDE_DOT_PATH`], which Copilot does not read, nothing into the root `CLAUDE.md` (which
///   Copilot reads), and its scoped rules into `.claude/rules/pi-rules` (anchored with `/`, so
///   that Copilot, which reads them too, matches none).
///
/// With `pointer` (`--pointer`), `CLAUDE.md` and `GEMINI.md` import `AGENTS.md` instead, and
/// every target keeps its own forms: Copilot CLI follows that import too (a second copy for it).
pub fn wanted(model: &Model, targets: &[Target], pointer: bool) -> (Vec<Wanted>, Vec<String>) {
    let mut out: Vec<Wanted> = Vec::new();
    let mut warnings = Vec::new();
    let agents_md = targets.contains(&Target::AgentsMd);
    let together = together(targets, pointer);
    for &target in targets {
        if together && matches!(target, Target::Gemini | Target::Copilot | Target::Cline) {
            for name in model.reaching_only(target, Target::AgentsMd) {
                warnings.push(format!(
                    "{target}: rule `{name}` is for {target} and not for the agents of \
                     agents-md; exported together with agents-md, {target} takes the rules from \
                     AGENTS.md, and does not get this one (export {target} without agents-md, \
                     or let the rule's `agents:` reach agents-md too)"
                ));
            }
        }
        if together && target == Target::Gemini {
            out.push(Wanted {
                path: gemini_settings::PATH.to_owned(),
                target,
                main: true,
                content: Content::GeminiSettings,
            });
            continue;
        }
        if together && target == Target::Cline {
            continue;
        }
        let mut headed: Vec<(Option<String>, &str)> = Vec::new();
        let mut unscoped: Vec<&str> = Vec::new();
        let mut nested: BTreeMap<String, Vec<(Option<String>, &str)>> = BTreeMap::new();
        let mut owned_files = Vec::new();
        for rule in model.scoped.iter().filter(|r| target.reaches(&r.agents)) {
            let placed = forms::place(
                target,
                &forms::ScopedRule {
                    name: &rule.name,
                    dir: &rule.dir,
                    globs: &rule.globs,
                    text: &rule.text,
                },
            );
            // Copilot's own forms are not written beside AGENTS.md: nothing to say of them.
            if !(together && target == Target::Copilot) {
                warnings.extend(
                    placed
                        .warnings
                        .into_iter()
                        .map(|w| format!("{target}: {w}")),
                );
            }
            match placed.placement {
                forms::Placement::Owned { path, frontmatter } => owned_files.push(Wanted {
                    path,
                    target,
                    main: false,
                    content: Content::Owned {
                        frontmatter,
                        text: rule.text.clone(),
                    },
                }),
                forms::Placement::Section { file, heading } if file == target.path() => {
                    headed.push((heading, &rule.text));
                }
                forms::Placement::Section { file, heading } => {
                    nested.entry(file).or_default().push((heading, &rule.text));
                }
                forms::Placement::Unscoped if rule.dir.is_empty() => unscoped.push(&rule.name),
                forms::Placement::Unscoped => headed.push((None, &rule.text)),
                // No glob of the rule can be used: it matches nothing, and is written nowhere
                // (the warning says why).
                forms::Placement::Nowhere => {}
            }
        }
        let block = model.block_with(target, &unscoped);
        let content = match target.form() {
            _ if agents_md && target == Target::Copilot => {
                Content::Section(COPILOT_POINTER.to_owned())
            }
            // Without headed rules the block is written as it is, byte for byte `assemble`'s.
            Form::Section if headed.is_empty() => Content::Section(block),
            Form::Section => Content::Section(forms::section_text(&block, &headed)),
            Form::Owned { frontmatter } => Content::Owned {
                frontmatter: frontmatter.to_owned(),
                text: block,
            },
        };
        let mut all = Vec::new();
        let main_path = match target {
            Target::Claude if together => CLAUDE_DOT_PATH,
            _ => target.path(),
        };
        // An owned file for the rules every request gets, when there are none (every rule is
        // scoped), would be an empty always-on rule: it is not written (and one written earlier
        // goes).
        let empty = matches!(&content, Content::Owned { text, .. } if text.trim().is_empty());
        // Cline reads AGENTS.md itself when it is exported.
        let cline_reads_agents_md = agents_md && target == Target::Cline;
        if !empty && !cline_reads_agents_md {
            all.push(Wanted {
                path: main_path.to_owned(),
                target,
                main: true,
                content,
            });
        }
        if together && target == Target::Copilot {
            // Copilot takes the scoped rules from AGENTS.md's subsections and nested files.
            owned_files.clear();
            nested.clear();
        }
        all.extend(owned_files);
        all.extend(nested.into_iter().map(|(path, headed)| Wanted {
            path,
            target,
            main: false,
            content: Content::Section(forms::section_text("", &headed)),
        }));
        for w in all {
            if !out.iter().any(|o| o.path == w.path) {
                out.push(w);
            }
        }
    }
    (out, warnings)
}

/// The target a file below the root may have been written for by an earlier export, and
/// whether it is a managed section's file (else an owned file). `None` for a file export
/// never writes.
pub fn written_for(path: &str) -> Option<(Target, bool)> {
    match path {
        CLAUDE_DOT_PATH => return Some((Target::Claude, true)),
        // Not a section: [`plan_removal`] takes back only export's names.
        gemini_settings::PATH => return Some((Target::Gemini, false)),
        _ => {}
    }
    if let Some(target) = Target::ALL.into_iter().find(|t| t.path() == path) {
        return Some((target, target.form() == Form::Section));
    }
    if !model::is_candidate(path) {
        return None;
    }
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let section = |t: Target| Some((t, true));
    match name {
        "AGENTS.md" => return section(Target::AgentsMd),
        "CLAUDE.md" => return section(Target::Claude),
        "GEMINI.md" => return section(Target::Gemini),
        ".goosehints" => return section(Target::Goose),
        _ => {}
    }
    let target = if dir.starts_with(".claude/rules/pi-rules") {
        Target::Claude
    } else if dir == ".cursor/rules" {
        Target::Cursor
    } else if dir == ".github/instructions" {
        Target::Copilot
    } else if dir == ".kiro/steering" {
        Target::Kiro
    } else if dir == ".windsurf/rules" {
        Target::Windsurf
    } else {
        Target::Cline
    };
    Some((target, false))
}

/// The directories below the root where the targets' owned scoped files live, listed (up to a
/// bound) for `pi-rules*` files: the walk does not see them when `.gitignore` leaves them out.
fn listed(root: &Path, targets: &[Target]) -> Vec<String> {
    const MAX: usize = 10_000;
    let mut out = Vec::new();
    let mut stack: Vec<String> = targets
        .iter()
        .filter_map(|t| match t {
            Target::Claude => Some(".claude/rules/pi-rules"),
            Target::Cursor => Some(".cursor/rules"),
            Target::Copilot => Some(".github/instructions"),
            Target::Kiro => Some(".kiro/steering"),
            Target::Windsurf => Some(".windsurf/rules"),
            Target::Cline => Some(".clinerules"),
            _ => None,
        })
        .map(str::to_owned)
        .collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            if out.len() >= MAX {
                return out;
            }
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let path = format!("{dir}/{name}");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && dir.starts_with(".claude/rules/pi-rules") {
                stack.push(path);
            } else if !kind.is_dir() && model::is_candidate(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// Plans every file `targets` get from `model` under the canonical project `root`, and the
/// files an earlier export wrote for them that are no longer made (an owned file that is ours
/// goes; a nested file's section goes, and the file with it when nothing else was in it).
/// Nothing is written. Stops at the first file that cannot be exported.
pub fn plan_model(
    root: &Path,
    targets: &[Target],
    model: &Model,
    options: &Options,
) -> Result<(Vec<Planned>, Vec<String>), ExportError> {
    let (wanted, mut warnings) = wanted(model, targets, options.pointer);
    let mut planned = Vec::with_capacity(wanted.len());
    for w in &wanted {
        let located = locate_path(root, &w.path)?;
        let old = read(&located)?;
        if w.content == Content::GeminiSettings {
            match gemini_settings::add(old.as_deref()) {
                Ok(new) => planned.push(Planned {
                    located,
                    target: w.target,
                    change: new.map(|new| Change {
                        old,
                        new: Some(new),
                    }),
                    over_limit: None,
                }),
                // The team's file, left as it is: Gemini CLI then does not read AGENTS.md.
                Err(why) => warnings.push(format!(
                    "{}: `{}` is left as it is: {why}; Gemini CLI reads AGENTS.md only when it names it, so {}",
                    w.target,
                    w.path,
                    gemini_settings::BY_HAND
                )),
            }
            continue;
        }
        planned.push(plan_wanted(located, old, w, options)?);
    }
    let mut stale: Vec<&str> = model.candidates.iter().map(String::as_str).collect();
    let listed = listed(root, targets);
    stale.extend(listed.iter().map(String::as_str));
    // The files of the other layout (with or without `agents-md`) an earlier export may have
    // written: the main files, Claude's `.claude/CLAUDE.md`, Gemini's settings.
    stale.extend(targets.iter().map(|t| t.path()));
    stale.extend([CLAUDE_DOT_PATH, gemini_settings::PATH]);
    stale.sort_unstable();
    stale.dedup();
    for path in stale {
        let Some((target, section)) = written_for(path) else {
            continue;
        };
        if !targets.contains(&target) || wanted.iter().any(|w| w.path == path) {
            continue;
        }
        if let Some(p) = plan_removal(Bound::Project, root, path, target, section)? {
            planned.push(p);
        }
    }
    Ok((planned, warnings))
}

/// Plans taking out of `path` what export wrote there for `target`: its section (`section`),
/// or the whole file when export owns it. `None` when export has nothing there.
fn plan_removal(
    bound: Bound,
    root: &Path,
    path: &str,
    target: Target,
    section: bool,
) -> Result<Option<Planned>, ExportError> {
    let located = match locate_bound(bound, root, path) {
        Ok(located) => located,
        // Behind a link out of the project: not a file export could have written.
        Err(ExportError::Refused { .. }) => return Ok(None),
        Err(err) => return Err(err),
    };
    let Some(old) = read(&located)? else {
        return Ok(None);
    };
    let new = if path == gemini_settings::PATH {
        match gemini_settings::take_back(&old) {
            Some(new) => new,
            None => return Ok(None),
        }
    } else if section {
        let markers = |err| ExportError::Markers {
            path: path.to_owned(),
            err,
        };
        if section::find(&old).map_err(markers)?.is_none() {
            return Ok(None);
        }
        // A file export made for the section alone goes; one that was there keeps what it held.
        (!section::was_alone(&old))
            .then(|| section::remove(&old).map_err(markers))
            .transpose()?
    } else {
        if !owned::is_ours(&old) {
            return Ok(None);
        }
        None
    };
    Ok(Some(Planned {
        located,
        target,
        change: Some(Change {
            old: Some(old),
            new,
        }),
        over_limit: None,
    }))
}

/// One wanted file's plan, its file located and read (`old`).
fn plan_wanted(
    located: Located,
    old: Option<Vec<u8>>,
    wanted: &Wanted,
    options: &Options,
) -> Result<Planned, ExportError> {
    let target = wanted.target;
    let shown = &located.shown;
    let change = match &wanted.content {
        Content::Section(text) if !wanted.main && text.is_empty() => {
            // A nested file whose section is empty: the section goes.
            match old.as_deref() {
                Some(bytes) => {
                    let markers = |err| ExportError::Markers {
                        path: shown.clone(),
                        err,
                    };
                    if section::find(bytes).map_err(markers)?.is_some() {
                        let new = (!section::was_alone(bytes))
                            .then(|| section::remove(bytes).map_err(markers))
                            .transpose()?;
                        Some(Change { new, old })
                    } else {
                        None
                    }
                }
                None => None,
            }
        }
        Content::Section(text) => {
            let (pointer, kept) = if wanted.main && wanted.path == target.path() {
                (
                    target.pointer().filter(|_| options.pointer),
                    target.pointer(),
                )
            } else {
                (None, None)
            };
            render_section(old.as_deref(), text, pointer, kept, shown)?.map(|new| Change {
                old,
                new: Some(new),
            })
        }
        Content::Owned { frontmatter, text } => {
            render_owned(old.as_deref(), frontmatter, text, options.force, shown)?.map(|new| {
                Change {
                    old,
                    new: Some(new),
                }
            })
        }
        // Planned by [`plan_model`], which has a place for its warning.
        Content::GeminiSettings => None,
    };
    let over_limit = if wanted.main && wanted.path == target.path() {
        let bytes = match &change {
            Some(Change { new: Some(new), .. }) => Some(&new[..]),
            _ => None,
        };
        match bytes {
            Some(bytes) => targets::over_limit(target, bytes, options.max_bytes),
            None => read(&located)
                .ok()
                .flatten()
                .and_then(|b| targets::over_limit(target, &b, options.max_bytes)),
        }
    } else {
        None
    };
    Ok(Planned {
        located,
        target,
        change,
        over_limit,
    })
}

/// Plans every target with one block and no scoped rule: nothing is written. Stops at the first
/// target that cannot be exported.
pub fn plan(
    root: &Path,
    targets: &[Target],
    content: &str,
    options: &Options,
) -> Result<Vec<Planned>, ExportError> {
    Ok(plan_model(root, targets, &Model::plain(content), options)?.0)
}

/// The targets present under `root`: a managed file with a section, or an owned file pi-rules
/// wrote (its own, or a scoped rule's in its directory), in table order, with `agents-md` too under `options.pointer`. A file that exists but
/// cannot be read counts as present, so that its error is reported rather than the target
/// skipped; a path that leads out of the project (`.github` a link elsewhere) is not one export
/// could have written.
pub fn present(root: &Path, options: &Options) -> Result<Vec<Target>, ExportError> {
    let mut found = Vec::new();
    for target in Target::ALL {
        let named = options.pointer && target == Target::AgentsMd;
        let located = match locate(root, target) {
            Ok(located) => located,
            Err(_) if !named => continue,
            Err(err) => return Err(err),
        };
        let present = match read(&located) {
            Ok(old) => old.as_deref().is_some_and(|b| is_present(target, b)),
            Err(_) => true,
        } || has_scoped_files(root, target)
            || present_together(root, target);
        if present || named {
            found.push(target);
        }
    }
    Ok(found)
}

/// Whether the file of `target` in the layout for agents that read `AGENTS.md` ([`together`])
/// says that the target is exported: Claude's section in [`CLAUDE_DOT_PATH`], Gemini's settings
/// naming `AGENTS.md`.
fn present_together(root: &Path, target: Target) -> bool {
    let bytes = |path: &str| {
        locate_path(root, path)
            .and_then(|located| read(&located))
            .ok()
            .flatten()
    };
    match target {
        Target::Claude => bytes(CLAUDE_DOT_PATH).is_some_and(|b| is_present(target, &b)),
        Target::Gemini => bytes(gemini_settings::PATH).is_some_and(|b| {
            gemini_settings::names_agents_md(&b) && root.join("AGENTS.md").is_file()
        }),
        _ => false,
    }
}

/// Whether an owned scoped file of ours for `target` is in its directory under `root` (Cline's
/// own file is left out when `AGENTS.md` is exported, and its scoped files still say it is).
fn has_scoped_files(root: &Path, target: Target) -> bool {
    listed(root, &[target]).iter().any(|path| {
        locate_path(root, path)
            .and_then(|located| read(&located))
            .is_ok_and(|bytes| bytes.is_some_and(|b| owned::is_ours(&b)))
    })
}

/// [`plan`] for the targets [`present`] finds. Empty when none is present (and no pointer).
pub fn plan_present(
    root: &Path,
    content: &str,
    options: &Options,
) -> Result<Vec<Planned>, ExportError> {
    let targets = present(root, options)?;
    plan(root, &targets, content, options)
}

/// Plans taking out everything export wrote for `targets` under `root`: each main file's
/// section (the user's text stays, as it was) or the owned file, every owned scoped file, and
/// every nested file's section (`candidates`: the walk's [`model::is_candidate`] files).
pub fn plan_remove(
    root: &Path,
    targets: &[Target],
    candidates: &[String],
) -> Result<Vec<Planned>, ExportError> {
    let mut paths: Vec<String> = targets.iter().map(|t| t.path().to_owned()).collect();
    paths.extend([CLAUDE_DOT_PATH.to_owned(), gemini_settings::PATH.to_owned()]);
    paths.extend(candidates.iter().cloned());
    paths.extend(listed(root, targets));
    let mut seen = std::collections::HashSet::new();
    let mut planned = Vec::new();
    for path in paths {
        if !seen.insert(path.clone()) {
            continue;
        }
        let Some((target, section)) = written_for(&path) else {
            continue;
        };
        if !targets.contains(&target) {
            continue;
        }
        if let Some(p) = plan_removal(Bound::Project, root, &path, target, section)? {
            planned.push(p);
        }
    }
    Ok(planned)
}

/// What [`apply`] did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub target: Target,
    /// The file was deleted (else written).
    pub deleted: bool,
}

/// How many threads sync the temporary files of one export.
const SYNC_THREADS: usize = 4;
/// How many files one batch of writes holds open at most (with their directories).
const BATCH: usize = 256;

/// Writes every planned file that changes, and deletes those that go (a file whose bytes are
/// already right is not touched, so its modification time stays). Every write is atomic and
/// durable, and they are made together: the temporary files of a batch are written, then
/// synced (a few threads at once), renamed into place, and each directory is synced once.
/// Returns what was done, in plan order.
///
/// Files that others edit too: a file or directory marked read-only (by its mode bits, so also
/// when running as root) stops the export before anything is written; the export holds a lock
/// on its bound ([`DirLock`]) while it writes, so that two exports never interleave; and each
/// file is read again just before its rename (or removal): one that changed since it was
/// planned is left as it is and stops the export ([`ExportError::Changed`]), unless it already
/// holds what this export would write (another export just wrote it), which counts as done.
pub fn apply(planned: &[Planned]) -> Result<Vec<Applied>, ExportError> {
    // Check every file first, so that a read-only one stops the export before anything is
    // written.
    for p in planned.iter().filter(|p| p.changes()) {
        check_writable(p)?;
    }
    let mut roots: Vec<&Path> = planned
        .iter()
        .filter(|p| p.changes())
        .map(|p| p.located.place.root())
        .collect();
    roots.sort_unstable();
    roots.dedup();
    let mut _locks = Vec::with_capacity(roots.len());
    for root in roots {
        let shown = root.display().to_string();
        match DirLock::acquire(root, LOCK_WAIT) {
            Ok(Some(lock)) => _locks.push(lock),
            Ok(None) => return Err(ExportError::Busy { root: shown }),
            Err(e) => {
                return Err(ExportError::Io {
                    path: shown,
                    reason: e.to_string(),
                })
            }
        }
    }
    let mut tasks: Vec<(usize, &Planned, Option<&[u8]>)> = planned
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p, p.change.as_ref()?.new.as_deref())))
        .collect();
    // A directory's files together, so that it is opened and synced once.
    tasks.sort_by(|a, b| a.1.located.dir.cmp(&b.1.located.dir).then(a.0.cmp(&b.0)));
    // Every file as planned, before the first is written (each batch checks its own again).
    for &(_, p, _) in &tasks {
        let dir = p
            .located
            .place
            .open(false)
            .ok()
            .filter(|_| p.located.exists);
        if let Some(dir) = dir {
            as_planned(&dir, p)?;
        }
    }
    let mut done = Vec::with_capacity(tasks.len());
    for batch in tasks.chunks(BATCH) {
        apply_batch(batch, &mut done)?;
    }
    prune_emptied(planned.iter().filter(|p| p.deletes()));
    done.sort_by_key(|(i, _)| *i);
    Ok(done.into_iter().map(|(_, a)| a).collect())
}

/// Refuses a planned change to a file marked read-only, or in a directory marked read-only
/// (the nearest one that exists, for a directory still to be made), by the mode bits.
fn check_writable(p: &Planned) -> Result<(), ExportError> {
    let located = &p.located;
    if located.exists {
        let read_only = fs::metadata(located.real_path())
            .map(|m| m.permissions().readonly())
            .unwrap_or(false);
        if read_only {
            return Err(ExportError::ReadOnly {
                path: located.shown.clone(),
            });
        }
    }
    let dir = match located.place.resolve() {
        Ok(resolved) => resolved.existing,
        Err(_) => return Ok(()),
    };
    let read_only = fs::metadata(&dir)
        .map(|m| m.permissions().readonly())
        .unwrap_or(false);
    if read_only {
        return Err(ExportError::ReadOnlyDir {
            path: located.shown.clone(),
            dir: dir.display().to_string(),
        });
    }
    Ok(())
}

/// Whether the file of `p` in `dir` still holds what it held when planned (or what the plan
/// would write: another export wrote it): `Ok` to go on, else [`ExportError::Changed`] (or
/// [`ExportError::ReadOnly`], when it was made read-only meanwhile). Returns whether the file
/// already holds the planned bytes, so that it needs no write.
fn as_planned(dir: &LayerDir, p: &Planned) -> Result<bool, ExportError> {
    let Some(change) = &p.change else {
        return Ok(true);
    };
    let name = &p.located.name;
    let changed = || ExportError::Changed {
        path: p.located.shown.clone(),
    };
    let mode = dir.mode_of(name).map_err(|_| changed())?;
    let now = match mode {
        None => None,
        Some(_) => Some(
            dir.read(name, MAX_TARGET_BYTES + 1)
                .map_err(|_| changed())?,
        ),
    };
    if now == change.old {
        if mode.is_some_and(|m| m & 0o222 == 0) {
            return Err(ExportError::ReadOnly {
                path: p.located.shown.clone(),
            });
        }
        return Ok(false);
    }
    if now == change.new {
        return Ok(true);
    }
    Err(changed())
}

/// The agents' rule directories that deleting `deleted` left empty are removed too, so that
/// `--remove` (or a rule moved away) leaves no `.claude/rules/pi-rules/D/` or `.cursor/rules/`
/// behind. Only directories named as agents name their rule directories are removed, from the
/// deepest up, and only while empty (`remove_dir` refuses a directory with anything in it); a
/// directory of the team's own (`packages/api`, `.github`) stays, empty or not.
fn prune_emptied<'a>(deleted: impl Iterator<Item = &'a Planned>) {
    const AGENT_DIRS: [&str; 9] = [
        ".claude",
        ".cursor",
        ".kiro",
        ".windsurf",
        ".clinerules",
        "rules",
        "pi-rules",
        "instructions",
        "steering",
    ];
    let mut dirs: Vec<(PathBuf, String)> = deleted
        .map(|p| (p.located.dir.clone(), p.located.place.below()))
        .collect();
    dirs.sort_by_key(|(_, below)| std::cmp::Reverse(below.matches('/').count()));
    dirs.dedup();
    for (mut dir, below) in dirs {
        let mut below = below.as_str();
        while !below.is_empty() {
            let (parent, name) = below.rsplit_once('/').unwrap_or(("", below));
            let ours = AGENT_DIRS.contains(&name) || below.starts_with(".claude/rules/pi-rules/");
            if !ours || fs::remove_dir(&dir).is_err() {
                break;
            }
            below = parent;
            if !dir.pop() {
                break;
            }
        }
    }
}

fn failed(located: &Located) -> impl Fn(WriteError) -> ExportError + '_ {
    move |e: WriteError| match e {
        WriteError::Refused(reason) => ExportError::Refused {
            path: located.shown.clone(),
            reason,
        },
        other => ExportError::Io {
            path: located.shown.clone(),
            reason: other.to_string(),
        },
    }
}

/// One batch of [`apply`]: its directories opened, its files staged, synced, renamed or
/// removed, its directories synced.
fn apply_batch(
    batch: &[(usize, &Planned, Option<&[u8]>)],
    done: &mut Vec<(usize, Applied)>,
) -> Result<(), ExportError> {
    let mut dirs: Vec<LayerDir> = Vec::new();
    let mut dir_of: HashMap<&Path, usize> = HashMap::new();
    let mut staged: Vec<(usize, usize, Staged)> = Vec::new();
    let discard = |dirs: &[LayerDir], staged: Vec<(usize, usize, Staged)>| {
        for (_, d, s) in staged {
            dirs[d].discard(s);
        }
    };
    let mut deletions = Vec::new();
    for (n, &(_, p, new)) in batch.iter().enumerate() {
        let located = &p.located;
        let d = match dir_of.get(located.dir.as_path()) {
            Some(&d) => d,
            None => match located.place.open(new.is_some()) {
                Ok(dir) => {
                    dirs.push(dir);
                    dir_of.insert(located.dir.as_path(), dirs.len() - 1);
                    dirs.len() - 1
                }
                Err(e) => {
                    discard(&dirs, staged);
                    return Err(failed(located)(e));
                }
            },
        };
        match new {
            Some(new) => match dirs[d].stage(&located.name, new) {
                Ok(s) => staged.push((n, d, s)),
                Err(e) => {
                    discard(&dirs, staged);
                    return Err(failed(located)(e));
                }
            },
            None => deletions.push((n, d)),
        }
    }
    if let Some((at, err)) = sync_all(&staged) {
        let n = staged[at].0;
        discard(&dirs, staged);
        return Err(failed(&batch[n].1.located)(err));
    }
    // Read again just before the renames: a file someone else wrote since the plan read it
    // is left as it is, and nothing of the batch is written.
    let mut already = vec![false; batch.len()];
    let checks = staged
        .iter()
        .map(|(n, d, _)| (*n, *d))
        .chain(deletions.iter().copied());
    for (n, d) in checks {
        match as_planned(&dirs[d], batch[n].1) {
            Ok(right) => already[n] = right,
            Err(err) => {
                discard(&dirs, staged);
                return Err(err);
            }
        }
    }
    let mut staged = staged.into_iter();
    while let Some((n, d, s)) = staged.next() {
        let (i, p, _) = batch[n];
        let committed = if already[n] {
            dirs[d].discard(s);
            Ok(())
        } else if p.change.as_ref().is_some_and(|c| c.old.is_none()) {
            // Missing when planned: a file that appeared since is never replaced.
            dirs[d].commit_new(s).map_err(|e| match e {
                WriteError::Exists => ExportError::Changed {
                    path: p.located.shown.clone(),
                },
                other => failed(&p.located)(other),
            })
        } else {
            dirs[d].commit(s).map_err(failed(&p.located))
        };
        if let Err(e) = committed {
            discard(&dirs, staged.collect());
            return Err(e);
        }
        done.push((
            i,
            Applied {
                path: p.located.shown.clone(),
                target: p.target,
                deleted: false,
            },
        ));
    }
    for (n, d) in deletions {
        let (i, p, _) = batch[n];
        if !already[n] {
            dirs[d]
                .remove(&p.located.name)
                .map_err(failed(&p.located))?;
        }
        done.push((
            i,
            Applied {
                path: p.located.shown.clone(),
                target: p.target,
                deleted: true,
            },
        ));
    }
    // Each directory synced once, a few at a time too.
    if dirs.len() <= 1 {
        dirs.iter().for_each(LayerDir::sync);
    } else {
        let chunk = dirs.len().div_ceil(SYNC_THREADS);
        std::thread::scope(|scope| {
            for part in dirs.chunks(chunk) {
                scope.spawn(move || part.iter().for_each(LayerDir::sync));
            }
        });
    }
    Ok(())
}

/// Syncs every staged file, a few threads at once (a sync waits on the disk, not the CPU): the
/// first failure, by its index in `staged`.
fn sync_all(staged: &[(usize, usize, Staged)]) -> Option<(usize, WriteError)> {
    if staged.len() <= 1 {
        return staged
            .iter()
            .enumerate()
            .find_map(|(i, (_, _, s))| s.sync().err().map(|e| (i, e)));
    }
    let chunk = staged.len().div_ceil(SYNC_THREADS);
    std::thread::scope(|scope| {
        let handles: Vec<_> = staged
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                scope.spawn(move || {
                    part.iter()
                        .enumerate()
                        .find_map(|(i, (_, _, s))| s.sync().err().map(|e| (c * chunk + i, e)))
                })
            })
            .collect();
        handles.into_iter().find_map(|h| {
            h.join().unwrap_or_else(|_| {
                Some((0, WriteError::Refused("a sync thread failed".to_owned())))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_keeps_a_pointer_and_refuses_files_it_did_not_write() {
        let options = Options::default();
        let pointed = render(
            Target::Claude,
            None,
            "block\n",
            &Options {
                pointer: true,
                ..Options::default()
            },
            "CLAUDE.md",
        )
        .unwrap();
        assert_eq!(
            section::content(&pointed).unwrap(),
            Some(&b"@./AGENTS.md\n"[..])
        );
        // Refreshed without --pointer, the pointer stays.
        let again = render(
            Target::Claude,
            Some(&pointed),
            "block\n",
            &options,
            "CLAUDE.md",
        )
        .unwrap();
        assert_eq!(again, pointed);
        // agents-md has no pointer form.
        let agents = render(
            Target::AgentsMd,
            None,
            "block\n",
            &Options {
                pointer: true,
                ..Options::default()
            },
            "AGENTS.md",
        )
        .unwrap();
        assert_eq!(section::content(&agents).unwrap(), Some(&b"block\n"[..]));
        let err = render(Target::Cline, Some(b"mine\n"), "b", &options, "x").unwrap_err();
        assert!(matches!(err, ExportError::NotOurs { .. }));
        let forced = render(
            Target::Cline,
            Some(b"mine\n"),
            "b",
            &Options {
                force: true,
                ..Options::default()
            },
            "x",
        )
        .unwrap();
        assert!(owned::is_ours(&forced));
    }

    #[test]
    fn a_file_already_right_is_found_without_making_it_again() {
        let pointer = Options {
            pointer: true,
            ..Options::default()
        };
        for target in Target::ALL {
            for options in [&Options::default(), &pointer] {
                let shown = target.path();
                let made = render(target, None, "block\n", options, shown).unwrap();
                // Fresh: nothing to write, whatever the options (a pointer stays a pointer).
                for again in [options, &Options::default()] {
                    let change = render_change(target, Some(&made), "block\n", again, shown);
                    assert_eq!(change.unwrap(), None, "{target} {again:?}");
                }
                // Stale: the bytes render gives.
                let change = render_change(target, Some(&made), "other\n", options, shown);
                let expected = render(target, Some(&made), "other\n", options, shown).unwrap();
                let pointed = options.pointer && target.pointer().is_some();
                assert_eq!(change.unwrap(), (!pointed).then_some(expected), "{target}");
                // Missing: written.
                assert!(render_change(target, None, "block\n", options, shown)
                    .unwrap()
                    .is_some());
            }
        }
        // Hand-written text around a section in a CRLF file: fresh after one export.
        let hand = b"# Notes\r\nmine\r\n";
        let made = render(
            Target::AgentsMd,
            Some(hand),
            "a\nb",
            &Options::default(),
            "x",
        )
        .unwrap();
        assert!(made.starts_with(hand));
        let change = render_change(
            Target::AgentsMd,
            Some(&made),
            "a\nb",
            &Options::default(),
            "x",
        );
        assert_eq!(change.unwrap(), None);
        // A file without a section always changes.
        let change = render_change(
            Target::AgentsMd,
            Some(hand),
            "a\nb",
            &Options::default(),
            "x",
        );
        assert!(change.unwrap().is_some());
        // Someone else's owned file is refused before any comparison; forced, it is replaced.
        let err = render_change(Target::Kiro, Some(b"mine\n"), "b", &Options::default(), "x");
        assert!(matches!(err, Err(ExportError::NotOurs { .. })));
        let force = Options {
            force: true,
            ..Options::default()
        };
        assert!(
            render_change(Target::Kiro, Some(b"mine\n"), "b", &force, "x")
                .unwrap()
                .is_some()
        );
        // Broken markers are still an error.
        let broken = b"<!-- pi-rules:begin -->\n";
        let err = render_change(Target::Claude, Some(broken), "b", &Options::default(), "x");
        assert!(matches!(err, Err(ExportError::Markers { .. })));
    }

    #[test]
    fn plan_present_plans_what_is_present_and_the_pointer_s_agents_md() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let targets =
            |planned: Vec<Planned>| -> Vec<Target> { planned.iter().map(|p| p.target).collect() };
        let options = Options::default();
        let pointer = Options {
            pointer: true,
            ..Options::default()
        };
        assert_eq!(targets(plan_present(&root, "b\n", &options).unwrap()), []);
        assert_eq!(
            targets(plan_present(&root, "b\n", &pointer).unwrap()),
            [Target::AgentsMd]
        );
        // A hand-written CLAUDE.md without a section is not present; a cursor file is.
        fs::write(root.join("CLAUDE.md"), "mine\n").unwrap();
        fs::create_dir_all(root.join(".cursor/rules")).unwrap();
        let cursor = render(Target::Cursor, None, "b\n", &options, "x").unwrap();
        fs::write(root.join(".cursor/rules/pi-rules.mdc"), &cursor).unwrap();
        fs::write(root.join("GEMINI.md"), section::render("old\n", "\n")).unwrap();
        let planned = plan_present(&root, "b\n", &options).unwrap();
        let changes: Vec<bool> = planned.iter().map(Planned::changes).collect();
        assert_eq!(targets(planned), [Target::Gemini, Target::Cursor]);
        assert_eq!(changes, [true, false]);
        // Broken markers count as present, and are the error.
        fs::write(root.join("AGENTS.md"), "<!-- pi-rules:begin -->\n").unwrap();
        assert!(matches!(
            plan_present(&root, "b\n", &options),
            Err(ExportError::Markers { .. })
        ));
    }

    fn scoped(name: &str, dir: &str, globs: &[&str], agents: &[&str]) -> model::Scoped {
        model::Scoped {
            name: name.to_owned(),
            dir: dir.to_owned(),
            globs: globs.iter().map(|g| (*g).to_owned()).collect(),
            agents: agents.iter().map(|a| (*a).to_owned()).collect(),
            text: format!("{name} text\n"),
        }
    }

    #[test]
    fn wanted_applies_agents_per_target_and_writes_each_rule_once_per_agent() {
        let mut model = Model::plain("block\n");
        model.scoped.push(scoped("api", "", &["src/api/**"], &[]));
        model
            .scoped
            .push(scoped("claude", "", &["src/**"], &["claude"]));
        model
            .scoped
            .push(scoped("web", "packages/web", &[], &["codex"]));
        let paths = |targets: &[Target]| -> Vec<String> {
            wanted(&model, targets, false)
                .0
                .into_iter()
                .map(|w| w.path)
                .collect()
        };
        let cline = paths(&[Target::Cline]);
        assert!(
            cline.contains(&".clinerules/pi-rules.md".to_owned()),
            "{cline:?}"
        );
        assert!(
            cline.contains(&".clinerules/pi-rules-api.md".to_owned()),
            "{cline:?}"
        );
        // `agents: [claude]` and `[codex]` leave Cline out.
        assert_eq!(cline.len(), 2, "{cline:?}");
        let claude = paths(&[Target::Claude]);
        assert!(
            claude.iter().any(|p| p.ends_with("/claude.md")),
            "{claude:?}"
        );
        // With agents-md, Cline and Copilot get no file of their own but Copilot's pointer
        // line, Gemini its settings, Claude `.claude/CLAUDE.md` and its scoped files.
        let together = [
            Target::AgentsMd,
            Target::Claude,
            Target::Gemini,
            Target::Copilot,
            Target::Cline,
        ];
        let (all, _) = wanted(&model, &together, false);
        let mut all_paths: Vec<&str> = all.iter().map(|w| w.path.as_str()).collect();
        all_paths.sort_unstable();
        assert_eq!(
            all_paths,
            [
                ".claude/CLAUDE.md",
                ".claude/rules/pi-rules/api.md",
                ".claude/rules/pi-rules/claude.md",
                ".gemini/settings.json",
                ".github/copilot-instructions.md",
                "AGENTS.md",
                "packages/web/AGENTS.md",
            ]
        );
        // With --pointer, each target keeps its own forms (Cline's unscoped file aside).
        let (pointed, _) = wanted(&model, &together, true);
        let pointed: Vec<&str> = pointed.iter().map(|w| w.path.as_str()).collect();
        for path in [
            "CLAUDE.md",
            "GEMINI.md",
            ".clinerules/pi-rules-api.md",
            ".github/instructions/pi-rules-api.instructions.md",
        ] {
            assert!(pointed.contains(&path), "{path}: {pointed:?}");
        }
        assert!(!pointed.contains(&".clinerules/pi-rules.md"));
        let copilot = all
            .iter()
            .find(|w| w.path == Target::Copilot.path())
            .unwrap();
        assert_eq!(
            copilot.content,
            Content::Section(COPILOT_POINTER.to_owned())
        );
        // AGENTS.md holds the block and the api rule under a heading naming its glob.
        let agents = all.iter().find(|w| w.path == "AGENTS.md").unwrap();
        let Content::Section(text) = &agents.content else {
            panic!("{agents:?}")
        };
        assert!(
            text.starts_with("block\n") && text.contains("src/api/**"),
            "{text}"
        );
        assert!(
            text.contains("api text") && !text.contains("claude text"),
            "{text}"
        );
    }

    fn temporaries(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn a_file_edited_after_the_plan_is_left_as_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let agents = root.join("AGENTS.md");
        fs::write(&agents, "mine\n").unwrap();
        let model = Model::plain("block\n");
        let targets = [Target::AgentsMd, Target::Cursor];
        let (planned, _) = plan_model(&root, &targets, &model, &Options::default()).unwrap();
        // Someone saves the file between export's read and its write.
        fs::write(&agents, "mine, edited\n").unwrap();
        let err = apply(&planned).unwrap_err();
        assert!(
            matches!(&err, ExportError::Changed { path } if path == "AGENTS.md"),
            "{err:?}"
        );
        assert!(err.to_string().contains("run export again"), "{err}");
        assert_eq!(fs::read(&agents).unwrap(), b"mine, edited\n");
        assert!(temporaries(&root).is_empty());
        // Nothing of the export was written: the Cursor file is not there either.
        assert!(!root.join(".cursor/rules/pi-rules.mdc").exists());
        // A file that appears after it was planned missing is not replaced.
        fs::remove_file(&agents).unwrap();
        let (planned, _) = plan_model(&root, &targets, &model, &Options::default()).unwrap();
        fs::write(&agents, "new, theirs\n").unwrap();
        assert!(matches!(apply(&planned), Err(ExportError::Changed { .. })));
        assert_eq!(fs::read(&agents).unwrap(), b"new, theirs\n");
        // One that another export has just written as this one would is done.
        fs::remove_file(&agents).unwrap();
        let (planned, _) = plan_model(&root, &targets, &model, &Options::default()).unwrap();
        let (other, _) = plan_model(&root, &targets, &model, &Options::default()).unwrap();
        apply(&other).unwrap();
        let first = fs::read(&agents).unwrap();
        assert_eq!(apply(&planned).unwrap().len(), 2);
        assert_eq!(fs::read(&agents).unwrap(), first);
        // A deletion planned of a file edited since is not made either.
        let (gone, _) = plan_model(
            &root,
            &[Target::Cursor],
            &Model::plain(""),
            &Options::default(),
        )
        .unwrap();
        assert!(gone.iter().any(Planned::deletes));
        let cursor = root.join(".cursor/rules/pi-rules.mdc");
        let mut edited = fs::read(&cursor).unwrap();
        edited.extend_from_slice(b"a line of mine\n");
        fs::write(&cursor, &edited).unwrap();
        assert!(matches!(apply(&gone), Err(ExportError::Changed { .. })));
        assert_eq!(fs::read(&cursor).unwrap(), edited);
    }

    #[test]
    fn read_only_files_and_directories_are_refused_by_their_mode_even_for_root() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let model = Model::plain("block\n");
        let targets = [Target::Cursor];
        let (planned, _) = plan_model(&root, &targets, &model, &Options::default()).unwrap();
        apply(&planned).unwrap();
        let dir = root.join(".cursor/rules");
        let file = dir.join("pi-rules.mdc");
        let before = fs::read(&file).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // The directory marked read-only: a rename there would replace the file anyway (as
        // root, or by the directory's owner), so it is refused.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
        let (planned, _) = plan_model(
            &root,
            &targets,
            &Model::plain("other\n"),
            &Options::default(),
        )
        .unwrap();
        let err = apply(&planned).unwrap_err();
        assert!(matches!(&err, ExportError::ReadOnlyDir { .. }), "{err:?}");
        assert!(err.to_string().contains(".cursor/rules"), "{err}");
        assert_eq!(fs::read(&file).unwrap(), before);
        assert_eq!(mode(&dir), 0o555);
        assert!(temporaries(&dir).is_empty());
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        // A read-only owned file is not deleted either.
        fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).unwrap();
        let (gone, _) =
            plan_model(&root, &targets, &Model::plain(""), &Options::default()).unwrap();
        assert!(gone.iter().any(Planned::deletes));
        let err = apply(&gone).unwrap_err();
        assert!(matches!(&err, ExportError::ReadOnly { path } if path.ends_with("pi-rules.mdc")));
        assert_eq!(fs::read(&file).unwrap(), before);
        assert_eq!(mode(&file), 0o444);
    }

    #[test]
    fn a_second_export_waits_for_the_first_one_s_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let (planned, _) = plan_model(
            &root,
            &[Target::AgentsMd],
            &Model::plain("block\n"),
            &Options::default(),
        )
        .unwrap();
        let lock = DirLock::acquire(&root, std::time::Duration::ZERO)
            .unwrap()
            .unwrap();
        // Held elsewhere: not taken again at once.
        assert!(DirLock::acquire(&root, std::time::Duration::ZERO)
            .unwrap()
            .is_none());
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| apply(&planned));
            std::thread::sleep(std::time::Duration::from_millis(300));
            assert!(!root.join("AGENTS.md").exists(), "written under the lock");
            drop(lock);
            writer.join().unwrap().unwrap();
        });
        assert!(root.join("AGENTS.md").exists());
    }

    #[test]
    fn apply_writes_and_deletes_in_batches_and_a_second_plan_keeps_everything() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let mut model = Model::plain("block\n");
        for i in 0..(BATCH + 10) {
            model
                .scoped
                .push(scoped(&format!("r{i:03}"), "", &["src/**"], &[]));
        }
        let targets = [Target::Cursor];
        let (planned, _) = plan_model(&root, &targets, &model, &Options::default()).unwrap();
        let applied = apply(&planned).unwrap();
        assert_eq!(applied.len(), BATCH + 11);
        let shown: Vec<&str> = planned.iter().map(|p| p.located.shown.as_str()).collect();
        let done: Vec<&str> = applied.iter().map(|a| a.path.as_str()).collect();
        assert_eq!(shown, done, "in plan order");
        let (again, _) = plan_model(&root, &targets, &model, &Options::default()).unwrap();
        assert!(again.iter().all(|p| !p.changes()));
        // The rules gone, their files go (found by listing the directory: no walk here).
        let (gone, _) = plan_model(
            &root,
            &targets,
            &Model::plain("block\n"),
            &Options::default(),
        )
        .unwrap();
        assert_eq!(gone.iter().filter(|p| p.deletes()).count(), BATCH + 10);
        apply(&gone).unwrap();
        let left: Vec<_> = fs::read_dir(root.join(".cursor/rules")).unwrap().collect();
        assert_eq!(left.len(), 1);
    }
}
