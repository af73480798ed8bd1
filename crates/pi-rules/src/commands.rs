//! The commands behind `pi-rules assemble`, `settings`, `render`, `explain`, `check` and `eval`,
//! and their exit codes.

use crate::eval;
use crate::loader::{self, Candidate, Loaded, NameReport, Outcome};
use crate::session::{self, Session, FALLBACK_BLOCK};
use crate::{check, report};
use anyhow::{Context, Result};
use pi_rules_core::settings::Source;
use pi_rules_core::{assemble as engine, Assembly, Features, Scope, Value};
use serde_json::{json, Value as Json};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Flags shared by the commands that read the rule layers.
#[derive(Debug, Clone, Default)]
pub struct Common {
    pub cwd: Option<PathBuf>,
    pub package_dir: Option<PathBuf>,
    pub coms_active: bool,
    pub keys: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
}

/// How a command ended, as an exit code (documented in `--help` and the README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: success.
    Success = 0,
    /// 1: `check` found errors (or warnings, with `--strict`).
    Findings = 1,
    /// 2: usage error (clap reports these itself).
    Usage = 2,
    /// 3: an input could not be read or used.
    Input = 3,
    /// 4: the output could not be written.
    Output = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}

/// A write to stdout failed: exit code 4 rather than 3.
#[derive(Debug)]
struct OutputError(io::Error);

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write the output: {}", self.0)
    }
}

impl std::error::Error for OutputError {}

/// Wraps an output failure so that [`exit_for`] maps it to [`Exit::Output`].
pub(crate) fn output(result: io::Result<()>) -> Result<()> {
    result.map_err(|e| OutputError(e).into())
}

/// The exit code for a failed command.
pub fn exit_for(err: &anyhow::Error) -> Exit {
    if err.downcast_ref::<OutputError>().is_some() {
        Exit::Output
    } else {
        Exit::Input
    }
}

/// Everything one assembly produced, for `assemble` and `explain`.
pub struct Run {
    pub session: Session,
    pub loaded: Option<Loaded>,
    pub resolved: pi_rules_core::settings::Resolved,
    /// The feature predicates the assembly saw.
    pub features: Features,
    /// What `{{REVIEW_LOOP_MAX_CYCLES}}` became.
    pub review_loop_max_cycles: String,
    pub block: String,
    pub assembly: Option<Assembly>,
    pub read_micros: u128,
    pub assemble_micros: u128,
}

/// Reads the layers and settings and assembles, reporting decisions to `observer`.
pub fn run_assembly<O: pi_rules_core::Observer>(common: &Common, observer: &mut O) -> Result<Run> {
    let session = Session::new(common.cwd.clone(), common.keys.as_deref())?;
    let started = Instant::now();
    let resolved = session.resolve();
    let settings = resolved.to_settings();
    let features = session::features(common.coms_active, &resolved);
    let review_loop_max_cycles = session::review_loop_max_cycles(&settings);
    if Session::is_subagent() {
        return Ok(Run {
            session,
            loaded: None,
            resolved,
            features,
            review_loop_max_cycles,
            block: String::new(),
            assembly: None,
            read_micros: started.elapsed().as_micros(),
            assemble_micros: 0,
        });
    }
    let loaded = loader::load(&session.layer_dirs(common.package_dir.as_deref()));
    let read_micros = started.elapsed().as_micros();
    let started = Instant::now();
    let (block, assembly) = if loaded.fallback {
        (FALLBACK_BLOCK.to_owned(), None)
    } else {
        let scope = Scope {
            settings: &settings,
            features: &features,
            review_loop_max_cycles: &review_loop_max_cycles,
        };
        let texts: Vec<&str> = loaded.files.iter().map(|f| f.text.as_str()).collect();
        let assembly = engine::assemble_observed(&texts, &scope, observer);
        (format!("\n\n{}", assembly.text), Some(assembly))
    };
    Ok(Run {
        session,
        loaded: Some(loaded),
        resolved,
        features,
        review_loop_max_cycles,
        block,
        assembly,
        read_micros,
        assemble_micros: started.elapsed().as_micros(),
    })
}

