//! The settings an export reads by default: the project settings file and the schema's
//! defaults. The global settings file and the environment are one machine's, and a file a team
//! commits must come out the same on every machine.

use crate::notes::Note;
use crate::session::{Session, SettingsFileState, SettingsRead};
use crate::settings_source::{SettingsOverrides, SettingsSource};
use pi_rules_core::settings::{self, SettingsFile};

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

/// Which settings an assembly reads (`--settings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsScope {
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
    pub layers: Option<super::LayerChoice>,
    pub scope: SettingsScope,
    /// `--set`, above every settings file.
    pub overrides: SettingsOverrides,
}

impl Selection {
    /// The settings, with their notes. `usual` is where the caller reads the full chain from
    /// when nothing is overridden (the files now, or a long-running front end's cache).
    pub fn read_settings(&self, session: &Session, usual: &mut dyn SettingsSource) -> SettingsRead {
        match self.scope {
            SettingsScope::Project => ProjectSettings {
                overrides: self.overrides.clone(),
            }
            .read(session),
            SettingsScope::All if self.overrides.is_empty() => usual.read(session),
            SettingsScope::All => self.overrides.clone().read(session),
        }
    }
}
