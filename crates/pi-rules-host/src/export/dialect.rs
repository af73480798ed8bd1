//! How each agent reads a glob, and our globs written in each agent's dialect (for `export`) or
//! read back from it (for `import`).
//!
//! Our globs are those of a rule's `paths:` (the core's [`rule_scope::glob_patterns`]):
//! gitignore-style, relative to the directory the scope belongs to, case-sensitive; a glob
//! without a `/` (but a trailing one) matches at any depth, a leading `/` or a `/` inside anchors
//! it at the directory, a trailing `/` limits it to folders, and a glob also matches everything
//! below what it names (`src/api` matches `src/api/handler.ts`).
//!
//! Each agent reads its globs its own way; the facts, with where each comes from, sit beside
//! the code that depends on them ([`Dialect`]). [`translate`] writes one of our globs in an
//! agent's dialect, relative to the project root, as near as that agent allows, and says what
//! cannot be kept; [`read_value`] reads an agent's frontmatter value (as real files hold it) back
//! into our globs.
//!
//! Pure: text in, text out.

use pi_rules_core::rule_scope;

/// The most patterns one glob's braces are expanded into, for an agent whose braces must be
/// expanded (Cursor, Windsurf; Claude Code's on import); the rest are dropped, and said so.
pub const MAX_EXPANSION: usize = 256;

/// How an agent reads a glob.
///
/// - [`Dialect::Claude`]: Claude Code's `.claude/rules/*.md` `paths:`. It expands braces,
///   strips one trailing `/**`, then matches gitignore-style with the `ignore` npm package,
///   ignoring case, relative to the folder that holds `.claude/`: a pattern without a slash (but
///   a trailing one) matches at any depth (so `src/**` also matches `lib/src/x.ts`), a leading
///   `/` anchors, a pattern matches the files below a folder it names, and `[!x]` matches
///   nothing (measured with Claude Code 2.1.332, issue 35; the `paths:` key and its globs:
///   <https://code.claude.com/docs/en/memory>, "Path-specific rules").
/// - [`Dialect::Copilot`]: Copilot's `.github/instructions/*.instructions.md` `applyTo:`, one
///   comma-separated string, a comma inside `{}` or `[]` kept with its glob (GitHub docs, "Adding
///   repository custom instructions", path-specific instructions). Copilot CLI matches with
///   `globset`, case-sensitively: a pattern without a slash matches a file name at any depth, one
///   with a slash is anchored at the repository root, a pattern has no folder meaning (`src/api`
///   matches nothing), `!p` means every file `p` does not match, the text after ` #` is cut
///   (inside quotes too), and `*`, `**` and `**/*` apply always (measured with Copilot CLI
///   1.0.102, issue 35). Copilot in VS Code puts `**/` before every pattern and ignores case, so
///   there nothing can be anchored (issue 35, from VS Code's source).
/// - [`Dialect::Cursor`]: Cursor's `.cursor/rules/*.mdc` `globs:`, one unquoted comma-separated
///   string (<https://cursor.com/docs/rules>, rule anatomy and rule types); braces there are unreliable, so they
///   are expanded (issue 35).
/// - [`Dialect::Windsurf`]: Windsurf's `.windsurf/rules/*.md` `globs:` with `trigger: glob`, one
///   comma-separated string (<https://docs.windsurf.com/windsurf/cascade/memories>, "Memories &
///   Rules", activation modes); braces
///   expanded as for Cursor.
/// - [`Dialect::Kiro`]: Kiro's `.kiro/steering/*.md` `fileMatchPattern:` with `inclusion:
///   fileMatch`, a string or a list (<https://kiro.dev/docs/steering/>, inclusion modes). Kiro
///   matches with minimatch from the workspace root: `*.py` does not match nested files, and a
///   comma-separated string is one pattern that matches nothing (issue 35, from Kiro's
///   behaviour as its users report it).
/// - [`Dialect::Cline`]: Cline's `.clinerules/*.md` `paths:`, a YAML list of globs
///   (<https://docs.cline.bot/features/cline-rules/conditional-rules>); a string applies always
///   and `[]` never; the extension matches with picomatch, dot files included, from the
///   workspace root; the CLI matches nothing and loads every rule (issue 35, from Cline's
///   source).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dialect {
    Claude,
    Copilot,
    Cursor,
    Windsurf,
    Kiro,
    Cline,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 6] = [
        Dialect::Claude,
        Dialect::Copilot,
        Dialect::Cursor,
        Dialect::Windsurf,
        Dialect::Kiro,
        Dialect::Cline,
    ];

    /// The agent's name, for warnings: "Claude Code".
    pub fn agent(self) -> &'static str {
        match self {
            Dialect::Claude => "Claude Code",
            Dialect::Copilot => "Copilot",
            Dialect::Cursor => "Cursor",
            Dialect::Windsurf => "Windsurf",
            Dialect::Kiro => "Kiro",
            Dialect::Cline => "Cline",
        }
    }

    /// The dialect of an export target's scoped files, if that target writes globs at all (the
    /// `AGENTS.md`, goose and Gemini targets write headed sections instead).
    pub fn of(target: super::Target) -> Option<Dialect> {
        use super::Target;
        match target {
            Target::Claude => Some(Dialect::Claude),
            Target::Copilot => Some(Dialect::Copilot),
            Target::Cursor => Some(Dialect::Cursor),
            Target::Windsurf => Some(Dialect::Windsurf),
            Target::Kiro => Some(Dialect::Kiro),
            Target::Cline => Some(Dialect::Cline),
            Target::AgentsMd | Target::Gemini | Target::Goose => None,
        }
    }

    /// Whether the agent's value is one string it splits on commas (outside `{}` and `[]` for
    /// Copilot; everywhere for Cursor and Windsurf, so their braces are expanded).
    pub fn comma_separated(self) -> bool {
        matches!(self, Dialect::Copilot | Dialect::Cursor | Dialect::Windsurf)
    }

    /// Whether braces must be expanded before the agent reads the pattern.
    fn expands_braces(self) -> bool {
        matches!(self, Dialect::Cursor | Dialect::Windsurf)
    }

    /// Whether a pattern without a slash matches a file name at any depth (else it is anchored at
    /// the root, as every pattern with a slash is).
    fn name_at_any_depth(self) -> bool {
        // Copilot CLI: measured (issue 35). Cursor and Windsurf: not documented; their users
        // write `*.ts` for every TypeScript file, and pi-rules never writes a pattern without a
        // slash to them (an unanchored glob gets `**/`), so this only decides how `import` reads
        // one. Kiro (minimatch) and Cline (picomatch) match the whole path (issue 35).
        matches!(self, Dialect::Copilot | Dialect::Cursor | Dialect::Windsurf)
    }
}

