//! What `export` writes, before any file: the loaded rules split into the unscoped ones (no
//! `paths:`, in the project layer's own directory), which make each target's block, and the
//! scoped ones (`paths:`, or in a nested `.pi/rules` directory), each assembled alone, which
//! each agent gets in its own form ([`super::forms`]). `agents:` is applied per target
//! ([`Target::reaches`]).
//!
//! Pi's own block is not touched: [`crate::assembly::run`] assembles it as before, and a target
//! whose rules are all of them gets that very text.

use super::Target;
use crate::assembly::Run;
use crate::check::walk::{self, Limits};
use pi_rules_core::{assemble as engine, frontmatter, rule_scope, Scope};
use std::collections::HashMap;
use std::path::Path;

/// A scoped rule, assembled alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scoped {
    /// The file stem: `50-api`.
    pub name: String,
    /// Its nested directory relative to the project root, `/`-separated; `""` for the root.
    pub dir: String,
    /// `paths:` as written; empty for a nested rule for its whole directory.
    pub globs: Vec<String>,
    /// `agents:` as written; empty for every agent.
    pub agents: Vec<String>,
    /// The rule assembled alone (never empty: a rule that assembles to nothing is left out).
    pub text: String,
}

/// An unscoped rule: one of the block's inputs.
#[derive(Debug, Clone)]
struct Unscoped {
    /// Its index in the run's loaded files.
    file: usize,
    agents: Vec<String>,
}

/// A root rule as loaded.
#[derive(Debug, Clone)]
struct Source {
    stem: String,
    text: String,
    agents: Vec<String>,
    scoped: bool,
}

/// The rules of one export.
#[derive(Debug, Default)]
pub struct Model {
    /// The block of every target, by target (in [`Target::ALL`] order).
    blocks: Vec<String>,
    pub scoped: Vec<Scoped>,
    /// The root rules in assembly order (name, text as loaded, `agents:`, scoped), for
    /// [`Model::block_with`].
    sources: Vec<Source>,
    /// What the user should hear (a nested directory not read, a walk cut short).
    pub notes: Vec<String>,
    /// Files below the root, found by the walk, that may be export's from an earlier run: a
    /// `pi-rules*` file in an agent's rules directory, or a nested `AGENTS.md`, `CLAUDE.md`,
    /// `GEMINI.md` or `.goosehints`, `/`-separated from the root.
    pub candidates: Vec<String>,
    scope: Option<(pi_rules_core::Settings, pi_rules_core::Features, String)>,
}

/// How far the walk for nested rule directories goes.
#[derive(Debug, Clone, Copy)]
pub struct WalkOptions {
    /// Walk at all (the project's nested `.pi/rules` and earlier exports' files).
    pub walk: bool,
    pub limits: Limits,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            walk: true,
            limits: Limits::default(),
        }
    }
}

/// The files under `root` an earlier export may have written ([`is_candidate`]), found by the
/// walk, for `export --remove`.
pub fn walk_candidates(root: &Path, limits: Limits) -> Vec<String> {
    let mut out = Vec::new();
    walk::walk(root, limits, |path| {
        if is_candidate(path) {
            out.push(path.to_owned());
        }
    });
    out
}

/// Whether a file below the root, `/`-separated, may be one `export` wrote in an earlier run.
pub fn is_candidate(path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    if matches!(
        name,
        "AGENTS.md" | "CLAUDE.md" | "GEMINI.md" | ".goosehints"
    ) {
        return !dir.is_empty();
    }
    if dir == ".claude/rules/pi-rules" || dir.starts_with(".claude/rules/pi-rules/") {
        return name.ends_with(".md");
    }
    if !name.starts_with("pi-rules") {
        return false;
    }
    matches!(
        dir,
        ".cursor/rules" | ".github/instructions" | ".kiro/steering" | ".windsurf/rules"
    ) || dir == ".clinerules"
        || dir.ends_with("/.clinerules")
}

