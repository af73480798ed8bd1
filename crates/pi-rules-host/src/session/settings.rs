//! The two settings files as a session reads them (through its [`Files`], so an editor's buffer
//! stands in for a file), their resolution with the environment, and what a report says of
//! each.

use super::Session;
use crate::files::bounded::MAX_SETTINGS_BYTES;
use crate::notes::Note;
use pi_rules_core::settings::{self, Resolved, SettingsFile, Source};
use pi_rules_core::{Features, Settings};
use std::path::{Path, PathBuf};

/// One settings file as found: where it is (the `.jsonc` when it exists, else the `.json`), what
/// it held, and whether a `.json` beside a `.jsonc` was ignored.
#[derive(Debug)]
pub struct FoundSettingsFile {
    pub path: PathBuf,
    pub file: SettingsFile,
    /// The text, for diagnostics with line and column; `None` when missing or unreadable.
    pub text: Option<String>,
    pub ignored_json: Option<PathBuf>,
}

/// Resolved settings, what became of each settings file, and why a file or value is ignored.
pub struct SettingsRead {
    pub resolved: Resolved,
    pub files: Vec<SettingsFileState>,
    /// Why a settings file or value is ignored, in order.
    pub notes: Vec<Note>,
}

impl Session {
    /// The directory of the global settings file, `$HOME/.pi`.
    pub fn global_settings_dir(&self) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(".pi"))
    }

    /// The paths of the two settings files (project, global): each the `.jsonc` when it exists,
    /// else the `.json`.
    pub fn settings_paths(&self) -> (&Path, Option<&Path>) {
        self.settings_paths_with(&|p: &Path| self.files.exists(p))
    }

    /// [`Session::settings_paths`], asking `exists` whether a `.jsonc` exists (when they are not
    /// known yet).
    pub fn settings_paths_with(&self, exists: &dyn Fn(&Path) -> bool) -> (&Path, Option<&Path>) {
        let (project, global) = self.settings_paths.get_or_init(|| {
            (
                settings::settings_file_in(&self.project_settings_dir(), exists),
                self.global_settings_dir()
                    .map(|dir| settings::settings_file_in(&dir, exists)),
            )
        });
        (project, global.as_deref())
    }

    /// Where a resolved value came from, for people: the settings file's path, `env NAME`, or
    /// `default`. Raw: a front end escapes it where it prints.
    pub fn source_label(&self, source: &Source) -> String {
        let (project, global) = self.settings_paths();
        match source {
            Source::ProjectFile => project.display().to_string(),
            Source::GlobalFile => global.map_or_else(
                || "global file".to_owned(),
                |path| path.display().to_string(),
            ),
            Source::Env(name) => format!("env {name}"),
            Source::Default => "default".to_owned(),
            Source::Fallback => "no rule".to_owned(),
        }
    }

    /// Reads both settings files: (project, global).
    pub fn settings_files(&self) -> (FoundSettingsFile, Option<FoundSettingsFile>) {
        let (project, global) = self.settings_paths();
        (
            self.read_settings_file(project),
            global.map(|path| self.read_settings_file(path)),
        )
    }

    /// Reads the settings file at `path` (one of [`Session::settings_paths`]).
    fn read_settings_file(&self, path: &Path) -> FoundSettingsFile {
        let path = path.to_path_buf();
        let ignored_json = path
            .extension()
            .is_some_and(|e| e == "jsonc")
            .then(|| path.with_extension("json"))
            .filter(|json| self.files.exists(json));
        let (file, text) = match self.read_settings_text(&path) {
            Ok(None) => (SettingsFile::missing(), None),
            Ok(Some(text)) => (SettingsFile::parse(&self.schema, &text), Some(text)),
            Err(message) => (SettingsFile::unreadable(message), None),
        };
        FoundSettingsFile {
            path,
            file,
            text,
            ignored_json,
        }
    }

    /// Reads a settings file, at most [`MAX_SETTINGS_BYTES`]: `Ok(None)` when there is none, `Err`
    /// with a reason when it cannot be used (too large, not a regular file, unreadable). An
    /// editor buffer in the session's [`Files`](crate::files::Files) stands in for the file; else the file is opened
    /// before it is examined, so a FIFO put in its place cannot hang us.
    pub fn read_settings_text(&self, path: &Path) -> Result<Option<String>, String> {
        self.files.read_text(path, MAX_SETTINGS_BYTES)
    }

    /// Resolves every key of the schema from the two files and the environment.
    pub fn resolve(&self) -> Resolved {
        let (project, global) = self.settings_files();
        self.resolve_files(&project, global.as_ref())
    }

    /// Like [`Session::resolve`], saying why a settings file or value is ignored (as notes) and
    /// what became of each file.
    pub fn resolve_noting(&self) -> SettingsRead {
        let (project, global) = self.settings_files();
        let mut files = Vec::new();
        let mut notes = Vec::new();
        for (scope, found) in [("project", Some(&project)), ("global", global.as_ref())] {
            let Some(found) = found else { continue };
            notes.extend(found.notices().into_iter().map(Note::warning));
            files.push(SettingsFileState::of(
                scope,
                &found.path,
                &found.file,
                found.ignored_json.as_deref(),
            ));
        }
        SettingsRead {
            resolved: self.resolve_files(&project, global.as_ref()),
            files,
            notes,
        }
    }

    /// Resolves from files already read.
    pub fn resolve_files(
        &self,
        project: &FoundSettingsFile,
        global: Option<&FoundSettingsFile>,
    ) -> Resolved {
        let missing = SettingsFile::missing();
        let global = global.map_or(&missing, |g| &g.file);
        let env = |name: &str| self.env.var(name);
        settings::resolve(&self.schema, &project.file, global, &env)
    }
}