/// One of our globs (gitignore-style, relative to `dir`), as an agent must be told it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Translated {
    /// The agent's patterns, relative to the project root (where that agent matches from).
    pub patterns: Vec<String>,
    /// The glob matches every file (`*`, `**`, `**/*`): the rule is unscoped for this agent.
    pub always: bool,
    /// What the agent cannot express exactly (a comma it would split on, a pattern it reads at
    /// any depth, ...): a warning. Not case, which `check` reports (PR1005).
    pub lost: Option<String>,
}

/// One of our globs, taken apart as the core reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ours {
    /// The pattern relative to the scope's directory, without a leading `./` or `/` nor a
    /// trailing `/`; a glob that matches at any depth has `**/` before it.
    base: String,
    /// The glob ended with `/`: it names folders only.
    dir_only: bool,
}

impl Ours {
    /// Reads `glob` as [`rule_scope::glob_patterns`] does; the reason when a scope cannot use it.
    fn parse(glob: &str) -> Result<Ours, String> {
        rule_scope::compile_glob(glob).map_err(|e| e.reason)?;
        let mut g = glob.trim();
        while let Some(rest) = g.strip_prefix("./") {
            g = rest;
        }
        let anchored = g.starts_with('/');
        let g = g.trim_start_matches('/');
        let dir_only = g.ends_with('/');
        let g = g.trim_end_matches('/');
        // `**/**` reads as `**`.
        let mut parts: Vec<&str> = Vec::new();
        for part in g.split('/') {
            if !(part == "**" && parts.last() == Some(&"**")) {
                parts.push(part);
            }
        }
        let g = parts.join("/");
        let base = if anchored || g.contains('/') || g.starts_with("**") {
            g
        } else {
            format!("**/{g}")
        };
        Ok(Ours { base, dir_only })
    }

