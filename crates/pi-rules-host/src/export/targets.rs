//! The agents `export` writes for: each target's file, its form, and the limit its agent reads.

use std::fmt;

/// How a target's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A file people also write by hand: pi-rules owns the text between its markers only
    /// ([`super::section`]).
    Section,
    /// A file pi-rules writes whole, with this frontmatter before its generated-by line
    /// ([`super::owned`]); `""` for none.
    Owned { frontmatter: &'static str },
}

/// An agent whose instruction file `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    AgentsMd,
    Claude,
    Gemini,
    Copilot,
    Goose,
    Cursor,
    Windsurf,
    Cline,
    Kiro,
}

/// A limit on what an agent reads of a file: past it, the agent cuts the text without a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// How much the agent reads.
    pub max: u64,
    /// Whether `max` counts bytes (else characters).
    pub bytes: bool,
    /// Who reads so much, for the warning: "Codex reads".
    pub reader: &'static str,
}

impl Target {
    /// Every target, in the order `export` lists and writes them.
    pub const ALL: [Target; 9] = [
        Target::AgentsMd,
        Target::Claude,
        Target::Gemini,
        Target::Copilot,
        Target::Goose,
        Target::Cursor,
        Target::Windsurf,
        Target::Cline,
        Target::Kiro,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::AgentsMd => "agents-md",
            Target::Claude => "claude",
            Target::Gemini => "gemini",
            Target::Copilot => "copilot",
            Target::Goose => "goose",
            Target::Cursor => "cursor",
            Target::Windsurf => "windsurf",
            Target::Cline => "cline",
            Target::Kiro => "kiro",
        }
    }

    /// The target of a command-line name.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The file, relative to the project root, `/`-separated.
    pub fn path(self) -> &'static str {
        match self {
            Target::AgentsMd => "AGENTS.md",
            Target::Claude => "CLAUDE.md",
            Target::Gemini => "GEMINI.md",
            Target::Copilot => ".github/copilot-instructions.md",
            Target::Goose => ".goosehints",
            Target::Cursor => ".cursor/rules/pi-rules.mdc",
            Target::Windsurf => ".windsurf/rules/pi-rules.md",
            Target::Cline => ".clinerules/pi-rules.md",
            Target::Kiro => ".kiro/steering/pi-rules.md",
        }
    }

    /// The directories below the project root, and the file name.
    pub fn split_path(self) -> (Vec<&'static str>, &'static str) {
        let mut parts: Vec<&'static str> = self.path().split('/').collect();
        let name = parts.pop().unwrap_or_default();
        (parts, name)
    }

    /// How the file is written. The frontmatter is what makes each agent apply the file to every
    /// request:
    /// - Cursor reads `.cursor/rules/*.mdc` with frontmatter `description`, `globs` (one
    ///   comma-separated, unquoted string) and `alwaysApply`; a rule with `alwaysApply: true` is
    ///   always in the model's context, its globs ignored (<https://cursor.com/docs/rules>, rule
    ///   types; `alwaysApply` must be the boolean, not the string `"true"`).
    /// - Windsurf reads `.windsurf/rules/*.md` with `trigger: always_on | model_decision | glob |
    ///   manual` (Windsurf docs, "Memories & Rules", activation modes).
    /// - Kiro reads `.kiro/steering/*.md` with `inclusion: always | fileMatch | manual`; `always`
    ///   is also its default (Kiro docs, "Steering", inclusion modes; taken from the issue, not
    ///   checked against the page here).
    /// - Cline applies every file of `.clinerules/`; a file without frontmatter always (Cline
    ///   docs, "Cline Rules").
    pub fn form(self) -> Form {
        match self {
            Target::AgentsMd | Target::Claude | Target::Gemini | Target::Copilot | Target::Goose => {
                Form::Section
            }
            Target::Cursor => Form::Owned {
                frontmatter: "---\ndescription: The team's rules, exported by pi-rules\nalwaysApply: true\n---\n",
            },
            Target::Windsurf => Form::Owned {
                frontmatter: "---\ntrigger: always_on\n---\n",
            },
            Target::Cline => Form::Owned { frontmatter: "" },
            Target::Kiro => Form::Owned {
                frontmatter: "---\ninclusion: always\n---\n",
            },
        }
    }

    /// In pointer mode, what the section holds instead of a copy of the block: the agent's import
    /// of `AGENTS.md`, written `@./AGENTS.md` for both. Claude Code imports a file with `@path`,
    /// relative paths included (Claude Code docs, "Manage Claude's memory", CLAUDE.md imports);
    /// Gemini CLI with `@./file.md` (Gemini CLI docs, "Memory Import Processor"). Copilot CLI,
    /// which reads `CLAUDE.md` and `GEMINI.md` too, follows `@AGENTS.md` but not `@./AGENTS.md`
    /// (measured with Copilot CLI 1.0.102, issue 35): this form keeps it to one copy.
    pub fn pointer(self) -> Option<&'static str> {
        match self {
            Target::Claude | Target::Gemini => Some("@./AGENTS.md"),
            _ => None,
        }
    }

    /// The agents (as `agents:` names them) that read this target's files: a rule with `agents:`
    /// reaches the target when the two meet. `agents-md` is every agent that reads `AGENTS.md`
    /// as its own file (Codex, opencode, Qwen Code, Kilo, Amp, Jules, Aider, Zed, Warp, Junie,
    /// Crush, Roo Code, Augment, Firebender, Antigravity, Trae); `pi` is none of them.
    pub fn agents(self) -> &'static [&'static str] {
        match self {
            Target::AgentsMd => &[
                "codex",
                "opencode",
                "qwen",
                "kilo",
                "amp",
                "jules",
                "aider",
                "zed",
                "warp",
                "junie",
                "crush",
                "roo",
                "augment",
                "firebender",
                "antigravity",
                "trae",
            ],
            Target::Claude => &["claude"],
            Target::Gemini => &["gemini"],
            Target::Copilot => &["copilot"],
            Target::Goose => &["goose"],
            Target::Cursor => &["cursor"],
            Target::Windsurf => &["windsurf"],
            Target::Cline => &["cline"],
            Target::Kiro => &["kiro"],
        }
    }

    /// Whether a rule for `agents` (its `agents:` list; empty for every agent) reaches this
    /// target. Names compare without regard to case.
    pub fn reaches<S: AsRef<str>>(self, agents: &[S]) -> bool {
        agents.is_empty()
            || agents.iter().any(|a| {
                self.agents()
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(a.as_ref()))
            })
    }

    /// What the target's agent reads of its file at most.
    pub fn limit(self) -> Option<Limit> {
        match self {
            // Codex joins the AGENTS.md files from the repository root down, "and stops adding
            // files once the combined size reaches the limit defined by project_doc_max_bytes
            // (32 KiB by default)" (https://developers.openai.com/codex/guides/agents-md, "How
            // Codex discovers guidance"). Only this file is counted here: the ones above or
            // below it in other directories share the same budget.
            Target::AgentsMd => Some(Limit {
                max: 32 * 1024,
                bytes: true,
                reader: "Codex reads at most",
            }),
            // "Copilot code review only reads the first 4,000 characters of any custom
            // instruction file" (GitHub docs, "Adding repository custom instructions for GitHub
            // Copilot", the reusable `repository-custom-instructions-support.md`). That sentence
            // was dropped from the docs in github/docs#42361, and github/docs#42761 asks whether
            // the limit still holds: kept until GitHub says it is gone.
            Target::Copilot => Some(Limit {
                max: 4000,
                bytes: false,
                reader: "Copilot code review reads the first",
            }),
            // "Rules files are limited to 6000 characters each. Any content above 6000
            // characters will be truncated" (https://docs.windsurf.com/windsurf/cascade/memories,
            // "Rules"). Some translations of that page now say 12,000: the lower figure is kept,
            // as a file under it is read whole either way.
            Target::Windsurf => Some(Limit {
                max: 6000,
                bytes: false,
                reader: "Windsurf reads at most",
            }),
            _ => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every target name, comma-separated, for messages.
pub fn names() -> String {
    Target::ALL.map(Target::name).join(", ")
}

/// A warning when `bytes` holds more than `limit` (with `max_bytes`, that many bytes instead):
/// the text of the warning, without a prefix.
pub fn over_limit(target: Target, bytes: &[u8], max_bytes: Option<u64>) -> Option<String> {
    let limit = match max_bytes {
        Some(max) => Limit {
            max,
            bytes: true,
            reader: "--max-bytes allows",
        },
        None => target.limit()?,
    };
    let (size, unit) = if limit.bytes {
        (bytes.len() as u64, "bytes")
    } else {
        (
            String::from_utf8_lossy(bytes).chars().count() as u64,
            "characters",
        )
    };
    (size > limit.max).then(|| {
        format!(
            "`{}` ({target}) holds {size} {unit}; {} {} {unit}, and the rest is cut without a word",
            target.path(),
            limit.reader,
            limit.max
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_paths_split() {
        for target in Target::ALL {
            assert_eq!(Target::from_name(target.name()), Some(target));
            let (dirs, name) = target.split_path();
            assert!(!name.is_empty() && !name.contains('/'));
            assert_eq!(target.path().matches('/').count(), dirs.len());
        }
        assert_eq!(Target::from_name("agents"), None);
        // Every agent a target stands for is one `agents:` knows.
        for target in Target::ALL {
            for agent in target.agents() {
                assert!(
                    pi_rules_core::rule_scope::is_known_agent(agent),
                    "{target}: {agent}"
                );
            }
        }
        assert_eq!(
            Target::Copilot.split_path(),
            (vec![".github"], "copilot-instructions.md")
        );
    }

    #[test]
    fn agents_reach_the_targets_that_serve_them() {
        assert!(Target::Claude.reaches::<&str>(&[]));
        assert!(Target::Claude.reaches(&["Claude"]));
        assert!(!Target::Claude.reaches(&["codex"]));
        assert!(Target::AgentsMd.reaches(&["cursor", "codex"]));
        for target in Target::ALL {
            assert!(!target.reaches(&["pi"]), "{target}");
        }
    }

    #[test]
    fn limits_count_bytes_or_characters() {
        let ascii = vec![b'a'; 4000];
        assert_eq!(over_limit(Target::Copilot, &ascii, None), None);
        let over = over_limit(Target::Copilot, &[b'a'; 4001], None).unwrap();
        assert!(
            over.contains("4001 characters") && over.contains("first 4000"),
            "{over}"
        );
        // 3000 two-byte characters: 6000 bytes but 3000 characters.
        let wide = "é".repeat(3000);
        assert_eq!(over_limit(Target::Windsurf, wide.as_bytes(), None), None);
        assert!(over_limit(Target::AgentsMd, &vec![b'a'; 32 * 1024], None).is_none());
        assert!(over_limit(Target::AgentsMd, &vec![b'a'; 32 * 1024 + 1], None).is_some());
        assert!(over_limit(Target::Claude, &vec![b'a'; 1 << 20], None).is_none());
        assert!(over_limit(Target::Claude, b"abc", Some(2))
            .unwrap()
            .contains("3 bytes"));
    }
}
