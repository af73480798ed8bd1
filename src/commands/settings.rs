//! `pi-rules settings`: resolved settings with the source of each value.

use crate::invocation::Context;
use crate::invocation::{OutputFormat, ProjectArgs};
use crate::output::{note, output, Exit};
use crate::report::settings as print;
use crate::terminal::{escape, escape_truncated};
use pi_rules_core::lint::suggest;
use pi_rules_host::error::Result;

/// The widest value column before values are cut.
const MAX_VALUE_CHARS: usize = 60;

/// Show resolved settings with the source of each value.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules settings                        # table of key, value, source
  pi-rules settings dco review_loop_max_cycles
  pi-rules settings --format json          # key -> value, in schema order

Sources, highest first: <repo root>/.pi/pi-config-settings.jsonc (or .json), then
$HOME/.pi/pi-config-settings.jsonc (or .json), then the key's environment variable, then the
schema default.

A KEY that is not a settings key is printed as `false` (what a condition on it reads), with a
\"did you mean\" on stderr, and the exit status is 2.")]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Keys to show (default: all).
    #[arg(value_name = "KEY")]
    pub only: Vec<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

/// The version of the JSON form, documented in `docs/settings-json.md` (the object itself is the
/// reference's plain key → value shape, so the version is not a field of it).
pub use crate::report::settings::FORMAT_VERSION;

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let session = args.project.session(cx.env)?;
    let resolved = cx.read_settings(&session).resolved;
    let mut unknown = false;
    for key in args.only.iter().filter(|k| resolved.get(k).is_none()) {
        unknown = true;
        let hint = match suggest::closest(key, session.schema.names()) {
            Some(near) => format!("; did you mean `{near}`?"),
            None => "; `pi-rules schema` lists the keys".to_owned(),
        };
        note(
            cx.err,
            format_args!(
                "pi-rules: error: `{}` is not a settings key (a condition on it reads false){hint}",
                escape(key)
            ),
        );
    }
    let rows = print::rows(&resolved, &args.only);
    match args.format {
        OutputFormat::Json => output(print::write_json(rows, cx.out))?,
        OutputFormat::Text => {
            let cells: Vec<(String, String, String)> = rows
                .into_iter()
                .map(|(key, value, source)| {
                    let shown = value.to_json().unwrap_or_else(|| "undefined".into());
                    let source = source.map_or_else(
                        || "not a settings key".to_owned(),
                        |s| escape(&session.source_label(&s)).into_owned(),
                    );
                    (
                        escape(key).into_owned(),
                        escape_truncated(&shown, MAX_VALUE_CHARS).into_owned(),
                        source,
                    )
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
            output(cx.out.write_all(text.as_bytes()))?;
        }
    }
    // The keys asked for are all printed (an unknown one as `false`, what a condition on it
    // reads), and a misspelt key is still a usage error: a script must learn of it.
    Ok(if unknown { Exit::Usage } else { Exit::Success })
}
