//! Where each agent is told a scoped rule, and in what form: the file and frontmatter of its
//! scoped-rule format, or a headed subsection of a file it reads whole.
//!
//! | target | a rule scoped by `paths:` | a nested `.pi/rules` directory `D` |
//! |---|---|---|
//! | `claude` | `.claude/rules/pi-rules/NAME.md`, `paths:` list | `.claude/rules/pi-rules/D/NAME.md`, globs under `D/` |
//! | `cursor` | `.cursor/rules/pi-rules-NAME.mdc`, `globs:`, `alwaysApply: false` | `pi-rules-D--NAME.mdc`, globs under `D/` |
//! | `copilot` | `.github/instructions/pi-rules-NAME.instructions.md`, `applyTo:` | the same way |
//! | `kiro` | `.kiro/steering/pi-rules-NAME.md`, `inclusion: fileMatch`, `fileMatchPattern:` | the same way |
//! | `windsurf` | `.windsurf/rules/pi-rules-NAME.md`, `trigger: glob`, `globs:` | the same way |
//! | `cline` | `.clinerules/pi-rules-NAME.md`, `paths:` list | `D/.clinerules/pi-rules-NAME.md` |
//! | `agents-md`, `goose` | a subsection of the root file, headed with its globs | a section of `D/AGENTS.md` (`D/.goosehints`) |
//! | `gemini` | a section of `X/GEMINI.md` when every glob lies in `X`, else a subsection of the root file | a section of `D/GEMINI.md` |
//!
//! Where each fact comes from is said beside the code that depends on it. The globs are written
//! in each agent's dialect ([`super::dialect`]). Pure: text in, text out.

use super::dialect::{self, Dialect};
use super::targets::Target;
use std::borrow::Cow;

/// A scoped rule to export: its text assembled alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopedRule<'a> {
    /// The rule's file stem: `"50-api"` (no `.md`).
    pub name: &'a str,
    /// The nested directory, relative to the root, `/`-separated; `""` for the root.
    pub dir: &'a str,
    /// `paths:` as written; empty for a nested rule that is for its whole directory.
    pub globs: &'a [String],
    /// The rule's text assembled alone; ends with `'\n'`.
    pub text: &'a str,
}

/// Where one target is told a scoped rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// A file pi-rules owns whole: `path` relative to the root, written as `frontmatter` +
    /// `owned::GENERATED_LINE` + `"\n\n"` + text (`owned::render`).
    Owned { path: String, frontmatter: String },
    /// A headed subsection, or the plain text, inside the managed section of `file` (relative to
    /// the root: `"AGENTS.md"`, `"packages/api/AGENTS.md"`, `"src/GEMINI.md"`); see
    /// [`section_text`].
    Section {
        file: String,
        heading: Option<String>,
    },
    /// The rule is for every file in this agent's dialect: it joins the unscoped block.
    Unscoped,
    /// None of the rule's globs can be used (a negation, `..`, bad syntax: `check` reports
    /// them), so the rule matches no file, as pi's own scoping reads it: nothing is written.
    Nowhere,
}

/// A placement, and what the target cannot keep of the rule's scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub placement: Placement,
    /// Raw messages, each naming the rule and the agent.
    pub warnings: Vec<String>,
}

/// Where `target` is told `rule`, and how.
///
/// A rule of the root without globs, or with a glob that matches every file (`*`, `**`,
/// `**/*`), is [`Placement::Unscoped`]; a nested rule without globs, or with such a glob, is for
/// its whole directory `D` (`D/**`).
pub fn place(target: Target, rule: &ScopedRule) -> Placed {
    let dir = rule.dir.trim_matches('/');
    let globs: Vec<&str> = rule
        .globs
        .iter()
        .map(|g| g.trim())
        .filter(|g| !g.is_empty())
        .collect();
    let whole_dir = globs.is_empty() || globs.iter().any(|g| dialect::matches_everything(g));
    let mut warnings = Vec::new();
    if whole_dir && dir.is_empty() {
        return Placed {
            placement: Placement::Unscoped,
            warnings,
        };
    }
    let placement = match Dialect::of(target) {
        Some(d) => place_owned(d, rule.name, dir, &globs, whole_dir, &mut warnings),
        None => place_section(target, rule.name, dir, &globs, whole_dir, &mut warnings),
    };
    Placed {
        placement,
        warnings,
    }
}

