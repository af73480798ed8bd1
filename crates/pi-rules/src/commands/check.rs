//! `pi-rules check`: lint the three layers and the settings files.

use crate::check::{self, CheckOptions, CheckStatus};
use crate::fix;
use crate::invocation::Context;
use crate::invocation::LayerArgs;
use crate::output::{note, output, Exit, UsageError};
use crate::report::Format;
use crate::session::Session;
use anyhow::Result;
use pi_rules_core::lint::{self, CodeInfo, CODES};

/// Lint rules and settings files in all three layers.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules check
  pi-rules check --format sarif > pi-rules.sarif
  pi-rules check --fix --dry-run                 # the repairs --fix would make, as a diff
  pi-rules check --fix                           # make them, then check again
  pi-rules check --explain unknown-setting-key   # or: --explain PR101
  pi-rules check --list-codes --format json

--fix repairs only what cannot change the meaning: a misspelt key with a single close match, a
marker or placeholder with the wrong case or spacing, white space after a frontmatter fence. It
rewrites files of the user and project layers only (atomically), never the package layer or a
file reached through a link that leaves its layer, and reports what remains.

Exit code 0 when there are no errors, 1 when there are (or warnings, with --strict).")]
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
}

impl From<CheckFormat> for Format {
    fn from(format: CheckFormat) -> Format {
        match format {
            CheckFormat::Human => Format::Human,
            CheckFormat::Short => Format::Short,
            CheckFormat::Json => Format::Json,
            CheckFormat::Sarif => Format::Sarif,
        }
    }
}

/// The version of the JSON form, documented in `docs/check-json.md`.
pub use crate::report::JSON_FORMAT_VERSION as FORMAT_VERSION;

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
            return Err(UsageError(format!(
                "`{}` is not a diagnostic code; codes look like `PR101` or `unknown-setting-key` \
                 (`pi-rules check --list-codes` lists them)",
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
    let session = Session::new(
        args.layers.project.cwd.clone(),
        args.layers.project.keys.as_deref(),
    )?;
    let package = session
        .layer_dirs(args.layers.package_dir.as_deref())
        .package;
    session.note_unread_root_rules(cx.err);
    let options = CheckOptions {
        session: &session,
        package,
        format: Format::from(args.format),
        strict: args.strict,
        color: cx.color_out(),
    };
    if args.fix {
        let plan = fix::plan(&options)?;
        for refusal in &plan.refused {
            note(
                cx.err,
                format_args!(
                    "pi-rules: not fixed: `{}`: {}",
                    crate::terminal::escape(&refusal.path),
                    refusal.reason
                ),
            );
        }
        if args.dry_run {
            let paint = crate::terminal::Paint { on: cx.color_out() };
            output(fix::write_diff(&plan, cx.out, paint))?;
            return Ok(Exit::Success);
        }
        let failed = fix::apply(&plan);
        for file in &plan.files {
            match failed.iter().find(|(path, _)| *path == file.path) {
                Some((_, err)) => note(
                    cx.err,
                    format_args!(
                        "pi-rules: not fixed: `{}`: {err}",
                        crate::terminal::escape(&file.path)
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
    let report = check::check(&options)?;
    output(check::render(&report, &options, cx.out))?;
    let exit = match CheckStatus::of(&report, options.strict) {
        CheckStatus::Clean => Exit::Success,
        CheckStatus::Failed => Exit::Findings,
    };
    // As `explain` does: the texts and findings of a large layer are not freed one by one
    // just before exiting.
    cx.release(report);
    Ok(exit)
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
