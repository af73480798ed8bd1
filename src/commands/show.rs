//! `pi-rules show`: one rule file byte for byte, the copy that wins or the one in a given layer;
//! on a terminal, with what could drive the terminal escaped.

use crate::invocation::{LayerName, OutputFormat, PlaceArgs};
use crate::output::{note, output, write_file_text, Exit, UsageError};
use crate::terminal::escape;
use pi_rules_host::bail;
use pi_rules_host::error::Result;
use pi_rules_host::loader::{Candidate, EscapingRule, Layer, Pick};
use serde::Serialize;
use std::path::PathBuf;

/// Print a rule file as it is on disk (or in the binary), frontmatter and markers included.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules show 40-critical-rules                  # the copy that wins
  pi-rules show critical-rules --layer package     # the shipped text, even when overridden
  pi-rules show 90-team.md --cwd ~/src/app
  pi-rules show handlers --dir packages/api        # packages/api/.pi/rules/90-handlers.md
  pi-rules show api-errors --format json           # the text and the scope, as JSON

NAME is a rule's file name, with or without `.md`, or the name without its numeric prefix when
only one rule has it. Nothing is assembled, so `{{IF:…}}` markers and the frontmatter are shown
as written. Embedded package rules come from the binary.

On a pipe or into a file the bytes are printed exactly. On a terminal, what could drive it is
shown escaped, as the other commands show text from files: escape sequences, BEL, backspace,
carriage returns, other control characters, C1 and bidirectional controls (`\\x1b`, `\\r`,
`\\u{202e}`), and bytes that are not UTF-8 (`\\xNN`); line breaks and tabs stay as they are, and a
note on stderr says how many were escaped. --raw prints the bytes on a terminal too.

A copy that is, or links to, a special file (`/proc/self/environ`, a device) or that resolves
outside the project is shown with a warning on stderr, as `assemble` warns; with --confine it is
refused as `assemble --confine` refuses it.

--dir DIR shows a rule of DIR/.pi/rules, a nested rule directory (the rules for the subtree DIR,
below the project directory; see `pi-rules new --help`).

