//! `pi-rules new`: a new rule file from a short template, named with the next free prefix of its
//! layer's range.

use crate::invocation::Context;
use crate::invocation::{PlaceArgs, TargetArgs};
use crate::output::{note, output, Exit, UsageError};
use crate::terminal::{escape, is_unsafe};
use pi_rules_core::rule_scope;
use pi_rules_host::authoring::{
    name_without_prefix, next_free, prefix_of, scope_header, split_globs, Layers,
};
use pi_rules_host::bail;
use pi_rules_host::error::Result;
use pi_rules_host::loader::{is_rule_name, Layer, NameReport};
use pi_rules_host::writing::{LayerDir, WriteError};
use std::path::{Path, PathBuf};

/// Create a rule file from a template, with the next free prefix of the layer's range.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules new team-conventions --user      # ~/.pi/agent/rules/70-team-conventions.md
  pi-rules new release-checklist --project  # .pi/rules/90-release-checklist.md
  pi-rules new 95-deploy.md --project       # a name with a prefix is used as given
  pi-rules new api-errors --project --paths \"src/api/**, **/*.sql\"
  pi-rules new handlers --dir packages/api  # packages/api/.pi/rules/90-handlers.md

Rules are read in file-name order, so the two-digit prefix places the rule: package rules use
00-69, user rules 70-89 and project rules 90-99. Without a prefix in NAME, the rule gets the
prefix after the highest one in use in the layer's range (or the lowest free one when that is
the last). The template passes `pi-rules check --strict`; the path written is printed on stdout.

A rule's scope: --paths takes gitignore-style globs, comma-separated (`src/api/**, **/*.sql`),
relative to the rule's directory (the project directory for --project), and writes them as the
rule's `paths:` frontmatter; --agents (`claude,cursor`) writes `agents:`, the agents the rule is
for (`pi` is pi). pi honours both when `[rules] scoped = true` is in .pi/pi-rules.toml; until
then pi reads every rule everywhere, as pi-config does. `export` honours them always.
`pi-rules docs scopes` says how globs match.

--dir DIR creates the rule in DIR/.pi/rules, a nested rule directory (DIR is a directory below the
project directory, e.g. `packages/api`). Its rules are for that subtree: they apply to files under
DIR, their own `paths:` are relative to DIR, and a rule there with the name of a root rule
replaces that rule for files under DIR only. They take effect in pi when `[rules] scoped = true`
is in .pi/pi-rules.toml. Started inside DIR, pi reads DIR/.pi/rules as the project layer, as it
always does. The prefix is the next free one of the project range (90-99), counting the root
layers and DIR/.pi/rules. A root rule's name is allowed (a note names the rule it replaces);
a name already in DIR/.pi/rules, with or without its prefix, is refused unless --force. DIR must
exist; a DIR, or a directory on the way, that is a link leading out of the project is refused
(exit 3), and nothing is written.