    /// Whether [`Ours::base`] already stands for everything below it (`src/**`, `**`).
    fn ends_below(&self) -> bool {
        self.base == "**" || self.base.ends_with("/**")
    }

    /// The core's patterns (globset syntax, relative to the scope's directory).
    fn patterns(&self) -> Vec<String> {
        if self.ends_below() {
            return vec![self.base.clone()];
        }
        let below = format!("{}/**", self.base);
        if self.dir_only {
            vec![below]
        } else {
            vec![self.base.clone(), below]
        }
    }

    /// Whether the glob matches every file of its directory: a pattern whose parts are all `**`
    /// but a last `*`.
    fn matches_everything(&self) -> bool {
        self.patterns().iter().any(|p| {
            let parts: Vec<&str> = p.split('/').collect();
            parts.split_last().is_some_and(|(last, init)| {
                init.iter().all(|&s| s == "**") && (*last == "**" || *last == "*")
            })
        })
    }

    /// The patterns an agent without a folder meaning is given: the core's, except that a last
    /// part written as a file pattern (a wildcard before its extension: `*.ts`, `test_*.py`,
    /// `*.{ts,tsx}`) is not also read as a folder (`**/*.ts/**`): the forms, at the cost
    /// of the files inside a folder named like one (`x.ts/a`).
    fn file_patterns(&self) -> Vec<String> {
        let last = self.base.rsplit('/').next().unwrap_or(&self.base);
        let file_like = !self.dir_only
            && !self.ends_below()
            && last
                .rfind('.')
                .is_some_and(|dot| last[..dot].contains(['*', '?', '[']));
        if file_like {
            vec![self.base.clone()]
        } else {
            self.patterns()
        }
    }
}

/// Whether `glob` (one of ours) matches every file of its directory (`*`, `**`, `**/*`, `/*`);
/// `false` for a glob a scope cannot use.
pub fn matches_everything(glob: &str) -> bool {
    Ours::parse(glob).is_ok_and(|o| o.matches_everything())
}

/// The directory, relative to the scope's, that every file `glob` matches lies in: the parts
/// before its first wildcard, and of those the last only when more follows it (`src/api/**` and
/// `src/api/` lie in `src/api`, `src/api` and `src/*.ts` in `src`); `""` for a glob that matches
/// at any depth or that a scope cannot use. With it, whether the glob stands for that whole
/// directory (`src/api/**`, `src/api/`).
pub fn literal_dir(glob: &str) -> (String, bool) {
    let Ok(ours) = Ours::parse(glob) else {
        return (String::new(), false);
    };
    let parts: Vec<&str> = ours.base.split('/').collect();
    let Some((last, init)) = parts.split_last() else {
        return (String::new(), false);
    };
    let mut dir: Vec<&str> = Vec::new();
    let mut whole = false;
    let literal = |s: &str| {
        !s.is_empty()
            && s != "."
            && !s.contains(['*', '?', '[', ']', '{', '}', '\\'])
            && !s.chars().any(char::is_control)
    };
    for part in init {
        if !literal(part) {
            return (dir.join("/"), false);
        }
        dir.push(part);
    }
    if *last == "**" {
        whole = true;
    } else if ours.dir_only && literal(last) {
        dir.push(last);
        whole = true;
    }
    (dir.join("/"), whole && !dir.is_empty())
}

/// `dir` and `pattern` joined with a `/` (`dir` may be `""`).
fn join(dir: &str, pattern: &str) -> String {
    let dir = dir.trim_matches('/');
    if dir.is_empty() {
        pattern.to_string()
    } else {
        format!("{dir}/{pattern}")
    }
}

/// One of our globs, in `dialect`, relative to the project root. `dir` is the nested directory
/// the scope belongs to, relative to the project root, `/`-separated, `""` for the root.
///
/// A glob that a scope cannot use (empty, `!`, `..`, bad syntax) gives no pattern and says why in
/// [`Translated::lost`]. A glob that matches every file is [`Translated::always`] at the root
/// (no patterns then); in a nested directory `D` it is `D/**`.
pub fn translate(dialect: Dialect, dir: &str, glob: &str) -> Translated {
    let ours = match Ours::parse(glob) {
        Ok(ours) => ours,
        Err(reason) => {
            return Translated {
                patterns: Vec::new(),
                always: false,
                lost: Some(format!("`{glob}` is not used: {reason}")),
            };
        }
    };
    let dir = dir.trim_matches('/');
    if ours.matches_everything() {
        if dir.is_empty() {
            return Translated {
                patterns: Vec::new(),
                always: true,
                lost: None,
            };
        }
        let all = Ours {
            base: "**".into(),
            dir_only: false,
        };
        return finish(dialect, dir, glob, &all);
    }
    finish(dialect, dir, glob, &ours)
}

