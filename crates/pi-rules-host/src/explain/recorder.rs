//! Recording the decisions: an [`Observer`] that keeps every gate and block decision of one
//! assembly, in the order the engine makes them, each block in 28 bytes.

use pi_rules_core::event::{BlockDecision, BlockReason, GateDecision, GateReason};
use pi_rules_core::Observer;
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

/// A key or feature name, as its place in the recorder's [`Names`]: a layer of many files tests
/// the same few keys thousands of times, and each decision holds four bytes for its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key(pub u32);

/// The names that decisions refer to, each kept once.
#[derive(Default)]
pub struct Names {
    pub list: Vec<Rc<str>>,
    /// Looked up once per decision: a fast, per-process seeded hasher.
    pub index: HashMap<Rc<str>, Key, foldhash::fast::RandomState>,
}

impl Names {
    /// The key of `name`, added when it is new.
    pub fn key(&mut self, name: &str) -> Key {
        if let Some(&key) = self.index.get(name) {
            return key;
        }
        // Fewer than 2^32 names: each comes from a marker of a bounded file.
        let key = Key(u32::try_from(self.list.len()).unwrap_or(u32::MAX));
        let name: Rc<str> = name.into();
        self.list.push(Rc::clone(&name));
        self.index.insert(name, key);
        key
    }

    pub fn name(&self, key: Key) -> &str {
        self.list.get(key.0 as usize).map_or("", |name| name)
    }
}

/// Why a block's condition held, kept after the assembly.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    Feature { name: Key, on: bool },
    Truthy { key: Key, truthy: bool },
    Compare { key: Key, equal: bool },
    UnknownKey { key: Key },
    Malformed,
}

impl Reason {
    pub fn of(reason: &BlockReason<'_>, names: &mut Names) -> Reason {
        let mut key = |name: &str| names.key(name);
        match reason {
            BlockReason::Feature { name, on } => Reason::Feature {
                name: key(name),
                on: *on,
            },
            BlockReason::Truthy { key: name, value } => Reason::Truthy {
                key: key(name),
                truthy: value.is_truthy(),
            },
            BlockReason::Compare {
                key: name, equal, ..
            } => Reason::Compare {
                key: key(name),
                equal: *equal,
            },
            BlockReason::UnknownKey { key: name } => Reason::UnknownKey { key: key(name) },
            BlockReason::Malformed => Reason::Malformed,
        }
    }

    /// The settings key whose value decided, if one did.
    pub fn setting(&self) -> Option<Key> {
        match self {
            Reason::Truthy { key, .. } | Reason::Compare { key, .. } => Some(*key),
            _ => None,
        }
    }
}

/// One evaluated block, in 28 bytes: offsets are `u32`, as the engine keeps them (rule files are
/// at most 131,073 bytes).
#[derive(Debug)]
pub struct Decided {
    pub file: u32,
    pub opener: u32,
    pub closer: [u32; 2],
    pub kept: bool,
    pub reason: Reason,
}

impl Decided {
    pub fn opener(&self) -> usize {
        self.opener as usize
    }

    pub fn closer(&self) -> Range<usize> {
        self.closer[0] as usize..self.closer[1] as usize
    }
}

/// An offset as the engine keeps it.
pub fn offset(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

/// One gate part: `requires_setting` or `requires`.
#[derive(Debug, Clone)]
pub enum GatePart {
    Setting { key: Box<str> },
    UnknownSetting { key: Box<str> },
    Feature { name: Box<str>, on: bool },
    UnknownFeature { name: Box<str> },
}

impl GatePart {
    pub fn of(reason: &GateReason<'_>) -> GatePart {
        match reason {
            GateReason::Setting { key, .. } => GatePart::Setting { key: (*key).into() },
            GateReason::UnknownSetting { key } => GatePart::UnknownSetting { key: (*key).into() },
            GateReason::Feature { name, on } => GatePart::Feature {
                name: (*name).into(),
                on: *on,
            },
            GateReason::UnknownFeature { name } => GatePart::UnknownFeature {
                name: (*name).into(),
            },
        }
    }
}

#[derive(Debug)]
pub struct Gate {
    pub included: bool,
    pub setting: Option<GatePart>,
    pub feature: Option<GatePart>,
}

/// Decisions recorded during the assembly, in the order the engine makes them: one gate per
/// file, and the blocks of each file in text order.
#[derive(Default)]
pub struct Recorder {
    pub gates: Vec<Gate>,
    pub blocks: Vec<Decided>,
    pub names: Names,
    /// Per name of [`Names`], whether a block's condition read it as a settings key: marked as
    /// the decisions come, so that the settings section needs no pass over them (18 MB of
    /// decisions at 16,000 files).
    pub read_by_blocks: Vec<bool>,
}

impl Observer for Recorder {
    fn gate(&mut self, decision: &GateDecision<'_>) {
        self.gates.push(Gate {
            included: decision.included,
            setting: decision.setting.as_ref().map(GatePart::of),
            feature: decision.feature.as_ref().map(GatePart::of),
        });
    }

    fn block(&mut self, decision: &BlockDecision<'_>) {
        let reason = Reason::of(&decision.reason, &mut self.names);
        if let Some(key) = reason.setting() {
            let at = key.0 as usize;
            if at >= self.read_by_blocks.len() {
                self.read_by_blocks.resize(at + 1, false);
            }
            self.read_by_blocks[at] = true;
        }
        self.blocks.push(Decided {
            file: offset(decision.file),
            opener: offset(decision.opener.start),
            closer: [offset(decision.closer.start), offset(decision.closer.end)],
            kept: decision.kept,
            reason,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer of many files records a decision per block: they stay small.
    #[test]
    fn a_decision_is_28_bytes_and_names_are_kept_once() {
        assert_eq!(std::mem::size_of::<Decided>(), 28);
        let mut names = Names::default();
        let a = names.key("dco");
        let b = names.key("log_rules");
        assert_eq!(names.key("dco"), a);
        assert_ne!(a, b);
        assert_eq!((names.name(a), names.name(b)), ("dco", "log_rules"));
        assert_eq!(names.list.len(), 2);
    }
}