An existing file is never replaced. A name that is already a rule in any layer, with or without
its prefix (`critical-rules` is `40-critical-rules.md` of the package), is refused with the path
of the rule (exit 3), unless --force: two rules with one name make `show` and `override` ask
which is meant, and a file of the same name in another layer replaces that copy whole (or is
replaced by it). To change a rule that exists, use `pi-rules override`. As with `override`, a
layer directory that is, or lies under, a link leading out of the project (for --user, out of
$HOME) is refused with exit 3, and nothing is written.")]
pub struct Args {
    /// The rule's name, e.g. `team-conventions` (`.md` and a prefix are optional).
    pub name: String,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Create the rule in DIR/.pi/rules, the rules for the subtree DIR (a directory below the
    /// project directory).
    #[arg(long, value_name = "DIR", group = "TargetArgs")]
    pub dir: Option<PathBuf>,
    /// Scope the rule to these paths: gitignore-style globs, comma-separated, written as its
    /// `paths:` frontmatter.
    #[arg(long, value_name = "GLOBS")]
    pub paths: Option<String>,
    /// Scope the rule to these agents, comma-separated (`claude,cursor`; pi is `pi`), written
    /// as its `agents:` frontmatter.
    #[arg(long, value_name = "AGENTS", value_delimiter = ',')]
    pub agents: Vec<String>,
    /// Create the rule even when its name, with or without the prefix, is already a rule in
    /// another layer or under another prefix (a file in the target layer is never replaced).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// `pi-rules new`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let stem = args.name.strip_suffix(".md").unwrap_or(&args.name);
    check_name(&args.name, stem)?;
    let header = scope(args)?;
    let layers = args.place.read(cx.env)?;
    if let Some(dir) = &args.dir {
        return new_nested(cx, &layers, dir, stem, &header, args.force);
    }
    let target_layer = args.target.layer();
    let target = target_layer.as_str();
    let (lo, hi) = target_layer.prefix_range();
    let file_name = match prefix_of(stem) {
        Some((digits, _)) => {
            let in_range = digits.parse::<u64>().is_ok_and(|n| (lo..=hi).contains(&n));
            if digits.len() != 2 || !in_range {
                note(
                    cx.err,
                    format_args!(
                        "pi-rules: warning: the prefix `{digits}` is not a two-digit prefix in the \
                         {target} layer's range {lo:02}-{hi:02}; `pi-rules check` will say so"
                    ),
                );
            }
            format!("{stem}.md")
        }
        None => {
            let Some(prefix) = next_free(&layers.used_prefixes(), lo, hi) else {
                bail!(
                    "every prefix from {lo:02} to {hi:02} is in use; give NAME a prefix, e.g. \
                     `{hi:02}-{}`",
                    escape(stem)
                );
            };
            format!("{prefix:02}-{stem}.md")
        }
    };
    let shown_name = escape(&file_name).into_owned();
    if !is_rule_name(&file_name) {
        return Err(UsageError(format!("`{shown_name}` is not a usable rule file name")).into());
    }
    let taken = |report: &NameReport| {
        let winner = report.winner().or(report.candidates.first());
        winner.map(|c| (c.layer, escape(&c.display_path(&report.name)).into_owned()))
    };
    let same_file = layers.loaded.names.iter().find(|r| r.name == file_name);
    if let Some(report) = same_file {
        if let Some(here) = report.candidates.iter().find(|c| c.layer == target_layer) {
            bail!(
                "`{shown_name}` already exists in the {target} layer: `{}`; edit it, or pick \
                 another name",
                escape(&here.display_path(&file_name))
            );
        }
        let higher = report.candidates.iter().find(|c| c.layer > target_layer);
        // The copy the new file would override: the highest one below the target layer.
        let lower = report.candidates.iter().find(|c| c.layer < target_layer);
        match (higher, lower) {
            (Some(higher), _) if !args.force => bail!(
                "`{shown_name}` is already a {} rule (`{}`), which overrides any {target} file of \
                 that name: a new one would not be used; pass --force to write it anyway",
                higher.layer.as_str(),
                escape(&higher.display_path(&file_name))
            ),
            (None, Some(lower)) if !args.force => bail!(
                "`{shown_name}` is already a {} rule (`{}`), and a new {target} file of that name \
                 would override it whole; `pi-rules override {shown_name} --{target}` starts \
                 from its text, or pass --force to start from the template",
                lower.layer.as_str(),
                escape(&lower.display_path(&file_name))
            ),
            (Some(higher), _) => note(
                cx.err,
                format_args!(
                    "pi-rules: note: the {} copy `{}` still overrides the new {target} file",
                    higher.layer.as_str(),
                    escape(&higher.display_path(&file_name))
                ),
            ),
            (None, Some(lower)) => note(
                cx.err,
                format_args!(
                    "pi-rules: note: the new {target} file overrides the {} copy `{}` whole",
                    lower.layer.as_str(),
                    escape(&lower.display_path(&file_name))
                ),
            ),
            (None, None) => {}
        }
    }
    let bare = name_without_prefix(&file_name);
    let namesakes: Vec<&NameReport> = layers
        .loaded
        .names
        .iter()
        .filter(|r| r.name != file_name && name_without_prefix(&r.name) == bare)
        .collect();
    if let Some((report, (layer, path))) = namesakes.first().and_then(|r| Some((r, taken(r)?))) {
        let shown_bare = escape(bare);
        if !args.force {
            let copy = if layer < target_layer {
                format!(
                    " (`pi-rules override {} --{target}` copies it to the {target} layer)",
                    escape(&report.name)
                )
            } else {
                String::new()
            };
            bail!(
                "a rule named `{shown_bare}` already exists: `{path}` ({} layer); another \
                 would make `{shown_bare}` name two rules. Edit that one{copy}, pick another \
                 name, or pass --force to add it anyway",
                layer.as_str()
            );
        }
        note(
            cx.err,
            format_args!(
                "pi-rules: note: `{shown_bare}` now names several rules (also `{path}`); give \
                 `show` and `override` the whole file name"
            ),
        );
    }
    let dest = layers.writable_dir(target_layer)?.join(&file_name);
    let shown_dest = escape(&dest.display().to_string()).into_owned();
    let dir = layers
        .open_layer(target_layer)
        .map_err(|e| anyhow::anyhow!("cannot write `{shown_dest}`: {e:#}"))?;
    let written = write_rule(
        cx,
        &dir,
        &dest,
        &file_name,
        &format!("{header}{}", template(stem)),
    )?;
    if !header.is_empty() {
        scopes_off_note(cx, &layers);
    }
    Ok(written)
}

/// Says, when pi does not honour scopes in this project, that the new rule's scope has no
/// effect in pi yet.
fn scopes_off_note(cx: &mut Context<'_>, layers: &Layers) {
    if !pi_rules_host::config::Config::read(&layers.session)
        .config
        .scoped()
    {
        note(
            cx.err,
            format_args!(
                "pi-rules: note: scopes are off for pi in this project, so pi reads the rule as \
                 any other until `[rules] scoped = true` is in .pi/pi-rules.toml"
            ),
        );
    }
}

/// Writes the new rule `file_name` into `dir` (at `dest`), never over a file, and prints its path.
fn write_rule(
    cx: &mut Context<'_>,
    dir: &LayerDir,
    dest: &Path,
    file_name: &str,
    text: &str,
) -> Result<Exit> {
    let shown_dest = escape(&dest.display().to_string()).into_owned();
    match dir.write(file_name, text.as_bytes(), false) {
        Ok(()) => {}
        Err(WriteError::Exists) => {
            bail!("`{shown_dest}` already exists; edit it, or pick another name")
        }
        Err(err) => bail!("cannot write `{shown_dest}`: {err}"),
    }
    output(writeln!(cx.out, "{shown_dest}"))?;
    Ok(Exit::Success)
}

/// The frontmatter that --paths and --agents give (empty without them); an empty list is a
/// usage error.
fn scope(args: &Args) -> Result<String> {
    let paths = match &args.paths {
        Some(given) => {
            let globs = split_globs(given);
            if globs.is_empty() {
                return Err(UsageError("--paths holds no glob; give one or more, comma-separated, e.g. `src/api/**, **/*.sql`".to_owned()).into());
            }
            globs
        }
        None => Vec::new(),
    };
    let agents: Vec<String> = args
        .agents
        .iter()
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .collect();
    if agents.is_empty() && !args.agents.is_empty() {
        return Err(UsageError(
            "--agents holds no agent; give one or more, comma-separated, e.g. `claude,cursor`"
                .to_owned(),
        )
        .into());
    }
    for agent in &agents {
        if !rule_scope::is_known_agent(agent) {
            let hint = match rule_scope::suggest_agent(agent) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("the agents are {}", rule_scope::KNOWN_AGENTS.join(", ")),
            };
            return Err(UsageError(format!(
                "`{}` is not an agent pi-rules knows; {hint}",
                escape(agent)
            ))
            .into());
        }
    }
    if paths.len() > rule_scope::MAX_ITEMS {
        return Err(UsageError(format!(
            "--paths holds {} globs; a rule's `paths:` holds at most {}",
            paths.len(),
            rule_scope::MAX_ITEMS
        ))
        .into());
    }
    for glob in &paths {
        if glob.chars().any(|c| is_unsafe(c) || c == '\n' || c == '\r') {
            return Err(UsageError(format!(
                "`{}` cannot be a glob: it contains control characters",
                escape(glob)
            ))
            .into());
        }
        if glob.len() > rule_scope::MAX_ITEM_LEN {
            return Err(UsageError(format!(
                "a glob of --paths is {} bytes long; a glob is at most {} bytes",
                glob.len(),
                rule_scope::MAX_ITEM_LEN
            ))
            .into());
        }
        if let Err(err) = rule_scope::compile_glob(glob) {
            return Err(UsageError(format!(
                "`{}` is not a glob pi-rules can use: {}",
                escape(glob),
                escape(&err.reason)
            ))
            .into());
        }
    }
    Ok(scope_header(&paths, &agents))
}

