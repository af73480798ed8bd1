//! Bounded, hang-free reading of one candidate rule file, through [`Files`]: the file is
//! opened first and its open descriptor decides what it is, so a size over [`MAX_RULE_BYTES`] is
//! oversized, a FIFO or socket is skipped, a directory is unreadable, and a device that never ends
//! (`/dev/zero`) is oversized by reading; a link to a character device that reads as empty
//! (`/dev/null`) masks the lower copies.

use std::borrow::Cow;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use super::confine::{Escape, Policy};
use super::{FailureReason, IoFailure, Layer, MAX_RULE_BYTES, READ_LIMIT};
use crate::files::bounded::{self, Directory, FileRead};
use crate::files::Files;

/// What reading one candidate gave.
#[derive(Debug)]
pub(super) enum ReadOutcome {
    /// The text was read and is taken.
    Text {
        text: Cow<'static, str>,
        had_invalid_utf8: bool,
        /// The candidate is a link to a character device that read as empty (`/dev/null`).
        masked: bool,
    },
    /// The candidate is over the limit; the name is handled and no lower layer is tried.
    Oversized {
        /// The size `stat` reported, or [`READ_LIMIT`] when the read reached the limit.
        size: u64,
        by_read: bool,
    },
    /// The candidate failed; the next lower one is tried.
    Failed(FailureReason),
}

/// The bytes of one candidate, before decoding (`check` needs them to locate invalid UTF-8).
#[derive(Debug)]
pub enum RawRead {
    /// Read in full; `masked` as in `ReadOutcome::Text`.
    Bytes { bytes: Vec<u8>, masked: bool },
    /// As [`RawRead::Oversized`].
    Oversized { size: u64, by_read: bool },
    /// As [`RawRead::Failed`].
    Failed(FailureReason),
}

/// The [`RawRead`] for a bounded read that did not give bytes.
fn from_file_read(read: FileRead) -> RawRead {
    match read {
        FileRead::Bytes { bytes, .. } => RawRead::Bytes {
            bytes,
            masked: false,
        },
        FileRead::Refused => RawRead::Failed(FailureReason::Confined(Escape::Unverifiable)),
        FileRead::TooLarge { size, by_read } => RawRead::Oversized {
            size: if by_read { READ_LIMIT } else { size },
            by_read,
        },
        FileRead::Directory => RawRead::Failed(FailureReason::Directory),
        FileRead::Special(kind) => RawRead::Failed(FailureReason::Special(kind)),
        FileRead::Missing(err) => RawRead::Failed(FailureReason::Stat(IoFailure::from(&err))),
        FileRead::Open(err) => RawRead::Failed(FailureReason::Open(IoFailure::from(&err))),
        FileRead::Read(err) => RawRead::Failed(FailureReason::Read(IoFailure::from(&err))),
    }
}

/// Reads the candidate at `path`, a candidate of `layer` under `policy`, bounded and without
/// blocking (see [`bounded`]): at most [`READ_LIMIT`](super::READ_LIMIT) bytes, never from a
/// FIFO or socket. `is_symlink` is what the directory listing said about it. Also says whether
/// what was opened escapes (see [`Policy::escape`]). Under `--confine` an escaping candidate is refused,
/// before it is opened when its canonical path already tells, else right after the open.
///
/// `dir` is the layer directory held open, when the caller has it: an entry that is not a link
/// is then opened in it by name (see [`bounded::read_entry`]), which is the same file at less
/// cost.
pub fn read_raw_checked(
    files: &Files,
    path: &Path,
    is_symlink: bool,
    dir: Option<&Directory>,
    layer: Layer,
    policy: &Policy,
) -> (RawRead, Option<Escape>) {
    files.note(path, false);
    // An entry of the open layer directory that is not a link is where that directory really
    // is: its real path is known without asking for it again (`canonicalize` is a `readlink` per
    // component of the path, every one of them failing, for every rule).
    // Asked only under `--confine`: without it nothing is refused before the open.
    let entry_dir = dir.filter(|_| !is_symlink);
    let known_real = entry_dir
        .filter(|_| policy.confine)
        .and_then(|dir| Some(dir.real()?.join(path.file_name()?)));
    let before = match known_real {
        Some(real) => policy.escape(layer, &real, None),
        None => policy.refuse_before_open(layer, path, files),
    };
    if let Some(escape) = before {
        return (RawRead::Failed(FailureReason::Confined(escape)), None);
    }
    let mut escape = None;
    let mut inspect = |real: Option<&Path>, metadata: &std::fs::Metadata| {
        escape = match real {
            Some(real) => policy.escape(layer, real, Some(metadata)),
            None if policy.confine => Some(Escape::Unverifiable),
            None => None,
        };
        !(policy.confine && escape.is_some())
    };
    let outcome = match entry_dir {
        Some(dir) => bounded::read_entry(dir, path, MAX_RULE_BYTES, &mut inspect),
        None => bounded::read_inspected(path, MAX_RULE_BYTES, &mut inspect),
    };
    let raw = match outcome {
        FileRead::Refused => {
            let escape = escape.take().unwrap_or(Escape::Unverifiable);
            RawRead::Failed(FailureReason::Confined(escape))
        }
        FileRead::Bytes { bytes, metadata } => {
            let masked = is_symlink && bytes.is_empty() && metadata.file_type().is_char_device();
            RawRead::Bytes { bytes, masked }
        }
        other => from_file_read(other),
    };
    (raw, escape)
}