/// `pi-rules assemble`.
pub fn assemble(common: &Common, format: OutputFormat, out: &mut dyn Write) -> Result<Exit> {
    let run = run_assembly(common, &mut ())?;
    let warnings: Vec<String> = run
        .assembly
        .iter()
        .flat_map(|a| a.warnings.iter().map(|w| w.to_string()))
        .collect();
    match format {
        OutputFormat::Text => {
            for warning in &warnings {
                eprintln!("rule assembly: {warning}");
            }
            let text = run.block.strip_prefix("\n\n").unwrap_or(&run.block);
            output(out.write_all(text.as_bytes()))?;
        }
        OutputFormat::Json => {
            let files = run.loaded.as_ref().map_or_else(Vec::new, |loaded| {
                file_reports(loaded, run.assembly.as_ref())
            });
            let loaded_files = run.loaded.as_ref().map_or(0, |l| l.files.len());
            let bytes: usize = run
                .loaded
                .as_ref()
                .map_or(0, |l| l.files.iter().map(|f| f.text.len()).sum());
            let notes = run.loaded.as_ref().map_or(&[][..], |l| &l.notes[..]);
            let value = json!({
                "block": run.block,
                "warnings": warnings,
                "files": files,
                "notes": notes,
                "stats": {
                    "files": loaded_files,
                    "bytes": bytes,
                    "read_us": run.read_micros,
                    "assemble_us": run.assemble_micros,
                },
            });
            output(writeln!(out, "{value}"))?;
        }
    }
    Ok(Exit::Success)
}

/// One file name and where it stands in the assembly.
pub struct NameEntry<'a> {
    pub report: &'a NameReport,
    /// Its index among the taken files (and so in the assembly's input), when it was taken.
    pub file: Option<usize>,
    /// Whether its frontmatter gate let it in, when it was assembled.
    pub included: Option<bool>,
}

impl<'a> NameEntry<'a> {
    /// The copies other than the winner, highest precedence first.
    pub fn shadowed(&self) -> impl Iterator<Item = &'a Candidate> {
        let winner = self.report.winner();
        self.report
            .candidates
            .iter()
            .filter(move |c| Some(*c) != winner)
    }

    /// The status after loading and gating.
    pub fn status(&self) -> &'static str {
        match &self.report.outcome {
            Outcome::Oversized { .. } => "oversized",
            Outcome::Unreadable { .. } => "unreadable",
            Outcome::Taken { masked: true, .. } => "masked",
            Outcome::Taken { .. } if self.included == Some(false) => "gated",
            Outcome::Taken { fell_back_from, .. } if !fell_back_from.is_empty() => {
                "unreadable-fell-back"
            }
            Outcome::Taken { .. } => "included",
        }
    }
}

/// Every file name in assembly order, matched with its taken file and gate result.
pub fn name_entries<'a>(
    loaded: &'a Loaded,
    assembly: Option<&'a Assembly>,
) -> impl Iterator<Item = NameEntry<'a>> {
    let mut taken = 0;
    loaded.names.iter().map(move |report| {
        let file = report.is_taken().then(|| {
            taken += 1;
            taken - 1
        });
        let included = file.and_then(|i| assembly?.included.get(i).copied());
        NameEntry {
            report,
            file,
            included,
        }
    })
}

/// Per file name, in assembly order: winning layer and path, status, shadowed paths.
fn file_reports(loaded: &Loaded, assembly: Option<&Assembly>) -> Vec<Json> {
    name_entries(loaded, assembly)
        .map(|entry| {
            let name = &entry.report.name;
            let winner = entry.report.winner();
            let shadowed: Vec<String> = entry.shadowed().map(|c| c.display_path(name)).collect();
            json!({
                "name": name,
                "layer": winner.map(|w| w.layer.as_str()),
                "path": winner.map(|w| w.display_path(name)),
                "status": entry.status(),
                "shadowed": shadowed,
            })
        })
        .collect()
}

