//! Findings as data: [`Diagnostic`] with a stable [`Code`], a severity, a byte span into the
//! file's text, labels, notes and help. Rendering lives in the binary; line and column are
//! computed from the lines a report keeps (see [`SourceLines`](super::SourceLines)).

use super::codes::{Code, Severity, CODE_COUNT};
use crate::escape::{is_unsafe_or_hidden, write_char_escaped};
use crate::FileId;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A secondary span with its own text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub span: Range<usize>,
    pub message: Text,
}

/// A text of a finding: most labels, notes and helps are fixed sentences, kept without an
/// allocation of their own.
pub type Text = Cow<'static, str>;

/// One replacement of a byte range of a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub span: Range<usize>,
    pub replacement: String,
}

/// Edits that repair a finding without changing what the author meant: a misspelt key with a
/// single close match, a marker or placeholder with the wrong case or spacing, trailing white
/// space after a frontmatter fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, e.g. "replace `dcoo` with `dco`".
    pub description: String,
    /// Non-overlapping, in order.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// One edit.
    pub fn replace(
        span: Range<usize>,
        replacement: impl Into<String>,
        description: impl Into<String>,
    ) -> Fix {
        Fix {
            description: description.into(),
            edits: vec![Edit {
                span,
                replacement: replacement.into(),
            }],
        }
    }
}

/// Applies `edits` (sorted, non-overlapping, on char boundaries) to `text`.
pub fn apply_edits(text: &str, edits: &[&Edit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for edit in edits {
        out.push_str(&text[copied..edit.span.start]);
        out.push_str(&edit.replacement);
        copied = edit.span.end;
    }
    out.push_str(&text[copied..]);
    out
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: Text,
    /// The file as found on disk, or `<embedded>/NAME` for an embedded package rule, as a report
    /// shows it (its order is the report's).
    pub path: FilePath,
    /// The host's id of the file (the `file_id` of its [`Entry`](super::Entry) or
    /// [`SettingsInput`](super::SettingsInput)), by which a front end finds the file itself:
    /// `None` when the host gave none.
    pub file_id: Option<FileId>,
    /// Byte range into the file's text (as read: invalid UTF-8 replaced by U+FFFD). `None` for a
    /// finding about the file as a whole (its name, size or kind), which has no position.
    pub span: Option<Range<usize>>,
    /// Text shown under the primary span; may be empty.
    pub label: Text,
    /// Secondary spans.
    pub labels: Vec<Label>,
    pub notes: Vec<Text>,
    pub help: Option<Text>,
    /// A repair `check --fix` may apply.
    pub fix: Option<Fix>,
}

impl Diagnostic {
    /// A diagnostic of `code` at its default severity, with nothing filled in yet.
    pub fn new(code: Code, path: impl Into<FilePath>, span: Option<Range<usize>>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: Text::Borrowed(""),
            path: path.into(),
            file_id: None,
            span,
            label: Text::Borrowed(""),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
            fix: None,
        }
    }

    pub fn fix(&mut self, fix: Fix) -> &mut Self {
        self.fix = Some(fix);
        self
    }

    pub fn message(&mut self, message: impl Into<Text>) -> &mut Self {
        self.message = message.into();
        self
    }

    pub fn label(&mut self, label: impl Into<Text>) -> &mut Self {
        self.label = label.into();
        self
    }

    pub fn secondary(&mut self, span: Range<usize>, message: impl Into<Text>) -> &mut Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn note(&mut self, note: impl Into<Text>) -> &mut Self {
        self.notes.push(note.into());
        self
    }

    pub fn help(&mut self, help: impl Into<Text>) -> &mut Self {
        self.help = Some(help.into());
        self
    }

    pub fn maybe_help(&mut self, help: Option<String>) -> &mut Self {
        if let Some(help) = help {
            self.help = Some(help.into());
        }
        self
    }
}

/// The path of a file with findings, shared by all of them (and by the linter's list of the
/// file): one allocation per file rather than one per finding. It reads as a `str`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FilePath(Arc<str>);