/// A rule in an agent's scoped-rule file.
fn place_owned(
    d: Dialect,
    name: &str,
    dir: &str,
    globs: &[&str],
    whole_dir: bool,
    warnings: &mut Vec<String>,
) -> Placement {
    let path = owned_path(d, dir, name);
    // Cline's CLI reads only its working directory's `.clinerules/` (issue 35): a nested rule
    // sits in `D/.clinerules/`, its globs relative to `D`, and a rule for the whole of `D` has
    // no `paths:` (a file without frontmatter always applies: Cline docs, "Cline Rules").
    let nested_cline = d == Dialect::Cline && !dir.is_empty();
    if nested_cline && whole_dir {
        return Placement::Owned {
            path,
            frontmatter: String::new(),
        };
    }
    let within = if nested_cline { "" } else { dir };
    let globs = if whole_dir { &["**"][..] } else { globs };
    let patterns = translated(d, within, name, globs, warnings);
    if patterns.is_empty() {
        return nowhere(d, name, warnings);
    }
    Placement::Owned {
        path,
        frontmatter: frontmatter(d, name, &patterns, warnings),
    }
}

fn nowhere(d: Dialect, name: &str, warnings: &mut Vec<String>) -> Placement {
    warnings.push(format!(
        "rule `{name}`: none of its globs can be used, so no file is written for {}",
        d.agent()
    ));
    Placement::Nowhere
}

/// Every glob in `d`'s dialect, what each loses said in `warnings`.
fn translated(
    d: Dialect,
    dir: &str,
    name: &str,
    globs: &[&str],
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let mut patterns: Vec<String> = Vec::new();
    for glob in globs {
        let t = dialect::translate(d, dir, glob);
        if let Some(lost) = t.lost {
            warnings.push(format!("rule `{name}`, for {}: {lost}", d.agent()));
        }
        for p in t.patterns {
            if !patterns.contains(&p) {
                patterns.push(p);
            }
        }
    }
    patterns
}

/// The owned file of rule `name` of directory `dir` for dialect `d`, relative to the root.
///
/// Names are made safe as file names by [`safe_name`] and [`dir_slug`], so that two rules never
/// share a file: root rule `NAME` → `pi-rules-NAME`, a nested rule of `D` →
/// `pi-rules-D--NAME` (`D` with `/` as `-`), Claude Code's `pi-rules/D/NAME.md`, Cline's
/// `D/.clinerules/pi-rules-NAME.md`.
pub fn owned_path(d: Dialect, dir: &str, name: &str) -> String {
    let dir = dir.trim_matches('/');
    let name = safe_name(name);
    let stem = if dir.is_empty() {
        format!("pi-rules-{name}")
    } else {
        format!("pi-rules-{}--{name}", dir_slug(dir))
    };
    match d {
        // Claude Code reads every `.md` file below `.claude/rules/`, subfolders included
        // (https://code.claude.com/docs/en/memory, "Path-specific rules").
        Dialect::Claude => {
            let mut path = String::from(".claude/rules/pi-rules/");
            for part in dir.split('/').filter(|p| !p.is_empty()) {
                path.push_str(&safe_dir_part(part));
                path.push('/');
            }
            path.push_str(&name);
            path.push_str(".md");
            path
        }
        // https://cursor.com/docs/rules: project rules are `.mdc` files in `.cursor/rules`.
        Dialect::Cursor => format!(".cursor/rules/{stem}.mdc"),
        // GitHub docs, "Adding repository custom instructions": `NAME.instructions.md` files in
        // `.github/instructions`.
        Dialect::Copilot => format!(".github/instructions/{stem}.instructions.md"),
        // https://kiro.dev/docs/steering/: `.kiro/steering/*.md`.
        Dialect::Kiro => format!(".kiro/steering/{stem}.md"),
        // Windsurf docs, "Memories & Rules": `.windsurf/rules/*.md`.
        Dialect::Windsurf => format!(".windsurf/rules/{stem}.md"),
        // Cline docs, "Cline Rules": every file of `.clinerules/`.
        Dialect::Cline if dir.is_empty() => format!(".clinerules/pi-rules-{name}.md"),
        Dialect::Cline => format!("{dir}/.clinerules/pi-rules-{name}.md"),
    }
}

