//! The settings an export reads by default: the project settings file and the schema's
//! defaults. The global settings file and the environment are one machine's, and a file a team
//! commits must come out the same on every machine.

use crate::notes::note;
use crate::session::{Session, SettingsFileState, SettingsRead};
use crate::settings_source::{SettingsOverrides, SettingsSource};
use pi_rules_core::settings::{self, SettingsFile};
use std::io::Write;

/// The project settings file and the schema defaults, with `--set` values above them.
#[derive(Debug, Clone, Default)]
pub struct ProjectSettings {
    pub overrides: SettingsOverrides,
}

impl SettingsSource for ProjectSettings {
    fn read(&mut self, session: &Session, err: &mut dyn Write) -> SettingsRead {
        let (project, _global) = session.settings_files();
        for notice in project.notices() {
            note(err, format_args!("pi-rules: warning: {notice}"));
        }
        let file = if self.overrides.is_empty() {
            project.file.clone()
        } else {
            self.overrides.project_file(&session.schema, &project.file)
        };
        let no_env = |_: &str| None;
        let resolved = settings::resolve(&session.schema, &file, &SettingsFile::missing(), &no_env);
        SettingsRead {
            resolved,
            files: vec![SettingsFileState::of(
                "project",
                &project.path,
                &project.file,
                project.ignored_json.as_deref(),
            )],
        }
    }
}
