//! Checks on the layers as a whole: which copy of each name is loaded and what it hides
//! (oversized files, stubs, masks, unreadable entries), names against the prefix convention and
//! the collation order, files that look like rules but are ignored, and project links that leave
//! the project.
//!
//! Resolution follows the loader (SPEC §1): per name, from the project layer down, the first
//! copy that is read or oversized is the one that counts; unreadable copies fall through.

use super::codes::Code;
use super::diagnostic::{excerpt, file, FileDiagnostics, FilePath};
use super::{Content, Entry, Escape, LayerInput, MAX_RULE_BYTES};
use crate::layer::Layer;
use indexmap::IndexMap;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;

/// Whether a directory entry name is loaded as a rule: it ends with `.md`, case-sensitively.
pub fn is_rule_name(name: &str) -> bool {
    name.ends_with(".md")
}

/// Whether a name that is not a rule name still looks like one.
fn looks_like_rule(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".swp") || lower.ends_with(".swo") || lower.starts_with(".#") {
        return false;
    }
    lower.ends_with(".md")
        || [".markdown", ".mdown", ".mkd", ".mkdn", ".mdx"]
            .iter()
            .any(|ext| lower.ends_with(ext))
        || lower.contains(".md.")
        || lower.ends_with(".md~")
}

/// The order the loader sorts names in.
type Collate<'c> = &'c dyn Fn(&str, &str) -> Ordering;

/// One copy of a name: its layer and entry.
#[derive(Clone, Copy)]
struct LayerEntry<'a> {
    layer: Layer,
    entry: &'a Entry,
}

impl LayerEntry<'_> {
    fn is_candidate(&self) -> bool {
        self.entry.link.is_some()
            || matches!(
                self.entry.content,
                Content::Bytes(_)
                    | Content::Checked { .. }
                    | Content::Oversized { .. }
                    | Content::Unreadable { .. }
            )
    }

    /// Whether the loader stops at this copy (it is taken or oversized).
    fn handles(&self) -> bool {
        matches!(
            self.entry.content,
            Content::Bytes(_) | Content::Checked { .. } | Content::Oversized { .. }
        )
    }

    fn size(&self) -> Option<usize> {
        match &self.entry.content {
            Content::Bytes(b) => Some(b.len()),
            Content::Checked { len } => Some(*len),
            _ => None,
        }
    }
}

