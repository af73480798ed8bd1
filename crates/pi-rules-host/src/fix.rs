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
//! leaves its layer directory, a file whose layer directory (or a directory above it) leads out of
//! the project or `$HOME`, and a file that is not valid UTF-8 are refused with the reason.
//! The binary prints a unified diff of the plan (`--dry-run`), and [`apply`] writes each file
//! through [`crate::writing`]: the layer directory opened once without following links, then a
//! temporary file in it and a rename over the file, keeping its permissions, all relative to that
//! directory.

// `check --fix` resolves the file it writes itself, as every writer does.
#![allow(clippy::disallowed_methods)]

use crate::check::{gather, CheckOptions};
use crate::error::Result;
use crate::files::Files;
use crate::writing::{LayerDir, Place, WriteError};
use pi_rules_core::layer::Layer;
use pi_rules_core::lint::{
    self, apply_edits, Content, Edit, Entry, LayerInput, LintInput, SchemaInfo,
};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A fix can uncover another; this many rounds are applied at most.
pub const MAX_PASSES: usize = 8;

/// The new text of one file.
#[derive(Debug, Clone)]
pub struct FileFix {
    /// The path as reports show it.
    pub path: String,
    /// The layer the file is in.
    pub layer: Layer,
    /// The name of the file to write in the layer directory (a link inside its layer is
    /// followed to its target).
    pub name: String,
    /// The real path of that file.
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
    /// The file, or its layer directory, leads out of where it belongs: a fix that cannot be
    /// written, which `check --fix` reports with exit code 3. (The package layer and a file
    /// that is not UTF-8 are left alone by design, and are not.)
    pub unsafe_place: bool,
}

/// What `--fix` would do.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub files: Vec<FileFix>,
    pub refused: Vec<Refusal>,
    /// Where the layers of `files` are, for [`apply`].
    places: Vec<(Layer, Place)>,
}

