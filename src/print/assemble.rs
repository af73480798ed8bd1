//! `assemble`'s JSON form (`docs/assemble-json.md`): the block, its warnings, the per-file report
//! and the stats, as one line.

use crate::json::{JsonWriter, Seq, Text};
use pi_rules_core::Message;
use pi_rules_host::assembly::{self, Run};
use serde::Serialize;
use std::io::{self, Write};

/// The version of the JSON form, documented in `docs/assemble-json.md`.
pub const FORMAT_VERSION: u32 = 1;

/// Writes `run`'s JSON form to `out` as one line, with its newline.
pub fn write_json(run: &Run, out: &mut dyn Write) -> io::Result<()> {
    Report::new(run).write_line(out)
}

/// The JSON form (`docs/assemble-json.md`).
#[derive(Serialize)]
struct Report<'a> {
    format: u32,
    block: &'a str,
    warnings: Seq<Box<dyn Iterator<Item = Text<Message<'a>>> + 'a>>,
    files: Seq<Box<dyn Iterator<Item = FileReport<'a>> + 'a>>,
    notes: &'a [String],
    stats: Stats,
}

#[derive(Serialize)]
struct FileReport<'a> {
    name: &'a str,
    layer: Option<&'static str>,
    path: Option<String>,
    status: &'static str,
    shadowed: Vec<String>,
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

impl<'a> Report<'a> {
    /// Writes the report as one line, exactly as `serde_json` writes it. The block, the bulk of
    /// the line, goes through [`JsonWriter`]'s escaper, which works eight bytes at a time
    /// (`serde_json`'s looks at each byte: about a sixth of a warm `serve` request); the rest
    /// through `serde`.
    fn write_line(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut writer = JsonWriter::new(out);
        writer.raw(b"{\"format\":")?;
        writer.value(&self.format)?;
        writer.raw(b",\"block\":")?;
        writer.string(self.block)?;
        writer.raw(b",\"warnings\":")?;
        writer.value(&self.warnings)?;
        writer.raw(b",\"files\":")?;
        writer.value(&self.files)?;
        writer.raw(b",\"notes\":")?;
        writer.value(&self.notes)?;
        writer.raw(b",\"stats\":")?;
        writer.value(&self.stats)?;
        writer.raw(b"}\n")?;
        writer.into_inner()?;
        Ok(())
    }

    fn new(run: &'a Run) -> Report<'a> {
        let warnings = run.warning_messages().map(Text);
        let files = run.loaded.iter().flat_map(|loaded| {
            assembly::name_entries(loaded, run.assembly.as_ref()).map(|entry| {
                let name = entry.report.name.as_str();
                let winner = entry.report.winner();
                FileReport {
                    name,
                    layer: winner.map(|w| w.layer.as_str()),
                    path: winner.map(|w| w.display_path(name)),
                    status: entry.status(),
                    shadowed: entry.shadowed().map(|c| c.display_path(name)).collect(),
                }
            })
        });
        let loaded = run.loaded.as_ref();
        Report {
            format: FORMAT_VERSION,
            block: &run.block,
            warnings: Seq::new(Box::new(warnings)),
            files: Seq::new(Box::new(files)),
            notes: loaded.map_or(&[][..], |l| &l.notes[..]),
            stats: Stats {
                files_read: loaded.map_or(0, |l| l.files.len()),
                bytes_read: loaded.map_or(0, |l| l.files.iter().map(|f| f.text.len()).sum()),
                block_bytes: run.block.len(),
                read_us: run.read_micros,
                assemble_us: run.assemble_micros,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written line is `serde_json`'s, whatever the block holds.
    #[test]
    fn the_line_is_serde_jsons() {
        let notes = vec!["a \"note\"\twith\u{1}controls".to_owned()];
        let blocks = [
            String::new(),
            "\n\n# Rules\n\n| a | b |\n\"quoted\" \\ back\u{7f}\u{1f}\u{2028} ünïcode\n".to_owned(),
            "x\u{0}y\r\u{8}\u{c}".repeat(40_000),
        ];
        for block in &blocks {
            let report = || Report {
                format: FORMAT_VERSION,
                block,
                // Warnings are written by `serde` either way.
                warnings: Seq::new(Box::new(std::iter::empty())),
                files: Seq::new(Box::new(std::iter::once(FileReport {
                    name: "90-x.md",
                    layer: Some("project"),
                    path: Some("/p/.pi/rules/90-x.md".to_owned()),
                    status: "included",
                    shadowed: vec!["<embedded>/90-x.md".to_owned()],
                }))),
                notes: &notes,
                stats: Stats {
                    files_read: 1,
                    bytes_read: 2,
                    block_bytes: block.len(),
                    read_us: 3,
                    assemble_us: 4,
                },
            };
            let mut ours = Vec::new();
            report().write_line(&mut ours).unwrap();
            let mut theirs = serde_json::to_vec(&report()).unwrap();
            theirs.push(b'\n');
            assert!(
                ours == theirs,
                "the lines differ for a block of {} bytes",
                block.len()
            );
        }
    }
}
