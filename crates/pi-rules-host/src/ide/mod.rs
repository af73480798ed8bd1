//! What an editor asks about one document, as plain data over byte offsets into its text: hover,
//! completions, inlay hints, the outline, and where a name or key is defined. The language
//! server converts positions and wraps these in the protocol's types; nothing here knows the
//! protocol.
//!
//! Every query takes the document's text as the editor has it (saved or not) and is total: any
//! text and any offset (past the end, or inside a character) gives an answer, never a panic.
//! Offsets are clamped to the text and moved back to a character boundary.
//!
//! The words come from `explain` ([`crate::explain`]): a rule document is evaluated on its own
//! with explain's recorder, against the settings of the project as they resolve now, and a
//! block's state and reason are explain's, not a second reading of the rules.

mod complete;
mod config_file;
mod hints;
mod hover;
mod json;
mod navigate;
mod scan;
mod scopes;
mod symbols;
#[cfg(test)]
mod tests;

pub use complete::{completions, Completion, CompletionKind};
pub use config_file::{config_completions, config_hover, config_symbols};
pub use hints::{inlay_hints, InlayHint};
pub use hover::{hover, HoverInfo};
pub use navigate::{definition, materialize_package_rule, package_cache_dir, references, Target};
pub use scopes::{scope_completions, scope_dir, scope_hover};
pub use symbols::{symbols, Symbol};

use crate::assembly::{self, LayerOptions, Run};
use crate::config::{self, ConfigSource};
use crate::escape::escape;
use crate::explain::{Explanation, Recorder, Scratch, State};
use crate::loader::{Candidate, Layer, Loaded, NameReport, PackageSource, Pick, RuleFile};
use crate::session::{self, FoundSettingsFile, Location, Session, SettingsRead};
use pi_rules_core::settings::{Resolved, Source, SETTINGS_FILE_NAMES};
use pi_rules_core::{assemble_observed, Features, Scope};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// What a document is to pi-rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentKind {
    /// A rule file of a layer: `NAME.md` in the layer's directory (for the embedded package
    /// rules, their copy in the cache, [`materialize_package_rule`]).
    Rule { layer: Layer, name: String },
    /// A rule file of a nested rule directory, `NAME.md` in `D/.pi/rules` for a directory `D`
    /// below the project directory: its scope is `dir` (`D`, absolute), and it replaces the
    /// layers' rule of the same name for the files there.
    NestedRule { dir: PathBuf, name: String },
    /// pi-rules' configuration file: `<project root>/.pi/pi-rules.toml` or
    /// `$HOME/.pi/agent/pi-rules.toml`.
    Config { source: ConfigSource },
    /// A settings file, `pi-config-settings.json` or `.jsonc`, global or of the project.
    Settings { scope: SettingsScope },
    /// Anything else: every query answers nothing.
    Other,
}

/// Which settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsScope {
    /// `$HOME/.pi/pi-config-settings.json[c]`.
    Global,
    /// `<repository root>/.pi/pi-config-settings.json[c]`.
    Project,
}

impl SettingsScope {
    pub fn as_str(self) -> &'static str {
        match self {
            SettingsScope::Global => "global",
            SettingsScope::Project => "project",
        }
    }
}

/// What the queries read besides the session, as the command line's flags of the same names.
#[derive(Debug, Clone, Default)]
pub struct IdeOptions {
    /// `--package-dir`: a package rules directory instead of the embedded rules.
    pub package_dir: Option<PathBuf>,
    /// `--coms-active`: peer-to-peer messaging is running (`None`: not said, so off).
    pub coms_active: Option<bool>,
    /// `--confine`.
    pub confine: bool,
}

/// Which layer or settings file `path` is, with the package layer from the environment
/// (`PI_RULES_PACKAGE_DIR`) or embedded; see [`classify_with`].
pub fn classify(session: &Session, path: &Path) -> DocumentKind {
    classify_with(session, None, path)
}

