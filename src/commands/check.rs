//! `pi-rules check`: lint the three layers and the settings files.

use crate::invocation::Context;
use crate::invocation::LayerArgs;
use crate::output::{note, output, write_notes, Exit, UsageError};
use crate::report::check::{CheckRun, Format};
use pi_rules_core::lint::{self, CodeInfo, CODES};
use pi_rules_host::check::{self, CheckOptions, CheckStatus};
use pi_rules_host::error::Result;
use pi_rules_host::fix;
use pi_rules_host::notes::Note;
use std::io::IsTerminal as _;

/// Lint rules and settings files in all three layers.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules check
  pi-rules check --format sarif > pi-rules.sarif
  pi-rules check --format github                 # annotations in a GitHub Actions job
  pi-rules check --fix --dry-run                 # the repairs --fix would make, as a diff
  pi-rules check --fix                           # make them, then check again
  pi-rules check --explain unknown-setting-key   # or: --explain PR101
  pi-rules check --list-codes --format json

--fix repairs only what cannot change the meaning: a misspelt key with a single close match, a
marker or placeholder with the wrong case or spacing, white space after a frontmatter fence. It
rewrites files of the user and project layers only (atomically), never the package layer, a
file reached through a link that leaves its layer, or a layer whose directory (or a directory
above it) leads out of the project or $HOME, and reports what remains. --dry-run prints the
changes as a unified diff that `git apply` and `patch -p1` accept, run from the directory
pi-rules ran in; on a terminal, control characters in it are shown escaped.

Exit code 0 when there are no errors, 1 when there are (or warnings, with --strict). With --fix,
exit code 3 when a fix could not be written: the file system refused it (read-only, full), the
file changed meanwhile, or the file or its layer leads out of where it belongs (with --dry-run,
when such a fix would be refused); the fixes that could be written are kept, and the check's
report is still printed.")]
pub struct Args {
    #[command(flatten)]
    pub layers: LayerArgs,
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    pub format: CheckFormat,
    /// Fail on warnings too.
    #[arg(long)]
    pub strict: bool,
    /// Print the long description of a diagnostic code and exit (as JSON with `--format json`).
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,
    /// List every diagnostic code and exit (as JSON with `--format json`).
    #[arg(long, conflicts_with_all = ["explain", "fix"])]
    pub list_codes: bool,
    /// Apply the fixes that cannot change the meaning, then check again.
    #[arg(long, conflicts_with = "explain")]
    pub fix: bool,
    /// With `--fix`: print the changes as a unified diff and write nothing.
    #[arg(long, requires = "fix")]
    pub dry_run: bool,
}

/// `--format` of `check`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckFormat {
    /// Each finding with its source lines and carets.
    #[default]
    Human,
    /// One line per finding: `path:line:col: severity[CODE]: message`.
    Short,
    /// One JSON object.
    Json,
    /// SARIF 2.1.0, for CI annotations.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=...::message`), one per finding: each
    /// an annotation on its lines.
    Github,
}

impl From<CheckFormat> for Format {
    fn from(format: CheckFormat) -> Format {
        match format {
            CheckFormat::Human => Format::Human,
            CheckFormat::Short => Format::Short,
            CheckFormat::Json => Format::Json,
            CheckFormat::Sarif => Format::Sarif,
            CheckFormat::Github => Format::Github,
        }
    }
}

/// The version of the JSON form, documented in `docs/check-json.md`.
pub use crate::report::check::JSON_FORMAT_VERSION as FORMAT_VERSION;

