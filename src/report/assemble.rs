//! `assemble`'s JSON form (`docs/assemble-json.md`): the block, its warnings, the per-file report
//! and the stats, as one line.

use crate::json::{EscapeMemo, JsonWriter, Seq, Text};
use pi_rules_core::Message;
use pi_rules_host::assembly::{self, Run};
use pi_rules_host::loader::Candidate;
use serde::Serialize;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;

/// The version of the JSON form, documented in `docs/assemble-json.md`.
pub const FORMAT_VERSION: u32 = 1;

/// Writes `run`'s JSON form to `out` as one line, with its newline.
pub fn write_json(run: &Run, out: &mut dyn Write) -> io::Result<()> {
    let mut writer = JsonWriter::new(out);
    AssembleJson::new(run).write_line(&mut writer, None)?;
    writer.into_inner()?;
    Ok(())
}

/// Appends the JSON form of `run` to `buffer`, as [`write_json`] writes it, for `serve`: the block
/// is escaped once for as long as it stays the same (`memo`), and nothing is copied from a
/// writer's buffer into `buffer`.
pub fn append_json(run: &Run, buffer: &mut Vec<u8>, memo: &mut EscapeMemo) {
    let mut writer = JsonWriter::over(std::mem::take(buffer));
    // A writer over a buffer writes nowhere else, so it cannot fail.
    let written = AssembleJson::new(run).write_line(&mut writer, Some(memo));
    debug_assert!(written.is_ok());
    *buffer = writer.into_buffer();
}

/// The JSON form (`docs/assemble-json.md`).
#[derive(Serialize)]
struct AssembleJson<'a> {
    format: u32,
    block: &'a str,
    warnings: Seq<Box<dyn Iterator<Item = Text<Message<'a>>> + 'a>>,
    files: Seq<Box<dyn Iterator<Item = FileReport<'a>> + 'a>>,
    notes: &'a [String],
    stats: Stats,
    /// What scopes did, when the run honoured them.
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<super::scope::ScopeJson<'a>>,
}

#[derive(Serialize)]
struct FileReport<'a> {
    name: &'a str,
    layer: Option<&'static str>,
    path: Option<Label<'a>>,
    status: &'static str,
    shadowed: Shadowed<'a>,
}

impl FileReport<'_> {
    /// Writes the entry as `serde` writes it (the `Serialize` derive above), without building
    /// a string for each path: a warm `serve` request reports every rule file.
    fn write<W: Write>(&self, writer: &mut JsonWriter<W>) -> io::Result<()> {
        writer.raw(b"{\"name\":")?;
        writer.string(self.name)?;
        writer.raw(b",\"layer\":")?;
        match self.layer {
            Some(layer) => writer.string(layer)?,
            None => writer.raw(b"null")?,
        }
        writer.raw(b",\"path\":")?;
        match &self.path {
            Some(label) => label.write(writer)?,
            None => writer.raw(b"null")?,
        }
        writer.raw(b",\"status\":")?;
        writer.string(self.status)?;
        writer.raw(b",\"shadowed\":[")?;
        for (i, label) in self.shadowed.labels().enumerate() {
            if i > 0 {
                writer.raw(b",")?;
            }
            label.write(writer)?;
        }
        writer.raw(b"]}")
    }
}

/// A candidate's path as the reports show it ([`Candidate::display_path`]): its path, or
/// `<embedded>/NAME` for an embedded package rule.
#[derive(Clone, Copy)]
struct Label<'a> {
    name: &'a str,
    path: Option<&'a Path>,
}

impl<'a> Label<'a> {
    fn of(candidate: &'a Candidate, name: &'a str) -> Label<'a> {
        Label {
            name,
            path: candidate.path.as_deref(),
        }
    }

    fn write<W: Write>(&self, writer: &mut JsonWriter<W>) -> io::Result<()> {
        match self.path {
            // `Path::display` replaces invalid UTF-8 as `to_string_lossy` does.
            Some(path) => writer.string(&path.to_string_lossy()),
            None => {
                writer.raw(b"\"<embedded>/")?;
                writer.contents(self.name)?;
                writer.raw(b"\"")
            }
        }
    }
}

