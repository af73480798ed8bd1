//! Assembly: from the taken rule files to the rules text.
//!
//! For each file in order: split the frontmatter, apply its gate, evaluate the blocks of its body
//! and repair its tables. Then join the kept bodies with a blank line, repair tables across the
//! joins, and substitute `{{REVIEW_LOOP_MAX_CYCLES}}`.
//!
//! [`Assembler`] does this in one output buffer: each body is evaluated straight into the joined
//! text, and the later phases only say where to cut or substitute, so a text without table gaps
//! or placeholders is copied once. It keeps its buffers from one call to the next, for hosts that
//! assemble many times in one process; [`assemble`] is the one-shot form.

use crate::blocks::{self, Body, Conditions, Scratch};
use crate::event::{GateDecision, GateReason, Message, Observer, Warning, WarningKind};
use crate::frontmatter;
use crate::placeholder::{self, REVIEW_LOOP_MAX_CYCLES};
use crate::scope::Scope;
use crate::table;
use std::ops::Range;

/// What the kept bodies are joined with.
pub const JOIN: &str = "\n\n";

/// The result of an assembly.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Assembly {
    /// The assembled rules, without the leading blank line a host puts before them.
    pub text: String,
    /// Warnings in the order the reference emits them. Their messages need the files' texts:
    /// see [`Assembly::messages`].
    pub warnings: Vec<Warning>,
    /// For each input file, whether its frontmatter gate let it in.
    pub included: Vec<bool>,
    /// For each input file, the bytes its evaluated body added before the join (0 when gated).
    pub contributed: Vec<usize>,
    /// How many `{{REVIEW_LOOP_MAX_CYCLES}}` placeholders were replaced.
    pub placeholders: usize,
}

impl Assembly {
    /// The message of every warning, in order, given the files that were assembled.
    pub fn messages<'a, S: AsRef<str>>(
        &'a self,
        files: &'a [S],
    ) -> impl Iterator<Item = Message<'a>> + 'a {
        self.warnings.iter().map(move |w| {
            let text = files.get(w.file()).map_or("", AsRef::as_ref);
            w.message(text)
        })
    }
}

/// Assembles `files` (whole texts, in order) against `scope`.
pub fn assemble<S: AsRef<str>>(files: &[S], scope: &Scope<'_>) -> Assembly {
    assemble_observed(files, scope, &mut ())
}

/// Like [`assemble`], reporting every gate and block decision to `observer`.
pub fn assemble_observed<S: AsRef<str>, O: Observer>(
    files: &[S],
    scope: &Scope<'_>,
    observer: &mut O,
) -> Assembly {
    let mut assembler = Assembler::new();
    assembler.assemble_observed(files, scope, observer);
    assembler.into_assembly()
}

/// A reusable assembler: it keeps its buffers (the output text, the warnings, the marker lists)
/// from one call to the next, so that a long-running host allocates only when an input is larger
/// than any before it. Buffers that grew far beyond what the current input needs (over 1 MiB and
/// four times the need) are released at the start of the next call.
///
/// ```
/// use pi_rules_core::{Assembler, Features, Scope, Settings, Value};
///
/// let mut settings = Settings::new();
/// settings.insert("dco", Value::Bool(true));
/// let features = Features::new();
/// let scope = Scope { settings: &settings, features: &features, review_loop_max_cycles: "3" };
/// let mut assembler = Assembler::new();
/// let files = ["{{IF:dco}}Sign off.{{/IF}}", "{{IF:nope}}x{{/IF}}"];
/// let assembly = assembler.assemble(&files, &scope);
/// assert_eq!(assembly.text, "Sign off.\n\n");
/// let messages: Vec<String> = assembly.messages(&files).map(|m| m.to_string()).collect();
/// assert_eq!(messages, ["unknown setting key in conditional: nope"]);
/// ```
#[derive(Debug, Default)]
pub struct Assembler {
    assembly: Assembly,
    scratch: Scratch,
    /// Where each `"\n\n"` between two kept bodies starts in the text.
    separators: Vec<usize>,
    /// Which separators have had their gaps closed.
    joined_gaps: table::JoinedGaps,
    /// Table gaps of the current body, or across the joins.
    gaps: Vec<Range<usize>>,
    /// Placeholder offsets in the joined text.
    placeholders: Vec<usize>,
    /// The text after the first cut, while the cuts are made.
    spare: String,
}

