//! A stand-in for the per-agent forms (`export/forms.rs`, another helper's), with the design's
//! signatures, until they reach main: it is deleted then, and `forms` takes its place. Its
//! translations are rough (no dialect rules beyond the directory prefix and `**/`).

use super::Target;

/// A scoped rule to export: its text assembled alone.
pub struct ScopedRule<'a> {
    pub name: &'a str,
    pub dir: &'a str,
    pub globs: &'a [String],
    #[allow(dead_code)]
    pub text: &'a str,
}

pub enum Placement {
    Owned {
        path: String,
        frontmatter: String,
    },
    Section {
        file: String,
        heading: Option<String>,
    },
    Unscoped,
}

pub struct Placed {
    pub placement: Placement,
    pub warnings: Vec<String>,
}

fn patterns(rule: &ScopedRule<'_>) -> Vec<String> {
    let prefix = |p: &str| match rule.dir {
        "" => p.to_owned(),
        dir => format!("{dir}/{p}"),
    };
    if rule.globs.is_empty() {
        return vec![prefix("**")];
    }
    rule.globs
        .iter()
        .map(|g| {
            let g = g.trim_end_matches('/');
            if let Some(anchored) = g.strip_prefix('/') {
                prefix(anchored)
            } else if g.contains('/') {
                prefix(g)
            } else {
                prefix(&format!("**/{g}"))
            }
        })
        .collect()
}

pub fn place(target: Target, rule: &ScopedRule<'_>) -> Placed {
    let placed = |placement| Placed {
        placement,
        warnings: Vec::new(),
    };
    let always = rule.dir.is_empty()
        && rule
            .globs
            .iter()
            .any(|g| matches!(g.as_str(), "*" | "**" | "**/*"));
    if always {
        return placed(Placement::Unscoped);
    }
    let pats = patterns(rule);
    let slug = match rule.dir {
        "" => rule.name.to_owned(),
        dir => format!("{}--{}", dir.replace('/', "-"), rule.name),
    };
    let list = |prefix: &str| {
        pats.iter()
            .map(|p| format!("  - \"{prefix}{p}\"\n"))
            .collect::<String>()
    };
    let owned = |path: String, frontmatter: String| placed(Placement::Owned { path, frontmatter });
    match target {
        Target::Claude => {
            let sub = match rule.dir {
                "" => String::new(),
                dir => format!("{dir}/"),
            };
            owned(
                format!(".claude/rules/pi-rules/{sub}{}.md", rule.name),
                format!("---\npaths:\n{}---\n", list("/")),
            )
        }
        Target::Cursor => owned(
            format!(".cursor/rules/pi-rules-{slug}.mdc"),
            format!(
                "---\ndescription: {}\nglobs: {}\nalwaysApply: false\n---\n",
                rule.name,
                pats.join(",")
            ),
        ),
        Target::Copilot => owned(
            format!(".github/instructions/pi-rules-{slug}.instructions.md"),
            format!("---\napplyTo: \"{}\"\n---\n", pats.join(",")),
        ),
        Target::Kiro => owned(
            format!(".kiro/steering/pi-rules-{slug}.md"),
            format!(
                "---\ninclusion: fileMatch\nfileMatchPattern:\n{}---\n",
                list("")
            ),
        ),
        Target::Windsurf => owned(
            format!(".windsurf/rules/pi-rules-{slug}.md"),
            format!("---\ntrigger: glob\nglobs: {}\n---\n", pats.join(",")),
        ),
        Target::Cline => {
            let dir = match rule.dir {
                "" => String::new(),
                dir => format!("{dir}/"),
            };
            owned(
                format!("{dir}.clinerules/pi-rules-{}.md", rule.name),
                format!("---\npaths:\n{}---\n", list("")),
            )
        }
        Target::AgentsMd | Target::Goose | Target::Gemini => {
            let name = target.path();
            if !rule.dir.is_empty() && rule.globs.is_empty() {
                return placed(Placement::Section {
                    file: format!("{}/{name}", rule.dir),
                    heading: None,
                });
            }
            let globs: Vec<String> = pats.iter().map(|p| format!("`{p}`")).collect();
            placed(Placement::Section {
                file: name.to_owned(),
                heading: Some(format!("## For files matching {}", globs.join(", "))),
            })
        }
    }
}

/// The section text of a file that holds headed rules.
pub fn section_text(unscoped: &str, headed: &[(Option<String>, &str)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !unscoped.is_empty() {
        parts.push(unscoped.to_owned());
    }
    for (heading, text) in headed {
        parts.push(match heading {
            Some(h) => format!("{h}\n\n{text}"),
            None => (*text).to_owned(),
        });
    }
    let mut out = String::new();
    for part in parts {
        if !out.is_empty() {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str(&part);
    }
    out
}