/// `pi-rules settings`.
pub fn settings(
    cwd: Option<PathBuf>,
    keys: Option<PathBuf>,
    only: &[String],
    format: OutputFormat,
    out: &mut dyn Write,
) -> Result<Exit> {
    let session = Session::new(cwd, keys.as_deref())?;
    let resolved = session.resolve();
    let rows: Vec<(String, Value, Option<Source>)> = if only.is_empty() {
        resolved
            .iter()
            .map(|(k, v)| (k.to_owned(), v.value.clone(), Some(v.source.clone())))
            .collect()
    } else {
        only.iter()
            .map(|k| match resolved.get(k) {
                Some(v) => (k.clone(), v.value.clone(), Some(v.source.clone())),
                None => (k.clone(), resolved.resolve_key(k).clone(), None),
            })
            .collect()
    };
    match format {
        OutputFormat::Json => {
            let mut object = pi_rules_core::Object::new();
            for (key, value, _) in rows {
                object.insert(key, value);
            }
            let text = Value::Object(object).to_json().unwrap_or_default();
            output(writeln!(out, "{text}"))?;
        }
        OutputFormat::Text => {
            let cells: Vec<(String, String, String)> = rows
                .into_iter()
                .map(|(key, value, source)| {
                    let shown = value.to_json().unwrap_or_else(|| "undefined".into());
                    let source =
                        source.map_or_else(|| "unknown key".to_owned(), |s| source_label(&s));
                    (key, shown, source)
                })
                .collect();
            let key_width = cells.iter().map(|c| c.0.len()).max().unwrap_or(3).max(3);
            let value_width = cells
                .iter()
                .map(|c| c.1.chars().count())
                .max()
                .unwrap_or(5)
                .clamp(5, 40);
            let mut text = format!("{:key_width$}  {:value_width$}  SOURCE\n", "KEY", "VALUE");
            for (key, value, source) in cells {
                text.push_str(&format!(
                    "{key:key_width$}  {value:value_width$}  {source}\n"
                ));
            }
            output(out.write_all(text.as_bytes()))?;
        }
    }
    Ok(Exit::Success)
}

/// A short label for a value's source, for tables.
pub fn source_label(source: &Source) -> String {
    match source {
        Source::ProjectFile => "project file".to_owned(),
        Source::GlobalFile => "global file".to_owned(),
        Source::Env(name) => format!("env {name}"),
        Source::Default => "default".to_owned(),
        Source::Fallback => "no rule".to_owned(),
    }
}

/// `pi-rules render`.
pub fn render(
    cwd: Option<PathBuf>,
    keys: Option<PathBuf>,
    file: Option<PathBuf>,
    out: &mut dyn Write,
) -> Result<Exit> {
    let session = Session::new(cwd, keys.as_deref())?;
    let prompt = match &file {
        Some(path) => read_prompt(path)?,
        None => {
            let mut bytes = Vec::new();
            io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read the prompt from stdin")?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    let settings = session.resolve().to_settings();
    let text = pi_rules_core::render::render(&prompt, &settings);
    output(out.write_all(text.as_bytes()))?;
    Ok(Exit::Success)
}

fn read_prompt(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read the prompt file `{}`; check the path, or pipe the prompt on stdin",
            path.display()
        )
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `pi-rules explain`.
pub fn explain(common: &Common, format: OutputFormat, out: &mut dyn Write) -> Result<Exit> {
    crate::explain::run(common, format, out)
}

/// `pi-rules check`, or `check --explain CODE`.
pub fn check(
    common: &Common,
    format: report::Format,
    strict: bool,
    explain: Option<&str>,
    out: &mut dyn Write,
) -> Result<Exit> {
    if let Some(code) = explain {
        return match check::explain_code(code) {
            Some(text) => {
                output(writeln!(out, "{}", text.trim_end()))?;
                Ok(Exit::Success)
            }
            None => {
                eprintln!(
                    "pi-rules: error: `{code}` is not a diagnostic code; codes look like `PR101` \
                     or `unknown-setting-key` (see `pi-rules check --help`)"
                );
                Ok(Exit::Usage)
            }
        };
    }
    let session = Session::new(common.cwd.clone(), common.keys.as_deref())?;
    let package = session.layer_dirs(common.package_dir.as_deref()).package;
    let options = check::CheckOptions {
        session: &session,
        package,
        format,
        strict,
        color: check::ColorChoice::Auto,
    };
    Ok(match check::run_check(&options, out)? {
        check::CheckStatus::Clean => Exit::Success,
        check::CheckStatus::Failed => Exit::Findings,
    })
}

/// `pi-rules eval`.
pub fn eval(out: &mut dyn Write) -> Result<Exit> {
    let stdin = io::stdin();
    output(eval::serve(stdin.lock(), out))?;
    Ok(Exit::Success)
}