impl Assembler {
    /// An assembler with empty buffers; it allocates on first use.
    pub fn new() -> Assembler {
        Assembler::default()
    }

    /// Assembles `files` (whole texts, in order) against `scope`. The result borrows the
    /// assembler until the next call.
    pub fn assemble<S: AsRef<str>>(&mut self, files: &[S], scope: &Scope<'_>) -> &Assembly {
        self.assemble_observed(files, scope, &mut ())
    }

    /// Like [`Assembler::assemble`], reporting every gate and block decision to `observer`.
    pub fn assemble_observed<S: AsRef<str>, O: Observer>(
        &mut self,
        files: &[S],
        scope: &Scope<'_>,
        observer: &mut O,
    ) -> &Assembly {
        let total: usize = files.iter().map(|f| f.as_ref().len() + JOIN.len()).sum();
        self.reset(files.len(), total);
        let Assembler {
            assembly,
            scratch,
            separators,
            joined_gaps,
            gaps,
            placeholders,
            spare,
        } = self;
        let text = &mut assembly.text;
        text.reserve(total);
        let value = scope.review_loop_max_cycles;
        // A value that is not blank and holds no blank, line break or `|` leaves every line as
        // table repair sees it, so it can be put in as each body is done, while the text after
        // it is short. Any other value goes in at the end, as the reference does it.
        let early = !value.is_empty() && !value.bytes().any(|b| b" \t\n|".contains(&b));
        let mut any = false;
        let mut conditions = Conditions::default();
        for (index, file) in files.iter().enumerate() {
            let file = file.as_ref();
            let front = frontmatter::split(file);
            let keep = gate(index, &front, scope, &mut assembly.warnings, observer);
            assembly.included.push(keep);
            if !keep {
                assembly.contributed.push(0);
                continue;
            }
            if any {
                separators.push(text.len());
                text.push_str(JOIN);
            }
            any = true;
            let body = Body {
                file: index,
                text: file,
                start: front.body_start,
            };
            let before = text.len();
            let evaluated = blocks::evaluate(
                &body,
                scope,
                &mut conditions,
                scratch,
                text,
                &mut assembly.warnings,
                observer,
                early.then_some(value),
            );
            gaps.clear();
            table::find_gaps(text, before, gaps);
            placeholders.clear();
            if early && evaluated.other_braces {
                placeholder::find(text, before, placeholders);
            }
            cut(text, gaps, placeholders, value, spare);
            // What the body added before the placeholders were filled in.
            let filled = evaluated.filled + placeholders.len();
            assembly.placeholders += filled;
            assembly.contributed.push(
                (text.len() + filled * REVIEW_LOOP_MAX_CYCLES.len())
                    .saturating_sub(before + filled * value.len()),
            );
            gaps.clear();
            joined_gaps.advance(text, separators, gaps);
            cut(text, gaps, &[], "", spare);
        }
        if !early {
            placeholders.clear();
            placeholder::find(text, 0, placeholders);
            assembly.placeholders = placeholders.len();
            cut(text, &[], placeholders, value, spare);
        }
        &self.assembly
    }

    /// The result of the last call (empty before the first).
    pub fn assembly(&self) -> &Assembly {
        &self.assembly
    }

    /// The result of the last call, keeping none of the buffers.
    pub fn into_assembly(self) -> Assembly {
        self.assembly
    }

    /// Empties the buffers for an input of `files` files and `total` bytes, releasing what a
    /// much larger earlier input left behind.
    fn reset(&mut self, files: usize, total: usize) {
        let assembly = &mut self.assembly;
        assembly.text.clear();
        shrink_string(&mut assembly.text, total);
        shrink_string(&mut self.spare, total);
        self.spare.clear();
        // A warning is about a marker (at least 7 bytes) or a frontmatter line.
        let most_warnings = total / 7 + 2 * files;
        assembly.warnings.clear();
        blocks::shrink(&mut assembly.warnings, most_warnings);
        assembly.included.clear();
        blocks::shrink(&mut assembly.included, files);
        assembly.contributed.clear();
        blocks::shrink(&mut assembly.contributed, files);
        assembly.placeholders = 0;
        self.separators.clear();
        blocks::shrink(&mut self.separators, files);
        self.joined_gaps.reset();
        self.gaps.clear();
        blocks::shrink(&mut self.gaps, total / 2);
        self.placeholders.clear();
        blocks::shrink(&mut self.placeholders, total / REVIEW_LOOP_MAX_CYCLES.len());
        self.scratch.release_excess(total);
        // A first call sizes the lists that grow one entry at a time, instead of growing them
        // step by step; reserving touches no memory.
        assembly.included.reserve(files);
        assembly.contributed.reserve(files);
        self.separators.reserve(files);
        self.gaps.reserve(16);
        self.scratch.reserve(total);
    }
}