fn finish(dialect: Dialect, dir: &str, glob: &str, ours: &Ours) -> Translated {
    let mut lost: Vec<String> = Vec::new();
    let mut patterns: Vec<String> = Vec::new();
    match dialect {
        Dialect::Claude => {
            // One gitignore pattern stands for the core's pair (`x` and `x/**`): it matches what
            // it names and everything below. A leading `/` on every pattern anchors it at the
            // project root, and keeps Copilot, which reads `.claude/rules` too, from matching it
            // a second time (a leading `/` matches nothing there: measured, issue 35).
            //
            // A glob for what is below a folder (`src/api/**`) keeps the measured form
            // `/src/api/**` (Claude Code strips the `/**`, so a file named `src/api` would match
            // too: no project has one beside a folder of that name); a glob for folders only
            // (`docs/`), or one whose folder has a wildcard (`src/*/**`, where stripping would
            // match the files beside the folders too), is written gitignore's way for folders,
            // `/src/*/`.
            let p = if ours.dir_only && !ours.ends_below() {
                format!("/{}/", join(dir, &ours.base))
            } else if ours.ends_below() {
                let folder = ours.base.strip_suffix("/**").unwrap_or(&ours.base);
                let last = folder.rsplit('/').next().unwrap_or(folder);
                if ours.base == "**" {
                    format!("/{}", join(dir, "**"))
                } else if !last.contains(['*', '?', '[', '{', '\\']) {
                    format!("/{}/**", join(dir, folder))
                } else {
                    format!("/{}/", join(dir, folder))
                }
            } else {
                format!("/{}", join(dir, &ours.base))
            };
            // `[!x]` matches nothing in Claude Code (measured, issue 35); `[^x]` is the same
            // class in gitignore's and the `ignore` package's syntax.
            //
            // Claude Code matches ignoring case, and pi-rules does not: that is left to `check`
            // (PR1005 names the agents that ignore case), and not said here, where it would be
            // said of every pattern with a letter in it, on every export.
            patterns.push(p.replace("[!", "[^"));
        }
        _ => {
            for p in ours.file_patterns() {
                if !dialect.expands_braces() {
                    patterns.push(join(dir, &p));
                    continue;
                }
                let budget = MAX_EXPANSION.saturating_sub(patterns.len());
                let (expanded, complete) = expand_braces(&p, budget);
                if !complete {
                    lost.push(format!(
                        "`{glob}` stands for more than {MAX_EXPANSION} patterns once its braces \
                         are expanded; {} reads only the first {MAX_EXPANSION}",
                        dialect.agent()
                    ));
                }
                patterns.extend(expanded.iter().map(|e| join(dir, e)));
            }
        }
    }
    if dialect.name_at_any_depth() && patterns.iter().any(|p| !p.contains('/')) {
        lost.push(format!(
            "{} reads `{glob}` at any depth: a pattern without a slash cannot be anchored \
             there",
            dialect.agent()
        ));
    }
    if dialect.comma_separated() {
        for p in &mut patterns {
            // Copilot cuts the text after ` #` even inside quotes (measured, issue 35); Cursor's
            // and Windsurf's unquoted values would read it as a YAML comment. `[ ]` is the same
            // space to every glob matcher.
            if p.contains(" #") {
                *p = p.replace(" #", "[ ]#");
            }
        }
        let split = patterns.iter().any(|p| {
            if dialect == Dialect::Copilot {
                top_level_comma(p)
            } else {
                p.contains(',')
            }
        });
        if split {
            lost.push(format!(
                "{} splits its value on commas, so `{glob}` is cut in two there",
                dialect.agent()
            ));
        }
    }
    dedup(&mut patterns);
    Translated {
        patterns,
        always: false,
        lost: (!lost.is_empty()).then(|| lost.join("; ")),
    }
}

