//! `pi-rules render`: `{{SETTINGS}}` substitution in an agent prompt.

use crate::invocation::Context;
use crate::invocation::ProjectArgs;
use crate::output::{output, Exit};
use crate::session::Session;
use anyhow::{Context as _, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Fill {{SETTINGS}} and {{SETTINGS:key,...}} in an agent prompt.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Examples:
  pi-rules render prompts/reviewer.md
  echo 'Config: {{SETTINGS:dco,commit_trailer}}' | pi-rules render

Unknown keys are dropped silently; keys without a value are omitted.")]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// The prompt file (default: stdin).
    pub file: Option<PathBuf>,
}

pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let session = Session::new(args.project.cwd.clone(), args.project.keys.as_deref())?;
    let prompt = match &args.file {
        Some(path) => read_prompt(path)?,
        None => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read the prompt from stdin")?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    let settings = cx.settings.resolve(&session).to_settings();
    let text = pi_rules_core::render::render(&prompt, &settings);
    output(cx.out.write_all(text.as_bytes()))?;
    Ok(Exit::Success)
}

fn read_prompt(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read the prompt file `{}`; check the path, or pipe the prompt on stdin",
            crate::terminal::escape(&path.display().to_string())
        )
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
