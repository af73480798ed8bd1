//! `pi-rules check --fix`: applying the fixes that findings carry.
//!
//! A fix is a list of byte-range edits attached to a finding by the core linter, only where the
//! repair cannot change what the author meant (a misspelt key with a single close match, a marker
//! or placeholder with the wrong case or spacing, white space after a frontmatter fence).
//!
//! [`plan`] works out the new text of every file in memory: it lints the file alone, applies the
//! fixes of its findings, and repeats while new fixes appear (a repair can uncover the next one,
//! as with two fences that both have trailing spaces), at most [`MAX_PASSES`] times. Only files of
//! the user and project layers are planned; the package layer, a file reached through a link that
//! leaves its layer directory, and a file that is not valid UTF-8 are refused with the reason.
//! [`write_diff`] prints a unified diff of the plan (`--dry-run`), and [`apply`] writes each file
//! atomically: a temporary file beside it, then a rename over it, keeping its permissions.

use crate::check::{gather, CheckOptions};
use crate::terminal::Paint;
use crate::unified_diff;
use anyhow::Result;
use pi_rules_core::lint::{
    self, apply_edits, Content, Edit, Entry, LayerInput, LayerKind, LintInput, SchemaInfo,
};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A fix can uncover another; this many rounds are applied at most.
pub const MAX_PASSES: usize = 8;

/// The new text of one file.
#[derive(Debug, Clone)]
pub struct FileFix {
    /// The path as reports show it.
    pub path: String,
    /// The file to write (a link inside its layer is followed to its target).
    pub target: PathBuf,
    pub before: String,
    pub after: String,
    /// How many findings the fixes repair.
    pub fixed: usize,
}

/// A file with fixable findings that is left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub path: String,
    pub reason: String,
}

/// What `--fix` would do.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub files: Vec<FileFix>,
    pub refused: Vec<Refusal>,
}

/// Works out the fixes for every rule file the check reads.
pub fn plan(opts: &CheckOptions<'_>) -> Result<Plan> {
    let (layers, _) = gather(opts)?;
    let schema = SchemaInfo::from_schema(&opts.session.schema);
    let session = opts.session;
    let mut plan = Plan::default();
    for layer in &layers {
        let dir = match layer.kind {
            LayerKind::Package => None,
            LayerKind::User => session
                .home
                .as_ref()
                .map(|home| home.join(".pi").join("agent").join("rules")),
            LayerKind::Project => Some(session.cwd.join(".pi").join("rules")),
        };
        for entry in &layer.entries {
            let Content::Bytes(bytes) = &entry.content else {
                continue;
            };
            if !lint::is_rule_name(&entry.name) {
                continue;
            }
            let refuse = |reason: String| Refusal {
                path: entry.path.clone(),
                reason,
            };
            let Ok(text) = std::str::from_utf8(bytes) else {
                if has_fixes(&schema, layer.kind, entry, &String::from_utf8_lossy(bytes)) {
                    plan.refused.push(refuse(
                        "it is not valid UTF-8, so rewriting it would change other bytes too"
                            .to_owned(),
                    ));
                }
                continue;
            };
            let (after, fixed) = fix_text(&schema, layer.kind, entry, text);
            if fixed == 0 {
                continue;
            }
            let Some(dir) = &dir else {
                plan.refused.push(refuse(
                    "the package layer is never rewritten: copy the rule to the user or project \
                     layer to change it"
                        .to_owned(),
                ));
                continue;
            };
            let target = match target_in_layer(Path::new(&entry.path), entry, dir) {
                Ok(target) => target,
                Err(reason) => {
                    plan.refused.push(refuse(reason));
                    continue;
                }
            };
            plan.files.push(FileFix {
                path: entry.path.clone(),
                target,
                before: text.to_owned(),
                after,
                fixed,
            });
        }
    }
    plan.files.sort_by(|a, b| a.path.cmp(&b.path));
    plan.refused.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(plan)
}

/// The file to rewrite for `entry` at `path`: the path itself, or for a link, its target when
/// that is inside the layer directory `dir`.
fn target_in_layer(path: &Path, entry: &Entry, dir: &Path) -> Result<PathBuf, String> {
    if entry.link.is_none() {
        return Ok(path.to_path_buf());
    }
    let target = fs::canonicalize(path)
        .map_err(|e| format!("it is a link that cannot be resolved ({e})"))?;
    let dir = fs::canonicalize(dir).map_err(|e| format!("its layer directory: {e}"))?;
    if target.parent() == Some(dir.as_path()) {
        Ok(target)
    } else {
        Err(format!(
            "it is a link to `{}`, outside its layer directory",
            target.display()
        ))
    }
}