/// One code as `--list-codes` and `--explain --format json` show it.
fn code_json(info: &CodeInfo) -> serde_json::Value {
    serde_json::json!({
        "id": info.id,
        "name": info.name,
        "severity": info.severity.as_str(),
        "summary": info.summary,
        "explanation": info.explanation,
    })
}

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let json = args.format == CheckFormat::Json;
    if let Some(code) = &args.explain {
        let Some(info) = lint::lookup(code) else {
            let near = near_code(code.trim());
            let hint = match near {
                Some((near, true)) => format!("did you mean `{}` ({})?", near.id, near.name),
                Some((near, false)) => format!("did you mean `{}` ({})?", near.name, near.id),
                None => "codes look like `PR101` or `unknown-setting-key` (`pi-rules check \
                         --list-codes` lists them)"
                    .to_owned(),
            };
            return Err(UsageError(format!(
                "`{}` is not a diagnostic code; {hint}",
                crate::terminal::escape(code)
            ))
            .into());
        };
        if json {
            output(writeln!(cx.out, "{}", code_json(info)))?;
        } else {
            output(writeln!(cx.out, "{}", info.explanation.trim_end()))?;
        }
        return Ok(Exit::Success);
    }
    if args.list_codes {
        if json {
            let codes: Vec<serde_json::Value> = CODES.iter().map(code_json).collect();
            output(writeln!(cx.out, "{}", serde_json::Value::Array(codes)))?;
        } else {
            for info in CODES {
                output(writeln!(
                    cx.out,
                    "{}  {:<7}  {:<30}  {}",
                    info.id,
                    info.severity.as_str(),
                    info.name,
                    info.summary
                ))?;
            }
        }
        return Ok(Exit::Success);
    }
    let session = args.layers.project.session(cx.env)?;
    let package = session
        .layer_dirs(args.layers.package_dir.as_deref())
        .package;
    if let Some(text) = session.unread_root_rules_note() {
        write_notes(cx.err, &[Note::info(text)]);
    }
    let options = CheckOptions {
        session: &session,
        package,
        strict: args.strict,
    };
    let shown = CheckRun {
        check: options,
        format: Format::from(args.format),
        color: cx.color_out(),
    };
    let options = &shown.check;
    // With `--fix`: whether a fix could not be written (exit 3).
    let mut unwritten = false;
    if args.fix {
        let plan = fix::plan(options)?;
        unwritten = plan.refused.iter().any(|r| r.unsafe_place);
        for refusal in &plan.refused {
            note(
                cx.err,
                format_args!(
                    "pi-rules: not fixed: `{}`: {}",
                    crate::terminal::escape(&refusal.path),
                    crate::terminal::escape(&refusal.reason)
                ),
            );
        }
        if args.dry_run {
            let paint = crate::terminal::Paint { on: cx.color_out() };
            let raw = !std::io::stdout().is_terminal();
            output(crate::unified_diff::write_plan(&plan, cx.out, paint, raw))?;
            return Ok(if unwritten {
                Exit::Input
            } else {
                Exit::Success
            });
        }
        let failed = fix::apply(&plan);
        // The check below reads what was written: nothing known of the files before holds.
        options.session.files().forget_all();
        unwritten |= !failed.is_empty();
        for file in &plan.files {
            match failed.iter().find(|(path, _)| *path == file.path) {
                Some((_, err)) => note(
                    cx.err,
                    format_args!(
                        "pi-rules: not fixed: `{}`: {}",
                        crate::terminal::escape(&file.path),
                        crate::terminal::escape(&err.to_string())
                    ),
                ),
                None => note(
                    cx.err,
                    format_args!(
                        "pi-rules: fixed {} in `{}`",
                        plural(file.fixed, "finding"),
                        crate::terminal::escape(&file.path)
                    ),
                ),
            }
        }
    }
    let report = check::check(options)?;
    output(shown.render(&report, cx.out))?;
    let exit = match CheckStatus::of(&report, options.strict) {
        _ if unwritten => Exit::Input,
        CheckStatus::Clean => Exit::Success,
        CheckStatus::Failed => Exit::Findings,
    };
    // As `explain` does: the texts and findings of a large layer are not freed one by one
    // just before exiting.
    cx.release(report);
    Ok(exit)
}

/// The code closest to `word`, for "did you mean": by name (`unknown-setting-kye`), or by
/// number (`PR10`), where only one character may differ: two digits off is another code, not a
/// typo. With whether it was found by number.
fn near_code(word: &str) -> Option<(&'static CodeInfo, bool)> {
    let upper = word.to_ascii_uppercase();
    let numbered = upper.len() > 2
        && upper.starts_with("PR")
        && upper[2..].bytes().any(|b| b.is_ascii_digit());
    if numbered {
        let wanted: Vec<char> = upper.chars().collect();
        let id = lint::suggest::closest(&upper, CODES.iter().map(|info| info.id))?;
        let id_chars: Vec<char> = id.chars().collect();
        lint::suggest::distance(&wanted, &id_chars, 1)?;
        return lint::lookup(id).map(|info| (info, true));
    }
    lint::suggest::closest(word, CODES.iter().map(|info| info.name))
        .and_then(lint::lookup)
        .map(|info| (info, false))
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