impl Model {
    /// A model whose every target's block is `text`, with no scoped rule: an export of one
    /// block, as `export` made before scopes.
    pub fn plain(text: &str) -> Model {
        Model {
            blocks: vec![text.to_owned(); Target::ALL.len()],
            ..Model::default()
        }
    }

    /// The model of a run made for `export` (its layers chosen, scopes off), under the canonical
    /// project `root`.
    pub fn build(run: &Run, root: &Path, options: WalkOptions) -> Model {
        let mut model = Model::default();
        let Some(loaded) = &run.loaded else {
            model.blocks = vec![String::new(); Target::ALL.len()];
            return model;
        };
        if loaded.fallback || run.assembly.is_none() {
            model.blocks = vec![run.block.text().to_owned(); Target::ALL.len()];
            return model;
        }
        let session = &run.session;
        let cwd = session
            .files()
            .canonical(&session.cwd)
            .unwrap_or_else(|| session.cwd.clone());
        let own_dir = cwd
            .strip_prefix(root)
            .ok()
            .and_then(|p| p.to_str())
            .unwrap_or("")
            .to_owned();
        let scope = Scope {
            settings: run.resolved.settings(),
            features: &run.features,
            review_loop_max_cycles: &run.review_loop_max_cycles,
        };
        let mut unscoped = Vec::new();
        for (i, file) in loaded.files.iter().enumerate() {
            let text = file.text.as_ref();
            let (globs, agents) = lists(text);
            model.sources.push(Source {
                stem: stem(&file.name).to_owned(),
                text: text.to_owned(),
                agents: agents.clone(),
                scoped: !globs.is_empty(),
            });
            if globs.is_empty() {
                unscoped.push(Unscoped { file: i, agents });
                continue;
            }
            model.push_scoped(&file.name, &own_dir, globs, agents, text, &scope);
        }
        // One assembly per distinct set of unscoped rules; the run's own text when it is all
        // of them.
        let all = unscoped.len() == loaded.files.len();
        let mut made: HashMap<Vec<usize>, String> = HashMap::new();
        for target in Target::ALL {
            let set: Vec<usize> = unscoped
                .iter()
                .filter(|u| target.reaches(&u.agents))
                .map(|u| u.file)
                .collect();
            let block = if all && set.len() == loaded.files.len() {
                run.block.text().to_owned()
            } else {
                made.entry(set)
                    .or_insert_with_key(|set| {
                        let texts: Vec<&str> =
                            set.iter().map(|&i| loaded.files[i].text.as_ref()).collect();
                        engine::assemble(&texts, &scope).text
                    })
                    .clone()
            };
            model.blocks.push(block);
        }
        model.scope = Some((
            scope.settings.clone(),
            scope.features.clone(),
            scope.review_loop_max_cycles.to_owned(),
        ));
        if options.walk {
            model.walk_nested(run, root, &own_dir, options.limits, &scope);
        }
        model
    }

    fn push_scoped(
        &mut self,
        file_name: &str,
        dir: &str,
        globs: Vec<String>,
        agents: Vec<String>,
        text: &str,
        scope: &Scope<'_>,
    ) {
        let assembled = engine::assemble(&[text], scope).text;
        if assembled.is_empty() {
            return;
        }
        self.scoped.push(Scoped {
            name: stem(file_name).to_owned(),
            dir: dir.to_owned(),
            globs,
            agents,
            text: assembled,
        });
    }