impl FilePath {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for FilePath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for FilePath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for FilePath {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for FilePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for FilePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for FilePath {
    fn from(path: &str) -> Self {
        FilePath(Arc::from(path))
    }
}

impl From<String> for FilePath {
    fn from(path: String) -> Self {
        FilePath(Arc::from(path))
    }
}

impl From<&String> for FilePath {
    fn from(path: &String) -> Self {
        FilePath(Arc::from(path.as_str()))
    }
}

impl PartialEq<str> for FilePath {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for FilePath {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for FilePath {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<FilePath> for String {
    fn eq(&self, other: &FilePath) -> bool {
        **self == *other.0
    }
}

impl PartialEq<FilePath> for &str {
    fn eq(&self, other: &FilePath) -> bool {
        **self == *other.0
    }
}

/// At most this many findings of one code are kept per file; the rest are summarised.
pub const MAX_PER_CODE: usize = 50;

/// The findings of one file while it is checked, bounded per code.
#[derive(Debug)]
pub(crate) struct FileDiagnostics {
    path: FilePath,
    items: Vec<Diagnostic>,
    /// Per code (by index), the findings kept: at most [`MAX_PER_CODE`].
    counts: [u8; CODE_COUNT],
    /// The codes that had findings left out: how many, and the span of the first one left out.
    suppressed: Vec<(Code, usize, Option<Range<usize>>)>,
}

/// The findings of the file at `path`, created on first use.
pub(crate) fn file<'f>(
    files: &'f mut IndexMap<FilePath, FileDiagnostics>,
    path: &str,
) -> &'f mut FileDiagnostics {
    let index = match files.get_index_of(path) {
        Some(index) => index,
        None => {
            let path = FilePath::from(path);
            files
                .insert_full(path.clone(), FileDiagnostics::new(path))
                .0
        }
    };
    &mut files[index]
}

impl FileDiagnostics {
    pub(crate) fn new(path: impl Into<FilePath>) -> Self {
        FileDiagnostics {
            path: path.into(),
            items: Vec::new(),
            counts: [0; CODE_COUNT],
            suppressed: Vec::new(),
        }
    }

    /// A new finding to fill in, or `None` when this code already has [`MAX_PER_CODE`] in this
    /// file (then it is only counted). Callers build messages only when they get `Some`, which
    /// keeps adversarial input cheap.
    pub(crate) fn report(
        &mut self,
        code: Code,
        span: Option<Range<usize>>,
    ) -> Option<&mut Diagnostic> {
        let index = code as usize;
        if usize::from(self.counts[index]) >= MAX_PER_CODE {
            match self.suppressed.iter_mut().find(|s| s.0 == code) {
                Some(slot) => slot.1 += 1,
                None => self.suppressed.push((code, 1, span)),
            }
            return None;
        }
        self.counts[index] += 1;
        self.items
            .push(Diagnostic::new(code, self.path.clone(), span));
        self.items.last_mut()
    }

    /// The path of the file.
    pub(crate) fn path(&self) -> &FilePath {
        &self.path
    }

    /// Appends every offset in the file's text that a finding so far points to: the ends of
    /// its span, its labels and its edits, and the span of the first finding of a code left
    /// out.
    pub(crate) fn offsets(&self, into: &mut Vec<usize>) {
        let mut push = |span: &Range<usize>| into.extend([span.start, span.end]);
        for d in &self.items {
            d.span.iter().for_each(&mut push);
            d.labels.iter().for_each(|l| push(&l.span));
            let edits = d.fix.iter().flat_map(|f| &f.edits);
            edits.for_each(|e| push(&e.span));
        }
        self.suppressed
            .iter()
            .filter_map(|s| s.2.as_ref())
            .for_each(push);
    }

    /// How many findings are kept so far: where the next one goes, for [`Self::fixes_of`].
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// No finding so far, kept or left out.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty() && self.suppressed.is_empty()
    }

