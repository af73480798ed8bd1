//! Codex's limit on a chain of `AGENTS.md` files (PR905, `export-chain-over-limit`). Codex joins
//! the `AGENTS.md` of each directory from the repository root down to its working directory
//! (`AGENTS.override.md` instead, where there is one), and stops adding text once the join
//! reaches `project_doc_max_bytes`, 32 KiB by default (Codex docs, "AGENTS.md", how Codex
//! discovers guidance; the limit is [`Target::AgentsMd`]'s). A root `AGENTS.md` over the limit on
//! its own is PR901's.

use super::{chain_of, dir_of, file_name, join, AgentFile};
use crate::export::Target;
use pi_rules_core::lint::{Code, Diagnostic};
use std::collections::BTreeMap;

/// The PR905 findings of `files`: for each directory whose chain from the root is over Codex's
/// limit while the chain above it is not, one finding on its file, at the byte where Codex
/// stops, naming every file of the chain.
pub fn chains_over_limit(files: &[AgentFile<'_>]) -> Vec<Diagnostic> {
    let Some(limit) = Target::AgentsMd.limit() else {
        return Vec::new();
    };
    let max = limit.max as usize;
    // Per directory, the file Codex reads there.
    let mut read: BTreeMap<&str, &AgentFile<'_>> = BTreeMap::new();
    for file in files.iter().filter(|f| !f.path.starts_with('.')) {
        let dir = dir_of(file.path);
        match file_name(file.path) {
            "AGENTS.override.md" => {
                read.insert(dir, file);
            }
            "AGENTS.md" => {
                read.entry(dir).or_insert(file);
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for (&dir, file) in &read {
        let chain: Vec<&AgentFile<'_>> = chain_of(dir)
            .filter_map(|up| read.get(up).copied())
            .collect();
        if chain.len() < 2 {
            continue;
        }
        let above: usize = chain[..chain.len() - 1].iter().map(|f| f.text.len()).sum();
        let total = above + file.text.len();
        if above > max || total <= max {
            continue;
        }
        let mut cut = max - above;
        while !file.text.is_char_boundary(cut) {
            cut -= 1;
        }
        let next = file.text[cut..]
            .chars()
            .next()
            .map_or(cut, |c| cut + c.len_utf8());
        let names: Vec<String> = chain.iter().map(|f| format!("`{}`", f.path)).collect();
        let shown = if dir.is_empty() { "." } else { dir };
        let mut d = Diagnostic::new(Code::ExportChainOverLimit, file.path, Some(cut..next));
        d.message(format!(
            "Codex working in `{shown}` joins {} holding {total} bytes; it reads at most {max} \
             bytes, and the rest is cut without a word",
            names.join(", ")
        ))
        .label("Codex stops reading here")
        .help(format!(
            "shorten the files of the chain, or keep in `{}` only what this directory needs",
            join(dir, file_name(file.path))
        ));
        found.push(d);
    }
    found
}
