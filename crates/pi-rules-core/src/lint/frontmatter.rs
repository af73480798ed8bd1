//! Checks on frontmatter: a header that looks meant but does not parse, unknown or ineffective
//! keys, and the gate keys (`requires_setting`, `requires`) against the schema and features.
//!
//! Whether a header parses is decided by [`crate::frontmatter::split`], the engine's own reading;
//! this module only explains why a text that starts with `---` was not taken as a header.

use super::codes::Code;
use super::conditions::{self, Context};
use super::diagnostic::{excerpt, FileDiagnostics, Fix};
use super::suggest;
use crate::find;
use crate::frontmatter::Frontmatter;
use crate::text::js_trim;
use std::collections::HashMap;
use std::ops::Range;

/// The keys the loader reads.
const GATE_KEYS: [&str; 2] = ["requires_setting", "requires"];

/// Keys with which other agents' rule formats (Cursor, Copilot) scope a rule to some files, and
/// which users take to do the same here.
const SCOPE_KEYS: [&str; 3] = ["globs", "alwaysApply", "applyTo"];

/// The keys of a rule's own scope, checked by [`super::scope`]; their value may be a list of
/// `- item` lines below the key.
const RULE_SCOPE_KEYS: [&str; 2] = ["paths", "agents"];

/// Keys tolerated as documentation (reported as info only).
const DESCRIPTIVE_KEYS: [&str; 5] = ["description", "title", "name", "summary", "tags"];

/// The frontmatter key with which a rule file silences some of `check`'s codes for itself
/// (`lint-ignore: PR804, PR304`). Frontmatter never reaches the prompt, so neither does it.
pub const LINT_IGNORE_KEY: &str = "lint-ignore";