/// The frontmatter of `d`'s scoped-rule file for `patterns` (already in `d`'s dialect).
fn frontmatter(d: Dialect, name: &str, patterns: &[String], warnings: &mut Vec<String>) -> String {
    let mut out = String::from("---\n");
    match d {
        // `paths:` as a YAML list: Claude Code reads a list since 2.1.84 (issue 35).
        // Cline's `paths:` must be a list: a string applies always (issue 35).
        Dialect::Claude | Dialect::Cline => {
            out.push_str("paths:\n");
            for p in patterns {
                out.push_str("  - ");
                out.push_str(&yaml_quoted(p));
                out.push('\n');
            }
        }
        // `description`, `globs` (one unquoted comma-separated string) and `alwaysApply: false`:
        // an "auto attached" rule (https://cursor.com/docs/rules, rule types).
        Dialect::Cursor => {
            out.push_str("description: ");
            out.push_str(&yaml_quoted(&format!(
                "pi-rules rule {name}, for the files its globs match"
            )));
            out.push_str("\nglobs: ");
            out.push_str(&unquoted(d, name, &patterns.join(","), warnings));
            out.push_str("\nalwaysApply: false\n");
        }
        // `trigger: glob` with `globs:` (Windsurf docs, "Memories & Rules", activation modes).
        Dialect::Windsurf => {
            out.push_str("trigger: glob\nglobs: ");
            out.push_str(&unquoted(d, name, &patterns.join(","), warnings));
            out.push('\n');
        }
        // `applyTo:` one comma-separated string, quoted (GitHub docs, path-specific custom
        // instructions).
        Dialect::Copilot => {
            out.push_str("applyTo: ");
            let (value, exact) = copilot_quoted(&patterns.join(","));
            if !exact {
                warnings.push(format!(
                    "rule `{name}`, for Copilot: its globs hold both quotes and a backslash, \
                     which Copilot may read differently"
                ));
            }
            out.push_str(&value);
            out.push('\n');
        }
        // `inclusion: fileMatch` with `fileMatchPattern:`, a string or a list of them
        // (https://kiro.dev/docs/steering/, inclusion modes). Never one comma-separated string:
        // Kiro reads that as one pattern (issue 35).
        Dialect::Kiro => {
            out.push_str("inclusion: fileMatch\nfileMatchPattern: ");
            if let [one] = patterns {
                out.push_str(&yaml_quoted(one));
            } else {
                out.push('[');
                let quoted: Vec<String> = patterns.iter().map(|p| yaml_quoted(p)).collect();
                out.push_str(&quoted.join(", "));
                out.push(']');
            }
            out.push('\n');
        }
    }
    out.push_str("---\n");
    out
}

/// `value` as Cursor and Windsurf want `globs:`, unquoted (issue 35; Cursor's own rules write
/// `globs: **/*.ts`); a warning where a YAML reader would take it for something else than a
/// string (a leading `[`, `{`, a quote, `!`, `&`, `|`, `>`, `%`, `@` or a backtick, or a `: `).
fn unquoted(d: Dialect, name: &str, value: &str, warnings: &mut Vec<String>) -> String {
    let risky = value.starts_with(['[', '{', '"', '\'', '!', '&', '|', '>', '%', '@', '`'])
        || value.contains(": ")
        || value.chars().any(char::is_control);
    if risky {
        warnings.push(format!(
            "rule `{name}`, for {}: `globs: {value}` is written unquoted, as {} reads it, and \
             may be misread there",
            d.agent(),
            d.agent()
        ));
    }
    value.chars().filter(|c| !c.is_control()).collect()
}

