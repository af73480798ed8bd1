//! What an assembly reports besides its text: warnings, and (for `explain` and `check`) every gate
//! decision and every evaluated block, as data with file index and byte span.
//!
//! Spans are byte ranges into the file's whole text, frontmatter included. Line and column are
//! computed only when printing (see [`crate::span`]).
//!
//! Warnings are kept in bulk (a file of stray closers has one per marker), so they are small,
//! copyable records that point into the file's text; their message is produced on demand by
//! [`Warning::message`]. Gate and block decisions are not kept: they go to an [`Observer`] as
//! they are made, borrowing the file's text and the setting values, and an observer that wants
//! them keeps what it needs.

use crate::markers::BlockKind;
use crate::span::{saturate, Span};
use crate::value::Value;
use std::fmt;
use std::ops::Range;

/// A warning: 16 bytes of file index, span and kind. Its message, the exact text the reference
/// logs, is made only when printed, from the file's text: see [`Warning::message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Warning {
    span: Span,
    file: u32,
    pub kind: WarningKind,
}

/// What a warning is about. The warning's span covers the text its message quotes (see each
/// variant), so the message needs nothing but the span and the file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    /// `requires_setting` names a key that is not a settings key; the span is the key as
    /// written in the frontmatter, trimmed.
    UnknownRequiresSetting,
    /// `requires` names something that is not a feature predicate; the span is the name, trimmed.
    UnknownFeature,
    /// A closer with no opener before it, kept verbatim; the span is the marker.
    StrayCloser { kind: BlockKind },
    /// An opener with no closer; it and the rest of its text are kept verbatim. The span is the
    /// opener marker, `{{IF:COND}}`, condition as written.
    Unbalanced { kind: BlockKind },
    /// A condition that is neither a key nor a comparison, so the block is dropped; the span is
    /// the condition as written (untrimmed).
    MalformedCondition,
    /// A condition on a key that is neither a setting nor a feature, so the block is dropped; the
    /// span is the key.
    UnknownKey,
}

impl WarningKind {
    /// The fixed start of the message, before the quoted text.
    pub fn prefix(self) -> &'static str {
        match self {
            WarningKind::UnknownRequiresSetting => "unknown requires_setting key: ",
            WarningKind::UnknownFeature => "unknown feature predicate: ",
            WarningKind::StrayCloser { .. } => "unbalanced conditional marker: ",
            WarningKind::Unbalanced { .. } => "unbalanced conditional block starting at ",
            WarningKind::MalformedCondition => "malformed conditional condition: ",
            WarningKind::UnknownKey => "unknown setting key in conditional: ",
        }
    }
}

impl Warning {
    /// A warning about `span` of file `file` (offsets and index saturate at `u32::MAX`; see
    /// [`crate::span`]).
    pub fn new(file: usize, span: Range<usize>, kind: WarningKind) -> Warning {
        Warning {
            span: Span::new(span),
            file: saturate(file),
            kind,
        }
    }

    /// Index of the rule file in the assembly's input.
    pub fn file(&self) -> usize {
        self.file as usize
    }

    /// The byte range of the quoted text in the file's whole text, frontmatter included.
    pub fn span(&self) -> Range<usize> {
        self.span.range()
    }

    /// The message, given the whole text of file [`Warning::file`]. Printing it never panics: a
    /// span that does not fit `text` quotes nothing.
    pub fn message<'t>(&self, text: &'t str) -> Message<'t> {
        let subject = match self.kind {
            // The closer is fixed text; no need to trust the span.
            WarningKind::StrayCloser { kind } => match kind {
                BlockKind::If => "{{/IF}}",
                BlockKind::IfNot => "{{/IFNOT}}",
            },
            _ => self.span.of(text),
        };
        Message {
            prefix: self.kind.prefix(),
            subject,
        }
    }
}

/// A warning's message, exactly as the reference logs it (without the `rule assembly: ` that
/// is put before it when printed): a fixed prefix and the quoted text of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'t> {
    prefix: &'static str,
    subject: &'t str,
}

impl<'t> Message<'t> {
    /// The fixed part, such as `unknown setting key in conditional: ` (ASCII, no escapes).
    pub fn prefix(&self) -> &'static str {
        self.prefix
    }

    /// The quoted part, such as the key, taken from the file's text.
    pub fn subject(&self) -> &'t str {
        self.subject
    }

    /// The length of the message in bytes.
    pub fn len(&self) -> usize {
        self.prefix.len() + self.subject.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.prefix)?;
        f.write_str(self.subject)
    }
}

