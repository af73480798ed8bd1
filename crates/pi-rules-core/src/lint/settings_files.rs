//! Checks on settings files, from what the settings parser keeps: a file that does not parse (the
//! whole file is ignored), values that fail validation, unknown and repeated keys, and a `.json`
//! ignored because a `.jsonc` sits beside it.

use super::codes::Code;
use super::diagnostic::{excerpt, file, FileDiagnostics};
use super::schema::SchemaInfo;
use super::suggest;
use super::SettingsInput;
use crate::settings::FileProblem;
use indexmap::IndexMap;
use std::ops::Range;

/// The span of the JSON string that starts at `offset` (its opening quote), quotes included.
fn string_span(text: &str, offset: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    if bytes.get(offset) != Some(&b'"') {
        return None;
    }
    let mut i = offset + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(offset..i + 1),
            b'\n' => break,
            _ => i += 1,
        }
    }
    Some(offset..offset + 1)
}

/// A one-character span at `offset`, on a char boundary.
fn point(text: &str, offset: usize) -> Range<usize> {
    let mut start = offset.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let len = text[start..].chars().next().map_or(0, char::len_utf8);
    start..start + len
}

/// Whether the syntax error at `offset` is a trailing comma.
fn trailing_comma(text: &str, offset: usize) -> bool {
    let offset = point(text, offset).start;
    let before = text[..offset].trim_end();
    let after = text[offset..].trim_start();
    (before.ends_with(',') && after.starts_with(['}', ']']))
        || (after.starts_with(',') && after[1..].trim_start().starts_with(['}', ']']))
}

pub(crate) fn check(
    schema: &SchemaInfo,
    input: &SettingsInput,
    files: &mut IndexMap<String, FileDiagnostics>,
) {
    if let Some(json) = &input.ignored_json {
        if let Some(d) = file(files, json).report(Code::SettingsJsonIgnored, None) {
            d.message("this settings file is ignored")
                .note(format!(
                    "`{}` exists beside it and is read instead",
                    input.path
                ))
                .help("move what you need into the `.jsonc` file and delete this one");
        }
    }
    let text = input.text.as_str();
    let out = file(files, &input.path);
    if let Some(problem) = input.file.problem() {
        let (span, message) = match problem {
            FileProblem::Syntax(error) => (
                Some(point(text, error.offset)),
                format!("settings file is not valid JSONC: {}", error.message),
            ),
            FileProblem::NotAnObject { .. } => {
                let start = text.len() - text.trim_start().len();
                (
                    Some(point(text, start)),
                    format!("settings file is ignored: {problem}"),
                )
            }
            FileProblem::Unreadable { message } => {
                (None, format!("cannot read the settings file: {message}"))
            }
        };
        let comma = matches!(problem, FileProblem::Syntax(e) if trailing_comma(text, e.offset));
        if let Some(d) = out.report(Code::SettingsParseError, span) {
            d.message(message)
                .label("reading stops here")
                .note(
                    "the whole file is ignored: its settings come from the other file, the \
                       environment or the defaults",
                )
                .help(if comma {
                    "remove the trailing comma: JSONC allows comments, not trailing commas"
                } else {
                    "fix the syntax; settings files are JSON with `//` and `/* */` comments"
                });
        }
        return;
    }
    for rejected in input.file.rejected() {
        let span = rejected.offset.and_then(|o| string_span(text, o));
        if let Some(d) = out.report(Code::SettingsInvalidValue, span) {
            d.message(format!(
                "the value of `{}` is ignored: {}",
                rejected.key, rejected.reason
            ))
            .label("this key's value fails its check")
            .note("a lower source supplies the key instead: the global file, the environment or the default");
        }
    }
    for unknown in input.file.unknown_keys() {
        let span = string_span(text, unknown.offset);
        if let Some(d) = out.report(Code::SettingsUnknownKey, span) {
            d.message(format!(
                "unknown settings key `{}` is ignored",
                excerpt(&unknown.key, 60)
            ))
            .label("not in the settings schema")
            .maybe_help(
                suggest::closest(&unknown.key, schema.names())
                    .map(|s| format!("did you mean `{s}`?")),
            );
        }
    }
    for duplicate in input.file.duplicate_keys() {
        let span = string_span(text, duplicate.offset);
        if let Some(d) = out.report(Code::SettingsDuplicateKey, span) {
            d.message(format!(
                "`{}` appears more than once; only the last value counts",
                excerpt(&duplicate.key, 60)
            ))
            .label("repeated here")
            .help("keep one entry per key");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::testing::schema;
    use crate::settings::{Schema, SettingsFile};

    fn check_text(text: &str) -> Vec<(Code, String, Option<String>)> {
        let input = SettingsInput {
            path: "s.jsonc".to_owned(),
            text: text.to_owned(),
            file: SettingsFile::parse(Schema::embedded(), text),
            ignored_json: None,
        };
        let mut files = IndexMap::new();
        check(&schema(), &input, &mut files);
        files
            .into_values()
            .flat_map(|f| f.finish(None))
            .map(|d| {
                let shown = d.span.map(|s| text[s].to_owned()).unwrap_or_default();
                (d.code, shown, d.help)
            })
            .collect()
    }

    #[test]
    fn settings_table() {
        use Code::*;
        let cases: &[(&str, &[(Code, &str)])] = &[
            ("{}", &[]),
            ("{\"dco\": true, // c\n \"pidash_port\": 80}", &[]),
            ("{\"dco\": true,}", &[(SettingsParseError, ",")]),
            ("[1]", &[(SettingsParseError, "[")]),
            (
                "{\"pidash_port\": 0}",
                &[(SettingsInvalidValue, "\"pidash_port\"")],
            ),
            ("{\"dcoo\": true}", &[(SettingsUnknownKey, "\"dcoo\"")]),
            (
                "{\"dco\": true, \"dco\": false}",
                &[(SettingsDuplicateKey, "\"dco\"")],
            ),
        ];
        for (text, expected) in cases {
            let got: Vec<(Code, String)> = check_text(text)
                .into_iter()
                .map(|(c, s, _)| (c, s))
                .collect();
            let expected: Vec<(Code, String)> = expected
                .iter()
                .map(|(c, s)| (*c, (*s).to_owned()))
                .collect();
            assert_eq!(got, expected, "{text:?}");
        }
        let helps = check_text("{\"dco\": true,}");
        assert!(helps[0]
            .2
            .as_deref()
            .is_some_and(|h| h.contains("trailing comma")));
        let helps = check_text("{\"use_worktree\": true}");
        assert_eq!(helps[0].2.as_deref(), Some("did you mean `use_worktrees`?"));
    }
}