/// The items of a `lint-ignore:` value, each with its byte range in `value`: separated by commas
/// or white space, a flow list's brackets and each item's quotes left out
/// (`PR804, PR304`, `[PR804, "blank-run"]`).
pub(crate) fn code_items(value: &str) -> Vec<(Range<usize>, &str)> {
    let mut items = Vec::new();
    let mut start = None;
    let is_separator = |c: char| c == ',' || c == '[' || c == ']' || c.is_whitespace();
    for (i, c) in value.char_indices().chain([(value.len(), ',')]) {
        match (is_separator(c), start) {
            (true, Some(from)) => {
                let raw = &value[from..i];
                let unquoted = raw.trim_matches(|c| c == '"' || c == '\'');
                if !unquoted.is_empty() {
                    let at = from + (raw.len() - raw.trim_start_matches(['"', '\'']).len());
                    items.push((at..at + unquoted.len(), unquoted));
                }
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    items
}

/// The codes the last `lint-ignore:` line of `front` names (unknown ones left out).
pub(crate) fn ignored_codes(front: &Frontmatter<'_>) -> Vec<Code> {
    let Some(value) = front.get(LINT_IGNORE_KEY) else {
        return Vec::new();
    };
    code_items(value)
        .into_iter()
        .filter_map(|(_, item)| super::lookup(item).map(|info| info.code))
        .collect()
}

/// Reports each item of `attr` (a `lint-ignore:` line) that names no code.
fn check_lint_ignore(attr: &crate::frontmatter::Attribute<'_>, out: &mut FileDiagnostics) {
    for (range, item) in code_items(attr.value) {
        if super::lookup(item).is_some() {
            continue;
        }
        let span = attr.value_span.start + range.start..attr.value_span.start + range.end;
        if let Some(d) = out.report(Code::UnknownLintCode, Some(span)) {
            d.message(format!("`{}` is not a diagnostic code", excerpt(item, 40)))
                .label("silences nothing")
                .help(suggest_code(item));
        }
    }
}

/// "Did you mean" for a word that is not a code: the closest id or name, else where the codes
/// are listed.
pub fn suggest_code(word: &str) -> String {
    let ids = super::CODES.iter().map(|info| info.id);
    let names = super::CODES.iter().map(|info| info.name);
    match suggest::closest(word, ids).or_else(|| suggest::closest(word, names)) {
        Some(near) => format!("did you mean `{near}`?"),
        None => "codes look like `PR101` or `unknown-setting-key`; `pi-rules check --list-codes` \
                 lists them"
            .to_owned(),
    }
}

/// Checks the header of `text`, already split into `front`.
pub(crate) fn check(
    cx: &Context<'_>,
    text: &str,
    front: &Frontmatter<'_>,
    out: &mut FileDiagnostics,
) {
    match &front.header {
        Some(header) => check_header(cx, text, front, header.clone(), out),
        None => check_unparsed(text, out),
    }
}

fn check_header(
    cx: &Context<'_>,
    text: &str,
    front: &Frontmatter<'_>,
    header: Range<usize>,
    out: &mut FileDiagnostics,
) {
    let mut last_line: HashMap<&str, usize> = HashMap::new();
    for (i, attr) in front.attributes.iter().enumerate() {
        last_line.insert(attr.key, i);
    }
    for (i, attr) in front.attributes.iter().enumerate() {
        let line = trim_line(text, attr.line.clone());
        if last_line.get(attr.key) != Some(&i) {
            if let Some(d) = out.report(Code::IneffectiveFrontmatterLine, Some(line.clone())) {
                let later = &front.attributes[last_line[attr.key]];
                d.message(format!(
                    "`{}` is set again later; only the last value counts",
                    excerpt(attr.key, 40)
                ))
                .label("overridden")
                .secondary(trim_line(text, later.line.clone()), "this value counts")
                .help("keep one line per key");
            }
            continue;
        }
        match attr.key {
            "requires_setting" | "requires" if attr.value.is_empty() => {
                if let Some(d) = out.report(Code::IneffectiveFrontmatterLine, Some(line)) {
                    d.message(format!(
                        "`{}` has no value, so the file is not gated",
                        attr.key
                    ))
                    .label("an empty value counts as absent")
                    .help("give it a value, or delete the line");
                }
            }
            LINT_IGNORE_KEY => check_lint_ignore(attr, out),
            key if RULE_SCOPE_KEYS.contains(&key) => {}
            "requires_setting" => conditions::check_requires_setting(cx, text, attr.value, out),
            "requires" => conditions::check_requires(cx, text, attr.value, out),
            key if DESCRIPTIVE_KEYS.contains(&key) => {
                if let Some(d) = out.report(Code::DescriptiveFrontmatterKey, Some(line)) {
                    d.message(format!("frontmatter key `{key}` is ignored by the loader"))
                        .label("documentation only: not a gate, not in the prompt");
                }
            }
            key if SCOPE_KEYS.contains(&key) => {
                if let Some(d) = out.report(Code::UnknownFrontmatterKey, Some(line)) {
                    d.message(format!(
                        "frontmatter key `{key}` does not scope this rule: it is in every prompt"
                    ))
                    .label(
                        "other agents' formats scope a rule to some files with this key; pi \
                         ignores it",
                    )
                    .help(
                        "delete the line; to include the rule only in some settings, use \
                         `requires_setting:` or `requires:`",
                    );
                }
            }
            key => {
                if let Some(d) = out.report(Code::UnknownFrontmatterKey, Some(line)) {
                    let help = match suggest::closest(key, GATE_KEYS) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => {
                            "the loader reads only `requires_setting` and `requires`".to_owned()
                        }
                    };
                    d.message(format!("unknown frontmatter key `{}`", excerpt(key, 40)))
                        .label("ignored")
                        .help(help);
                }
            }
        }
    }
    // Lines the header reading skips although they are neither blank nor comments.
    // The `- item` lines below an empty `paths:` or `agents:` are its list, as
    // `rule_scope::parse` reads them.
    let mut start = header.start;
    let mut in_list = false;
    for raw in text[header.clone()].split('\n') {
        let range = start..start + raw.len();
        start = range.end + 1;
        let content = js_trim(raw.strip_suffix('\r').unwrap_or(raw));
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let item = content == "-" || content.starts_with("- ") || content.starts_with("-\t");
        if in_list && item {
            continue;
        }
        in_list = false;
        if let Some(colon) = content.find(':').filter(|&i| i > 0) {
            in_list = RULE_SCOPE_KEYS.contains(&js_trim(&content[..colon]))
                && js_trim(&content[colon + 1..]).is_empty();
            continue;
        }
        let line = trim_line(text, range);
        if let Some(d) = out.report(Code::IneffectiveFrontmatterLine, Some(line)) {
            d.message("frontmatter line without `key:` is ignored")
                .label("no `:` after a key")
                .help("write it as `key: value`, or start it with `#` to make it a comment");
        }
    }
}

/// `range` without a trailing `\r`.
fn trim_line(text: &str, range: Range<usize>) -> Range<usize> {
    if text[range.clone()].ends_with('\r') {
        range.start..range.end - 1
    } else {
        range
    }
}

/// One line of the text: its range without the line break, and the break's length.
struct Line {
    range: Range<usize>,
    /// Offset just after the line break (`text.len()` for the last line without one).
    next: usize,
    has_newline: bool,
}

fn line_at(text: &str, start: usize) -> Line {
    match find::memchr(b'\n', &text.as_bytes()[start..]) {
        Some(off) => Line {
            range: start..start + off,
            next: start + off + 1,
            has_newline: true,
        },
        None => Line {
            range: start..text.len(),
            next: text.len(),
            has_newline: false,
        },
    }
}

/// Why a text that starts like frontmatter has no header, if it seems meant as one.
fn check_unparsed(text: &str, out: &mut FileDiagnostics) {
    let Some((span, why, help)) = unparsed_reason(text) else {
        return;
    };
    // A fence followed by spaces or tabs only: deleting them is the whole repair.
    let line = &text[span.clone()];
    let trailing = line
        .strip_prefix("---")
        .map(|rest| rest.strip_suffix('\r').unwrap_or(rest))
        .filter(|ws| !ws.is_empty() && ws.bytes().all(|b| b == b' ' || b == b'\t'));
    let fix = trailing.map(|ws| {
        let start = span.start + 3;
        Fix::replace(
            start..start + ws.len(),
            "",
            "delete the white space after `---`",
        )
    });
    if let Some(d) = out.report(Code::BrokenFrontmatter, Some(span)) {
        d.message("this looks like frontmatter but is not read as a header")
            .label(why)
            .note("without a header the file is not gated, and these lines are part of the prompt")
            .help(help);
        if let Some(fix) = fix {
            d.fix(fix);
        }
    }
}

fn unparsed_reason(text: &str) -> Option<(Range<usize>, &'static str, &'static str)> {
    let bom = text.starts_with('\u{feff}');
    let start = if bom { '\u{feff}'.len_utf8() } else { 0 };
    let first = line_at(text, start);
    let first_text = &text[first.range.clone()];
    // Classic Mac line endings: the opening fence ends with a lone `\r`.
    if first_text.starts_with("---\r") && !first_text[4..].is_empty() {
        return Some((
            start..start + 4,
            "the lines end with a lone `\\r`",
            "save the file with `\\n` (or `\\r\\n`) line endings",
        ));
    }
    if js_trim(first_text) != "---" {
        return None;
    }
    if bom {
        // Through the fence, which white space (other marks included) may come before.
        let fence_end = first_text
            .find("---")
            .map_or(first.range.end, |at| first.range.start + at + 3);
        return Some((
            0..fence_end,
            "a byte-order mark comes before the opening `---`",
            "save the file as UTF-8 without a byte-order mark",
        ));
    }
    if first_text != "---" && first_text != "---\r" {
        let why = if first_text.trim_end_matches('\r').len() == 3 && first_text.starts_with("---") {
            "mixed line ending after the opening `---` (`\\r\\r\\n`)"
        } else {
            "the opening `---` has spaces around it"
        };
        return Some((
            first.range,
            why,
            "make the opening fence exactly `---` followed by a line break",
        ));
    }
    // Find the closing fence candidate: the first later line that trims to `---`.
    let mut pos = first.next;
    let mut second: Option<Range<usize>> = None;
    while pos < text.len() {
        let line = line_at(text, pos);
        let content = &text[line.range.clone()];
        if second.is_none() {
            second = Some(line.range.clone());
        }
        if js_trim(content) == "---" {
            let exact = content == "---" || content == "---\r";
            if !exact {
                let why = if content.trim_end_matches('\r').len() == 3 {
                    "mixed line ending after the closing `---` (`\\r\\r\\n`)"
                } else {
                    "the closing `---` has spaces around it"
                };
                return Some((
                    line.range,
                    why,
                    "make the closing fence exactly `---` followed by a line break",
                ));
            }
            if !line.has_newline {
                return Some((
                    line.range,
                    "no line break after the closing `---`",
                    "end the closing `---` with a line break",
                ));
            }
            if line.range.start == first.next {
                return Some((
                    first.range.start..line.range.end,
                    "an empty header needs a blank line between the fences",
                    "write `---`, an empty line, then `---`, or delete both fences",
                ));
            }
            return Some((
                line.range,
                "the header does not end here as expected",
                "make both fences exactly `---` on lines of their own",
            ));
        }
        // A fence hidden behind a lone `\r` on the same line.
        if content.split('\r').skip(1).any(|part| part == "---") {
            return Some((
                line.range,
                "a lone `\\r` comes before the closing `---`",
                "save the file with consistent `\\n` or `\\r\\n` line endings",
            ));
        }
        pos = line.next;
    }
    // No closing fence: only report when the next line looks like `key: value`.
    let second = second?;
    let content = js_trim(&text[second]);
    if content.find(':').is_some_and(|i| i > 0) {
        return Some((
            first.range,
            "no closing `---` line",
            "add a line `---` after the header lines",
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter;
    use crate::lint::testing::{codes_of, schema};

    /// The findings of this check on `text`, as the file `x.md`.
    fn diagnostics_of(text: &str) -> Vec<crate::lint::Diagnostic> {
        let schema = schema();
        let cx = Context {
            schema: &schema,
            features: crate::lint::FEATURES,
            scoped: false,
        };
        let mut out = FileDiagnostics::new("x.md");
        check(&cx, text, &frontmatter::split(text), &mut out);
        out.finish(None)
    }

    fn check_text(text: &str) -> Vec<(Code, Option<String>)> {
        diagnostics_of(text)
            .into_iter()
            .map(|d| (d.code, Some(d.label.into_owned())))
            .collect()
    }

    #[test]
    fn frontmatter_table() {
        use Code::*;
        let cases: &[(&str, &[Code])] = &[
            ("no header", &[]),
            ("---\nrequires: coms_active\n---\nbody", &[]),
            ("---\r\nrequires_setting: dco\r\n---\r\nbody", &[]),
            ("---\n# comment\n\n---\nbody", &[]),
            ("---\n\nhorizontal rule text", &[]),
            (
                "--- \nrequires: coms_active\n---\nbody",
                &[BrokenFrontmatter],
            ),
            (
                "---\nrequires: coms_active\n--- \nbody",
                &[BrokenFrontmatter],
            ),
            ("---\nrequires: coms_active\n---", &[BrokenFrontmatter]),
            (
                "\u{feff}---\nrequires: coms_active\n---\nbody",
                &[BrokenFrontmatter],
            ),
            (
                "---\rrequires: coms_active\r---\rbody",
                &[BrokenFrontmatter],
            ),
            ("---\nrequires: coms_active\n", &[BrokenFrontmatter]),
            ("---\n---\nbody", &[BrokenFrontmatter]),
            (
                "---\nrequires: coms_active\r\r\n---\r\r\nbody",
                &[BrokenFrontmatter],
            ),
            (
                "---\nrequires: coms_active\r---\nbody",
                &[BrokenFrontmatter],
            ),
            (
                "---\nrequire: coms_active\n---\nb",
                &[UnknownFrontmatterKey],
            ),
            ("---\ndescription: x\n---\nb", &[DescriptiveFrontmatterKey]),
            (
                "---\nrequires: a\nrequires: coms_active\n---\nb",
                &[IneffectiveFrontmatterLine],
            ),
            ("---\nrequires:\n---\nb", &[IneffectiveFrontmatterLine]),
            (
                "---\nrequires coms_active\n---\nb",
                &[IneffectiveFrontmatterLine],
            ),
            ("---\nrequires_setting: dcoo\n---\nb", &[UnknownSettingKey]),
            (
                "---\nrequires_setting: coms_active\n---\nb",
                &[UnknownSettingKey],
            ),
            ("---\nrequires: dco\n---\nb", &[UnknownFeature]),
            ("---\nrequires: coms\n---\nb", &[UnknownFeature]),
            ("---\nlint-ignore: PR804, blank-run\n---\nb", &[]),
            ("---\nlint-ignore: [\"PR804\", 'PR304']\n---\nb", &[]),
            ("---\nlint-ignore: PR8044\n---\nb", &[UnknownLintCode]),
            (
                "---\nlint-ignore: PR804 nope PR304\n---\nb",
                &[UnknownLintCode],
            ),
            ("---\nlint_ignore: PR804\n---\nb", &[UnknownFrontmatterKey]),
        ];
        for (text, expected) in cases {
            let got = check_text(text);
            assert_eq!(codes_of(&got), *expected, "{text:?}: {got:?}");
        }
    }

    #[test]
    fn lint_ignore_items_and_their_spans() {
        let cases: &[(&str, &[&str])] = &[
            ("PR804, PR304", &["PR804", "PR304"]),
            ("[\"PR804\",'blank-run']", &["PR804", "blank-run"]),
            ("  PR804  ", &["PR804"]),
            (",,", &[]),
            ("\"\"", &[]),
        ];
        for (value, expected) in cases {
            let items = code_items(value);
            let texts: Vec<&str> = items.iter().map(|(_, t)| *t).collect();
            assert_eq!(texts, *expected, "{value:?}");
            for (range, text) in items {
                assert_eq!(&value[range], text, "{value:?}");
            }
        }
    }

    #[test]
    fn an_unknown_lint_ignore_code_is_pointed_at_with_a_suggestion() {
        let text = "---\nlint-ignore: PR804, PR8o4\n---\nb";
        let found = diagnostics_of(text);
        assert_eq!(found.len(), 1, "{found:?}");
        let span = found[0].span.clone().unwrap();
        assert_eq!(&text[span], "PR8o4");
        assert_eq!(found[0].help.as_deref(), Some("did you mean `PR804`?"));
    }

    /// `paths:` and `agents:` are scope keys (their finding says the rule is in every prompt, as
    /// long as pi does not honour scopes), and `lint-ignore:` is read: none of them is reported
    /// as an unknown key.
    #[test]
    fn scope_and_lint_keys_are_not_unknown_keys() {
        for text in [
            "---\npaths: src/**\n---\nb",
            "---\nagents: claude\n---\nb",
            "---\nlint-ignore: PR804\n---\nb",
        ] {
            for d in diagnostics_of(text) {
                assert!(
                    !d.message.starts_with("unknown frontmatter key"),
                    "{text:?}: {d:?}"
                );
            }
        }
    }
}
