//! The texts a lint report points into.
//!
//! A [`Linter`](super::Linter) copies each rule file's text here as soon as it has checked it,
//! while the text is still in the cache, and lets the buffer it was read into go: every text
//! ends up in one buffer, the files' buffers are freed (and reused by the next read) at once
//! rather than all at the end, and no text is read again before it is printed. The line starts
//! of a text with findings that have a position are noted at the same time, so that a printer
//! finds lines and columns without scanning texts that have long left the cache.

use super::diagnostic::{push_line_starts, LineIndex};
use std::collections::HashMap;
use std::ops::Range;

/// The texts of the files a report's findings point into, by path.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// Every text, one after the other.
    text: String,
    /// The line starts of the indexed texts, each relative to its text, one list after the
    /// other. As `u32`: rule files are bounded far below 4 GiB, and a longer text is indexed up
    /// to there.
    lines: Vec<u32>,
    by_path: HashMap<String, Source, foldhash::fast::RandomState>,
}

/// Where one file's text and its line starts are.
#[derive(Debug, Clone)]
struct Source {
    text: Range<usize>,
    /// In `lines`; `None` until the text is indexed.
    lines: Option<Range<usize>>,
    /// The text is the file's bytes as read, not a decoding with replacement characters.
    exact: bool,
}

impl Sources {
    /// The text of the file at `path`.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.by_path
            .get(path)
            .and_then(|source| self.text.get(source.text.clone()))
    }

    /// A line index of the file at `path`: the one noted when it was checked, else one built
    /// now.
    pub fn line_index(&self, path: &str) -> Option<LineIndex<'_>> {
        let source = self.by_path.get(path)?;
        let text = self.text.get(source.text.clone())?;
        let starts = source.lines.clone().and_then(|lines| self.lines.get(lines));
        Some(match starts {
            Some(starts) => LineIndex::with_starts(text, starts),
            None => LineIndex::new(text),
        })
    }

    /// How many files have a text.
    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }

    /// Keeps `text` as the text of the file at `path`, with its line starts when `indexed`.
    /// Two texts at one path (the same directory listed as two layers) resolve as they always
    /// have: the last exact text wins over any decoded one, and otherwise the last one wins.
    pub(crate) fn insert(&mut self, path: &str, text: &str, exact: bool, indexed: bool) {
        if let Some(old) = self.by_path.get(path) {
            if old.exact && !exact {
                if indexed {
                    self.index(path);
                }
                return;
            }
        }
        let start = self.text.len();
        self.text.push_str(text);
        let source = Source {
            text: start..self.text.len(),
            lines: None,
            exact,
        };
        match self.by_path.get_mut(path) {
            Some(old) => *old = source,
            None => {
                self.by_path.insert(path.to_owned(), source);
            }
        }
        if indexed {
            self.index(path);
        }
    }

    /// Notes the line starts of the text at `path`, unless they are noted already.
    pub(crate) fn index(&mut self, path: &str) {
        let Some(source) = self.by_path.get_mut(path) else {
            return;
        };
        if source.lines.is_some() {
            return;
        }
        let Some(text) = self.text.get(source.text.clone()) else {
            return;
        };
        let start = self.lines.len();
        push_line_starts(text, &mut self.lines);
        source.lines = Some(start..self.lines.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_and_line_indexes_by_path() {
        let mut sources = Sources::default();
        sources.insert("a", "x\ny\n", true, true);
        sources.insert("b", "é\nz", true, false);
        assert_eq!(sources.get("a"), Some("x\ny\n"));
        assert_eq!(sources.get("b"), Some("é\nz"));
        assert_eq!(sources.get("c"), None);
        assert_eq!(sources.len(), 2);
        for (path, offset) in [("a", 2), ("a", 4), ("b", 3), ("b", 4)] {
            let text = sources.get(path).unwrap_or_default();
            let stored = sources.line_index(path).map(|i| i.line_col(offset));
            assert_eq!(
                stored,
                Some(LineIndex::new(text).line_col(offset)),
                "{path}"
            );
        }
    }

    #[test]
    fn an_exact_text_wins_over_a_decoded_one_at_the_same_path() {
        let cases: [(&[(&str, bool)], &str); 4] = [
            (&[("exact", true), ("decoded", false)], "exact"),
            (&[("decoded", false), ("exact", true)], "exact"),
            (&[("first", true), ("second", true)], "second"),
            (&[("first", false), ("second", false)], "second"),
        ];
        for (inserts, expected) in cases {
            let mut sources = Sources::default();
            for &(text, exact) in inserts {
                sources.insert("p", text, exact, true);
            }
            assert_eq!(sources.get("p"), Some(expected), "{inserts:?}");
            assert_eq!(sources.len(), 1);
            let index = sources.line_index("p");
            assert_eq!(index.map(|i| i.text()), Some(expected));
        }
    }
}
