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
