//! `--format sarif`: a SARIF 2.1.0 log with one run. The driver lists every code as a rule
//! (id, name, short and full description, default level); each finding is a result with its rule,
//! level, message and location. Columns are Unicode code points (`columnKind`).

use super::Positions;
use crate::json::{self, Seq};
use pi_rules_core::lint::{CodeInfo, Diagnostic, Report, Severity, CODES};
use serde::Serialize;
use std::io::{self, Write};

/// The schema URI of SARIF 2.1.0 (OASIS errata 01).
pub const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A path as a URI reference: an absolute path becomes a `file://` URI; everything outside the
/// unreserved characters and `/` is percent-encoded.
pub(crate) fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The log, written as it is built: the results come from an iterator over the findings, so no
/// tree of the whole log is held. The fields keep the order the log has always had.
#[derive(Serialize)]
#[serde(bound = "R: Iterator, R::Item: Serialize")]
struct Log<R> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<R>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase", bound = "R: Iterator, R::Item: Serialize")]
struct Run<R> {
    tool: Tool,
    column_kind: &'static str,
    results: Seq<R>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
struct Driver {
    name: &'static str,
    version: &'static str,
    rules: Rules,
}

/// Every code, as a SARIF rule.
struct Rules;

impl Serialize for Rules {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(CODES.iter().map(rule))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    name: &'static str,
    short_description: Message<&'static str>,
    full_description: Message<&'static str>,
    default_configuration: Configuration,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

/// A SARIF message object: `{"text": ...}`.
#[derive(Serialize)]
struct Message<T> {
    text: T,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Message<String>,
    locations: [Location; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<Fix<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fix<'a> {
    description: Message<&'a str>,
    artifact_changes: [ArtifactChange<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange<'a> {
    artifact_location: ArtifactLocation,
    replacements: Vec<Replacement<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement<'a> {
    deleted_region: Region,
    inserted_content: Message<&'a str>,
}

fn rule(info: &CodeInfo) -> Rule {
    Rule {
        id: info.id,
        name: info.name,
        short_description: Message { text: info.summary },
        full_description: Message {
            text: info.explanation,
        },
        default_configuration: Configuration {
            level: level(info.severity),
        },
    }
}

fn result<'a>(d: &'a Diagnostic, positions: &Positions<'_>) -> SarifResult<'a> {
    let text = match &d.help {
        Some(help) => format!("{}\nhelp: {help}", d.message),
        None => d.message.to_string(),
    };
    let lines = positions.lines(&d.path);
    let region = match (&d.span, lines) {
        (Some(_), Some(lines)) => {
            let p = Positions::within(Some(lines), d);
            Some(Region {
                start_line: p.line,
                start_column: p.column,
                end_line: p.end_line,
                end_column: p.end_column,
            })
        }
        _ => None,
    };
    let fixes = d
        .fix
        .iter()
        .map(|fix| {
            let replacements = fix
                .edits
                .iter()
                .map(|e| {
                    let (start_line, start_column) = Positions::at(lines, e.span.start);
                    let (end_line, end_column) = Positions::at(lines, e.span.end);
                    Replacement {
                        deleted_region: Region {
                            start_line,
                            start_column,
                            end_line,
                            end_column,
                        },
                        inserted_content: Message {
                            text: &e.replacement,
                        },
                    }
                })
                .collect();
            Fix {
                description: Message {
                    text: &fix.description,
                },
                artifact_changes: [ArtifactChange {
                    artifact_location: ArtifactLocation { uri: uri(&d.path) },
                    replacements,
                }],
            }
        })
        .collect();
    SarifResult {
        rule_id: d.code.id(),
        rule_index: d.code as usize,
        level: level(d.severity),
        message: Message { text },
        locations: [Location {
            physical_location: PhysicalLocation {
                artifact_location: ArtifactLocation { uri: uri(&d.path) },
                region,
            },
        }],
        fixes,
    }
}

pub(super) fn render(
    report: &Report,
    positions: &Positions<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let log = Log {
        schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "pi-rules",
                    version: env!("CARGO_PKG_VERSION"),
                    rules: Rules,
                },
            },
            column_kind: "unicodeCodePoints",
            results: Seq::new(report.diagnostics.iter().map(|d| result(d, positions))),
        }],
    };
    json::write_pretty(out, &log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_table() {
        let cases = [
            (".pi/rules/90-x.md", ".pi/rules/90-x.md"),
            ("/home/u/.pi/a b.md", "file:///home/u/.pi/a%20b.md"),
            ("<embedded>/00-a.md", "%3Cembedded%3E/00-a.md"),
            ("é.md", "%C3%A9.md"),
        ];
        for (path, expected) in cases {
            assert_eq!(uri(path), expected);
        }
    }
}