/// Shrinks `s` when it holds far more than `needed` and is large.
fn shrink_string(s: &mut String, needed: usize) {
    const KEEP_BYTES: usize = 1 << 20;
    if s.capacity() > KEEP_BYTES && s.capacity() > 4 * needed {
        s.clear();
        s.shrink_to(needed);
    }
}

/// Removes the byte ranges `gaps` from `text` and replaces a placeholder at each offset of
/// `placeholders` by `value`. Both lists are ascending, and no gap overlaps a placeholder.
///
/// The text before the first edit stays where it is; the rest is moved aside to `spare` once and
/// copied back piece by piece, so the work is linear in the text after the first edit whatever
/// the number of edits. Gaps alone whose tails add up to less are closed in place instead.
fn cut(
    text: &mut String,
    gaps: &[Range<usize>],
    placeholders: &[usize],
    value: &str,
    spare: &mut String,
) {
    let first = match (gaps.first(), placeholders.first()) {
        (None, None) => return,
        (Some(gap), None) => gap.start,
        (None, Some(&at)) => at,
        (Some(gap), Some(&at)) => gap.start.min(at),
    };
    // Gaps alone, few or near the end: closing each where it is, from the last, moves only the
    // text after it, which is less than moving the whole tail aside and back.
    if placeholders.is_empty() {
        let moved: usize = gaps.iter().map(|gap| text.len() - gap.end).sum();
        if moved < 2 * (text.len() - first) {
            for gap in gaps.iter().rev() {
                text.replace_range(gap.clone(), "");
            }
            return;
        }
    }
    spare.clear();
    // Room for this tail only: the tails of later cuts are seldom longer (each is at most a
    // body), and a small buffer can take memory that is free already, where one the size of the
    // whole text comes from fresh pages. A call without cuts never allocates it.
    spare.reserve(text.len() - first);
    spare.push_str(&text[first..]);
    text.truncate(first);
    let tail = |at: usize| at - first;
    let mut copied = first;
    let (mut g, mut p) = (0, 0);
    loop {
        let take_gap = match (gaps.get(g), placeholders.get(p)) {
            (None, None) => break,
            (Some(gap), Some(&at)) => gap.start < at,
            (gap, _) => gap.is_some(),
        };
        let (range, with) = if take_gap {
            g += 1;
            (gaps[g - 1].clone(), "")
        } else {
            p += 1;
            let at = placeholders[p - 1];
            (at..at + REVIEW_LOOP_MAX_CYCLES.len(), value)
        };
        text.push_str(&spare[tail(copied)..tail(range.start)]);
        text.push_str(with);
        copied = range.end;
    }
    text.push_str(&spare[tail(copied)..]);
}