/// A rule in a file that an agent reads whole: a headed subsection, or plain text in a nested
/// directory's file.
fn place_section(
    target: Target,
    name: &str,
    dir: &str,
    globs: &[&str],
    whole_dir: bool,
    warnings: &mut Vec<String>,
) -> Placement {
    // Codex and Qwen Code read `AGENTS.md` from the repository root down to their working
    // directory, at start, never a nested one after a read; goose reads `.goosehints` the same
    // way (issue 35): a nested rule is a section of its directory's file, and a rule with
    // globs a subsection headed with them. Gemini CLI adds a directory's `GEMINI.md` to the
    // result of a read there (issue 35), so a rule whose globs all lie in one directory `X` is a
    // section of `X/GEMINI.md`.
    let file_name = match target {
        Target::Goose => ".goosehints",
        Target::Gemini => "GEMINI.md",
        _ => "AGENTS.md",
    };
    let in_dir = |sub: &str| join(&join(dir, sub), file_name);
    if whole_dir {
        return Placement::Section {
            file: in_dir(""),
            heading: None,
        };
    }
    let usable: Vec<&str> = globs
        .iter()
        .copied()
        .filter(|g| match pi_rules_core::rule_scope::compile_glob(g) {
            Ok(()) => true,
            Err(e) => {
                warnings.push(format!("rule `{name}`: `{g}` is not used: {}", e.reason));
                false
            }
        })
        .collect();
    if usable.is_empty() {
        warnings.push(format!(
            "rule `{name}`: none of its globs can be used, so it is not written into `{}`",
            in_dir("")
        ));
        return Placement::Nowhere;
    }
    let heading = Some(heading(dir, &usable));
    if target == Target::Gemini {
        let dirs: Vec<(String, bool)> = usable.iter().map(|g| dialect::literal_dir(g)).collect();
        let common = common_dir(dirs.iter().map(|(d, _)| d.as_str()));
        if !common.is_empty() {
            let whole = dirs.iter().all(|(d, whole)| *whole && *d == common);
            return Placement::Section {
                file: in_dir(&common),
                heading: if whole { None } else { heading },
            };
        }
    }
    Placement::Section {
        file: in_dir(""),
        heading,
    }
}

/// The longest directory every one of `dirs` lies in (`""` when one of them is `""`).
fn common_dir<'a>(mut dirs: impl Iterator<Item = &'a str>) -> String {
    let Some(first) = dirs.next() else {
        return String::new();
    };
    let mut common: Vec<&str> = first.split('/').filter(|p| !p.is_empty()).collect();
    for d in dirs {
        let parts: Vec<&str> = d.split('/').filter(|p| !p.is_empty()).collect();
        let same = common
            .iter()
            .zip(&parts)
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(same);
    }
    common.join("/")
}

/// `dir` and `rest` joined with a `/` (either may be `""`).
fn join(dir: &str, rest: &str) -> String {
    match (dir.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => dir.to_string(),
        _ => format!("{dir}/{rest}"),
    }
}

/// The heading of a subsection: `For files matching `a`, `b``, the globs relative to the
/// project root (a nested directory's written below it).
fn heading(dir: &str, globs: &[&str]) -> String {
    let shown: Vec<String> = globs.iter().map(|g| code_span(&rooted(dir, g))).collect();
    format!("For files matching {}", shown.join(", "))
}

/// One of our globs of directory `dir`, written relative to the project root.
fn rooted(dir: &str, glob: &str) -> String {
    if dir.is_empty() {
        return glob.to_string();
    }
    let mut g = glob;
    while let Some(rest) = g.strip_prefix("./") {
        g = rest;
    }
    let anchored = g.starts_with('/') || g.trim_end_matches('/').contains('/');
    let g = g.trim_start_matches('/');
    if anchored || g.starts_with("**") {
        format!("{dir}/{g}")
    } else {
        format!("{dir}/**/{g}")
    }
}

