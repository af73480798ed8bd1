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
pub mod import;
pub mod lint;
pub mod owned;
pub mod section;
pub mod targets;

use crate::writing::{Bound, Place, WriteError};
use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
pub use targets::{Form, Target};

/// The most of an existing target file that is read; a larger one is an error.
pub const MAX_TARGET_BYTES: u64 = 8 * 1024 * 1024;

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

/// Where a target's file is: the place of its directory (below the project root) and its name.
/// When the file is a link that stays in the project, this is where it leads.
#[derive(Debug, Clone)]
pub struct Located {
    pub target: Target,
    /// The path as the table gives it, for people.
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

/// Finds `target`'s file under the canonical project `root`. A directory on the way, or the file
/// itself, that is a link leading out of the project is refused.
pub fn locate(root: &Path, target: Target) -> Result<Located, ExportError> {
    let shown = target.path().to_owned();
    let (dirs, name) = target.split_path();
    let below: Vec<OsString> = dirs.iter().map(OsString::from).collect();
    let place = Place::new(Bound::Project, root.to_path_buf(), below);
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
        target,
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
        located.place = Place::new(Bound::Project, root.to_path_buf(), below);
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
    /// `claude` and `gemini` import `AGENTS.md` instead of holding a copy.
    pub pointer: bool,
    /// Replace an owned target's file that pi-rules did not write.
    pub force: bool,
    /// A limit in bytes for every target instead of its agent's.
    pub max_bytes: Option<u64>,
}

/// One target's file, as export plans it.
#[derive(Debug)]
pub struct Planned {
    pub located: Located,
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
    pub new: Vec<u8>,
}

impl Planned {
    /// Whether writing would change the file.
    pub fn changes(&self) -> bool {
        self.change.is_some()
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
            let markers = |err| ExportError::Markers {
                path: shown.to_owned(),
                err,
            };
            let found = match old {
                Some(old) => section::find(old).map_err(markers)?,
                None => None,
            };
            // A section that holds the pointer stays a pointer: the file says how it is kept.
            let existing = old
                .zip(found.as_ref())
                .map(|(old, f)| &old[f.inner.clone()]);
            let pointer = target.pointer().filter(|pointer| {
                options.pointer
                    || existing.is_some_and(|text| String::from_utf8_lossy(text).trim() == *pointer)
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
        Form::Owned { frontmatter } => {
            if let Some(old) = old {
                if !options.force && !owned::is_ours(old) {
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
    }
}

/// Plans every target: nothing is written. Stops at the first target that cannot be exported.
/// The targets are planned one after the other, and the bytes of a file already right are let go
/// at once: an export that changes nothing holds one file at a time.
pub fn plan(
    root: &Path,
    targets: &[Target],
    content: &str,
    options: &Options,
) -> Result<Vec<Planned>, ExportError> {
    targets
        .iter()
        .map(|&target| {
            let located = locate(root, target)?;
            let old = read(&located)?;
            plan_read(located, old, content, options)
        })
        .collect()
}

/// Plans the targets present under `root` (see [`is_present`]), in table order, with
/// `agents-md` too under `options.pointer`: what [`plan`] gives for those targets, each file read
/// once. Empty when none is present (and no pointer). A file that exists but cannot be read
/// counts as present, so that its error is reported rather than the target skipped; a path that
/// leads out of the project (`.github` a link elsewhere) is not one export could have written.
pub fn plan_present(
    root: &Path,
    content: &str,
    options: &Options,
) -> Result<Vec<Planned>, ExportError> {
    let mut planned = Vec::new();
    for target in Target::ALL {
        let named = options.pointer && target == Target::AgentsMd;
        let located = match locate(root, target) {
            Ok(located) => located,
            Err(_) if !named => continue,
            Err(err) => return Err(err),
        };
        let old = read(&located)?;
        let present = old
            .as_deref()
            .is_some_and(|bytes| is_present(target, bytes));
        if present || named {
            planned.push(plan_read(located, old, content, options)?);
        }
    }
    Ok(planned)
}

/// One target's plan, its file located and read (`old`).
fn plan_read(
    located: Located,
    old: Option<Vec<u8>>,
    content: &str,
    options: &Options,
) -> Result<Planned, ExportError> {
    let target = located.target;
    let new = render_change(target, old.as_deref(), content, options, &located.shown)?;
    let written = new.as_deref().or(old.as_deref()).unwrap_or_default();
    let over_limit = targets::over_limit(target, written, options.max_bytes);
    Ok(Planned {
        located,
        change: new.map(|new| Change { old, new }),
        over_limit,
    })
}

/// Writes every planned file that changes (a file whose bytes are already right is not touched,
/// so its modification time stays). Returns the targets written.
pub fn apply(planned: &[Planned]) -> Result<Vec<Target>, ExportError> {
    // Check every file first, so that a read-only one stops the export before anything is
    // written.
    for p in planned.iter().filter(|p| p.changes()) {
        if p.located.exists {
            let read_only = fs::metadata(p.located.real_path())
                .map(|m| m.permissions().readonly())
                .unwrap_or(false);
            if read_only {
                return Err(ExportError::ReadOnly {
                    path: p.located.shown.clone(),
                });
            }
        }
    }
    let mut written = Vec::new();
    for (p, change) in planned.iter().filter_map(|p| Some((p, p.change.as_ref()?))) {
        let located = &p.located;
        let failed = |e: WriteError| match e {
            WriteError::Refused(reason) => ExportError::Refused {
                path: located.shown.clone(),
                reason,
            },
            other => ExportError::Io {
                path: located.shown.clone(),
                reason: other.to_string(),
            },
        };
        let dir = located.place.open(true).map_err(failed)?;
        dir.write(&located.name, &change.new, true)
            .map_err(failed)?;
        written.push(located.target);
    }
    Ok(written)
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
            Some(&b"@AGENTS.md\n"[..])
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
        let targets = |planned: Vec<Planned>| -> Vec<Target> {
            planned.iter().map(|p| p.located.target).collect()
        };
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
}
