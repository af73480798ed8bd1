//! Bounded, hang-free reading of one candidate rule file.
//!
//! One `stat` (following links) decides before anything is opened: a size over
//! [`MAX_RULE_BYTES`] is oversized, a FIFO or socket is skipped (opening or reading it could block
//! forever), a directory is unreadable. Anything else is opened with `O_NONBLOCK | O_NOCTTY` and
//! read through a [`READ_LIMIT`]-byte window, so a device that reports size 0 but never ends
//! (`/dev/zero`) is oversized rather than read forever, and a FIFO swapped in after the `stat`
//! cannot block. Only when the read fails or comes back empty is the open file `fstat`ed again,
//! to tell a FIFO that appeared after the check (skipped) from `/dev/null` or an empty file
//! (taken); the common path is one `stat`, one `open` and the reads.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use super::{FailureReason, IoFailure, SpecialKind, MAX_RULE_BYTES, READ_LIMIT};

/// What reading one candidate gave.
#[derive(Debug)]
pub(super) enum ReadOutcome {
    /// The text was read and is taken.
    Text {
        text: String,
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
    /// Read in full; `masked` as in [`ReadOutcome::Text`].
    Bytes { bytes: Vec<u8>, masked: bool },
    /// As [`RawRead::Oversized`].
    Oversized { size: u64, by_read: bool },
    /// As [`RawRead::Failed`].
    Failed(FailureReason),
}

/// Reads the candidate at `path`, bounded and without blocking: `stat` (following links) first,
/// oversized by size, never opening a FIFO or socket, then at most [`READ_LIMIT`] bytes.
/// `is_symlink` is what the directory listing said about it.
pub fn read_raw(path: &Path, is_symlink: bool) -> RawRead {
    let metadata = match fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) => return RawRead::Failed(FailureReason::Stat(IoFailure::from(&err))),
    };
    let size = metadata.len();
    // The size test comes first, whatever the file type, as in the reference.
    if size > MAX_RULE_BYTES {
        return RawRead::Oversized {
            size,
            by_read: false,
        };
    }
    let file_type = metadata.file_type();
    if let Some(kind) = special_kind(&file_type) {
        return RawRead::Failed(FailureReason::Special(kind));
    }
    if file_type.is_dir() {
        return RawRead::Failed(FailureReason::Directory);
    }
    let file = match open_nonblocking(path) {
        Ok(file) => file,
        Err(err) => return RawRead::Failed(FailureReason::Open(IoFailure::from(&err))),
    };
    // `size` is at most MAX_RULE_BYTES here, so it fits in usize on every supported target;
    // one spare byte lets the final zero-length read land without growing the buffer.
    let capacity = usize::try_from(size).map_or(0, |size| size + 1);
    let mut bytes = Vec::with_capacity(capacity);
    if let Err(err) = (&file).take(READ_LIMIT).read_to_end(&mut bytes) {
        if let Some(kind) = special_after_open(&file) {
            return RawRead::Failed(FailureReason::Special(kind));
        }
        return RawRead::Failed(FailureReason::Read(IoFailure::from(&err)));
    }
    if bytes.len() as u64 >= READ_LIMIT {
        return RawRead::Oversized {
            size: READ_LIMIT,
            by_read: true,
        };
    }
    if bytes.is_empty() {
        if let Some(kind) = special_after_open(&file) {
            return RawRead::Failed(FailureReason::Special(kind));
        }
    }
    let masked = is_symlink && bytes.is_empty() && file_type.is_char_device();
    RawRead::Bytes { bytes, masked }
}

/// Reads and decodes the candidate at `path` (see [`read_raw`]).
pub(super) fn read_candidate(path: &Path, is_symlink: bool) -> ReadOutcome {
    match read_raw(path, is_symlink) {
        RawRead::Bytes { bytes, masked } => {
            let (text, had_invalid_utf8) = decode(bytes);
            ReadOutcome::Text {
                text,
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

/// The kind of special file that must never be opened for reading, if it is one.
pub(super) fn special_kind(file_type: &fs::FileType) -> Option<SpecialKind> {
    if file_type.is_fifo() {
        Some(SpecialKind::Fifo)
    } else if file_type.is_socket() {
        Some(SpecialKind::Socket)
    } else {
        None
    }
}

/// Opens `path` for reading without blocking on a FIFO and without acquiring a terminal.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    // Invariant: open(2) flag bits are small positive values, so the cast cannot wrap.
    OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
}

/// Re-checks the type of an opened file: `Some` when it turned out to be a FIFO or socket.
fn special_after_open(file: &File) -> Option<SpecialKind> {
    file.metadata()
        .ok()
        .and_then(|metadata| special_kind(&metadata.file_type()))
}
