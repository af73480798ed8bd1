//! What an assembly reports besides its text: warnings, and (for `explain` and `check`) every gate
//! decision and every evaluated block, as data with file index and byte span.
//!
//! Spans are byte ranges into the file's whole text, frontmatter included. Line and column are
//! computed only when printing (see [`crate::span`]).

use crate::markers::BlockKind;
use crate::value::Value;
use std::fmt;
use std::ops::Range;

/// A warning, with the exact message the reference logs (see its [`fmt::Display`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    /// Index of the rule file in the assembly's input.
    pub file: usize,
    /// What the warning is about: the frontmatter line, the marker, or the condition.
    pub span: Range<usize>,
    pub kind: WarningKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WarningKind {
    /// `requires_setting` names a key that is not a settings key.
    UnknownRequiresSetting { key: String },
    /// `requires` names something that is not a feature predicate.
    UnknownFeature { name: String },
    /// A closer with no opener before it; kept verbatim.
    StrayCloser { kind: BlockKind },
    /// An opener with no closer; it and the rest of its text are kept verbatim.
    Unbalanced { kind: BlockKind, condition: String },
    /// A condition that is neither a key nor a comparison; the block is dropped.
    MalformedCondition { condition: String },
    /// A condition on a key that is neither a setting nor a feature; the block is dropped.
    UnknownKey { key: String },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarningKind::UnknownRequiresSetting { key } => {
                write!(f, "unknown requires_setting key: {key}")
            }
            WarningKind::UnknownFeature { name } => write!(f, "unknown feature predicate: {name}"),
            WarningKind::StrayCloser { kind } => {
                write!(
                    f,
                    "unbalanced conditional marker: {{{{/{}}}}}",
                    kind.keyword()
                )
            }
            WarningKind::Unbalanced { kind, condition } => write!(
                f,
                "unbalanced conditional block starting at {{{{{}:{condition}}}}}",
                kind.keyword()
            ),
            WarningKind::MalformedCondition { condition } => {
                write!(f, "malformed conditional condition: {condition}")
            }
            WarningKind::UnknownKey { key } => {
                write!(f, "unknown setting key in conditional: {key}")
            }
        }
    }
}

/// Why a file was kept or dropped by its frontmatter.
#[derive(Debug, Clone, PartialEq)]
pub enum GateReason<'a> {
    /// `requires_setting: key`, tested for truthiness.
    Setting {
        key: &'a str,
        value: &'a Value,
    },
    UnknownSetting {
        key: &'a str,
    },
    /// `requires: name`, a feature predicate.
    Feature {
        name: &'a str,
        on: bool,
    },
    UnknownFeature {
        name: &'a str,
    },
}

/// The frontmatter decision for one file: the `requires_setting` outcome, then (only when that
/// passed or was absent) the `requires` outcome. Both `None` means the file is ungated.
#[derive(Debug, Clone, PartialEq)]
pub struct GateDecision<'a> {
    pub file: usize,
    pub included: bool,
    pub setting: Option<GateReason<'a>>,
    pub feature: Option<GateReason<'a>>,
}

/// Why a block's condition held or not.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockReason<'a> {
    /// A bare key that names a feature predicate.
    Feature { name: &'a str, on: bool },
    /// A bare key tested for truthiness.
    Truthy { key: &'a str, value: &'a Value },
    /// `key == literal` or `key != literal`.
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
    pub file: usize,
    pub kind: BlockKind,
    /// The opener marker.
    pub opener: Range<usize>,
    /// The condition text as written.
    pub condition: Range<usize>,
    /// The closer marker.
    pub closer: Range<usize>,
    pub kept: bool,
    pub reason: BlockReason<'a>,
}

/// Receives the decisions of an assembly as it makes them. Every method does nothing by default,
/// and `()` ignores everything, so the plain path pays nothing for the hooks.
pub trait Observer {
    fn gate(&mut self, _decision: &GateDecision<'_>) {}
    fn block(&mut self, _decision: &BlockDecision<'_>) {}
}

impl Observer for () {}