/// Works out the fixes for every rule file the check reads.
pub fn plan(opts: &CheckOptions<'_>) -> Result<Plan> {
    let (layers, _) = gather(opts)?;
    let schema = SchemaInfo::from_schema(&opts.session.schema);
    let session = opts.session;
    let mut plan = Plan::default();
    for layer in &layers {
        // The real path of the layer directory, or why it must not be written.
        let mut dir: Option<Result<PathBuf, String>> = None;
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
                unsafe_place: false,
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
            if layer.kind == Layer::Package {
                plan.refused.push(refuse(
                    "the package layer is never rewritten: copy the rule to the user or project \
                     layer to change it"
                        .to_owned(),
                ));
                continue;
            }
            let unsafe_place = |reason: String| Refusal {
                unsafe_place: true,
                ..refuse(reason)
            };
            let dir = dir.get_or_insert_with(|| layer_dir(session, layer.kind, &mut plan.places));
            let target = match dir {
                Ok(dir) => target_in_layer(session.files(), entry, dir),
                Err(reason) => Err(reason.clone()),
            };
            let target = match target {
                Ok(target) => target,
                Err(reason) => {
                    plan.refused.push(unsafe_place(reason));
                    continue;
                }
            };
            let Some(name) = target.file_name().and_then(|n| n.to_str()) else {
                plan.refused
                    .push(unsafe_place("its name cannot be written".to_owned()));
                continue;
            };
            plan.files.push(FileFix {
                path: entry.path.clone(),
                layer: layer.kind,
                name: name.to_owned(),
                target: target.clone(),
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

/// Where a writable layer is: its place (bound by the project or `$HOME`).
fn place(session: &crate::session::Session, kind: Layer) -> Result<Place, WriteError> {
    match kind {
        Layer::User => Place::user(session.home.as_deref()),
        _ => Place::project(&session.cwd, session.project_root()),
    }
}

/// The real path of a writable layer's directory, or why it must not be written: one of the
/// directories on its way leads out of the project (or `$HOME`). Its place is kept in `places`.
fn layer_dir(
    session: &crate::session::Session,
    kind: Layer,
    places: &mut Vec<(Layer, Place)>,
) -> Result<PathBuf, String> {
    let place = place(session, kind).map_err(|e| e.to_string())?;
    let resolved = place.resolve().map_err(|e| e.to_string())?;
    places.push((kind, place));
    if resolved.missing.is_empty() {
        Ok(resolved.existing)
    } else {
        Err(format!(
            "its layer directory `{}` does not exist",
            resolved.path().display()
        ))
    }
}

/// The file to rewrite for `entry`, in the layer directory whose real path is `dir`: the entry
/// itself, or for a link, its target when that is in `dir`. The entry's path is the one `files`
/// gave its id for (its label is for people, relative to the process's directory).
fn target_in_layer(files: &Files, entry: &Entry, dir: &Path) -> Result<PathBuf, String> {
    if entry.link.is_none() {
        return Ok(dir.join(&entry.name));
    }
    let path = entry.file_id.and_then(|id| files.path(id));
    let path = path.as_deref().unwrap_or(Path::new(&entry.path));
    // Resolved afresh, not from the view: this decides where a write goes.
    let target = fs::canonicalize(path)
        .map_err(|e| format!("it is a link that cannot be resolved ({e})"))?;
    if target.parent() == Some(dir) {
        Ok(target)
    } else {
        Err(format!(
            "it is a link to `{}`, outside its layer directory",
            target.display()
        ))
    }
}

fn has_fixes(schema: &SchemaInfo, kind: Layer, entry: &Entry, text: &str) -> bool {
    lint_alone(schema, kind, entry, text)
        .iter()
        .any(|d| d.fix.is_some())
}

/// The findings of `text` as the file of `entry`, linted on its own.
fn lint_alone(
    schema: &SchemaInfo,
    kind: Layer,
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
        scoped: false,
    };
    lint::lint(input)
        .diagnostics
        .into_iter()
        .filter(|d| d.path == entry.path)
        .collect()
}

/// Applies the fixes of `text`'s findings until none is left (at most [`MAX_PASSES`] rounds);
/// returns the new text and how many findings were fixed.
pub fn fix_text(schema: &SchemaInfo, kind: Layer, entry: &Entry, text: &str) -> (String, usize) {
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

/// Writes every planned file, each layer directory opened once (see [`crate::writing`]). A file
/// that changed on disk since it was read is left alone. Returns the files that could not be
/// written, with the error.
pub fn apply(plan: &Plan) -> Vec<(String, io::Error)> {
    let mut failed = Vec::new();
    let mut dirs: Vec<(Layer, Result<LayerDir, String>)> = Vec::new();
    for file in &plan.files {
        let at = match dirs.iter().position(|(kind, _)| *kind == file.layer) {
            Some(at) => at,
            None => {
                let opened = match plan.places.iter().find(|(kind, _)| *kind == file.layer) {
                    Some((_, place)) => place.open(false).map_err(|e| e.to_string()),
                    None => Err("its layer directory was not resolved".to_owned()),
                };
                dirs.push((file.layer, opened));
                dirs.len() - 1
            }
        };
        let written = match &dirs[at].1 {
            Ok(dir) => write_one(dir, file),
            Err(reason) => Err(io::Error::other(reason.clone())),
        };
        if let Err(err) = written {
            failed.push((file.path.clone(), err));
        }
    }
    failed
}

fn write_one(dir: &LayerDir, file: &FileFix) -> io::Result<()> {
    if file.target.parent() != Some(dir.real()) {
        return Err(io::Error::other(format!(
            "its layer directory is now `{}`; run the check again",
            dir.real().display()
        )));
    }
    let now = dir.read(&file.name, file.before.len() as u64 + 1)?;
    if now != file.before.as_bytes() {
        return Err(io::Error::other(
            "the file changed since it was read; run the check again",
        ));
    }
    dir.write(&file.name, file.after.as_bytes(), true)
        .map_err(WriteError::into_io)
}
