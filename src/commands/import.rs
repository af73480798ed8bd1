//! `pi-rules import`: other agents' instruction files as pi-rules rules, the way in for a team
//! that has rules already. The conversion and the names are the host's
//! ([`pi_rules_host::export::import`]); this reads the files, says what it found, and writes.

use crate::invocation::{Context, OutputFormat, PlaceArgs, TargetArgs};
use crate::lsp::uri::normal;
use crate::output::{note, output, Exit};
use crate::terminal::escape;
use pi_rules_core::layer::Layer;
use pi_rules_host::authoring::Layers;
use pi_rules_host::bail;
use pi_rules_host::check::walk;
use pi_rules_host::error::{Error, Result};
use pi_rules_host::export::import::{self as host, ToName};
use pi_rules_host::writing::{LayerDir, WriteError};
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// Turn other agents' instruction files (CLAUDE.md, AGENTS.md, Cursor rules, ...) into rules.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules import CLAUDE.md --project                  # .pi/rules/90-claude.md
  pi-rules import .cursor/rules/*.mdc --project        # one rule per Cursor rule
  pi-rules import packages/api/AGENTS.md --project     # packages/api/.pi/rules/9N-agents.md
  pi-rules import . --project                          # every agent file of the project

What each file gives: AGENTS.md, CLAUDE.md, GEMINI.md, .github/copilot-instructions.md,
.goosehints, .cursorrules, .windsurfrules and a .clinerules file, the text outside any pi-rules
section; .cursor/rules/**/*.mdc (or .md), .windsurf/rules/**/*.md, .clinerules/**/*.md,
.kiro/steering/**/*.md, .claude/rules/**/*.md and .github/instructions/**/*.instructions.md, the
body after the agent's frontmatter (a second `---` block after it is text, and stays text).