/// Removes repeated strings, keeping the first of each.
fn dedup(items: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|i| seen.insert(i.clone()));
}

/// Whether `p` has a comma outside `{}` and `[]` (a `\` does not keep one: Copilot's split does
/// not read escapes).
fn top_level_comma(p: &str) -> bool {
    let mut depth = 0usize;
    for c in p.chars() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// The patterns `{a,b}` stands for, at most `cap` of them, and whether that was all. A `\`
/// escapes the next character; braces inside `[]` are literal; `{a}` is `a` (as globset reads
/// it); nested braces are expanded too. Work is bounded by `cap` times the pattern's length.
pub fn expand_braces(pattern: &str, cap: usize) -> (Vec<String>, bool) {
    let mut done: Vec<String> = Vec::new();
    let mut work: Vec<String> = vec![pattern.to_string()];
    let mut complete = true;
    while let Some(p) = work.pop() {
        match first_group(&p) {
            None => {
                if done.len() < cap {
                    done.push(p);
                } else {
                    complete = false;
                }
            }
            Some((open, close, commas)) => {
                let (head, tail) = (&p[..open], &p[close + 1..]);
                let mut alts = Vec::with_capacity(commas.len() + 1);
                let mut start = open + 1;
                for &c in commas.iter().chain(std::iter::once(&close)) {
                    alts.push(&p[start..c]);
                    start = c + 1;
                }
                // Pushed in reverse so that they come out in order. Depth-first, the stack
                // holds at most one group's alternatives per level of the pattern.
                for alt in alts.iter().rev() {
                    work.push(format!("{head}{alt}{tail}"));
                }
            }
        }
        if done.len() >= cap && !work.is_empty() {
            complete = false;
            break;
        }
    }
    dedup(&mut done);
    (done, complete)
}

/// The first innermost-complete brace group of `p`: its `{`, its matching `}`, and the commas
/// at its own level. A group inside `[]` or after `\` does not count; an unclosed `{` is
/// literal.
fn first_group(p: &str) -> Option<(usize, usize, Vec<usize>)> {
    let bytes = p.as_bytes();
    let mut i = 0;
    let mut class = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' if !class => {
                class = true;
                // `[]...]` and `[!]...]`: a `]` right after the opening is literal.
                if matches!(bytes.get(i + 1), Some(b'!' | b'^')) {
                    i += 1;
                }
                if bytes.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            b']' if class => class = false,
            b'{' if !class => {
                if let Some((close, commas)) = group_end(bytes, i) {
                    return Some((i, close, commas));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `}` that closes the `{` at `open`, and the commas at its level.
fn group_end(bytes: &[u8], open: usize) -> Option<(usize, Vec<usize>)> {
    let (mut depth, mut class) = (0usize, false);
    let mut commas = Vec::new();
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' if !class => class = true,
            b']' if class => class = false,
            b'{' if !class => depth += 1,
            b'}' if !class && depth == 0 => return Some((i, commas)),
            b'}' if !class => depth -= 1,
            b',' if !class && depth == 0 => commas.push(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The reverse of [`translate`], for `import`: one agent's frontmatter value, as written (a
/// string, a comma- or space-separated string, a flow list with either quote, the lines of a
/// YAML block list, braces with commas inside, values that are not strict YAML such as
/// `globs: *` or `applyTo: 'a, b', 'c, d'`), read as that agent reads it, into our globs, with a
/// warning for each thing that cannot be kept (`!negation` is dropped). Never fails.
///
/// [`translate`]`(dialect, "", g)` for each returned `g` matches the files the agent matched,
/// but for what [`Translated::lost`] names.
pub fn read_value(dialect: Dialect, value: &str) -> (Vec<String>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut items = Vec::new();
    for (raw, quoted) in value_items(dialect, value) {
        // A quoted item is one glob, but where the agent splits the string on commas (and Kiro,
        // whose users mean several); an unquoted one is split on blanks too.
        if !quoted {
            items.extend(split_pieces(&raw, true));
        } else if dialect.comma_separated() || dialect == Dialect::Kiro {
            items.extend(split_pieces(&raw, false));
        } else {
            items.push(raw);
        }
    }
    let one_line = value.trim();
    if dialect == Dialect::Kiro
        && !one_line.contains('\n')
        && !one_line.starts_with('[')
        && items.len() > 1
    {
        warnings.push(format!(
            "Kiro reads `{one_line}` as one pattern, which matches no file; read as {} patterns",
            items.len()
        ));
    }
    let mut globs = Vec::new();
    for item in items {
        read_item(dialect, &item, &mut globs, &mut warnings);
    }
    dedup(&mut globs);
    if dialect != Dialect::Claude {
        widened(&globs, &mut warnings);
    }
    (globs, warnings)
}

/// One agent pattern into our globs.
fn read_item(dialect: Dialect, item: &str, globs: &mut Vec<String>, warnings: &mut Vec<String>) {
    let mut p = item.trim();
    if p.is_empty() {
        return;
    }
    if p.starts_with('!') {
        warnings.push(format!(
            "`{p}` (a negation) is left out: a scope lists the files a rule is for"
        ));
        return;
    }
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    let mut out: Vec<String> = Vec::new();
    match dialect {
        Dialect::Claude => {
            // Claude Code expands braces first, so each alternative is anchored (or not) on its
            // own; with a leading `/`, every alternative is anchored and the braces can stay.
            let expanded = if p.starts_with('/') || !p.contains('{') {
                vec![p.to_string()]
            } else {
                let (all, complete) = expand_braces(p, MAX_EXPANSION);
                if !complete {
                    warnings.push(format!(
                        "`{p}` stands for more than {MAX_EXPANSION} patterns; only the first \
                         {MAX_EXPANSION} are kept"
                    ));
                }
                all
            };
            if p.contains("[!") {
                warnings.push(format!(
                    "Claude Code matched nothing with `{p}` (`[!` is not its negated class); read \
                     as written"
                ));
            }
            for e in expanded {
                // Claude Code strips a trailing `/**`, then reads the rest gitignore-style,
                // which is our reading (measured, issue 35). Where what is left is anchored and
                // names one folder (`/src`, `src/api`), `x/**` reads the same to us (but for a
                // file named `x`), and is kept as written.
                let stripped = e.strip_suffix("/**").unwrap_or(&e);
                let last = stripped.rsplit('/').next().unwrap_or(stripped);
                let anchored = (stripped.starts_with('/') || stripped.contains('/'))
                    && !last.contains(['*', '?', '[', '{', '\\']);
                out.push(match stripped {
                    "" | "/" | "**" => "**".to_string(),
                    _ if anchored => e.clone(),
                    s => s.to_string(),
                });
            }
        }
        _ => {
            if p.starts_with('/') {
                warnings.push(format!(
                    "{} matches nothing with `{p}` (a leading `/`); read as anchored at the root",
                    dialect.agent()
                ));
                out.push(p.to_string());
            } else if !p.contains('/') {
                if dialect.name_at_any_depth() || p == "**" {
                    out.push(p.to_string());
                } else {
                    out.push(format!("/{p}"));
                }
            } else if let Some(rest) = p.strip_prefix("**/").filter(|r| !r.contains('/')) {
                out.push(if rest.is_empty() { "**" } else { rest }.to_string());
            } else if p.starts_with("**") {
                out.push(p.to_string());
            } else {
                out.push(format!("/{p}"));
            }
        }
    }
    for glob in out {
        if let Err(e) = rule_scope::compile_glob(&glob) {
            // Nested braces, which globset does not read: expanded.
            let (expanded, _) = expand_braces(&glob, MAX_EXPANSION);
            if expanded.len() > 1 && expanded.iter().all(|g| rule_scope::compile_glob(g).is_ok()) {
                globs.extend(expanded);
                continue;
            }
            warnings.push(format!("`{glob}` cannot be used as a glob: {}", e.reason));
        }
        globs.push(glob);
    }
}

/// Warns of each glob read from an agent without folder meaning whose last part is a wildcard
/// (`src/*`): the agent matched only what is directly in `src`, our glob matches everything
/// below too; likewise a folder's path (`src/api`), which the agent matched as a file; unless the same value also held what is below (`src/*/**`, as [`translate`]
/// writes it).
fn widened(globs: &[String], warnings: &mut Vec<String>) {
    let bases: Vec<Option<Ours>> = globs.iter().map(|g| Ours::parse(g).ok()).collect();
    for (glob, ours) in globs.iter().zip(&bases) {
        let Some(ours) = ours else { continue };
        let (init, last) = ours.base.rsplit_once('/').unwrap_or(("", &ours.base));
        let wild = last.contains(['*', '?', '[']) && last != "**" && !last.contains('.');
        // A folder's path (`src/api`): the agent matched a file of that name only (Copilot CLI:
        // "`src/api` matches nothing", issue 35), our glob the folder's files. A name with a dot
        // is a file's, and a name at any depth (`Makefile`, `**/Makefile`) is left unsaid.
        let folder_path = !init.is_empty()
            && init != "**"
            && last != "**"
            && !last.contains(['*', '?', '[', '{', '.']);
        if !(wild || folder_path) || ours.dir_only || ours.matches_everything() {
            continue;
        }
        let below = format!("{}/**", ours.base);
        if bases.iter().flatten().any(|o| o.base == below) {
            continue;
        }
        warnings.push(format!(
            "`{glob}` also matches the files in the folders it names, which the agent's pattern \
             did not"
        ));
    }
}

/// The items of a frontmatter value: the lines of a block list (`- item`), the items of a flow
/// list, or the comma-separated items of a one-line value, each unquoted (and whether it was
/// quoted), comments cut.
fn value_items(dialect: Dialect, value: &str) -> Vec<(String, bool)> {
    let mut items = Vec::new();
    let lines: Vec<&str> = value.lines().collect();
    for line in lines {
        let mut line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('-') {
            if rest.is_empty() || rest.starts_with([' ', '\t']) {
                line = rest.trim();
            }
        }
        let line = cut_comment(dialect, line);
        let inner = match line.strip_prefix('[') {
            Some(rest) if rest.ends_with(']') => &rest[..rest.len() - 1],
            _ => line,
        };
        for piece in rule_scope::list_pieces(inner) {
            let piece = inner[piece].trim();
            let unquoted = unquote(piece);
            if !unquoted.is_empty() {
                let quoted = unquoted.len() != piece.len();
                items.push((unquoted, quoted));
            }
        }
    }
    items
}

/// The line without a YAML comment (` #` outside quotes); Copilot cuts at ` #` inside quotes too
/// (measured, issue 35).
fn cut_comment(dialect: Dialect, line: &str) -> &str {
    if dialect == Dialect::Copilot {
        return match line.find(" #") {
            // A quote left open by the cut is dropped.
            Some(i) => {
                let cut = line[..i].trim_end();
                let open = cut.chars().next().filter(|q| matches!(q, '"' | '\''));
                match open {
                    Some(q) if cut.matches(q).count() % 2 == 1 => &cut[1..],
                    _ => cut,
                }
            }
            None => line,
        };
    }
    let mut quote = None;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), _) if q == b => quote = None,
            (None, b'#') if i > 0 && matches!(bytes[i - 1], b' ' | b'\t') => {
                return line[..i].trim_end();
            }
            _ => {}
        }
    }
    line
}

/// `s` without one pair of matching quotes around it (a double-quoted `\"` and a single-quoted
/// `''` read as the quote).
fn unquote(s: &str) -> String {
    if s.len() >= 2 {
        if let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            return inner.replace("\\\"", "\"").trim().to_string();
        }
        if let Some(inner) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            return inner.replace("''", "'").trim().to_string();
        }
    }
    s.to_string()
}

/// One item split on the commas (and with `blanks`, the blanks) outside `{}` and `[]`
/// (`**/*.{rs,toml},crates/**` is two; `src/** lib/**` is two).
fn split_pieces(item: &str, blanks: bool) -> Vec<String> {
    let mut pieces = Vec::new();
    let (mut depth, mut escaped) = (0usize, false);
    let mut current = String::new();
    for c in item.chars() {
        if escaped {
            escaped = false;
            current.push(c);
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                current.push(c);
            }
            '{' | '[' => {
                depth += 1;
                current.push(c);
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' | ' ' | '\t' if depth == 0 && (c == ',' || blanks) => {
                let piece = unquote(current.trim());
                if !piece.is_empty() {
                    pieces.push(piece);
                }
                current.clear();
            }
            _ => current.push(c),
        }
    }
    let piece = unquote(current.trim());
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

#[cfg(test)]
mod tests;