impl fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path {
            Some(path) => path.display().fmt(f),
            None => write!(f, "<embedded>/{}", self.name),
        }
    }
}

impl Serialize for Label<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The providers of a name other than its winner, highest precedence first
/// ([`assembly::NameEntry::shadowed`]).
struct Shadowed<'a>(assembly::NameEntry<'a>);

impl<'a> Shadowed<'a> {
    fn labels(&self) -> impl Iterator<Item = Label<'a>> + 'a {
        let name = self.0.report.name.as_str();
        self.0.shadowed().map(move |c| Label::of(c, name))
    }
}

impl Serialize for Shadowed<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.labels())
    }
}

#[derive(Serialize)]
struct Stats {
    /// Rule files read (taken).
    files_read: usize,
    /// Bytes of those files.
    bytes_read: usize,
    /// Bytes of the block.
    block_bytes: usize,
    read_us: u128,
    assemble_us: u128,
}

impl<'a> AssembleJson<'a> {
    /// Writes the report as one line, exactly as `serde_json` writes it. The block, the bulk of
    /// the line, goes through [`JsonWriter`]'s escaper, which works eight bytes at a time
    /// (`serde_json`'s looks at each byte: about a sixth of a warm `serve` request); the rest
    /// through `serde`.
    fn write_line<W: Write>(
        &self,
        writer: &mut JsonWriter<W>,
        memo: Option<&mut EscapeMemo>,
    ) -> io::Result<()> {
        writer.raw(b"{\"format\":")?;
        writer.value(&self.format)?;
        writer.raw(b",\"block\":")?;
        match memo {
            Some(memo) => writer.string_memo(self.block, memo)?,
            None => writer.string(self.block)?,
        }
        writer.raw(b",\"warnings\":")?;
        writer.value(&self.warnings)?;
        writer.raw(b",\"files\":[")?;
        for (i, file) in self.files.take().into_iter().flatten().enumerate() {
            if i > 0 {
                writer.raw(b",")?;
            }
            file.write(writer)?;
        }
        writer.raw(b"]")?;
        writer.raw(b",\"notes\":")?;
        writer.value(&self.notes)?;
        writer.raw(b",\"stats\":")?;
        writer.value(&self.stats)?;
        if let Some(scope) = &self.scope {
            writer.raw(b",\"scope\":")?;
            writer.value(scope)?;
        }
        writer.raw(b"}\n")
    }