fn has_fixes(schema: &SchemaInfo, kind: LayerKind, entry: &Entry, text: &str) -> bool {
    lint_alone(schema, kind, entry, text)
        .iter()
        .any(|d| d.fix.is_some())
}

/// The findings of `text` as the file of `entry`, linted on its own.
fn lint_alone(
    schema: &SchemaInfo,
    kind: LayerKind,
    entry: &Entry,
    text: &str,
) -> Vec<lint::Diagnostic> {
    let layers = vec![LayerInput::new(
        kind,
        vec![Entry::new(
            entry.name.clone(),
            entry.path.clone(),
            Content::Bytes(text.as_bytes().to_vec()),
        )],
    )];
    let input = LintInput {
        layers,
        settings: &[],
        schema,
        features: lint::FEATURES,
        collate: &|a: &str, b: &str| a.cmp(b),
    };
    lint::lint(input)
        .diagnostics
        .into_iter()
        .filter(|d| d.path == entry.path)
        .collect()
}

/// Applies the fixes of `text`'s findings until none is left (at most [`MAX_PASSES`] rounds);
/// returns the new text and how many findings were fixed.
pub fn fix_text(
    schema: &SchemaInfo,
    kind: LayerKind,
    entry: &Entry,
    text: &str,
) -> (String, usize) {
    let mut current = text.to_owned();
    let mut fixed = 0;
    for _ in 0..MAX_PASSES {
        let found = lint_alone(schema, kind, entry, &current);
        let mut fixes: Vec<&lint::Fix> = found.iter().filter_map(|d| d.fix.as_ref()).collect();
        if fixes.is_empty() {
            break;
        }
        fixes.sort_by_key(|f| f.edits.first().map_or(0, |e| e.span.start));
        // Whole fixes only, and none that overlaps one taken before it.
        let mut edits: Vec<&Edit> = Vec::new();
        let mut end = 0;
        for fix in fixes {
            let starts_after = fix.edits.first().is_some_and(|e| e.span.start >= end);
            let ordered = fix
                .edits
                .windows(2)
                .all(|w| w[0].span.end <= w[1].span.start);
            if !starts_after || !ordered {
                continue;
            }
            end = fix.edits.last().map_or(end, |e| e.span.end);
            edits.extend(&fix.edits);
            fixed += 1;
        }
        let next = apply_edits(&current, &edits);
        if next == current {
            break;
        }
        current = next;
    }
    (current, fixed)
}

/// Writes the plan as a unified diff, one file after another, with the project's diff writer
/// (which shows control characters escaped, so the diff is for reading, not for `patch`).
pub fn write_diff(plan: &Plan, out: &mut dyn Write, paint: Paint) -> io::Result<()> {
    for file in &plan.files {
        unified_diff::write(
            out,
            (&format!("a/{}", file.path), &file.before),
            (&format!("b/{}", file.path), &file.after),
            unified_diff::DEFAULT_CONTEXT,
            paint,
        )?;
    }
    Ok(())
}

/// Writes every planned file. A file that changed on disk since it was read is left alone.
/// Returns the files that could not be written, with the error.
pub fn apply(plan: &Plan) -> Vec<(String, io::Error)> {
    let mut failed = Vec::new();
    for file in &plan.files {
        if let Err(err) = write_one(file) {
            failed.push((file.path.clone(), err));
        }
    }
    failed
}

fn write_one(file: &FileFix) -> io::Result<()> {
    use std::io::Read;
    let mut now = Vec::new();
    fs::File::open(&file.target)?
        .take(file.before.len() as u64 + 1)
        .read_to_end(&mut now)?;
    if now != file.before.as_bytes() {
        return Err(io::Error::other(
            "the file changed since it was read; run the check again",
        ));
    }
    write_atomic(&file.target, file.after.as_bytes())
}

/// Replaces `target` with `bytes` through a temporary file in the same directory and a rename,
/// keeping the file's permissions.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map_or_else(|| "rule".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.pi-rules-fix.{}", std::process::id()));
    let permissions = fs::metadata(target)?.permissions();
    let written = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(permissions)?;
        f.sync_all()?;
        fs::rename(&tmp, target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}
