//! One assembly run as the commands see it: read the layers and settings, assemble, and keep
//! everything `assemble`, `explain` and `serve` report about it. The commands share this; none of
//! them assembles on its own.

use crate::error::Result;
use crate::loader::{self, Candidate, Loaded, NameReport, PackageSource, Pick};
use crate::notes::Note;
use crate::scoped::{self, ScopeReport};
use crate::session::{self, Session, SettingsFileState, SettingsRead, FALLBACK_BLOCK};
use pi_rules_core::settings::Resolved;
use pi_rules_core::{assemble as engine, Assembly, Features, Message, Observer, Scope, Settings};
use std::path::PathBuf;
use std::time::Instant;

/// What an assembly reads besides the session: which package layer, what the host says about
/// the session's features, and whether rules are confined to the project.
#[derive(Debug, Clone, Default)]
pub struct LayerOptions {
    /// A package rules directory instead of the embedded rules.
    pub package_dir: Option<PathBuf>,
    /// Peer-to-peer messaging is running (the `coms_active` feature predicate).
    pub coms_active: bool,
    /// `--confine`: a project rule that resolves outside the project, or a rule that is a
    /// special file, is treated as unreadable. The session's `Env` can turn this on too
    /// ([`Env::confined`](crate::env::Env::confined)).
    pub confine: bool,
    /// `export`: only these layers are read, and `PI_SUBAGENT_CHILD` has no effect.
    pub export_layers: Option<crate::selection::LayerChoice>,
    /// Which agent the block is for and which files it works on (`--agent`, `--path`).
    pub scope: ScopeOptions,
}

/// What scoped rules a run honours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeOptions {
    /// The agent; `None` is pi.
    pub agent: Option<String>,
    /// The files the agent works on, relative to the working directory or absolute.
    pub paths: Vec<PathBuf>,
    /// Whether pi honours scopes; `None` reads the configuration's `[rules] scoped` for the
    /// session's project. Other agents always do.
    pub scoped_in_pi: Option<bool>,
}

impl ScopeOptions {
    /// The query to narrow the rules to, when scopes are honoured for this agent in `session`.
    pub fn query(&self, session: &Session) -> Option<scoped::Query> {
        self.resolve(session).0
    }

    /// [`ScopeOptions::query`], with what the user should hear of pi-rules' configuration files
    /// when they were read (a broken file's findings).
    pub fn resolve(&self, session: &Session) -> (Option<scoped::Query>, Vec<Note>) {
        let agent = self
            .agent
            .as_deref()
            .unwrap_or(scoped::PI)
            .to_ascii_lowercase();
        let mut notes = Vec::new();
        let on = agent != scoped::PI
            || self.scoped_in_pi.unwrap_or_else(|| {
                let config = crate::config::Config::read(session);
                notes = config.notes();
                config.config.scoped()
            });
        let query = on.then(|| scoped::Query {
            agent,
            paths: self.paths.clone(),
        });
        (query, notes)
    }
}

/// Everything one assembly produced.
pub struct Run {
    pub session: Session,
    /// What the user should hear, in order: why a settings file or value is ignored, a package
    /// directory that is not a directory, rules that escape the project, project rules at the
    /// repository root that this directory does not read.
    pub notes: Vec<Note>,
    /// What became of each settings file.
    pub settings_files: Vec<SettingsFileState>,
    /// The layers as loaded; `None` for a subagent, which reads nothing.
    pub loaded: Option<Loaded>,
    pub resolved: Resolved,
    /// The feature predicates the assembly saw.
    pub features: Features,
    /// What `{{REVIEW_LOOP_MAX_CYCLES}}` became.
    pub review_loop_max_cycles: String,
    /// The rules block: its text, and the form a host appends.
    pub block: RulesBlock,
    /// The assembly, its text moved into `block`.
    pub assembly: Option<Assembly>,
    /// What scopes did, when the run honoured them.
    pub scope: Option<ScopeReport>,
    pub read_micros: u128,
    pub assemble_micros: u128,
}

impl Run {
    /// The message of every warning of the assembly, in order (none for a subagent or the
    /// fallback). Messages quote the rule files' texts, which the run keeps.
    pub fn warning_messages(&self) -> impl Iterator<Item = Message<'_>> + '_ {
        let texts = self.loaded.as_ref().map_or(&[][..], |l| &l.files[..]);
        self.assembly.iter().flat_map(move |a| {
            a.warnings.iter().map(move |w| {
                let text = texts.get(w.file()).map_or("", |f| f.text.as_ref());
                w.message(text)
            })
        })
    }
}