    /// Walks the project for nested `.pi/rules` directories (bounded, `.gitignore` honoured)
    /// and loads each, and notes the files an earlier export may have written.
    fn walk_nested(
        &mut self,
        run: &Run,
        root: &Path,
        own_dir: &str,
        limits: Limits,
        scope: &Scope,
    ) {
        let mut candidates = Vec::new();
        let walked = walk::walk(root, limits, |path| {
            if is_candidate(path) {
                candidates.push(path.to_owned());
            }
        });
        self.candidates = candidates;
        if walked.truncated {
            self.notes.push(format!(
                "the walk of `{}` stopped after {} files: nested rule directories and earlier \
                 exports' files past them are not seen",
                root.display(),
                limits.max_files
            ));
        }
        let session = &run.session;
        let policy = session.policy(true);
        let mut nested = walked.nested;
        nested.sort();
        for dir in nested {
            if dir == own_dir || dir.is_empty() {
                continue;
            }
            let absolute = root.join(&dir);
            let Some(loaded) =
                crate::scoped::load_nested(session, &absolute, &policy, &mut self.notes)
            else {
                continue;
            };
            for file in &loaded.files {
                let text = file.text.as_ref();
                let (globs, agents) = lists(text);
                self.push_scoped(&file.name, &dir, globs, agents, text, scope);
            }
        }
    }

    /// The unscoped block of `target`.
    pub fn block(&self, target: Target) -> &str {
        let at = Target::ALL.iter().position(|&t| t == target).unwrap_or(0);
        self.blocks.get(at).map_or("", String::as_str)
    }

    /// The rules (their file stems, in assembly order, then the scoped ones) whose `agents:`
    /// reach `target` and not `other`.
    pub fn reaching_only(&self, target: Target, other: Target) -> Vec<&str> {
        let unscoped = self
            .sources
            .iter()
            .filter(|s| !s.scoped)
            .map(|s| (s.stem.as_str(), &s.agents));
        let scoped = self.scoped.iter().map(|r| (r.name.as_str(), &r.agents));
        unscoped
            .chain(scoped)
            .filter(|(_, agents)| target.reaches(agents) && !other.reaches(agents))
            .map(|(name, _)| name)
            .collect()
    }

    /// The block of `target` with the root rules `names` (scoped rules that are unscoped for
    /// it) joining it, in assembly order; the block itself when `names` is empty.
    pub fn block_with(&self, target: Target, names: &[&str]) -> String {
        let Some((settings, features, cycles)) = &self.scope else {
            return self.block(target).to_owned();
        };
        if names.is_empty() {
            return self.block(target).to_owned();
        }
        let texts: Vec<&str> = self
            .sources
            .iter()
            .filter(|s| {
                (!s.scoped && target.reaches(&s.agents)) || names.contains(&s.stem.as_str())
            })
            .map(|s| s.text.as_str())
            .collect();
        let scope = Scope {
            settings,
            features,
            review_loop_max_cycles: cycles,
        };
        engine::assemble(&texts, &scope).text
    }
}

/// A rule file's name without `.md`.
fn stem(name: &str) -> &str {
    name.strip_suffix(".md").unwrap_or(name)
}

/// A rule's `paths:` and `agents:`, as written.
fn lists(text: &str) -> (Vec<String>, Vec<String>) {
    let fm = frontmatter::split(text);
    let scope = rule_scope::parse(text, &fm);
    (
        scope.globs().map(str::to_owned).collect(),
        scope.agent_names().map(str::to_owned).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_agents_rules_directories_pi_rules_files_and_nested_agent_files() {
        for yes in [
            ".claude/rules/pi-rules/50-api.md",
            ".claude/rules/pi-rules/packages/api/10-x.md",
            ".cursor/rules/pi-rules-50-api.mdc",
            ".github/instructions/pi-rules-x.instructions.md",
            ".kiro/steering/pi-rules-x.md",
            ".windsurf/rules/pi-rules-x.md",
            ".clinerules/pi-rules-x.md",
            "packages/api/.clinerules/pi-rules-x.md",
            "packages/api/AGENTS.md",
            "src/GEMINI.md",
        ] {
            assert!(is_candidate(yes), "{yes}");
        }
        for no in [
            "AGENTS.md",
            "CLAUDE.md",
            ".cursor/rules/mine.mdc",
            "src/pi-rules-x.md",
            ".github/copilot-instructions.md",
        ] {
            assert!(!is_candidate(no), "{no}");
        }
    }
}