A rule that the agent applied to some paths only keeps them as its `paths:` frontmatter (one glob
on the line, several as a YAML list): Cursor's `globs:` (without `alwaysApply: true`), Windsurf's
`globs:` (with `trigger: glob`), Kiro's `fileMatchPattern:` (with `inclusion: fileMatch`),
Cline's `paths:` list, Claude Code's `paths:`, Copilot's `applyTo:`. Each glob is read as its
agent reads it (comma-separated, a list, braces with commas) and written with the meaning it had
there. A rule the agent always applied has no scope. A rule the agent applied on request only
(Cursor's description-only rules, Windsurf's `model_decision` and `manual`, Kiro's `manual` and
`auto`, Copilot's instructions without `applyTo:`) is imported with a warning: it applies to every
request then. What cannot be kept (a negated glob, another agent's key) is a warning with its
line. pi honours `paths:` when `[rules] scoped = true` is in .pi/pi-rules.toml; `export` always
does.

A directory given stands for the agent files below it, in name order: those that the list above
names, found as `check` walks a project (.gitignore honoured, links not followed).

With --project, a file in a directory below the project directory (D/AGENTS.md, D/CLAUDE.md,
D/.cursor/rules/x.mdc, ...) becomes a rule of the nested directory D/.pi/rules, for D's files.

Each rule is named as `new` names one: the next free prefix of the layer's range, then the source
file's name (`CLAUDE.md` becomes `90-claude.md` in the project layer). With more rules than free
prefixes, several share one, numbered in the order the files were given (`90-01-api.md`,
`90-02-web.md`, ...). A name in use is never taken: a rule never replaces another. Each path
written is printed. A file with nothing to import (empty, written by `export`, not an agent's
file, unreadable) is skipped with a warning, and the others are imported; only a failed write
stops the command (and nothing to import at all is an error). The source files are left as they are: after an import, `pi-rules export
claude` keeps CLAUDE.md's text and adds the section below it, so delete the hand-written text
once the section holds it.")]
pub struct Args {
    /// The files to import; a directory stands for every agent file below it (.gitignore
    /// honoured).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub place: PlaceArgs,
    /// `json`: one object on stdout (the rules written, the files skipped, the notes), nothing
    /// on stderr but an error.
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

/// The most of a file that is imported.
const MAX_IMPORT_BYTES: u64 = 1024 * 1024;

/// The most files a directory given is walked for.
const MAX_WALKED: usize = 1_000_000;

/// A rule read from a file, before it has a name.
struct Found {
    /// The source file, as given.
    source: String,
    /// The source file, escaped for the terminal.
    shown: String,
    /// The globs of its `paths:`.
    paths: Vec<String>,
    /// The nested directory it goes to, `/`-separated (`""`: the layer itself).
    dir: String,
    stem: String,
    text: String,
}

/// What `import` says: on stderr as it goes, or gathered for the JSON form.
struct Voice {
    json: bool,
    /// (source, level, message), raw.
    notes: Vec<(String, &'static str, String)>,
    skipped: Vec<String>,
}

impl Voice {
    /// Says `message` (raw) of `source` (raw; empty for the import as a whole).
    fn say(&mut self, cx: &mut Context<'_>, level: &'static str, source: &str, message: &str) {
        if self.json {
            self.notes
                .push((source.to_owned(), level, message.to_owned()));
        } else if source.is_empty() {
            note(
                cx.err,
                format_args!("pi-rules: {level}: {}", escape(message)),
            );
        } else {
            note(
                cx.err,
                format_args!(
                    "pi-rules: {level}: `{}`: {}",
                    escape(source),
                    escape(message)
                ),
            );
        }
    }

    /// A file skipped, and why.
    fn skip(&mut self, cx: &mut Context<'_>, source: &str, why: &str) {
        self.skipped.push(source.to_owned());
        self.say(cx, "warning", source, &format!("skipped: {why}"));
    }
}

/// `pi-rules import`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let layers = args.place.read(cx.env)?;
    let target = args.target.layer();
    let here = cx.env.cwd().ok().map(Path::to_path_buf);
    let mut found: Vec<Found> = Vec::new();
    let mut scoped_any = false;
    let mut seen = HashSet::new();
    let mut voice = Voice {
        json: args.format == OutputFormat::Json,
        notes: Vec::new(),
        skipped: Vec::new(),
    };
    for file in &expand(cx, &mut voice, &args.files) {
        let source = file.display().to_string();
        let shown = escape(&source).into_owned();
        let relative = relative_to(here.as_deref(), &layers.session.cwd, file);
        if !seen.insert(relative.clone().unwrap_or_else(|| file.clone())) {
            voice.say(cx, "warning", &source, "given twice; imported once");
            continue;
        }
        let parts: Vec<String> = match &relative {
            Some(path) => components(path),
            None => components(file),
        };
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let Some(located) = host::locate(&parts) else {
            voice.skip(
                cx,
                &source,
                "it is not an agent's instruction file that import knows (AGENTS.md, \
                 CLAUDE.md, GEMINI.md, .github/copilot-instructions.md, .goosehints, \
                 .cursorrules, .windsurfrules, .clinerules, .cursor/rules/**/*.mdc, \
                 .windsurf/rules/**/*.md, .clinerules/**/*.md, .kiro/steering/**/*.md, \
                 .claude/rules/**/*.md, .github/instructions/**/*.instructions.md)",
            );
            continue;
        };
        let bytes = match pi_rules_host::files::bounded::read_text(file, MAX_IMPORT_BYTES) {
            Ok(Some(text)) => text.into_bytes(),
            Ok(None) => {
                voice.skip(cx, &source, "no such file");
                continue;
            }
            Err(reason) => {
                voice.skip(cx, &source, &reason);
                continue;
            }
        };
        let imported = match host::import(located.kind, &bytes) {
            Ok(imported) => imported,
            Err(skip) => {
                voice.skip(cx, &source, &skip.to_string());
                continue;
            }
        };
        for said in &imported.notes {
            voice.say(cx, said.level.label(), &source, &said.message);
        }
        scoped_any |= !imported.paths.is_empty();
        let dir = match &relative {
            Some(_) if located.dir > 0 => parts[..located.dir].join("/"),
            _ => String::new(),
        };
        let dir = if dir.is_empty() || target == Layer::Project {
            dir
        } else {
            voice.say(
                cx,
                "warning",
                &source,
                &format!(
                    "its agent reads it for `{dir}` only; the user layer has no nested \
                     directories, so the rule is for every directory"
                ),
            );
            String::new()
        };
        found.push(Found {
            source,
            shown,
            paths: imported.paths,
            dir,
            stem: located.stem,
            text: imported.text,
        });
    }
    if found.is_empty() {
        bail!("nothing to import: every file given was skipped");
    }
    if scoped_any
        && !pi_rules_host::config::Config::read(&layers.session)
            .config
            .scoped()
    {
        voice.say(
            cx,
            "note",
            "",
            "scopes are off for pi in this project, so pi reads the kept `paths:` rules as any \
             other until `[rules] scoped = true` is in .pi/pi-rules.toml",
        );
    }
    write_all(cx, &layers, target, &found, &voice)
}

/// Names every rule found and writes it, each directory opened once; an existing file is
/// never replaced.
fn write_all(
    cx: &mut Context<'_>,
    layers: &Layers,
    target: Layer,
    found: &[Found],
    voice: &Voice,
) -> Result<Exit> {
    let to_name: Vec<ToName<'_>> = found
        .iter()
        .map(|f| ToName {
            dir: &f.dir,
            stem: &f.stem,
        })
        .collect();
    let taken: HashSet<String> = layers.loaded.names.iter().map(|r| r.name.clone()).collect();
    let names = host::name_rules(
        &to_name,
        &layers.used_prefixes(),
        &taken,
        target.prefix_range(),
        |dir| match layers.nested_dir(Path::new(dir)) {
            Ok(nested) => layers
                .nested_rules(&nested)
                .into_iter()
                .map(|(name, _)| name)
                .collect(),
            Err(_) => Vec::new(),
        },
    );
    // Each directory opened once, and its rules written together (one sync for them all).
    let mut dirs: Vec<&str> = Vec::new();
    let mut by_dir: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, rule) in found.iter().enumerate() {
        by_dir
            .entry(&rule.dir)
            .or_insert_with(|| {
                dirs.push(&rule.dir);
                Vec::new()
            })
            .push(i);
    }
    let mut written: Vec<Option<std::result::Result<PathBuf, WriteError>>> =
        (0..found.len()).map(|_| None).collect();
    let mut failed: Option<Error> = None;
    for dir in dirs {
        let first = &found[by_dir[dir][0]];
        let opened = open_dir(layers, target, dir, &first.shown);
        let (layer_dir, path) = match opened {
            Ok(opened) => opened,
            Err(err) => {
                failed.get_or_insert(err);
                continue;
            }
        };
        let files: Vec<(&str, &[u8])> = by_dir[dir]
            .iter()
            .map(|&i| (names[i].as_str(), found[i].text.as_bytes()))
            .collect();
        for (&i, result) in by_dir[dir].iter().zip(layer_dir.write_new_all(&files)) {
            written[i] = Some(result.map(|()| path.join(&names[i])));
        }
    }
    // What was written, in the sources' order; then the first failure, if any.
    let mut report = Report {
        format: 1,
        rules: Vec::new(),
        skipped: &voice.skipped,
        notes: voice
            .notes
            .iter()
            .map(|(source, level, message)| JsonNote {
                source: (!source.is_empty()).then_some(source.as_str()),
                level,
                message,
            })
            .collect(),
    };
    for (rule, (result, name)) in found.iter().zip(written.into_iter().zip(&names)) {
        match result {
            Some(Ok(dest)) if voice.json => report.rules.push(JsonRule {
                source: &rule.source,
                path: dest.display().to_string(),
                dir: &rule.dir,
                paths: &rule.paths,
            }),
            Some(Ok(dest)) => {
                output(writeln!(cx.out, "{}", escape(&dest.display().to_string())))?;
            }
            Some(Err(err)) => {
                let message = match err {
                    WriteError::Exists => format!(
                        "`{}` (from `{}`) already exists; nothing replaced",
                        escape(name),
                        rule.shown
                    ),
                    err => format!(
                        "cannot write `{}` (from `{}`): {}",
                        escape(name),
                        rule.shown,
                        escape(&err.to_string())
                    ),
                };
                failed.get_or_insert(Error::input(message));
            }
            None => {}
        }
    }
    match failed {
        Some(err) => Err(err),
        None => {
            if voice.json {
                let json =
                    serde_json::to_string(&report).map_err(|e| Error::input(e.to_string()))?;
                output(writeln!(cx.out, "{json}"))?;
            }
            Ok(Exit::Success)
        }
    }
}

/// `--format json`'s object (`pi-rules docs import-json`).
#[derive(serde::Serialize)]
struct Report<'a> {
    /// The version of this form.
    format: u32,
    rules: Vec<JsonRule<'a>>,
    skipped: &'a [String],
    notes: Vec<JsonNote<'a>>,
}

/// A rule written.
#[derive(serde::Serialize)]
struct JsonRule<'a> {
    /// The source file, as given.
    source: &'a str,
    /// The rule file written.
    path: String,
    /// The nested directory it is for (`""`: the layer itself).
    dir: &'a str,
    /// Its `paths:` (empty: no scope).
    paths: &'a [String],
}