/// `new --dir DIR`: the rule in DIR/.pi/rules, with the next free prefix of the project range.
fn new_nested(
    cx: &mut Context<'_>,
    layers: &Layers,
    dir: &Path,
    stem: &str,
    header: &str,
    force: bool,
) -> Result<Exit> {
    let nested = layers.nested_dir(dir)?;
    let (lo, hi) = Layer::Project.prefix_range();
    let here: Vec<String> = layers
        .nested_rules(&nested)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let file_name = match prefix_of(stem) {
        Some(_) => format!("{stem}.md"),
        None => {
            let mut used = layers.used_prefixes();
            used.extend(here.iter().filter_map(|name| {
                let (digits, _) = prefix_of(name)?;
                (digits.len() == 2).then(|| digits.parse::<u64>().ok())?
            }));
            let Some(prefix) = next_free(&used, lo, hi) else {
                bail!(
                    "every prefix from {lo:02} to {hi:02} is in use; give NAME a prefix, e.g. \
                     `{hi:02}-{}`",
                    escape(stem)
                );
            };
            format!("{prefix:02}-{stem}.md")
        }
    };
    let shown_name = escape(&file_name).into_owned();
    if !is_rule_name(&file_name) {
        return Err(UsageError(format!("`{shown_name}` is not a usable rule file name")).into());
    }
    let dest = nested.rules.join(&file_name);
    let shown_dest = escape(&dest.display().to_string()).into_owned();
    if here.contains(&file_name) {
        bail!("`{shown_dest}` already exists; edit it, or pick another name");
    }
    let bare = name_without_prefix(&file_name);
    if let Some(namesake) = here.iter().find(|name| name_without_prefix(name) == bare) {
        let shown_bare = escape(bare);
        let path = escape(&nested.rules.join(namesake).display().to_string()).into_owned();
        if !force {
            bail!(
                "a rule named `{shown_bare}` already exists there: `{path}`; another would make \
                 `{shown_bare}` name two rules. Edit that one, pick another name, or pass --force \
                 to add it anyway"
            );
        }
        note(
            cx.err,
            format_args!(
                "pi-rules: note: `{shown_bare}` now names several rules there (also `{path}`)"
            ),
        );
    }
    let open = layers
        .open_nested(&nested)
        .map_err(|e| anyhow::anyhow!("cannot write `{shown_dest}`: {}", escape(&e.to_string())))?;
    let written = write_rule(
        cx,
        &open,
        &dest,
        &file_name,
        &format!("{header}{}", template(stem)),
    )?;
    // The root rule of that name, which the new one replaces under DIR.
    if let Some(report) = layers.loaded.names.iter().find(|r| r.name == file_name) {
        if let Some(winner) = report.winner().or(report.candidates.first()) {
            note(
                cx.err,
                format_args!(
                    "pi-rules: note: under `{}` it replaces the {} rule `{}`",
                    escape(&nested.dir.display().to_string()),
                    winner.layer.as_str(),
                    escape(&winner.display_path(&file_name))
                ),
            );
        }
    }
    scopes_off_note(cx, layers);
    Ok(written)
}