A rule's scope is said on stderr (the file itself stays byte for byte on stdout): its `paths:`, its
`agents:`, and for a nested rule its directory. --format json prints one object: `name`, `layer`,
`path` (null for an embedded rule), `text` (the file's text, bytes that are not UTF-8 as U+FFFD)
and `scope`, with `paths`, `agents` and `dir` (the nested directory) each left out when the rule
has none.")]
pub struct Args {
    /// The rule: `40-critical-rules.md`, `40-critical-rules` or `critical-rules`.
    pub name: String,
    /// Show this layer's copy instead of the one that wins.
    #[arg(long, value_enum, value_name = "LAYER")]
    pub layer: Option<LayerName>,
    /// Print the bytes exactly on a terminal too (they always are on a pipe or into a file).
    #[arg(long)]
    pub raw: bool,
    /// Show the rule of DIR/.pi/rules, a nested rule directory below the project directory.
    #[arg(long, value_name = "DIR", conflicts_with = "layer")]
    pub dir: Option<PathBuf>,
    /// The output: the file (`text`), or one JSON object with its scope (`json`).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, value_name = "FORMAT")]
    pub format: OutputFormat,
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// `pi-rules show`.
pub fn run(args: &Args, cx: &mut crate::invocation::Context<'_>) -> Result<Exit> {
    let layers = args.place.read(cx.env)?;
    let (name, candidate, nested) = match &args.dir {
        Some(dir) => {
            let nested = layers.nested_dir(dir)?;
            let (name, candidate) = layers.find_nested(&nested, &args.name)?;
            (name, candidate, Some(nested))
        }
        None => {
            let report = layers.find(&args.name)?;
            let candidate = pick(args, cx, report, &report.name)?.clone();
            (report.name.clone(), candidate, None)
        }
    };
    let (name, candidate) = (name.as_str(), &candidate);
    let shown = escape(&candidate.display_path(name)).into_owned();
    let copy = match layers.read_copy(name, candidate) {
        Ok(copy) => copy,
        Err(unusable) => bail!("cannot show `{shown}`: {}", escape(&unusable.reason)),
    };
    if let Some(escaped) = copy.escape {
        // The loader's own words, as `assemble` prints them for the same file.
        let escaped = EscapingRule {
            name: name.to_owned(),
            candidate: candidate.clone(),
            escape: escaped,
            refused: false,
        };
        note(
            cx.err,
            format_args!("pi-rules: warning: {}", escape(&escaped.to_string())),
        );
    }
    if copy.masked {
        note(
            cx.err,
            format_args!(
                "pi-rules: note: `{shown}` is a link to an empty device: it masks the lower copies \
                 of `{}`; pass --layer to see one of them",
                escape(name)
            ),
        );
    }
    let text = String::from_utf8_lossy(&copy.bytes);
    let scope = Scope::of(
        &text,
        nested
            .as_ref()
            .map(|n| (n.dir.clone(), layers.session.cwd.join(&n.dir))),
    );
    if args.format == OutputFormat::Json {
        let json = ShowJson {
            name,
            layer: candidate.layer.as_str(),
            path: candidate.path.as_ref().map(|p| p.to_string_lossy()),
            text: &text,
            scope: ScopeJson {
                paths: &scope.paths,
                agents: &scope.agents,
                dir: scope.dir.as_ref().map(|(_, abs)| abs.to_string_lossy()),
            },
        };
        output(serde_json::to_writer(&mut *cx.out, &json).map_err(std::io::Error::from))?;
        output(writeln!(cx.out))?;
        return Ok(Exit::Success);
    }
    if let Some(said) = scope.describe() {
        note(
            cx.err,
            format_args!("pi-rules: note: `{}` is scoped: {said}", escape(name)),
        );
    }
    // `show` runs only as a process of its own, so its output is the process's stdout.
    write_file_text(cx.out, cx.err, &copy.bytes, args.raw)?;
    Ok(Exit::Success)
}

/// The copy of the rule `report` that `show` prints: the one of --layer, or the one that wins.
fn pick<'r>(
    args: &Args,
    cx: &mut crate::invocation::Context<'_>,
    report: &'r pi_rules_host::loader::NameReport,
    name: &str,
) -> Result<&'r Candidate> {
    let candidate = match args.layer {
        Some(layer) => {
            let layer = Layer::from(layer);
            match report.candidates.iter().find(|c| c.layer == layer) {
                Some(candidate) => candidate,
                None => {
                    let present: Vec<&str> =
                        report.candidates.iter().map(|c| c.layer.as_str()).collect();
                    return Err(UsageError(format!(
                        "`{}` has no copy in the {} layer; it is in the {} layer",
                        escape(name),
                        layer.as_str(),
                        present.join(" and ")
                    ))
                    .into());
                }
            }
        }
        None => match &report.outcome {
            Pick::Taken {
                winner,
                fell_back_from,
                ..
            } => {
                for failure in fell_back_from {
                    note(
                        cx.err,
                        format_args!(
                            "pi-rules: note: the {} copy `{}` cannot be used ({}); showing the {} copy, which wins",
                            failure.candidate.layer.as_str(),
                            escape(&failure.candidate.display_path(name)),
                            escape(&failure.reason.to_string()),
                            winner.layer.as_str()
                        ),
                    );
                }
                winner
            }
            Pick::Oversized { winner, .. } => winner,
            Pick::Unreadable { failures } => {
                let reasons: Vec<String> = failures
                    .iter()
                    .map(|f| {
                        format!(
                            "`{}`: {}",
                            escape(&f.candidate.display_path(name)),
                            escape(&f.reason.to_string())
                        )
                    })
                    .collect();
                bail!(
                    "no copy of `{}` can be read: {}",
                    escape(name),
                    reasons.join("; ")
                );
            }
        },
    };
    Ok(candidate)
}

/// A rule's scope, as `show` says it.
struct Scope {
    paths: Vec<String>,
    agents: Vec<String>,
    /// The nested directory: as given (relative to the project directory), and absolute.
    dir: Option<(PathBuf, PathBuf)>,
}

impl Scope {
    fn of(text: &str, dir: Option<(PathBuf, PathBuf)>) -> Scope {
        let (paths, agents) = pi_rules_host::scoped::scope_lists(text);
        Scope { paths, agents, dir }
    }

    /// `paths `a`, `b`; agents `claude`; directory `packages/api``, escaped; `None` when the
    /// rule has no scope.
    fn describe(&self) -> Option<String> {
        let list = |items: &[String]| {
            items
                .iter()
                .map(|i| format!("`{}`", escape(i)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !self.paths.is_empty() {
            parts.push(format!("paths {}", list(&self.paths)));
        }
        if !self.agents.is_empty() {
            parts.push(format!("agents {}", list(&self.agents)));
        }
        if let Some((dir, _)) = &self.dir {
            parts.push(format!(
                "directory `{}` (a nested rule: for files under it)",
                escape(&dir.display().to_string())
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// `show --format json`.
#[derive(Serialize)]
struct ShowJson<'a> {
    name: &'a str,
    layer: &'a str,
    path: Option<std::borrow::Cow<'a, str>>,
    text: &'a str,
    scope: ScopeJson<'a>,
}

/// The scope object: a field the rule does not have is left out.
#[derive(Serialize)]
struct ScopeJson<'a> {
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    paths: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    agents: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    dir: Option<std::borrow::Cow<'a, str>>,
}