/// Runs the layer checks. Returns, for each copy that is read but shadowed, a note naming the
/// copy that is loaded instead.
pub(crate) fn check_layers(
    collate: Collate<'_>,
    layers: &[&LayerInput],
    files: &mut IndexMap<FilePath, FileDiagnostics>,
) -> HashMap<String, String> {
    // Each name once, in the order first listed, with the range of its copies in `copies`.
    let mut names: IndexMap<&str, Range<usize>> = IndexMap::new();
    // The copies of every name, by the index of the name.
    let mut listed: Vec<(usize, LayerEntry<'_>)> = Vec::new();
    for layer in layers {
        if let Some((path, reason)) = &layer.problem {
            unusable_layer(layer.kind, path, reason, files);
        }
        for entry in &layer.entries {
            let copy = LayerEntry {
                layer: layer.kind,
                entry,
            };
            if entry.invalid_name {
                non_utf8_name(entry, files);
                continue;
            }
            if !is_rule_name(&entry.name) {
                if looks_like_rule(&entry.name) {
                    ignored(entry, "its name does not end in `.md` (lower case)", files);
                }
                continue;
            }
            if let (None, Content::Directory) = (&entry.link, &entry.content) {
                ignored(entry, "it is a directory", files);
                continue;
            }
            if let (None, Content::Special { kind }) = (&entry.link, &entry.content) {
                ignored(entry, &format!("it is a {kind}, not a regular file"), files);
                continue;
            }
            if copy.is_candidate() {
                let (name, _) = names.insert_full(entry.name.as_str(), 0..0);
                listed.push((name, copy));
            }
            if let Some(escape) = &entry.escape {
                escaped(layer.kind, entry, escape, files);
            }
        }
    }
    // The copies of each name side by side, still in layer order (the sort is stable), in one
    // list rather than one per name.
    listed.sort_by_key(|&(name, _)| name);
    let copies: Vec<LayerEntry<'_>> = listed.iter().map(|&(_, copy)| copy).collect();
    let mut start = 0;
    for run in listed.chunk_by(|a, b| a.0 == b.0) {
        if let Some((_, range)) = names.get_index_mut(run[0].0) {
            *range = start..start + run.len();
        }
        start += run.len();
    }

    let numbered = Numbered::sorted(collate, &names, |range| {
        copies.get(range.start).map_or(Layer::Package, |c| c.layer)
    });
    let mut shadowed = HashMap::new();
    let mut order: Vec<LayerEntry<'_>> = Vec::new();
    for (name, range) in &names {
        let copies = &copies[range.clone()];
        // `copies` is in layer order, lowest first; the loader tries the highest first.
        order.clear();
        order.extend(copies.iter().rev());
        let winner = order.iter().position(LayerEntry::handles);
        resolve_name(name, &order, winner, files, &mut shadowed);
        check_prefix(collate, name, copies, &numbered, files);
    }
    check_collation(&numbered, &names, &copies, files);
    shadowed
}

/// The names with a numeric prefix, in the loader's order: copied side by side before they are
/// sorted, so that the comparisons of a large layer read one short buffer rather than each name
/// where it was allocated.
struct Numbered {
    /// The names, one after the other.
    text: String,
    /// Sorted: each name's range in `text`, its prefix's value and digit count, and its index
    /// among all names.
    sorted: Vec<(Range<usize>, u64, usize, usize)>,
    /// The lowest layer that has each sorted name, by the same index as `sorted`.
    layers: Vec<Layer>,
    /// For the user and the project layer, at each index of `sorted`: the first index from
    /// there on of a name from a layer below it, and how many such names there are from there
    /// on. One more entry than `sorted`, for the end.
    below: [Vec<(usize, usize)>; 2],
}

impl Numbered {
    /// `layer` gives the lowest layer of a name from the range of its copies.
    fn sorted(
        collate: Collate<'_>,
        names: &IndexMap<&str, Range<usize>>,
        layer: impl Fn(&Range<usize>) -> Layer,
    ) -> Numbered {
        let mut text = String::new();
        let mut sorted = Vec::new();
        for (index, name) in names.keys().enumerate() {
            if let Some((value, digits)) = prefix(name) {
                let start = text.len();
                text.push_str(name);
                sorted.push((start..text.len(), value, digits, index));
            }
        }
        sorted.sort_by(|a, b| collate(&text[a.0.clone()], &text[b.0.clone()]));
        let layers: Vec<Layer> = sorted
            .iter()
            .map(|e| {
                names
                    .get_index(e.3)
                    .map_or(Layer::Package, |(_, r)| layer(r))
            })
            .collect();
        let below = [Layer::User, Layer::Project].map(|upper| {
            let mut below = vec![(sorted.len(), 0); sorted.len() + 1];
            for i in (0..sorted.len()).rev() {
                let (next, count) = below[i + 1];
                below[i] = if layers[i] < upper {
                    (i, count + 1)
                } else {
                    (next, count)
                };
            }
            below
        });
        Numbered {
            text,
            sorted,
            layers,
            below,
        }
    }

    /// The numbered names that a layer below `layer` introduces and that `name` sorts before,
    /// in the loader's order: the first of them and how many there are.
    fn lower_after(
        &self,
        collate: Collate<'_>,
        name: &str,
        layer: Layer,
    ) -> Option<(&str, Layer, usize)> {
        let from = self
            .sorted
            .partition_point(|e| collate(&self.text[e.0.clone()], name).is_le());
        let below = match layer {
            Layer::Package => return None,
            Layer::User => &self.below[0],
            Layer::Project => &self.below[1],
        };
        let &(first, count) = below.get(from)?;
        let lower = *self.layers.get(first)?;
        Some((self.name(first), lower, count))
    }

    /// The `i`th name in the loader's order.
    fn name(&self, i: usize) -> &str {
        self.sorted
            .get(i)
            .and_then(|e| self.text.get(e.0.clone()))
            .unwrap_or_default()
    }
}

fn ignored(entry: &Entry, why: &str, files: &mut IndexMap<FilePath, FileDiagnostics>) {
    if let Some(d) = file(files, &entry.path).report(Code::IgnoredFile, None) {
        d.message(format!(
            "`{}` looks like a rule but is not loaded",
            entry.name
        ))
        .note(format!(
            "{why}; only files and links named `*.md` are rules"
        ))
        .help(if is_rule_name(&entry.name) {
            // The name is right; the kind of entry is not (a directory, a FIFO).
            "replace it with a regular file, or move it out of the rules directory"
        } else if entry.name.to_ascii_lowercase().ends_with(".md") {
            "rename it to end in `.md` (lower case), or move it out of the rules directory"
        } else {
            "rename it to end in `.md` to load it, or move it out of the rules directory"
        });
    }
}

/// A layer directory that cannot be listed.
fn unusable_layer(
    layer: Layer,
    path: &str,
    reason: &str,
    files: &mut IndexMap<FilePath, FileDiagnostics>,
) {
    if let Some(d) = file(files, path).report(Code::UnusableLayer, None) {
        d.message(format!(
            "the {} layer `{}` cannot be used: {reason}",
            layer.as_str(),
            excerpt(path, 200)
        ))
        .note("none of its rules load, and nothing else says so")
        .help(if layer == Layer::Package {
            "correct --package-dir or PI_RULES_PACKAGE_DIR, or leave both unset for the embedded rules"
        } else {
            "make it a readable directory, or remove it"
        });
    }
}

fn non_utf8_name(entry: &Entry, files: &mut IndexMap<FilePath, FileDiagnostics>) {
    if let Some(d) = file(files, &entry.path).report(Code::NonUtf8Name, None) {
        d.message(format!(
            "`{}` is never loaded: its name is not valid UTF-8",
            excerpt(&entry.name, 80)
        ))
        .help("rename it; the invalid bytes are shown as `\u{fffd}`");
    }
}

/// A rule that resolves outside the project, or to a special file.
fn escaped(
    layer: Layer,
    entry: &Entry,
    escape: &Escape,
    files: &mut IndexMap<FilePath, FileDiagnostics>,
) {
    match escape {
        Escape::OutsideProject { real, .. } if layer == Layer::Project => {
            if let Some(d) = file(files, &entry.path).report(Code::LinkOutsideProject, None) {
                d.message(format!(
                    "`{}` resolves to `{}`, outside the project",
                    excerpt(&entry.name, 80),
                    excerpt(&real.display().to_string(), 200)
                ))
                .note(
                    "assemble reads it as the reference does and names it on stderr; with \
                     --confine it is refused",
                )
                .help("commit the file itself, or move a personal rule to the user layer");
            }
        }
        Escape::OutsideProject { .. } => {}
        Escape::SpecialFile { .. } | Escape::Unverifiable => {
            // Where it is cannot be established only when it was refused, which `check`
            // never does: name the entry itself.
            let real = match escape {
                Escape::SpecialFile { real } => real.display().to_string(),
                _ => entry.path.clone(),
            };
            if let Some(d) = file(files, &entry.path).report(Code::SpecialFile, None) {
                d.message(format!(
                    "`{}` resolves to `{}`, a special file",
                    excerpt(&entry.name, 80),
                    excerpt(&real, 200)
                ))
                .note(
                    "whatever it gives goes into the prompt, and to the model provider; with \
                     --confine it is refused",
                )
                .help("remove the link");
            }
        }
    }
}

fn resolve_name(
    name: &str,
    order: &[LayerEntry<'_>],
    winner: Option<usize>,
    files: &mut IndexMap<FilePath, FileDiagnostics>,
    shadowed: &mut HashMap<String, String>,
) {
    for (i, copy) in order.iter().enumerate() {
        let lower = order[i + 1..].iter().find(|c| c.handles());
        match &copy.entry.content {
            Content::Oversized { size } => {
                let Some(d) = file(files, &copy.entry.path).report(Code::OversizedFile, None)
                else {
                    continue;
                };
                d.message(format!(
                    "`{name}` is {size} bytes, over the {MAX_RULE_BYTES}-byte limit, and is skipped"
                ))
                .help("shorten it, or remove it so that a lower copy loads");
                if Some(i) == winner {
                    match order[i + 1..].iter().find(|c| c.size().is_some()) {
                        Some(hidden) => {
                            d.note(format!(
                                "it hides the {} layer's copy at `{}`, which is not loaded either",
                                hidden.layer.as_str(),
                                hidden.entry.path
                            ));
                        }
                        None => {
                            d.note("no layer provides the rule, so it is missing from the prompt");
                        }
                    }
                } else if let Some(w) = winner.filter(|&w| w < i) {
                    d.note(format!(
                        "this copy is shadowed by `{}` anyway",
                        order[w].entry.path
                    ));
                }
            }
            Content::Unreadable { .. } | Content::Special { .. } | Content::Directory => {
                let reason = match &copy.entry.content {
                    Content::Unreadable { reason } => reason.clone(),
                    Content::Special { kind } => format!("it is a {kind}"),
                    _ => "it links to a directory".to_owned(),
                };
                let Some(d) = file(files, &copy.entry.path).report(Code::UnreadableRule, None)
                else {
                    continue;
                };
                d.message(format!("`{name}` cannot be read: {reason}"));
                match (winner.filter(|&w| w < i), lower) {
                    (Some(w), _) => d.note(format!(
                        "it is shadowed by `{}`, so it is not tried now",
                        order[w].entry.path
                    )),
                    (None, Some(l)) if l.size().is_some() => d.note(format!(
                        "the {} layer's copy at `{}` is loaded instead",
                        l.layer.as_str(),
                        l.entry.path
                    )),
                    (None, Some(l)) => d.note(format!(
                        "the loader falls through to the {} layer's copy at `{}`",
                        l.layer.as_str(),
                        l.entry.path
                    )),
                    (None, None) => d.note("no other layer provides it, so the rule is missing"),
                };
                d.help("repair the entry or remove it");
            }
            Content::Bytes(_) | Content::Checked { .. } => {
                let len = copy.size().unwrap_or(0);
                if let Some(w) = winner.filter(|&w| w < i) {
                    shadowed.insert(
                        copy.entry.path.clone(),
                        format!(
                            "this copy is not loaded: `{}` overrides it",
                            order[w].entry.path
                        ),
                    );
                    continue;
                }
                let Some(below) = order[i + 1..].iter().find(|c| c.size().is_some()) else {
                    continue;
                };
                let below_size = below.size().unwrap_or(0);
                if len == 0 {
                    if let Some(d) = file(files, &copy.entry.path).report(Code::MaskedRule, None) {
                        d.message(format!(
                            "`{name}` is empty and masks the {} layer's copy",
                            below.layer.as_str()
                        ))
                        .note(format!("`{}` is not loaded", below.entry.path));
                    }
                } else if len * 4 < below_size {
                    if let Some(d) = file(files, &copy.entry.path).report(Code::StubOverride, None)
                    {
                        d.message(format!(
                            "`{name}` ({len} bytes) replaces the {} layer's copy ({below_size} bytes) \
                             with far less text",
                            below.layer.as_str()
                        ))
                        .note(format!(
                            "an override replaces `{}` entirely; nothing is merged",
                            below.entry.path
                        ))
                        .help("copy the original and edit it, rather than writing a stub");
                    }
                }
            }
            Content::NotRead => {}
        }
    }
}

/// The numeric prefix of a name and its digit count: leading ASCII digits followed by `-`, `_`,
/// `.` or a space.
fn prefix(name: &str) -> Option<(u64, usize)> {
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !matches!(name.as_bytes().get(digits), Some(b'-' | b'_' | b'.' | b' ')) {
        return None;
    }
    let value = name[..digits].parse::<u64>().unwrap_or(u64::MAX);
    Some((value, digits))
}

/// Where the loader's order puts `name` among the `numbered` names (sorted), in words.
fn place_among(collate: Collate<'_>, name: &str, numbered: &Numbered) -> String {
    let after = numbered
        .sorted
        .partition_point(|e| collate(&numbered.text[e.0.clone()], name).is_lt());
    let at = |i: usize| (i < numbered.sorted.len()).then(|| numbered.name(i));
    match (after.checked_sub(1).and_then(at), at(after)) {
        (None, None) => "there is no numbered name to order it against".to_owned(),
        (None, Some(_)) => {
            "under ICU root collation it sorts before every numbered name, so it loads first"
                .to_owned()
        }
        (Some(last), None) => format!(
            "under ICU root collation it sorts after every numbered name (after `{last}`), so it \
             loads last"
        ),
        (Some(before), Some(next)) => {
            format!("under ICU root collation it sorts between `{before}` and `{next}`")
        }
    }
}

fn check_prefix(
    collate: Collate<'_>,
    name: &str,
    copies: &[LayerEntry<'_>],
    numbered: &Numbered,
    files: &mut IndexMap<FilePath, FileDiagnostics>,
) {
    // Only the lowest layer that introduces a name is judged: overrides must reuse the name.
    let Some(first) = copies.first() else { return };
    let (lo, hi) = first.layer.prefix_range();
    let layer = first.layer.as_str();
    let path = &first.entry.path;
    match prefix(name) {
        None => {
            // A name without a prefix is no finding where it loads: a name that starts with a
            // letter sorts after every numbered one, after the rules of the layers below. Only
            // one that sorts before some of those rules (it starts with a space, punctuation, a
            // symbol or a digit) is out of order.
            let Some((next, lower, count)) = numbered.lower_after(collate, name, first.layer)
            else {
                return;
            };
            if let Some(d) = file(files, path).report(Code::NameOutOfRange, None) {
                let message = if count == 1 {
                    format!(
                        "`{name}` has no numeric prefix and loads before `{next}`, a {} rule",
                        lower.as_str()
                    )
                } else {
                    let others = match count - 1 {
                        1 => "one other rule".to_owned(),
                        n => format!("{n} other rules"),
                    };
                    format!(
                        "`{name}` has no numeric prefix and loads before `{next}` and {others} of \
                         the layers below"
                    )
                };
                d.message(message)
                    .note(format!(
                        "{}; a {layer} rule is meant to follow the rules of the layers below it",
                        place_among(collate, name, numbered)
                    ))
                    .help(format!(
                        "start the name with a letter, or give it a prefix from {lo:02} to {hi:02}"
                    ));
            }
        }
        Some((value, digits)) => {
            if digits != 2 && value <= 99 {
                if let Some(d) = file(files, path).report(Code::UnpaddedPrefix, None) {
                    let rest = &name[digits..];
                    d.message(format!("the prefix of `{name}` is not two digits"))
                        .note("names sort as text, not as numbers: `5-x.md` sorts after `40-x.md`, and `100-x.md` before `20-x.md`")
                        .help(format!("rename it to `{value:02}{rest}`"));
                }
            }
            if value < lo || value > hi {
                if let Some(d) = file(files, path).report(Code::NameOutOfRange, None) {
                    d.message(format!(
                        "`{name}` is outside the {layer} layer's range {lo:02}-{hi:02}"
                    ))
                    .note("package rules use 00-69, user rules 70-89, project rules 90-99")
                    .help(format!("rename it with a prefix from {lo:02} to {hi:02}"));
                }
            }
        }
    }
}

fn check_collation(
    numbered: &Numbered,
    names: &IndexMap<&str, Range<usize>>,
    copies: &[LayerEntry<'_>],
    files: &mut IndexMap<FilePath, FileDiagnostics>,
) {
    let sorted: Vec<(&str, u64, usize)> = (0..numbered.sorted.len())
        .map(|i| {
            let (_, value, digits, _) = numbered.sorted[i];
            (numbered.name(i), value, digits)
        })
        .collect();
    // An inversion (a higher prefix loaded before a lower one) always involves a prefix that is
    // not two digits: two-digit prefixes sort as their numbers do. That name is reported once,
    // with the names it is out of order with.
    const SHOWN: usize = 8;
    for (i, &(name, value, digits)) in sorted.iter().enumerate() {
        if digits == 2 {
            continue;
        }
        let before: Vec<&str> = sorted[..i]
            .iter()
            .filter(|(_, v, _)| *v > value)
            .map(|(n, _, _)| *n)
            .collect();
        let after: Vec<&str> = sorted[i + 1..]
            .iter()
            .filter(|(_, v, _)| *v < value)
            .map(|(n, _, _)| *n)
            .collect();
        if before.is_empty() && after.is_empty() {
            continue;
        }
        // Report on the copy the loader tries first.
        let index = numbered.sorted[i].3;
        let last = names.get_index(index).and_then(|(_, c)| c.clone().last());
        let Some(copy) = last.and_then(|c| copies.get(c)) else {
            continue;
        };
        let Some(d) = file(files, &copy.entry.path).report(Code::CollationOrder, None) else {
            continue;
        };
        let list = |names: &[&str]| {
            let mut shown: Vec<String> =
                names.iter().take(SHOWN).map(|n| format!("`{n}`")).collect();
            if names.len() > SHOWN {
                shown.push(format!("{} more", names.len() - SHOWN));
            }
            shown.join(", ")
        };
        let which = |names: &[&str], what: &str| {
            if names.len() == 1 {
                format!("which has a {what} prefix")
            } else {
                format!("which have {what} prefixes")
            }
        };
        let message = match (before.is_empty(), after.is_empty()) {
            (true, _) => format!(
                "`{name}` (prefix {value}) loads before {}, {}",
                list(&after),
                which(&after, "lower")
            ),
            (_, true) => format!(
                "`{name}` (prefix {value}) loads after {}, {}",
                list(&before),
                which(&before, "higher")
            ),
            _ => format!(
                "`{name}` (prefix {value}) loads after {} and before {}",
                list(&before),
                list(&after)
            ),
        };
        d.message(message)
            .note("rule files are joined in text order of their names, not numeric order")
            .help(format!(
                "rename it with a two-digit prefix, such as `{:02}{}`",
                value.min(99),
                &name[digits..]
            ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_table() {
        let cases = [
            ("00-core.md", Some((0, 2))),
            ("5-x.md", Some((5, 1))),
            ("100-x.md", Some((100, 3))),
            ("90_x.md", Some((90, 2))),
            ("2fa.md", None),
            ("x.md", None),
            ("99999999999999999999999-x.md", Some((u64::MAX, 23))),
        ];
        for (name, expected) in cases {
            assert_eq!(prefix(name), expected, "{name}");
        }
    }

    #[test]
    fn look_alike_table() {
        let cases = [
            ("x.MD", true),
            ("x.Md", true),
            ("x.markdown", true),
            ("x.md.bak", true),
            ("x.md~", true),
            (".x.md.swp", false),
            ("notes.txt", false),
            ("README", false),
            ("x.md", true),
        ];
        for (name, expected) in cases {
            assert_eq!(looks_like_rule(name), expected, "{name}");
        }
    }
}