/// A settings file as a report shows it: which one, where, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SettingsFileState {
    /// `project` or `global`.
    pub scope: &'static str,
    pub path: String,
    /// `missing`, `read`, `read; N values ignored`, or `ignored: REASON`.
    pub state: String,
}

impl SettingsFileState {
    /// The state of `file`, found at `path`.
    pub fn of(
        scope: &'static str,
        path: &Path,
        file: &SettingsFile,
        ignored_json: Option<&Path>,
    ) -> Self {
        let mut state = if !file.is_present() {
            "missing".to_owned()
        } else if let Some(problem) = file.problem() {
            format!("ignored: {problem}")
        } else {
            match file.rejected().len() {
                0 => "read".to_owned(),
                1 => "read; 1 value ignored".to_owned(),
                n => format!("read; {n} values ignored"),
            }
        };
        if let Some(json) = ignored_json {
            state.push_str(&format!("; `{}` beside it is ignored", json.display()));
        }
        SettingsFileState {
            scope,
            path: path.display().to_string(),
            state,
        }
    }
}

impl FoundSettingsFile {
    /// Why this file, or part of it, is ignored: one line per reason, naming the file (raw).
    pub fn notices(&self) -> Vec<String> {
        let mut notices = Vec::new();
        if self.ignored_json.is_none()
            && self.file.problem().is_none()
            && self.file.rejected().is_empty()
        {
            return notices;
        }
        let path = self.path.display().to_string();
        if let Some(json) = &self.ignored_json {
            notices.push(format!(
                "`{}` is ignored because `{path}` exists beside it",
                json.display()
            ));
        }
        if let Some(problem) = self.file.problem() {
            notices.push(format!("settings file `{path}` is ignored: {problem}"));
        }
        for rejected in self.file.rejected() {
            notices.push(format!(
                "`{}` in `{path}` is ignored: {}",
                rejected.key, rejected.reason
            ));
        }
        notices
    }
}

/// The feature predicates: `coms_active` from the host, `external_ai_agents` from the settings.
pub fn features(coms_active: bool, resolved: &Resolved) -> Features {
    let listed = |key: &str| match resolved.resolve_key(key) {
        pi_rules_core::Value::Array(items) => !items.is_empty(),
        _ => false,
    };
    let mut features = Features::new();
    features.set("coms_active", coms_active);
    features.set(
        "external_ai_agents",
        listed("acpx_agents") || listed("cli_agents"),
    );
    features
}

/// What `{{REVIEW_LOOP_MAX_CYCLES}}` becomes: JavaScript `String(value)` of the setting.
pub fn review_loop_max_cycles(settings: &Settings) -> String {
    settings
        .get("review_loop_max_cycles")
        .map_or_else(|| "undefined".to_owned(), |v| v.to_js_string())
}
