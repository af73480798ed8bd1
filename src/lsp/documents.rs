//! The open documents: their text as the editor has it, its version and its lines.
//!
//! Only the documents the server serves are kept (rule files of a layer, settings files), and a
//! closed one is dropped, so memory is bounded by what is open. A text over
//! [`MAX_DOCUMENT_BYTES`] is not kept: the document is marked oversized and the file on disk
//! stands in for it until a full-text change brings it back under the limit.

use super::position::{Encoding, LineIndex};
use super::transport::MAX_MESSAGE_BYTES;
use lsp_types::{TextDocumentContentChangeEvent, Uri};
use pi_rules_host::files::Overlay;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The largest text kept for a document: what one message can carry.
pub const MAX_DOCUMENT_BYTES: usize = MAX_MESSAGE_BYTES;

/// One open document.
#[derive(Debug)]
pub struct Document {
    pub uri: Uri,
    pub version: i32,
    /// The editor's text; `None` when it is over [`MAX_DOCUMENT_BYTES`].
    text: Option<Arc<str>>,
    pub lines: LineIndex,
}

impl Document {
    pub fn new(uri: Uri, version: i32, text: String, encoding: Encoding) -> Document {
        let mut doc = Document {
            uri,
            version,
            text: None,
            lines: LineIndex::new("", encoding),
        };
        doc.set(text);
        doc
    }

    /// The text, or `""` for an oversized document.
    pub fn text(&self) -> &str {
        self.text.as_deref().unwrap_or("")
    }

    /// Whether the text was too large to keep.
    pub fn oversized(&self) -> bool {
        self.text.is_none()
    }

    fn set(&mut self, text: String) {
        let encoding = self.lines.encoding();
        if text.len() > MAX_DOCUMENT_BYTES {
            self.text = None;
            self.lines = LineIndex::new("", encoding);
        } else {
            self.lines = LineIndex::new(&text, encoding);
            self.text = Some(Arc::from(text));
        }
    }

    /// Applies the changes of one `didChange`, in order: a change with a range replaces that
    /// range of the text as the changes before it left it; one without replaces the whole text.
    pub fn apply(&mut self, version: i32, changes: &[TextDocumentContentChangeEvent]) {
        self.version = version;
        let encoding = self.lines.encoding();
        let mut text: Option<String> = self.text.take().map(|t| t.to_string());
        // The lines of `text`, brought up to date edit by edit (not read again whole each time).
        let mut lines = std::mem::replace(&mut self.lines, LineIndex::new("", encoding));
        for change in changes {
            match (change.range, text.as_mut()) {
                (None, _) => {
                    text = Some(change.text.clone());
                    lines = LineIndex::new(&change.text, encoding);
                }
                (Some(range), Some(current)) => {
                    let span = lines.offsets(range);
                    if current.len() - span.len() + change.text.len() > MAX_DOCUMENT_BYTES {
                        text = None;
                        lines = LineIndex::new("", encoding);
                        continue;
                    }
                    current.replace_range(span.clone(), &change.text);
                    lines.edit(current, span, change.text.len());
                }
                // An edit of a text that was not kept cannot be applied.
                (Some(_), None) => {}
            }
        }
        match text {
            Some(text) if text.len() <= MAX_DOCUMENT_BYTES => {
                self.lines = lines;
                self.text = Some(Arc::from(text));
            }
            _ => {
                self.text = None;
                self.lines = LineIndex::new("", encoding);
            }
        }
    }
}

/// The open documents by path.
#[derive(Debug, Default)]
pub struct Documents {
    docs: HashMap<PathBuf, Document>,
}

impl Documents {
    pub fn insert(&mut self, path: PathBuf, doc: Document) {
        self.docs.insert(path, doc);
    }

    pub fn remove(&mut self, path: &Path) -> Option<Document> {
        let doc = self.docs.remove(path);
        if self.docs.is_empty() {
            // Let the table's memory go with the last document.
            self.docs = HashMap::new();
        }
        doc
    }

    /// Takes out the documents at the paths for which `taken` holds.
    pub fn take_where(&mut self, taken: impl Fn(&Path) -> bool) -> Vec<(PathBuf, Document)> {
        let paths: Vec<PathBuf> = self.docs.keys().filter(|p| taken(p)).cloned().collect();
        paths
            .into_iter()
            .filter_map(|path| self.remove(&path).map(|doc| (path, doc)))
            .collect()
    }

    pub fn get(&self, path: &Path) -> Option<&Document> {
        self.docs.get(path)
    }

    pub fn get_mut(&mut self, path: &Path) -> Option<&mut Document> {
        self.docs.get_mut(path)
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.docs.keys()
    }

    /// The texts of the open documents, for the host to read instead of the files.
    pub fn overlay(&self) -> Overlay {
        let mut overlay = Overlay::new();
        for (path, doc) in &self.docs {
            if let Some(text) = &doc.text {
                overlay.insert(path.clone(), Arc::clone(text));
            }
        }
        overlay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};
    use std::str::FromStr as _;

    fn change(
        range: Option<((u32, u32), (u32, u32))>,
        text: &str,
    ) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: range.map(|((a, b), (c, d))| Range {
                start: Position::new(a, b),
                end: Position::new(c, d),
            }),
            range_length: None,
            text: text.to_owned(),
        }
    }

    fn doc(text: &str) -> Document {
        let uri = Uri::from_str("file:///p/.pi/rules/a.md").unwrap();
        Document::new(uri, 1, text.to_owned(), Encoding::Utf16)
    }

    #[test]
    fn incremental_changes_apply_in_order() {
        let mut d = doc("😀 {{IF:dcoo}}\nx\n{{/IF}}\n");
        // Delete the second `o` (after the emoji's two UTF-16 units), then add a line.
        d.apply(
            2,
            &[
                change(Some(((0, 11), (0, 12))), ""),
                change(Some(((1, 1), (1, 1))), "\ny"),
            ],
        );
        assert_eq!(d.text(), "😀 {{IF:dco}}\nx\ny\n{{/IF}}\n");
        assert_eq!(d.version, 2);
        assert_eq!(d.lines.line_count(), 5);
        d.apply(3, &[change(None, "new")]);
        assert_eq!(d.text(), "new");
        assert_eq!(d.lines.line_count(), 1);
    }

    #[test]
    fn a_text_over_the_limit_is_not_kept() {
        let mut d = doc("a");
        let big = "x".repeat(MAX_DOCUMENT_BYTES);
        d.apply(2, &[change(Some(((0, 0), (0, 0))), &big)]);
        assert!(d.oversized());
        assert_eq!(d.text(), "");
        // An edit of the text it lost is dropped; a whole text brings it back.
        d.apply(3, &[change(Some(((0, 0), (0, 0))), "y")]);
        assert!(d.oversized());
        d.apply(4, &[change(None, "z")]);
        assert_eq!(d.text(), "z");
        let mut docs = Documents::default();
        docs.insert(PathBuf::from("/p/a.md"), d);
        assert_eq!(
            docs.overlay().get(Path::new("/p/a.md")).map(|t| &**t),
            Some("z")
        );
        assert!(docs.remove(Path::new("/p/a.md")).is_some());
        assert!(docs.is_empty());
    }
}