/// Why a file was kept or dropped by its frontmatter. Decisions borrow the file's text and the
/// setting values for the length of the [`Observer`] call; byte ranges in them are offsets into
/// the file's whole text, as `usize` (they are not kept in bulk).
#[derive(Debug, Clone, PartialEq)]
pub enum GateReason<'a> {
    /// `requires_setting: key`, tested for truthiness.
    Setting { key: &'a str, value: &'a Value },
    /// `requires_setting` names a key that is not a settings key: the file is dropped (with a
    /// warning).
    UnknownSetting { key: &'a str },
    /// `requires: name`, a feature predicate.
    Feature { name: &'a str, on: bool },
    /// `requires` names something that is not a feature predicate: the file is dropped (with
    /// a warning).
    UnknownFeature { name: &'a str },
}

/// The frontmatter decision for one file: the `requires_setting` outcome, then (only when that
/// passed or was absent) the `requires` outcome. Both `None` means the file is ungated.
#[derive(Debug, Clone, PartialEq)]
pub struct GateDecision<'a> {
    /// Index of the file in the assembly's input.
    pub file: usize,
    /// Whether the file goes on to block evaluation.
    pub included: bool,
    /// The `requires_setting` outcome (`Setting` or `UnknownSetting`).
    pub setting: Option<GateReason<'a>>,
    /// The `requires` outcome (`Feature` or `UnknownFeature`).
    pub feature: Option<GateReason<'a>>,
}

/// Why a block's condition held or not.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockReason<'a> {
    /// A bare key that names a feature predicate.
    Feature { name: &'a str, on: bool },
    /// A bare key tested for truthiness.
    Truthy { key: &'a str, value: &'a Value },
    /// `key == literal` or `key != literal`; `equal` is the outcome of `===` before the operator
    /// and the block's kind are applied.
    Compare {
        key: &'a str,
        equal: bool,
        value: &'a Value,
    },
    /// The key is neither a setting nor a feature predicate: dropped whatever the kind.
    UnknownKey { key: &'a str },
    /// The condition does not parse: dropped whatever the kind.
    Malformed,
}

/// One evaluated block: a matched opener and closer whose condition was tested. Blocks inside a
/// dropped block are never evaluated and are not reported.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockDecision<'a> {
    /// Index of the file in the assembly's input.
    pub file: usize,
    /// `IF` or `IFNOT`.
    pub kind: BlockKind,
    /// The opener marker.
    pub opener: Range<usize>,
    /// The condition text as written.
    pub condition: Range<usize>,
    /// The closer marker.
    pub closer: Range<usize>,
    /// Whether the block's body is kept (after `IFNOT` inverts the test).
    pub kept: bool,
    pub reason: BlockReason<'a>,
}

/// Receives the decisions of an assembly as it makes them. Every method does nothing by default,
/// and `()` ignores everything, so the plain path pays nothing for the hooks.
///
/// Decisions come in input order: for each file its [`GateDecision`], then (when the file is
/// included) a [`BlockDecision`] for every block whose condition was tested, in text order.
/// Warnings are not repeated here; they are in [`crate::Assembly::warnings`].
pub trait Observer {
    /// The frontmatter decision of one file (also for files without a gate).
    fn gate(&mut self, _decision: &GateDecision<'_>) {}
    /// One block whose condition was tested.
    fn block(&mut self, _decision: &BlockDecision<'_>) {}
}

impl Observer for () {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{assemble, Features, Scope, Settings};
    use std::mem::size_of;

    #[test]
    fn records_are_small() {
        assert!(size_of::<Warning>() <= 16, "{}", size_of::<Warning>());
        assert!(size_of::<WarningKind>() <= 2);
        assert!(size_of::<crate::markers::Marker>() <= 12);
    }

    /// (file text, expected messages): every kind, with the quoted text taken from the file.
    #[test]
    fn messages_quote_the_file() {
        let mut settings = Settings::new();
        settings.insert("on", Value::Bool(true));
        let mut features = Features::new();
        features.set("f", true);
        let scope = Scope {
            settings: &settings,
            features: &features,
            review_loop_max_cycles: "3",
        };
        let cases: &[(&str, &[&str])] = &[
            (
                "---\nrequires_setting: \u{feff} nope \t\n---\nx",
                &["unknown requires_setting key: nope"],
            ),
            (
                "---\nrequires: on\nrequires:   g  \n---\nx",
                &["unknown feature predicate: g"],
            ),
            (
                "a{{/IF}}b{{/IFNOT}}",
                &[
                    "unbalanced conditional marker: {{/IF}}",
                    "unbalanced conditional marker: {{/IFNOT}}",
                ],
            ),
            (
                "{{IFNOT: on }}x",
                &["unbalanced conditional block starting at {{IFNOT: on }}"],
            ),
            (
                "{{IF: a b }}x{{/IF}}",
                &["malformed conditional condition:  a b "],
            ),
            (
                "{{IF:\u{a0} typo == 3}}x{{/IF}}{{IFNOT:typo2}}y{{/IFNOT}}",
                &[
                    "unknown setting key in conditional: typo",
                    "unknown setting key in conditional: typo2",
                ],
            ),
        ];
        for (text, expected) in cases {
            let got = assemble(&[*text], &scope);
            let messages: Vec<String> = got.messages(&[*text]).map(|m| m.to_string()).collect();
            assert_eq!(messages, *expected, "{text:?}");
            for (w, m) in got.warnings.iter().zip(got.messages(&[*text])) {
                assert_eq!(m.len(), m.to_string().len());
                assert_eq!(m.prefix(), w.kind.prefix());
            }
        }
    }

    #[test]
    fn a_message_never_panics_on_the_wrong_text() {
        let w = Warning::new(0, 2..4, WarningKind::UnknownKey);
        assert_eq!(w.message("é").to_string(), WarningKind::UnknownKey.prefix());
        assert_eq!(w.message("abcdef").subject(), "cd");
        let far = Warning::new(
            usize::MAX,
            usize::MAX - 1..usize::MAX,
            WarningKind::UnknownKey,
        );
        assert_eq!(
            (far.file(), far.span()),
            (MAX as usize, MAX as usize..MAX as usize)
        );
        assert_eq!(far.message("abc").subject(), "");
    }

    const MAX: u32 = u32::MAX;
}