    /// The fixes attached to findings of `code`, from the `from`th finding on: two copies of a
    /// file at the same path (a package directory that is also the project's) share one list,
    /// and the fixes of one copy must not be applied to the other's text.
    pub(crate) fn fixes_of(&self, code: Code, from: usize) -> Vec<&Fix> {
        self.items
            .get(from..)
            .unwrap_or_default()
            .iter()
            .filter(|d| d.code == code)
            .filter_map(|d| d.fix.as_ref())
            .collect()
    }

    /// Removes the fixes of the findings of `code`, from the `from`th finding on.
    pub(crate) fn drop_fixes(&mut self, code: Code, from: usize) {
        let items = self.items.get_mut(from..).unwrap_or_default();
        for d in items.iter_mut().filter(|d| d.code == code) {
            d.fix = None;
        }
    }

    /// Removes the findings of `codes` from the `from`th finding on, and the count of those of
    /// them left out: what a rule file's `lint-ignore:` silences.
    pub(crate) fn drop_codes(&mut self, codes: &[Code], from: usize) {
        let mut index = 0;
        self.items.retain(|d| {
            index += 1;
            index <= from || !codes.contains(&d.code)
        });
        self.suppressed.retain(|s| !codes.contains(&s.0));
    }

    /// Adds `diagnostic`, made elsewhere (a finding on a file the linter does not read, such as
    /// pi-rules' configuration file), outside the bound per code.
    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    /// Lets go of the room for findings beyond those kept so far, once a file is checked: a
    /// list grows to room for four findings at its first, and a layer of thousands of files
    /// with one or two findings each would hold half of it empty until the end of the run.
    pub(crate) fn shrink(&mut self) {
        self.items.shrink_to_fit();
    }

    /// The findings in position order (whole-file ones first), each code's overflow summarised,
    /// and `note` added to every positioned finding.
    pub(crate) fn finish(mut self, note: Option<&str>) -> Vec<Diagnostic> {
        for (code, count, span) in std::mem::take(&mut self.suppressed) {
            let mut d = Diagnostic::new(code, self.path.clone(), span);
            d.message(format!(
                "and {count} more `{}` findings in this file, not shown",
                code.id()
            ));
            self.items.push(d);
        }
        if let Some(note) = note {
            for d in &mut self.items {
                if d.span.is_some() {
                    d.notes.push(Text::Owned(note.to_owned()));
                }
            }
        }
        self.items
            .sort_by_key(|d| d.span.as_ref().map_or((0, 0), |s| (1, s.start)));
        self.items
    }
}

/// A text for a message: at most `max` characters, line breaks shown as `⏎`, and every other
/// character that [`is_unsafe_or_hidden`] names written as the escaper writes it (`\r`,
/// `\x1b`, `\u{202e}`).
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push('⏎'),
            c if is_unsafe_or_hidden(c) => {
                let _ = write_char_escaped(&mut out, c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The byte offset of `part` inside `whole`, when `part` is a subslice of it.
pub(crate) fn offset_in(whole: &str, part: &str) -> Option<usize> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then_some(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_table() {
        let cases = [
            ("abc", 5, "abc"),
            ("abcdef", 3, "abc…"),
            ("a\nb", 5, "a⏎b"),
            ("éé", 1, "é…"),
            ("a\u{202e}b\0", 9, "a\\u{202e}b\\0"),
            (
                "\r\t\u{1b}[2J\u{200b}\u{e0041}",
                9,
                "\\r\\t\\x1b[2J\\u{200b}\\u{e0041}",
            ),
        ];
        for (text, max, expected) in cases {
            assert_eq!(excerpt(text, max), expected);
        }
    }

    #[test]
    fn per_code_cap_summarises_the_rest() {
        let mut file = FileDiagnostics::new("x.md");
        for i in 0..MAX_PER_CODE + 7 {
            if let Some(d) = file.report(Code::StrayCloser, Some(i..i + 1)) {
                d.message("stray");
            }
        }
        let out = file.finish(None);
        assert_eq!(out.len(), MAX_PER_CODE + 1);
        assert!(out
            .iter()
            .any(|d| d.message.starts_with("and 7 more `PR202`")));
    }
}