/// Something said of a source (`source` absent: of the import as a whole).
#[derive(serde::Serialize)]
struct JsonNote<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    level: &'a str,
    message: &'a str,
}

/// The rule directory `dir` (`""`: the layer itself), opened for writing, and its path.
fn open_dir(layers: &Layers, target: Layer, dir: &str, shown: &str) -> Result<(LayerDir, PathBuf)> {
    if dir.is_empty() {
        let path = layers.writable_dir(target)?;
        let opened = layers.open_layer(target).map_err(|e| {
            Error::input(format!(
                "cannot write to `{}`: {}",
                escape(&path.display().to_string()),
                escape(&format!("{e:#}"))
            ))
        })?;
        return Ok((opened, path));
    }
    let nested = layers.nested_dir(Path::new(dir))?;
    let opened = layers.open_nested(&nested).map_err(|e| {
        Error::input(format!(
            "cannot write to `{}` (for `{shown}`): {}",
            escape(&nested.rules.display().to_string()),
            escape(&format!("{e:#}"))
        ))
    })?;
    Ok((opened, nested.rules))
}

/// The files given, each directory replaced by the agent files below it, in name order.
fn expand(cx: &mut Context<'_>, voice: &mut Voice, given: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for arg in given {
        let is_dir = std::fs::symlink_metadata(arg).is_ok_and(|m| m.is_dir());
        if !is_dir {
            files.push(arg.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = Vec::new();
        let base = components(arg);
        let limits = walk::Limits {
            max_files: MAX_WALKED,
            max_depth: walk::MAX_DEPTH,
        };
        let walked = walk::walk(arg, limits, |relative| {
            let mut parts: Vec<&str> = base.iter().map(String::as_str).collect();
            parts.extend(relative.split('/'));
            if host::locate(&parts).is_some() {
                found.push(arg.join(relative));
            }
        });
        let source = arg.display().to_string();
        if walked.truncated {
            let message = format!("more than {MAX_WALKED} files; the rest are not looked at");
            voice.say(cx, "warning", &source, &message);
        }
        if found.is_empty() {
            voice.say(cx, "warning", &source, "no agent file below it");
        }
        found.sort();
        files.extend(found);
    }
    files
}

/// `file` relative to the project directory `project`, lexically (`file` relative to the
/// working directory `here`, or absolute); `None` when it is not below it.
fn relative_to(here: Option<&Path>, project: &Path, file: &Path) -> Option<PathBuf> {
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        here?.join(file)
    };
    normal(&absolute)
        .strip_prefix(normal(project))
        .ok()
        .map(Path::to_path_buf)
}

/// The plain components of a path, as text.
fn components(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}