/// A name must be one plain file name.
fn check_name(given: &str, stem: &str) -> Result<()> {
    let bad = |why: &str| -> Result<()> {
        Err(UsageError(format!("`{}` cannot name a rule: {why}", escape(given))).into())
    };
    if stem.is_empty() || prefix_of(stem).is_some_and(|(_, rest)| rest.is_empty()) {
        return bad("it is empty");
    }
    if stem.contains('/') {
        return bad("give a file name, not a path (--cwd chooses the project)");
    }
    if stem.starts_with('.') {
        return bad("a name starting with `.` would be hidden");
    }
    if stem.chars().any(|c| is_unsafe(c) || c == '\u{feff}') {
        return bad("it contains control characters");
    }
    if stem.len() > 200 {
        return bad("it is longer than 200 bytes");
    }
    Ok(())
}

/// The body of a new rule: a heading from the name, and bullets that say what to write. It ends
/// with one line break, as a text file does (and as `check` expects: see PR804).
fn template(stem: &str) -> String {
    let bare = prefix_of(stem).map_or(stem, |(_, rest)| rest);
    let words = bare.replace(['-', '_'], " ");
    let mut chars = words.trim().chars();
    let title: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Rule".to_owned(),
    };
    format!(
        "## {title}\n\n\
         - Write each rule as an instruction to the orchestrator, one per bullet.\n\
         - Keep it short: every line of this file is sent with every prompt.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_titles() {
        assert!(template("team-conventions").starts_with("## Team conventions\n\n- "));
        assert!(template("75-deploy_steps").starts_with("## Deploy steps\n"));
        assert!(template("école").starts_with("## École\n"));
    }
}
