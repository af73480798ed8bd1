//! What an assembly reads, as `--layers`, `--settings` and `--set` choose it: the rule layers
//! ([`LayerChoice`]) and how much of the settings chain ([`SettingsChain`]), together a
//! [`Selection`]. `export` reads the project layer and the project settings file by default: the
//! package rules are written for pi's orchestrator and its specialists, the user layer, the
//! global settings file and the environment are one machine's, and a file a team commits must
//! come out the same on every machine. `assemble` and `explain` take
//! the same choice, so that they print and explain the block `export` writes.

use crate::notes::Note;
use crate::session::{Session, SettingsFileState, SettingsRead};
use crate::settings_source::{SettingsOverrides, SettingsSource};
use pi_rules_core::settings::{self, SettingsFile};

/// Which rule layers an assembly reads (`--layers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerChoice {
    pub package: bool,
    pub user: bool,
    pub project: bool,
}

impl Default for LayerChoice {
    fn default() -> Self {
        LayerChoice::EXPORT
    }
}

impl LayerChoice {
    /// The choice of these layers.
    pub fn of(layers: &[crate::loader::Layer]) -> LayerChoice {
        use crate::loader::Layer;
        LayerChoice {
            package: layers.contains(&Layer::Package),
            user: layers.contains(&Layer::User),
            project: layers.contains(&Layer::Project),
        }
    }

    /// What `export` reads by default, the project layer alone: the package rules speak to pi's
    /// orchestrator and its specialist agents (other agents told "delegate, do not edit" would
    /// obey), and the user layer is one person's and stays out of a team's files. `[export]
    /// layers` in the configuration and `--layers` choose otherwise.
    pub const EXPORT: LayerChoice = LayerChoice {
        package: false,
        user: false,
        project: true,
    };

    /// Leaves the layers not chosen out of `dirs`.
    pub fn apply(&self, dirs: &mut crate::loader::LayerDirs) {
        if !self.package {
            dirs.package = crate::loader::PackageSource::Embedded(&[]);
        }
        if !self.user {
            dirs.user = None;
        }
        if !self.project {
            // A name no directory listing holds (it starts with a control character): the
            // loader finds no such directory and reads the layer as empty.
            dirs.project = dirs
                .project
                .join("\u{1}pi-rules export: the project layer is not read");
        }
    }
}

/// The project settings file and the schema defaults, with `--set` values above them.
#[derive(Debug, Clone, Default)]
pub struct ProjectSettings {
    pub overrides: SettingsOverrides,
}

impl SettingsSource for ProjectSettings {
    fn read(&mut self, session: &Session) -> SettingsRead {
        let (project, _global) = session.settings_files();
        let notes = project.notices().into_iter().map(Note::warning).collect();
        let file = if self.overrides.is_empty() {
            project.file.clone()
        } else {
            self.overrides.project_file(&session.schema, &project.file)
        };
        let no_env = |_: &str| None;
        let resolved = settings::resolve(&session.schema, &file, &SettingsFile::missing(), &no_env);
        SettingsRead {
            resolved,
            notes,
            files: vec![SettingsFileState::of(
                "project",
                &project.path,
                &project.file,
                project.ignored_json.as_deref(),
            )],
        }
    }
}

/// How much of the settings chain an assembly reads (`--settings`). Not the `ide` module's
/// [`SettingsScope`](crate::ide::SettingsScope), which says which settings file a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsChain {
    /// The project settings file and the schema defaults: what `export` reads by default.
    Project,
    /// The full chain: the project file, the global file, the environment, the defaults.
    All,
}

/// The layers and settings an assembly reads, chosen as `export` chooses them (`--layers`,
/// `--settings`, `--set`). `export`, `assemble` and `explain` all go through this, so that the
/// same flags give the same block, and `explain` explains the lines `export` writes.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Only these layers, with `PI_SUBAGENT_CHILD` of no effect; `None`: every layer, as a host
    /// reads them.
    pub layers: Option<LayerChoice>,
    pub settings: SettingsChain,
    /// `--set`, above every settings file.
    pub overrides: SettingsOverrides,
}

impl Selection {
    /// The settings, with their notes. `usual` is where the caller reads the full chain from
    /// when nothing is overridden (the files now, or a long-running front end's cache).
    pub fn read_settings(&self, session: &Session, usual: &mut dyn SettingsSource) -> SettingsRead {
        match self.settings {
            SettingsChain::Project => ProjectSettings {
                overrides: self.overrides.clone(),
            }
            .read(session),
            SettingsChain::All if self.overrides.is_empty() => usual.read(session),
            SettingsChain::All => self.overrides.clone().read(session),
        }
    }
}
