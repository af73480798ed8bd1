//! [`FileId`]: the name a host gives each file it reads, so that reports point at files by a
//! small copyable value and each front end maps it to what it shows (a display path, a URI, an
//! editor document).

use std::fmt;

/// A file as one host's file view numbers it: stable for as long as that view lives, and
/// meaningful only to it. The core never turns one into a path.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(u32);

impl FileId {
    /// The id numbered `index`.
    pub const fn new(index: u32) -> FileId {
        FileId(index)
    }

    /// Its number, an index into the table of whoever gave it out.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Debug for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FileId({})", self.0)
    }
}