    fn new(run: &'a Run) -> AssembleJson<'a> {
        let warnings = run.warning_messages().map(Text);
        let files = run.loaded.iter().flat_map(|loaded| {
            assembly::name_entries(loaded, run.assembly.as_ref()).map(|entry| {
                let name = entry.report.name.as_str();
                let winner = entry.report.winner();
                FileReport {
                    name,
                    layer: winner.map(|w| w.layer.as_str()),
                    path: winner.map(|w| Label::of(w, name)),
                    status: entry.status(),
                    shadowed: Shadowed(entry),
                }
            })
        });
        let loaded = run.loaded.as_ref();
        AssembleJson {
            format: FORMAT_VERSION,
            block: run.block.appended(),
            warnings: Seq::new(Box::new(warnings)),
            files: Seq::new(Box::new(files)),
            notes: loaded.map_or(&[][..], |l| &l.notes[..]),
            stats: Stats {
                files_read: loaded.map_or(0, |l| l.files.len()),
                bytes_read: loaded.map_or(0, |l| l.files.iter().map(|f| f.text.len()).sum()),
                block_bytes: run.block.appended().len(),
                read_us: run.read_micros,
                assemble_us: run.assemble_micros,
            },
            scope: run.scope.as_ref().map(super::scope::ScopeJson::new),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_rules_host::loader::{Layer, NameReport, Pick};
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    /// The hand-written line is `serde_json`'s, whatever the block holds, and so is the line
    /// written with a memo of the block, whether the memo held another block, this one, or none.
    #[test]
    fn the_line_is_serde_jsons() {
        let mut memo = EscapeMemo::default();
        let candidate = |layer, path: Option<&str>| Candidate {
            layer,
            path: path.map(PathBuf::from),
            is_symlink: false,
        };
        let taken = |name: &str, candidates: Vec<Candidate>| NameReport {
            name: name.to_owned(),
            outcome: Pick::Taken {
                winner: candidates[0].clone(),
                masked: false,
                fell_back_from: Vec::new(),
                shadows: candidates[1..].to_vec(),
            },
            candidates,
        };
        let names = [
            taken(
                "90-x.md",
                vec![
                    candidate(Layer::Project, Some("/p/.pi/rules/90-x.md")),
                    candidate(Layer::User, Some("/h/\"q\"\\/\u{1}ü.md")),
                    candidate(Layer::Package, None),
                ],
            ),
            taken(
                "91-y.md",
                vec![Candidate {
                    layer: Layer::Project,
                    // Not UTF-8: shown with U+FFFD, as `Path::display` shows it.
                    path: Some(PathBuf::from(OsStr::from_bytes(b"/p/\xff\xfe.md"))),
                    is_symlink: true,
                }],
            ),
            taken("00-\"core\".md", vec![candidate(Layer::Package, None)]),
            NameReport {
                name: "50-gone.md".to_owned(),
                outcome: Pick::Unreadable {
                    failures: Vec::new(),
                },
                candidates: vec![candidate(Layer::Project, Some("/p/.pi/rules/50-gone.md"))],
            },
        ];
        let file_reports = || {
            names.iter().map(|report| {
                let entry = assembly::NameEntry {
                    report,
                    file: None,
                    included: None,
                };
                let winner = report.winner();
                FileReport {
                    name: &report.name,
                    layer: winner.map(|w| w.layer.as_str()),
                    path: winner.map(|w| Label::of(w, &report.name)),
                    status: entry.status(),
                    shadowed: Shadowed(entry),
                }
            })
        };
        let notes = vec!["a \"note\"\twith\u{1}controls".to_owned()];
        let blocks = [
            String::new(),
            "\n\n# Rules\n\n| a | b |\n\"quoted\" \\ back\u{7f}\u{1f}\u{2028} ünïcode\n".to_owned(),
            "x\u{0}y\r\u{8}\u{c}".repeat(40_000),
        ];
        for block in &blocks {
            let report = || AssembleJson {
                format: FORMAT_VERSION,
                block,
                // Warnings are written by `serde` either way.
                warnings: Seq::new(Box::new(std::iter::empty())),
                files: Seq::new(Box::new(file_reports())),
                notes: &notes,
                stats: Stats {
                    files_read: 1,
                    bytes_read: 2,
                    block_bytes: block.len(),
                    read_us: 3,
                    assemble_us: 4,
                },
                scope: None,
            };
            let mut writer = JsonWriter::new(Vec::new());
            report().write_line(&mut writer, None).unwrap();
            let ours = writer.into_inner().unwrap();
            let mut theirs = serde_json::to_vec(&report()).unwrap();
            theirs.push(b'\n');
            assert!(
                ours == theirs,
                "the lines differ for a block of {} bytes",
                block.len()
            );
            for time in ["first", "second"] {
                let mut writer = JsonWriter::over(b"head".to_vec());
                report().write_line(&mut writer, Some(&mut memo)).unwrap();
                let memoed = writer.into_buffer();
                assert!(
                    memoed.strip_prefix(b"head") == Some(&theirs[..]),
                    "the memo's line differs the {time} time, for a block of {} bytes",
                    block.len()
                );
            }
        }
    }
}