/// What a host puts before every block but a subagent's empty one: a blank line after the
/// prompt's text.
const BLOCK_PREFIX: &str = "\n\n";

/// The rules block of one run, held once: its text (what `assemble` prints, `export` writes and
/// `diff` compares) and the form a host appends to the system prompt (what `serve` answers and
/// the JSON forms carry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RulesBlock {
    /// The form a host appends: `"\n\n"` and the text, or `""` for a subagent.
    appended: String,
    /// Where the text starts in `appended`.
    text_at: usize,
}

impl RulesBlock {
    /// The block of an assembly whose text is `text`, made in place (the text has room: it was
    /// reserved for the whole input), so the run holds the text once.
    fn assembled(mut text: String) -> RulesBlock {
        text.insert_str(0, BLOCK_PREFIX);
        RulesBlock {
            appended: text,
            text_at: BLOCK_PREFIX.len(),
        }
    }

    /// The block used when no rule file could be taken, [`FALLBACK_BLOCK`] as it is.
    fn fallback() -> RulesBlock {
        debug_assert!(FALLBACK_BLOCK.starts_with(BLOCK_PREFIX));
        RulesBlock {
            appended: FALLBACK_BLOCK.to_owned(),
            text_at: BLOCK_PREFIX.len(),
        }
    }

    /// The block's text, without the blank line a host puts before it: the assembly's text, the
    /// fallback line, or `""` for a subagent.
    pub fn text(&self) -> &str {
        &self.appended[self.text_at..]
    }

    /// The block exactly as a host appends it: `"\n\n"` and the text, [`FALLBACK_BLOCK`] as it
    /// is, or `""` for a subagent, which gets no block.
    pub fn appended(&self) -> &str {
        &self.appended
    }
}

/// Reads the layers named by `args` and assembles them with `resolved` settings, reporting
/// decisions to `observer`. What the user should know about the settings and the layers (a
/// package directory that does not exist, rules that escape the project) is in
/// [`Run::notes`], after the settings' own notes.
pub fn run<O: Observer>(
    session: Session,
    args: &LayerOptions,
    settings: SettingsRead,
    observer: &mut O,
) -> Result<Run> {
    run_with(session, args, settings, |texts, scope| {
        engine::assemble_observed(texts, scope, observer)
    })
}

/// Like [`run`] with no observer, taking the assembly from `memo` when the rule texts and the
/// scope are those of the last run through it: for `serve`, asked for the same block turn after
/// turn. The layers and settings are read afresh every time; only the engine's pure work is
/// kept.
pub fn run_memoized(
    session: Session,
    args: &LayerOptions,
    settings: SettingsRead,
    memo: &mut AssemblyMemo,
) -> Result<Run> {
    run_with(session, args, settings, |texts, scope| {
        memo.assemble(texts, scope)
    })
}

/// The last assembly and what it was made from (see [`run_memoized`]).
#[derive(Default)]
pub struct AssemblyMemo {
    texts: Vec<String>,
    settings: Settings,
    features: Features,
    review_loop_max_cycles: String,
    assembly: Option<Assembly>,
}

impl AssemblyMemo {
    /// Inputs over this many bytes in all are not kept: the memo holds a copy of them.
    pub const MAX_BYTES: usize = 4 << 20;

    /// `engine::assemble(texts, scope)`, from the memo when its inputs are the same.
    fn assemble(&mut self, texts: &[&str], scope: &Scope<'_>) -> Assembly {
        let same = self.assembly.is_some()
            && self.texts.len() == texts.len()
            && self
                .texts
                .iter()
                .zip(texts)
                .all(|(kept, text)| kept == text)
            && self.settings == *scope.settings
            && self.features == *scope.features
            && self.review_loop_max_cycles == scope.review_loop_max_cycles;
        if let (true, Some(assembly)) = (same, &self.assembly) {
            return assembly.clone();
        }
        let assembly = engine::assemble_observed(texts, scope, &mut ());
        if texts.iter().map(|t| t.len()).sum::<usize>() > Self::MAX_BYTES {
            *self = AssemblyMemo::default();
            return assembly;
        }
        self.texts.truncate(texts.len());
        for (i, text) in texts.iter().enumerate() {
            match self.texts.get_mut(i) {
                Some(kept) => {
                    kept.clear();
                    kept.push_str(text);
                }
                None => self.texts.push((*text).to_owned()),
            }
        }
        self.settings.clone_from(scope.settings);
        self.features.clone_from(scope.features);
        self.review_loop_max_cycles.clear();
        self.review_loop_max_cycles
            .push_str(scope.review_loop_max_cycles);
        self.assembly = Some(assembly.clone());
        assembly
    }
}

