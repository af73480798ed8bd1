//! `pi-rules render`: `{{SETTINGS}}` substitution in an agent prompt.

use crate::invocation::Context;
use crate::invocation::ProjectArgs;
use crate::output::{note, write_file_text, Exit};
use crate::terminal::escape;
use anyhow::Context as _;
use pi_rules_core::lint::suggest;
use pi_rules_core::span::{self, LineCol};
use pi_rules_host::error::Result;
use pi_rules_host::files::bounded::{self, MAX_PROMPT_BYTES};
use pi_rules_host::session::Session;
use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Fill {{SETTINGS}} and {{SETTINGS:key,...}} in an agent prompt.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules render prompts/reviewer.md
  echo 'Config: {{SETTINGS:dco,commit_trailer}}' | pi-rules render -

A key that is not a settings key is left out of the object, as pi-config does, and named on
stderr with its line and column and a \"did you mean\"; the exit status stays 0. Keys without a
value are omitted. Prompts of up to 16 MiB are read.

On a pipe or into a file the prompt is printed exactly. On a terminal, what could drive it is
shown escaped, as `show` shows a rule (`\\x1b`, `\\r`, `\\u{202e}`, `\\xNN`; line breaks and
tabs stay); --raw prints the bytes on a terminal too.")]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// The prompt file; `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
    /// Print the bytes exactly on a terminal too (they always are on a pipe or into a file).
    #[arg(long)]
    pub raw: bool,
}

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let session = args.project.session(cx.env)?;
    let prompt = match &args.file {
        Some(path) if path.as_os_str() != "-" => read_prompt(path)?,
        _ => read_stdin()?,
    };
    let settings = cx.read_settings(&session).resolved.into_settings();
    let label = match &args.file {
        Some(path) if path.as_os_str() != "-" => escape(&path.display().to_string()).into_owned(),
        _ => "<stdin>".to_owned(),
    };
    let mut unknown = UnknownKeys::default();
    let text = pi_rules_core::render::render_noting(&prompt, &settings, &mut |at, key| {
        unknown.heard(cx.err, &session, (&label, &prompt), at, key);
    });
    unknown.finish(cx.err);
    // `render` runs only as a process of its own (`serve` renders without it), so its output is
    // the process's stdout.
    write_file_text(cx.out, cx.err, text.as_bytes(), args.raw)?;
    Ok(Exit::Success)
}

/// How many unknown keys are named one by one; the rest are counted in one line.
const MAX_NAMED: usize = 20;

/// The keys of `{{SETTINGS:…}}` placeholders that are not settings keys: each named once, at its
/// first place, with a "did you mean".
#[derive(Default)]
struct UnknownKeys {
    seen: HashSet<String>,
}

impl UnknownKeys {
    fn heard(
        &mut self,
        err: &mut dyn Write,
        session: &Session,
        (label, prompt): (&str, &str),
        at: usize,
        key: &str,
    ) {
        if self.seen.contains(key) {
            return;
        }
        self.seen.insert(key.to_owned());
        if self.seen.len() > MAX_NAMED {
            return;
        }
        let LineCol { line, column } = span::line_col(prompt, at);
        let hint = match suggest::closest(key, session.schema.names()) {
            Some(near) => format!("; did you mean `{near}`?"),
            None => "; `pi-rules schema` lists the keys".to_owned(),
        };
        note(
            err,
            format_args!(
                "pi-rules: warning: {label}:{line}:{column}: `{}` is not a settings key, so \
                 {{{{SETTINGS:…}}}} leaves it out{hint}",
                escape(key)
            ),
        );
    }

    fn finish(self, err: &mut dyn Write) {
        if let Some(more) = self.seen.len().checked_sub(MAX_NAMED).filter(|&n| n > 0) {
            note(
                err,
                format_args!(
                    "pi-rules: warning: {more} more keys in {{{{SETTINGS:…}}}} are not settings keys"
                ),
            );
        }
    }
}

fn read_prompt(path: &Path) -> Result<String> {
    let shown = escape(&path.display().to_string()).into_owned();
    match bounded::read_text(path, MAX_PROMPT_BYTES) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => pi_rules_host::bail!(
            "cannot read the prompt file `{shown}`: no such file; check the path, or pipe the \
             prompt on stdin"
        ),
        Err(reason) => pi_rules_host::bail!("cannot read the prompt file `{shown}`: {reason}"),
    }
}

fn read_stdin() -> Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_PROMPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the prompt from stdin")?;
    if bytes.len() as u64 > MAX_PROMPT_BYTES {
        pi_rules_host::bail!("the prompt on stdin is over the {MAX_PROMPT_BYTES}-byte limit");
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
