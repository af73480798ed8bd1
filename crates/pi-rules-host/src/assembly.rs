//! One assembly run as the commands see it: read the layers and settings, assemble, and keep
//! everything `assemble`, `explain` and `serve` report about it. The commands share this; none of
//! them assembles on its own.

use crate::error::Result;
use crate::loader::{self, Candidate, Loaded, NameReport, Outcome, PackageSource};
use crate::notes::Note;
use crate::session::{self, Session, SettingsFileState, SettingsRead, FALLBACK_BLOCK};
use pi_rules_core::settings::Resolved;
use pi_rules_core::{assemble as engine, Assembly, Features, Message, Observer, Scope};
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
    pub export_layers: Option<crate::export::LayerChoice>,
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
    /// The block exactly as a host appends it: `"\n\n"` and the assembly, the fallback block, or
    /// `""` for a subagent.
    pub block: String,
    /// The assembly, its text moved into `block`.
    pub assembly: Option<Assembly>,
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
            block: String::new(),
            assembly: None,
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
        if !dir.is_dir() {
            let origin = if args.package_dir.is_some() {
                "--package-dir"
            } else {
                crate::session::PACKAGE_DIR_ENV
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
    let read_micros = started.elapsed().as_micros();
    let started = Instant::now();
    let (block, assembly) = if loaded.fallback {
        (FALLBACK_BLOCK.to_owned(), None)
    } else {
        let scope = Scope {
            settings,
            features: &features,
            review_loop_max_cycles: &review_loop_max_cycles,
        };
        let texts: Vec<&str> = loaded.files.iter().map(|f| f.text.as_ref()).collect();
        let mut assembly = engine::assemble_observed(&texts, &scope, observer);
        // The block is the text with the host's leading blank line, made in place (the text
        // has room: it was reserved for the whole input), so the run holds the text once.
        let mut block = std::mem::take(&mut assembly.text);
        block.insert_str(0, "\n\n");
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
            Outcome::Oversized { .. } => "oversized",
            Outcome::Unreadable { .. } => "unreadable",
            Outcome::Taken { masked: true, .. } => "masked",
            Outcome::Taken { .. } if self.included == Some(false) => "gated",
            Outcome::Taken { fell_back_from, .. } if !fell_back_from.is_empty() => {
                "unreadable-fell-back"
            }
            Outcome::Taken { .. } => "included",
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