/// [`run`] with the engine step given.
fn run_with(
    session: Session,
    args: &LayerOptions,
    settings: SettingsRead,
    assemble: impl FnOnce(&[&str], &Scope<'_>) -> Assembly,
) -> Result<Run> {
    let SettingsRead {
        resolved,
        files: settings_files,
        mut notes,
    } = settings;
    let started = Instant::now();
    let settings = resolved.settings();
    let features = session::features(args.coms_active, &resolved);
    let review_loop_max_cycles = session::review_loop_max_cycles(settings);
    if session.is_subagent() && args.export_layers.is_none() {
        return Ok(Run {
            session,
            notes,
            settings_files,
            loaded: None,
            resolved,
            features,
            review_loop_max_cycles,
            block: RulesBlock::default(),
            assembly: None,
            scope: None,
            read_micros: started.elapsed().as_micros(),
            assemble_micros: 0,
        });
    }
    let policy = session.policy(session.env.confined(args.confine));
    let mut dirs = session.layer_dirs(args.package_dir.as_deref());
    if let Some(choice) = &args.export_layers {
        choice.apply(&mut dirs);
    }
    if let PackageSource::Dir(dir) = &dirs.package {
        if !session.files().is_dir(dir) {
            let origin = if args.package_dir.is_some() {
                "--package-dir"
            } else {
                crate::env::PACKAGE_DIR_ENV
            };
            notes.push(Note::warning(format!(
                "the package directory `{}` (from {origin}) is not a directory; the package \
                 layer is empty",
                dir.display()
            )));
        }
    }
    let mut loaded = loader::load_with(&dirs, &policy);
    notes.extend(
        loaded
            .escapes
            .iter()
            .map(|escaped| Note::warning(escaped.to_string())),
    );
    // Run below the repository root, the team's rules at the root are left out: say so.
    if let Some(text) = session.unread_root_rules_note() {
        notes.push(Note::info(text.clone()));
        loaded.notes.push(text);
    }
    let (query, config_notes) = args.scope.resolve(&session);
    notes.extend(config_notes);
    let scope = match query {
        Some(query) if args.export_layers.is_none() => {
            let report = scoped::apply(&mut loaded, &session, &policy, &query);
            notes.extend(report.notes.iter().map(|n| Note::warning(n.clone())));
            Some(report)
        }
        _ => {
            if !args.scope.paths.is_empty() {
                notes.push(Note::info(
                    "scopes are off for pi, so --path changes nothing: pi's block is \
                     pi-config's; `[rules] scoped = true` in .pi/pi-rules.toml turns them on"
                        .to_owned(),
                ));
            }
            None
        }
    };
    let read_micros = started.elapsed().as_micros();
    let started = Instant::now();
    let (block, assembly) = if loaded.fallback {
        (RulesBlock::fallback(), None)
    } else {
        let scope = Scope {
            settings,
            features: &features,
            review_loop_max_cycles: &review_loop_max_cycles,
        };
        let texts: Vec<&str> = loaded.files.iter().map(|f| f.text.as_ref()).collect();
        let mut assembly = assemble(&texts, &scope);
        let block = RulesBlock::assembled(std::mem::take(&mut assembly.text));
        (block, Some(assembly))
    };
    Ok(Run {
        session,
        notes,
        settings_files,
        loaded: Some(loaded),
        resolved,
        features,
        review_loop_max_cycles,
        block,
        assembly,
        scope,
        read_micros,
        assemble_micros: started.elapsed().as_micros(),
    })
}

/// One file name and where it stands in the assembly.
pub struct NameEntry<'a> {
    pub report: &'a NameReport,
    /// Its index among the taken files (and so in the assembly's input), when it was taken.
    pub file: Option<usize>,
    /// Whether its frontmatter gate let it in, when it was assembled.
    pub included: Option<bool>,
}