/// [`read_raw_checked`], reading the editor's buffer instead when `files` has one at `path`
/// (see `read_overlaid_raw`).
pub fn read_raw_in(
    files: &Files,
    path: &Path,
    is_symlink: bool,
    dir: Option<&Directory>,
    layer: Layer,
    policy: &Policy,
) -> (RawRead, Option<Escape>) {
    match files.overlay().get(path) {
        Some(text) => read_overlaid_raw(files, path, text, layer, policy),
        None => read_raw_checked(files, path, is_symlink, dir, layer, policy),
    }
}

/// An editor buffer standing in for the candidate at `path`: nothing is read from the disk.
/// It is oversized only when the text is over [`MAX_RULE_BYTES`], never masked, and escapes
/// as a file at its place would ([`Files::buffer_real_path`]); under `--confine` an escaping one
/// is refused.
pub(super) fn read_overlaid_raw(
    files: &Files,
    path: &Path,
    text: &str,
    layer: Layer,
    policy: &Policy,
) -> (RawRead, Option<Escape>) {
    let escape = policy.escape(layer, &files.buffer_real_path(path), None);
    if policy.confine {
        if let Some(escape) = escape {
            return (RawRead::Failed(FailureReason::Confined(escape)), None);
        }
    }
    let size = text.len() as u64;
    let raw = if size > MAX_RULE_BYTES {
        RawRead::Oversized {
            size,
            by_read: false,
        }
    } else {
        RawRead::Bytes {
            bytes: text.as_bytes().to_vec(),
            masked: false,
        }
    };
    (raw, escape)
}

/// [`read_overlaid_raw`], decoded (the text is UTF-8 already).
pub(super) fn read_overlaid(
    files: &Files,
    path: &Path,
    text: &str,
    layer: Layer,
    policy: &Policy,
) -> (ReadOutcome, Option<Escape>) {
    let (raw, escape) = read_overlaid_raw(files, path, text, layer, policy);
    (decoded(raw), escape)
}

/// Reads and decodes the candidate at `path` (see [`read_raw_checked`]).
pub(super) fn read_candidate(
    files: &Files,
    path: &Path,
    is_symlink: bool,
    dir: Option<&Directory>,
    layer: Layer,
    policy: &Policy,
) -> (ReadOutcome, Option<Escape>) {
    let (raw, escape) = read_raw_checked(files, path, is_symlink, dir, layer, policy);
    (decoded(raw), escape)
}

/// What a raw read gives, its bytes decoded.
fn decoded(raw: RawRead) -> ReadOutcome {
    match raw {
        RawRead::Bytes { bytes, masked } => {
            let (text, had_invalid_utf8) = decode(bytes);
            ReadOutcome::Text {
                text: Cow::Owned(text),
                had_invalid_utf8,
                masked,
            }
        }
        RawRead::Oversized { size, by_read } => ReadOutcome::Oversized { size, by_read },
        RawRead::Failed(reason) => ReadOutcome::Failed(reason),
    }
}

/// Decodes UTF-8, replacing invalid sequences with U+FFFD as JavaScript's decoder does (a BOM is
/// kept as U+FEFF). Returns whether anything was replaced.
pub(super) fn decode(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(err) => (String::from_utf8_lossy(err.as_bytes()).into_owned(), true),
    }
}
