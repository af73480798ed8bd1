//! `pi-rules check`: lint the three layers and the settings files.

use crate::check::{self, CheckOptions, CheckStatus};
use crate::invocation::Context;
use crate::invocation::LayerArgs;
use crate::output::{output, Exit, UsageError};
use crate::report::Format;
use crate::session::Session;
use anyhow::Result;

/// Lint rules and settings files in all three layers.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules check
  pi-rules check --format sarif > pi-rules.sarif
  pi-rules check --explain unknown-setting-key   # or: --explain PR101

Exit code 0 when there are no errors, 1 when there are (or warnings, with --strict).")]
pub struct Args {
    #[command(flatten)]
    pub layers: LayerArgs,
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    pub format: CheckFormat,
    /// Fail on warnings too.
    #[arg(long)]
    pub strict: bool,
    /// Print the long description of a diagnostic code and exit.
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,
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
pub const FORMAT_VERSION: u32 = 1;

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    if let Some(code) = &args.explain {
        let Some(text) = check::explain_code(code) else {
            return Err(UsageError(format!(
                "`{}` is not a diagnostic code; codes look like `PR101` or `unknown-setting-key` \
                 (see `pi-rules check --help`)",
                crate::terminal::escape(code)
            ))
            .into());
        };
        output(writeln!(cx.out, "{}", text.trim_end()))?;
        return Ok(Exit::Success);
    }
    let session = Session::new(
        args.layers.project.cwd.clone(),
        args.layers.project.keys.as_deref(),
    )?;
    let package = session
        .layer_dirs(args.layers.package_dir.as_deref())
        .package;
    let options = CheckOptions {
        session: &session,
        package,
        format: Format::from(args.format),
        strict: args.strict,
        color: cx.color_out,
    };
    let report = check::check(&options)?;
    output(check::render(&report, &options, cx.out))?;
    Ok(match CheckStatus::of(&report, options.strict) {
        CheckStatus::Clean => Exit::Success,
        CheckStatus::Failed => Exit::Findings,
    })
}