/// Which layer or settings file `path` is: a `*.md` file directly in the project, user or
/// package layer's directory (the package layer from `package_dir`, else as
/// [`Session::layer_dirs`] says; the embedded rules' cache copies count as the package layer),
/// or one of the two settings files or pi-rules' two configuration files, or a `*.md` file in a nested rule directory
/// (`D/.pi/rules` for a directory `D` below the project directory, [`DocumentKind::NestedRule`]). Paths are compared as given, then by their real
/// directories, so a layer reached through a link is recognised.
pub fn classify_with(session: &Session, package_dir: Option<&Path>, path: &Path) -> DocumentKind {
    let (Some(name), Some(parent)) = (path.file_name().and_then(|n| n.to_str()), path.parent())
    else {
        return DocumentKind::Other;
    };
    let same_dir = |dir: &Path| {
        dir == parent || {
            let real = |p: &Path| session.files().canonical(p);
            real(dir).is_some_and(|d| Some(d) == real(parent))
        }
    };
    if name == config::CONFIG_FILE_NAME {
        let path_is = |file: &Path| file == path || file.parent().is_some_and(same_dir);
        if path_is(&config::project_config_path(session)) {
            return DocumentKind::Config {
                source: ConfigSource::Project,
            };
        }
        if config::user_config_path(session).is_some_and(|file| path_is(&file)) {
            return DocumentKind::Config {
                source: ConfigSource::User,
            };
        }
        return DocumentKind::Other;
    }
    if SETTINGS_FILE_NAMES.contains(&name) {
        if same_dir(&session.project_settings_dir()) {
            return DocumentKind::Settings {
                scope: SettingsScope::Project,
            };
        }
        if session.global_settings_dir().is_some_and(|d| same_dir(&d)) {
            return DocumentKind::Settings {
                scope: SettingsScope::Global,
            };
        }
        return DocumentKind::Other;
    }
    if !crate::loader::is_rule_name(name) {
        return DocumentKind::Other;
    }
    let dirs = session.layer_dirs(package_dir);
    let rule = |layer| DocumentKind::Rule {
        layer,
        name: name.to_owned(),
    };
    if same_dir(&dirs.project) {
        return rule(Layer::Project);
    }
    if dirs.user.as_deref().is_some_and(same_dir) {
        return rule(Layer::User);
    }
    let package = match &dirs.package {
        PackageSource::Dir(dir) => same_dir(dir),
        PackageSource::Embedded(rules) => {
            rules.iter().any(|(n, _)| *n == name)
                && package_cache_dir(&session.env).is_some_and(|d| same_dir(&d))
        }
    };
    if package {
        return rule(Layer::Package);
    }
    match crate::check::nested_dir(&session.cwd, parent) {
        Some(dir) => DocumentKind::NestedRule {
            dir: session.cwd.join(dir),
            name: name.to_owned(),
        },
        None => DocumentKind::Other,
    }
}

/// What the queries of one request read: the session's settings, resolved now, and (when a
/// query needs them) the layers as loaded now. Build one per request: it is a snapshot.
pub struct IdeContext {
    session: Session,
    location: Location,
    opts: IdeOptions,
    project_file: FoundSettingsFile,
    global_file: Option<FoundSettingsFile>,
    resolved: Resolved,
    features: Features,
    review_loop_max_cycles: String,
    /// The layers as the assembly reads them, loaded by the first query that needs them.
    layered: OnceCell<Option<Run>>,
}

impl IdeContext {
    /// Reads both settings files (through the session's `Files`, so an editor's unsaved text
    /// counts) and resolves every key. The layers are read later, by the first query that needs
    /// them.
    pub fn new(session: &Session, opts: &IdeOptions) -> crate::error::Result<IdeContext> {
        let location = session.location();
        let own = copy_session(session, &location);
        let (project_file, global_file) = own.settings_files();
        let resolved = own.resolve_files(&project_file, global_file.as_ref());
        let features = session::features(opts.coms_active.unwrap_or(false), &resolved);
        let review_loop_max_cycles = session::review_loop_max_cycles(resolved.settings());
        Ok(IdeContext {
            session: own,
            location,
            opts: opts.clone(),
            project_file,
            global_file,
            resolved,
            features,
            review_loop_max_cycles,
            layered: OnceCell::new(),
        })
    }