/// Applies the frontmatter gate of file `index` (SPEC §2.2).
fn gate<O: Observer>(
    index: usize,
    front: &frontmatter::Frontmatter<'_>,
    scope: &Scope<'_>,
    warnings: &mut Vec<Warning>,
    observer: &mut O,
) -> bool {
    let gate = front.gate();
    let mut decision = GateDecision {
        file: index,
        included: true,
        setting: None,
        feature: None,
    };
    if gate.requires_setting.is_none() && gate.requires.is_none() {
        observer.gate(&decision);
        return true;
    }
    // The value the gate read: the last line that sets `key`.
    let span_of = |key: &str| front.attribute(key).map_or(0..0, |a| a.value_span.clone());
    if let Some(key) = gate.requires_setting {
        let reason = match scope.settings.get(key) {
            Some(value) => GateReason::Setting { key, value },
            None => {
                warnings.push(Warning::new(
                    index,
                    span_of("requires_setting"),
                    WarningKind::UnknownRequiresSetting,
                ));
                GateReason::UnknownSetting { key }
            }
        };
        decision.included =
            matches!(reason, GateReason::Setting { value, .. } if value.is_truthy());
        decision.setting = Some(reason);
    }
    if decision.included {
        if let Some(name) = gate.requires {
            let reason = match scope.features.get(name) {
                Some(on) => GateReason::Feature { name, on },
                None => {
                    warnings.push(Warning::new(
                        index,
                        span_of("requires"),
                        WarningKind::UnknownFeature,
                    ));
                    GateReason::UnknownFeature { name }
                }
            };
            decision.included = matches!(reason, GateReason::Feature { on: true, .. });
            decision.feature = Some(reason);
        }
    }
    observer.gate(&decision);
    decision.included
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::tests::naive_repair;
    use crate::{Features, Settings, Value};
    use proptest::prelude::*;

    /// The reference pipeline, one phase after the other: evaluate and repair each body, join,
    /// repair, substitute.
    fn naive_assemble(files: &[String], scope: &Scope<'_>) -> (String, Vec<usize>, usize) {
        let mut bodies = Vec::new();
        for (index, file) in files.iter().enumerate() {
            let mut evaluated = String::new();
            let body = Body {
                file: index,
                text: file,
                start: frontmatter::split(file).body_start,
            };
            let mut scratch = Scratch::default();
            blocks::evaluate(
                &body,
                scope,
                &mut Conditions::default(),
                &mut scratch,
                &mut evaluated,
                &mut Vec::new(),
                &mut (),
                None,
            );
            bodies.push(naive_repair(&evaluated));
        }
        let contributed = bodies.iter().map(String::len).collect();
        let joined = naive_repair(&bodies.join(JOIN));
        let text = joined.replace(REVIEW_LOOP_MAX_CYCLES, scope.review_loop_max_cycles);
        (
            text,
            contributed,
            joined.matches(REVIEW_LOOP_MAX_CYCLES).count(),
        )
    }

    fn body_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("|"),
            Just("| a |"),
            Just("\n"),
            Just("\n\n"),
            Just(" "),
            Just("\t"),
            Just("\r"),
            Just(" \n"),
            Just("\t\n"),
            Just("\n|"),
            Just("x"),
            Just("{{IF:on}}"),
            Just("{{IF:off}}"),
            Just("{{IFNOT:on}}"),
            Just("{{/IF}}"),
            Just("{{/IFNOT}}"),
            Just("{{REVIEW_LOOP_MAX_CYCLES}}"),
            Just("{{REVIEW_"),
            Just("LOOP_MAX_CYCLES}}"),
            Just("{"),
            Just("}}"),
            Just("{{IF:{{REVIEW_LOOP_MAX_CYCLES}}"),
        ];
        // A first line keeps the text from being read as frontmatter.
        prop::collection::vec(piece, 0..30).prop_map(|p| format!("y{}", p.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, .. ProptestConfig::default() })]

        #[test]
        fn one_buffer_assembly_equals_the_phases_one_after_the_other(
            cases in prop::collection::vec(
                (prop::collection::vec(body_text(), 0..5),
                 prop_oneof![Just("3"), Just("10"), Just(""), Just(" "), Just("|"), Just("a\n|"), Just("{{")]),
                1..4,
            )
        ) {
            let mut settings = Settings::new();
            settings.insert("on", Value::Bool(true));
            settings.insert("off", Value::Bool(false));
            let features = Features::new();
            // One assembler for every case: reuse must not leak anything from one to the next.
            let mut assembler = Assembler::new();
            for (files, value) in &cases {
                let scope = Scope { settings: &settings, features: &features, review_loop_max_cycles: value };
                let (text, contributed, placeholders) = naive_assemble(files, &scope);
                let got = assembler.assemble(files, &scope);
                prop_assert_eq!(&got.text, &text);
                prop_assert_eq!(&got.contributed, &contributed);
                prop_assert_eq!(got.placeholders, placeholders);
                prop_assert_eq!(got, &assemble(files, &scope));
            }
        }
    }
}