/// `text` as a markdown code span, its fence longer than any run of backticks in it.
fn code_span(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// The section text of a file that holds headed rules: the unscoped block, then each rule, as
/// `## heading` + a blank line + its text when it has a heading, one blank line between any
/// two; ends with one `'\n'` (empty when there is nothing).
pub fn section_text(unscoped: &str, headed: &[(Option<String>, &str)]) -> String {
    let mut parts: Vec<Cow<str>> = Vec::with_capacity(headed.len() + 1);
    let unscoped = unscoped.trim_end_matches(['\n', '\r']);
    if !unscoped.is_empty() {
        parts.push(Cow::Borrowed(unscoped));
    }
    for (heading, text) in headed {
        let text = text.trim_end_matches(['\n', '\r']);
        match heading {
            Some(h) if text.is_empty() => parts.push(Cow::Owned(format!("## {h}"))),
            Some(h) => parts.push(Cow::Owned(format!("## {h}\n\n{text}"))),
            None if text.is_empty() => {}
            None => parts.push(Cow::Borrowed(text)),
        }
    }
    if parts.is_empty() {
        return String::new();
    }
    let mut out = parts.join("\n\n");
    out.push('\n');
    out
}

/// `s` as a YAML scalar in quotes: double quotes, or single quotes when it holds `"` or `\`
/// (read literally there), or double quotes with escapes when it holds a control character.
pub fn yaml_quoted(s: &str) -> String {
    let control = s.chars().any(char::is_control);
    if !control && (s.contains('"') || s.contains('\\')) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `applyTo:`'s value quoted so that Copilot, whose frontmatter reader is not a full YAML parser
/// (it cuts at ` #` even inside quotes: measured, issue 35), reads it as written: plain double
/// quotes, else plain single quotes; `false` when only escapes would do.
fn copilot_quoted(s: &str) -> (String, bool) {
    if s.chars().any(char::is_control) {
        return (yaml_quoted(s), false);
    }
    if !s.contains('"') && !s.contains('\\') {
        return (format!("\"{s}\""), true);
    }
    if !s.contains('\'') {
        return (format!("'{s}'"), true);
    }
    (yaml_quoted(s), false)
}

/// The most bytes of a name kept in a file name.
const MAX_NAME: usize = 96;

/// Windows' reserved device names: a file whose stem is one of them cannot be made there.
const RESERVED: &[&str] = &[
    "con", "prn", "aux", "nul", "com0", "com1", "com2", "com3", "com4", "com5", "com6", "com7",
    "com8", "com9", "lpt0", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Whether `c` cannot be in a file name on some system (or is our separator's half, for
/// [`dir_slug`]).
fn bad_char(c: char) -> bool {
    c.is_control() || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|')
}

/// Whether `s` is a Windows device name (its stem before the first dot, case ignored).
fn reserved(s: &str) -> bool {
    let stem = s.split('.').next().unwrap_or(s).trim_end();
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem))
}

/// A short, stable hash of `s` (FNV-1a, 64 bits, 12 hex digits): the same on every machine.
fn short_hash(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:012x}", h >> 16)
}

/// `s` with its unsafe characters made `_` (and `-` too, with `dash`), cut to [`MAX_NAME`]
/// bytes, and whether that changed it (or it was unsafe as a whole: empty, `.`, `..`, a Windows
/// device name, blank or a dot at its end).
fn scrub(s: &str, dash: bool) -> (String, bool) {
    let mut out: String = s
        .chars()
        .map(|c| {
            if bad_char(c) || (dash && c == '-') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let mut changed = out != s;
    if out.len() > MAX_NAME {
        let mut end = MAX_NAME;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        changed = true;
    }
    if out.is_empty()
        || out == "."
        || out == ".."
        || reserved(&out)
        || out.ends_with(['.', ' '])
        || out.starts_with(' ')
    {
        out = format!("_{}", out.trim_matches([' ', '.']));
        changed = true;
    }
    (out, changed)
}

/// A rule name as safe as a file name: unchanged when it is (`50-api`); else its unsafe
/// characters (`/`, `\`, control characters, those Windows refuses) made `_`, `..`, a Windows
/// device name, a trailing dot or blank, or a name longer than 96 bytes made safe, the dashes of
/// a name with `--` (the directory separator of [`owned_path`]) made `_`, and a hash of the name
/// as written added (`a_b-1f2e3d4c5b6a` for `a/b`), so that two names never become one and the
/// result never holds `--`.
pub fn safe_name(name: &str) -> Cow<'_, str> {
    let (mut out, changed) = scrub(name, false);
    if changed || out.contains("--") {
        if out.contains("--") || out.ends_with('-') {
            out = out.replace('-', "_");
        }
        Cow::Owned(format!("{out}-{}", short_hash(name)))
    } else {
        Cow::Borrowed(name)
    }
}

/// A nested directory as one part of a file name: its parts joined with `-`
/// (`packages/api` → `packages-api`); when a part holds a `-` or an unsafe character, those are
/// made `_` and a hash of the directory is added (`packages-my_app-1f2e3d4c5b6a`), so that the
/// first `--` of a file name always ends the directory and two directories never become one.
pub fn dir_slug(dir: &str) -> String {
    let mut changed = false;
    let parts: Vec<String> = dir
        .split('/')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (part, c) = scrub(p, true);
            changed |= c;
            part
        })
        .collect();
    let slug = parts.join("-");
    if changed {
        format!("{slug}-{}", short_hash(dir))
    } else {
        slug
    }
}

/// One part of a nested directory as a folder below `.claude/rules/pi-rules/`: as
/// [`safe_name`], and a part ending in `.md` is changed too, so that it cannot be a root rule's
/// file.
fn safe_dir_part(part: &str) -> Cow<'_, str> {
    if part.to_ascii_lowercase().ends_with(".md") {
        let (out, _) = scrub(part, false);
        return Cow::Owned(format!("{out}-{}", short_hash(part)));
    }
    safe_name(part)
}

#[cfg(test)]
mod tests;
