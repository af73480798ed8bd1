//! `pi-rules render`: `{{SETTINGS}}` substitution in an agent prompt.

use crate::bounded::{self, MAX_PROMPT_BYTES};
use crate::invocation::Context;
use crate::invocation::ProjectArgs;
use crate::output::{output, Exit};
use crate::session::Session;
use crate::terminal::escape;
use anyhow::{Context as _, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Fill {{SETTINGS}} and {{SETTINGS:key,...}} in an agent prompt.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules render prompts/reviewer.md
  echo 'Config: {{SETTINGS:dco,commit_trailer}}' | pi-rules render -

Unknown keys are dropped silently; keys without a value are omitted. Prompts of up to 16 MiB are
read.")]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// The prompt file; `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
}

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let session = Session::new(args.project.cwd.clone(), args.project.keys.as_deref())?;
    let prompt = match &args.file {
        Some(path) if path.as_os_str() != "-" => read_prompt(path)?,
        _ => read_stdin()?,
    };
    let settings = cx.settings.resolve(&session, cx.err).into_settings();
    let text = pi_rules_core::render::render(&prompt, &settings);
    output(cx.out.write_all(text.as_bytes()))?;
    Ok(Exit::Success)
}

fn read_prompt(path: &Path) -> Result<String> {
    let shown = escape(&path.display().to_string()).into_owned();
    match bounded::read_text(path, MAX_PROMPT_BYTES) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => anyhow::bail!(
            "cannot read the prompt file `{shown}`: no such file; check the path, or pipe the \
             prompt on stdin"
        ),
        Err(reason) => anyhow::bail!("cannot read the prompt file `{shown}`: {reason}"),
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
        anyhow::bail!("the prompt on stdin is over the {MAX_PROMPT_BYTES}-byte limit");
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