impl<'a> NameEntry<'a> {
    /// The copies other than the winner, highest precedence first.
    pub fn shadowed(&self) -> impl Iterator<Item = &'a Candidate> {
        let winner = self.report.winner();
        self.report
            .candidates
            .iter()
            .filter(move |c| Some(*c) != winner)
    }

    /// The status after loading and gating.
    pub fn status(&self) -> &'static str {
        match &self.report.outcome {
            Pick::Oversized { .. } => "oversized",
            Pick::Unreadable { .. } => "unreadable",
            Pick::Taken { masked: true, .. } => "masked",
            Pick::Taken { .. } if self.included == Some(false) => "gated",
            Pick::Taken { fell_back_from, .. } if !fell_back_from.is_empty() => {
                "unreadable-fell-back"
            }
            Pick::Taken { .. } => "included",
        }
    }
}

/// Every file name in assembly order, matched with its taken file and gate result.
pub fn name_entries<'a>(
    loaded: &'a Loaded,
    assembly: Option<&'a Assembly>,
) -> impl Iterator<Item = NameEntry<'a>> {
    let mut taken = 0;
    loaded.names.iter().map(move |report| {
        let file = report.is_taken().then(|| {
            taken += 1;
            taken - 1
        });
        let included = file.and_then(|i| assembly?.included.get(i).copied());
        NameEntry {
            report,
            file,
            included,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_rules_core::settings::Schema;
    use std::borrow::Cow;
    use std::fs;
    use std::path::Path;

    /// A project with one rule gated on `dco`, and a session on it with no home.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        fs::create_dir_all(project.join(".pi/rules")).unwrap();
        (root, project)
    }

    fn session(project: &Path) -> Session {
        Session::from_parts(
            project.to_path_buf(),
            None,
            Cow::Borrowed(Schema::embedded()),
        )
    }

    /// Whatever changes between runs (a rule's text, a setting, a feature, a rule's name), the
    /// memoized run gives the plain run's block and assembly, and twice the same inputs give it
    /// from the memo.
    #[test]
    fn a_memoized_run_equals_a_plain_one_as_the_inputs_change() {
        let (_root, project) = project();
        let rules = project.join(".pi/rules");
        let settings = project.join(".pi/pi-config-settings.jsonc");
        let mut memo = AssemblyMemo::default();
        let mut step = |what: &str, coms_active: bool| {
            let args = LayerOptions {
                coms_active,
                ..LayerOptions::default()
            };
            let plain = {
                let session = session(&project);
                let read = session.resolve_noting();
                run(session, &args, read, &mut ()).unwrap()
            };
            let memoized = {
                let session = session(&project);
                let read = session.resolve_noting();
                run_memoized(session, &args, read, &mut memo).unwrap()
            };
            assert_eq!(memoized.block, plain.block, "{what}");
            assert_eq!(memoized.assembly, plain.assembly, "{what}");
            plain.block
        };
        fs::write(
            rules.join("90-team.md"),
            "{{IF:dco}}Sign off.{{/IF}}\nSmall changes.\n",
        )
        .unwrap();
        let first = step("first run", false);
        assert!(!first.text().contains("Sign off."));
        assert_eq!(step("the same inputs again", false), first);
        fs::write(&settings, r#"{"dco": true}"#).unwrap();
        assert!(step("a setting changed", false)
            .text()
            .contains("Sign off."));
        fs::write(rules.join("90-team.md"), "{{IF:dco}}Sign off!{{/IF}}\n").unwrap();
        assert!(step("a rule's text changed", false)
            .text()
            .contains("Sign off!"));
        step("a feature changed", true);
        fs::rename(rules.join("90-team.md"), rules.join("91-team.md")).unwrap();
        step("a rule renamed", true);
        fs::remove_file(rules.join("91-team.md")).unwrap();
        assert_eq!(step("the rule removed", true), step("again", true));
    }

    /// A host appends the text after a blank line, and the fallback block as it is; the text of
    /// either is what follows that blank line, and a subagent's block is empty in both forms.
    #[test]
    fn a_block_is_its_text_after_the_hosts_blank_line() {
        let assembled = RulesBlock::assembled("# Rules\n\nBe brief.\n".to_owned());
        assert_eq!(assembled.text(), "# Rules\n\nBe brief.\n");
        assert_eq!(assembled.appended(), "\n\n# Rules\n\nBe brief.\n");
        let empty = RulesBlock::assembled(String::new());
        assert_eq!((empty.text(), empty.appended()), ("", "\n\n"));
        let fallback = RulesBlock::fallback();
        assert_eq!(fallback.appended(), FALLBACK_BLOCK);
        assert_eq!(format!("\n\n{}", fallback.text()), FALLBACK_BLOCK);
        assert!(!fallback.text().starts_with('\n'));
        let subagent = RulesBlock::default();
        assert_eq!((subagent.text(), subagent.appended()), ("", ""));
    }
}