    /// The session the context was built from (its copy).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The settings as resolved now.
    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }

    /// What `{{REVIEW_LOOP_MAX_CYCLES}}` becomes now.
    pub fn review_loop_max_cycles(&self) -> &str {
        &self.review_loop_max_cycles
    }

    /// The three layers as the assembly reads them now (`None` for a subagent, which reads
    /// none).
    fn layers(&self) -> Option<&Loaded> {
        self.layered
            .get_or_init(|| {
                let session = copy_session(&self.session, &self.location);
                let options = LayerOptions {
                    package_dir: self.opts.package_dir.clone(),
                    coms_active: self.opts.coms_active.unwrap_or(false),
                    confine: self.opts.confine,
                    export_layers: None,
                    scope: Default::default(),
                };
                let settings = SettingsRead {
                    resolved: self.resolved.clone(),
                    files: Vec::new(),
                    notes: Vec::new(),
                };
                assembly::run(session, &options, settings, &mut ()).ok()
            })
            .as_ref()
            .and_then(|run| run.loaded.as_ref())
    }

    /// The loader's report on the rule `name`, when some layer has it.
    fn name_report(&self, name: &str) -> Option<&NameReport> {
        self.layers()?.names.iter().find(|r| r.name == name)
    }

    /// `key`'s value now as JSON text (`undefined` when it has none).
    fn value_json(&self, key: &str) -> String {
        self.resolved
            .resolve_key(key)
            .to_json()
            .unwrap_or_else(|| "undefined".to_owned())
    }

    /// A short form of where `key`'s value comes from: `default`, `env NAME`, `project
    /// settings`, `global settings`.
    fn short_source(&self, key: &str) -> &'static str {
        match self.resolved.get(key).map(|r| r.source) {
            Some(Source::ProjectFile) => "project settings",
            Some(Source::GlobalFile) => "global settings",
            Some(Source::Env(_)) => "env",
            Some(Source::Default) => "default",
            Some(Source::Fallback) | None => "no rule",
        }
    }

    /// Where `name`'s feature value comes from, in explain's words.
    fn feature_source(&self, name: &str) -> String {
        let run = self.single_run(&DocumentKind::Other, "");
        let recorder = Recorder::default();
        Explanation::new(&run, &recorder, self.opts.coms_active.is_some())
            .feature_source(name, escape)
    }

    /// A run that holds the document `text` alone, as the assembly would take it, with the
    /// settings of this context: explain's report on it gives the document's decisions in
    /// explain's words.
    fn single_run(&self, kind: &DocumentKind, text: &str) -> Run {
        let (name, layer) = match kind {
            DocumentKind::Rule { layer, name } => (name.clone(), *layer),
            // As the project's rules, with the same settings.
            DocumentKind::NestedRule { name, .. } => (name.clone(), Layer::Project),
            _ => ("document.md".to_owned(), Layer::Project),
        };
        let candidate = Candidate {
            layer,
            path: None,
            is_symlink: false,
        };
        let loaded = Loaded {
            files: vec![RuleFile {
                name: name.clone(),
                layer,
                path: None,
                text: Cow::Owned(text.to_owned()),
                had_invalid_utf8: false,
            }],
            names: vec![NameReport {
                name,
                outcome: Pick::Taken {
                    winner: candidate.clone(),
                    masked: false,
                    fell_back_from: Vec::new(),
                    shadows: Vec::new(),
                },
                candidates: vec![candidate],
            }],
            ..Loaded::default()
        };
        Run {
            session: copy_session(&self.session, &self.location),
            notes: Vec::new(),
            settings_files: Vec::new(),
            loaded: Some(loaded),
            resolved: self.resolved.clone(),
            features: self.features.clone(),
            review_loop_max_cycles: self.review_loop_max_cycles.clone(),
            block: assembly::RulesBlock::default(),
            assembly: None,
            scope: None,
            read_micros: 0,
            assemble_micros: 0,
        }
    }

    /// Evaluates the rule document `text` on its own, recording every decision, and says what
    /// became of its gate and of each block, in explain's words.
    fn evaluate(&self, kind: &DocumentKind, text: &str) -> Evaluation {
        let mut run = self.single_run(kind, text);
        let mut recorder = Recorder::default();
        let scope = Scope {
            settings: self.resolved.settings(),
            features: &self.features,
            review_loop_max_cycles: &self.review_loop_max_cycles,
        };
        run.assembly = Some(assemble_observed(&[text], &scope, &mut recorder));
        let report = Explanation::new(&run, &recorder, self.opts.coms_active.is_some());
        let mut scratch = Scratch::default();
        report.detail_into(0, &mut scratch);
        let mut blocks = Vec::with_capacity(scratch.blocks.len());
        for view in &scratch.blocks {
            let mut why = String::new();
            report.write_why(view, &mut why, escape);
            let deciding = view.decided.map(|d| {
                use crate::explain::Reason;
                let names = &recorder.names;
                match &d.reason {
                    Reason::Truthy { key, .. } | Reason::Compare { key, .. } => {
                        let key = names.name(*key);
                        let shown = report.settings.described(key).shown;
                        format!("{key} = {}, {}", escape(&shown), self.short_source(key))
                    }
                    Reason::Feature { name, on } => {
                        format!(
                            "{} is {}",
                            names.name(*name),
                            if *on { "on" } else { "off" }
                        )
                    }
                    Reason::UnknownKey { key } => format!("{} is unknown", names.name(*key)),
                    Reason::Malformed => "malformed condition".to_owned(),
                }
            });
            blocks.push(BlockState {
                opener: view.opener.clone(),
                state: view.state,
                why,
                deciding,
            });
        }
        let gate = recorder.gates.first().map(|gate| {
            let mut words = String::new();
            crate::explain::write_gate_reason(&mut words, gate, &report.settings, escape);
            (gate.included, words)
        });
        Evaluation { blocks, gate }
    }

    /// Why the rule document of `kind` (as saved in its layer) is not in the prompt at all now,
    /// when it is not: another layer's copy is taken, or the layers could not take it.
    fn not_in_prompt(&self, kind: &DocumentKind) -> Option<String> {
        if let DocumentKind::NestedRule { .. } = kind {
            // Only pi's own start in that directory reads it, while scopes are off.
            return (!crate::config::Config::read(&self.session).config.scoped()).then(|| {
                "pi does not read nested rules yet: scopes are off for this project \
                 (`[rules] scoped = true` in `.pi/pi-rules.toml` turns them on)"
                    .to_owned()
            });
        }
        let DocumentKind::Rule { layer, name } = kind else {
            return None;
        };
        let report = self.name_report(name)?;
        match &report.outcome {
            Pick::Taken { winner, .. } | Pick::Oversized { winner, .. }
                if winner.layer != *layer =>
            {
                Some(format!(
                    "this {} copy is not read: the {} copy (`{}`) takes precedence",
                    layer.as_str(),
                    winner.layer.as_str(),
                    winner.display_path(name)
                ))
            }
            Pick::Oversized { .. } => {
                Some("this file is over the size limit: the assembly skips it".to_owned())
            }
            Pick::Unreadable { .. } => Some("no copy of this file can be read".to_owned()),
            _ => None,
        }
    }
}

/// A copy of `session` (its files shared) that takes what discovery found from `location`
/// instead of looking again.
fn copy_session(session: &Session, location: &Location) -> Session {
    let copy = session.sharing_files();
    copy.locate_from(location);
    copy
}

/// What became of one block of a document.
#[derive(Debug, Clone)]
struct BlockState {
    opener: Range<usize>,
    state: State,
    /// Explain's reason.
    why: String,
    /// The deciding value in a few words (`dco = false, default`), when one decided.
    deciding: Option<String>,
}

/// What became of a document: its gate (included, explain's words) and its blocks in opener
/// order.
struct Evaluation {
    blocks: Vec<BlockState>,
    gate: Option<(bool, String)>,
}

impl Evaluation {
    fn block_at(&self, opener_start: usize) -> Option<&BlockState> {
        self.blocks
            .binary_search_by_key(&opener_start, |b| b.opener.start)
            .ok()
            .map(|i| &self.blocks[i])
    }
}
