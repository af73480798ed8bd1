//! `pi-rules check`'s work: gathers the lint input from disk and runs the core linter. The front
//! ends render the report.
//!
//! Gathering lists the three layer directories with every entry, ignored ones included (so that
//! `x.MD` or a directory named `x.md` can be reported), reads rule files bounded to 131073 bytes
//! (a FIFO or socket is never opened), notes where project-layer links point, and reads the
//! settings files in `<repo root>/.pi` and `$HOME/.pi` through [`Session`]. Every question to the
//! file system goes through the session's [`Files`], so the editor's buffers stand in for the
//! files at their paths, as they do for the loader. The checks themselves live in [`pi_rules_core::lint`].
//!
//! pi-rules' own configuration files ([`crate::config`]) join the report with their findings
//! (PR751-PR755), and their `[check]` decides what every finding becomes: ignored, or at
//! another severity, everywhere or for the files some globs match.
//!
//! [`IncrementalCheck`] keeps the same findings up to date as files change, for the language
//! server: a change to one file checks that file again, not every layer.
//!
//! Exit status: [`CheckStatus::Clean`] (0) when there is no error, and no warning under
//! `--strict`; [`CheckStatus::Failed`] (1) otherwise. Usage errors (2) are the caller's.

mod exported;
mod incremental;
pub mod walk;

pub use incremental::{nested_dir, IncrementalCheck, Updated};

use crate::config::{Config, LoadedConfig};
use crate::env::Env;
use crate::error::Result;
use crate::files::{bounded, Files, Listed};
use crate::loader::{
    self, comparator_for, Escape, FailureReason, Layer, PackageSource, Policy, RawRead,
};
use crate::session::Session;
use pi_rules_core::lint::{
    self, Content, Diagnostic, Entry, LayerInput, Link, NestedInput, Report, SchemaInfo,
    SettingsInput, Severity,
};
use pi_rules_core::settings::SettingsFile;
use rustix::fs::FileType;
use std::io;
use std::path::{Path, PathBuf};

/// What `pi-rules check` runs on.
pub struct CheckOptions<'a> {
    /// The working directory, `$HOME` and the settings schema.
    pub session: &'a Session,
    /// The package layer: the embedded rules, or `--package-dir`.
    pub package: PackageSource,
    /// Warnings fail the check too.
    pub strict: bool,
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    /// No errors (and, with `--strict`, no warnings): exit code 0.
    Clean,
    /// Errors, or warnings with `--strict`: exit code 1.
    Failed,
}

impl CheckStatus {
    /// The process exit code: 0 or 1.
    pub fn exit_code(self) -> u8 {
        match self {
            CheckStatus::Clean => 0,
            CheckStatus::Failed => 1,
        }
    }

    /// The status for `report`.
    pub fn of(report: &Report, strict: bool) -> CheckStatus {
        let failing =
            report.count(Severity::Error) > 0 || (strict && report.count(Severity::Warning) > 0);
        if failing {
            CheckStatus::Failed
        } else {
            CheckStatus::Clean
        }
    }
}

/// The long explanation of a code (by id such as `PR101`, or name such as
/// `unknown-setting-key`), as `check --explain CODE` prints it; `None` for an unknown code.
pub fn explain_code(code: &str) -> Option<&'static str> {
    lint::explain(code)
}

/// Gathers the input and lints it, without rendering. Each rule file is checked as soon as it
/// is read, while its text is still in the cache; the checks on the layers as a whole and on
/// the settings files come after.
pub fn check(opts: &CheckOptions<'_>) -> Result<Report> {
    // pi-rules' own configuration: whether scopes are on for pi, its files' findings, and
    // `[check]` on every finding.
    let loaded = Config::read(opts.session);
    let mut report = check_with(opts, loaded.config.scoped())?;
    let session = opts.session;
    add_config_findings(&mut report, &loaded, session);
    let root = session.project_root();
    (loaded.config.check).apply(&mut report, &|d| relative_to_root(session, &root, d));
    Ok(report)
}

/// [`check`], with scopes on or off for pi (`[rules] scoped`): off, the report says where a
/// `paths:`, an `agents:` or a nested rule directory has no effect in pi yet. The configuration
/// files are not read: neither their findings nor `[check]` are in the report.
///
/// Besides the layers, it walks the project directory once (see [`walk`]) when the directory is
/// in a repository or has a `.pi` directory (never `$HOME` itself): it checks the nested rule
/// directories it finds as rule files of their own, labelled as the project's are, and reports
/// the globs of project and nested rules that match no file.
pub fn check_with(opts: &CheckOptions<'_>, scoped: bool) -> Result<Report> {
    let schema = SchemaInfo::from_schema(&opts.session.schema);
    let mut linter = lint::Linter::new(&schema, lint::FEATURES).scoped(scoped);
    // Other agents' instruction files, found by the same walk.
    let mut exported = exported::Exported::new(opts.session);
    let (layers, settings) = gather_each(opts, &mut |kind, entry| {
        let dir = (kind == Layer::Project).then_some("");
        if kind == Layer::Project {
            exported.rule(entry);
        }
        linter.check_rule_in(entry, dir);
    })?;
    if walks(opts.session) {
        check_tree(opts.session, &mut linter, &mut exported);
    }
    // Lint sorts the names several times.
    let collate = comparator_for(
        layers
            .iter()
            .flat_map(|layer| &layer.entries)
            .map(|entry| entry.name.as_str()),
    );
    let mut report = linter.finish(&layers, &settings, &collate);
    // The files `export` wrote for other agents, against the limits those agents apply.
    let session = opts.session;
    (report.diagnostics).extend(crate::export::lint::findings(
        &session.project_root(),
        &session.cwd,
    ));
    // What those agents make of them: copies, hidden files, comments, Codex's chains.
    exported.finish(session, &mut report);
    Ok(report)
}

/// Adds the findings of the configuration files to `report`, each file's with the lines they
/// point into, after every other finding.
fn add_config_findings(report: &mut Report, loaded: &LoadedConfig, session: &Session) {
    let display = PathLabels::new(&session.env);
    for file in &loaded.files {
        let mut found = loaded
            .findings
            .iter()
            .filter(|f| f.path == file.path)
            .peekable();
        if found.peek().is_none() {
            continue;
        }
        let shown = display.path(&file.path);
        let id = session.files().id(&file.path);
        let diagnostics = found
            .map(|finding| {
                let mut d = Diagnostic::new(finding.code, shown.as_str(), finding.span.clone());
                d.message(finding.message.clone())
                    .maybe_help(finding.help.clone());
                d.file_id = Some(id);
                d
            })
            .collect();
        report.add_file(&shown, file.text.as_deref().unwrap_or(""), diagnostics);
    }
}

/// The file of finding `d` relative to the project `root` (canonical), for `[[check.per-path]]`:
/// `None` when it is not under the root (a user or embedded rule, `$HOME`'s settings).
fn relative_to_root(session: &Session, root: &Path, d: &Diagnostic) -> Option<PathBuf> {
    let files = session.files();
    let path = match d.file_id.and_then(|id| files.path(id)) {
        Some(path) => path.to_path_buf(),
        None => PathBuf::from(d.path.as_str()),
    };
    let path = if path.is_relative() {
        session.env.cwd().ok()?.join(path)
    } else {
        path
    };
    if let Ok(relative) = path.strip_prefix(root) {
        return Some(relative.to_path_buf());
    }
    // The root is canonical, the path as found may go through a link: its directory's real
    // path, with its own name (a rule that is a link is judged where it is listed).
    let real = files.canonical(path.parent()?)?.join(path.file_name()?);
    real.strip_prefix(root).ok().map(Path::to_path_buf)
}

/// Whether `check` walks the project directory: when it is in a repository whose root is not
/// `$HOME` or above it (a dotfiles repository), or has a `.pi` directory and is not `$HOME`
/// (whose `.pi` is the user's). `$HOME` itself, or a directory without either, is not walked.
fn walks(session: &Session) -> bool {
    let home = session.home.as_deref();
    let repository = session
        .repo_root()
        .is_some_and(|root| !home.is_some_and(|home| home.starts_with(root)));
    let files = session.files();
    let is_home = home
        .is_some_and(|home| files.canonical_or_same(home) == files.canonical_or_same(&session.cwd));
    repository
        || (!is_home
            && files
                .metadata(&session.cwd.join(".pi"))
                .is_some_and(|m| m.is_dir()))
}

/// The project directory's tree: one walk finds the nested rule directories, tries the globs of
/// the project rules and hands every file to `exported` (other agents' instruction files); each
/// nested directory is then listed and its rules checked, and the globs of the nested rules are
/// tried on the files below their directories. A glob that matched no file is reported, unless
/// a walk stopped short.
fn check_tree(session: &Session, linter: &mut lint::Linter<'_>, exported: &mut exported::Exported) {
    let project = &session.cwd;
    let limits = walk::Limits::default();
    let roots = linter.scoped_rules().len();
    let mut trial = walk::GlobTrial::new(linter.scoped_rules(), 0..roots);
    let walked = walk::walk(project, limits, |path| {
        trial.try_path(path, |_| true);
        exported.walked(path);
    });
    exported.walk_done();
    let mut truncated = walked.truncated;
    let display = PathLabels::new(&session.env);
    let policy = session.policy(false);
    let files = session.files();
    let mut nested = walked.nested;
    nested.sort_unstable();
    for dir in nested {
        let rules = project.join(&dir).join(".pi").join("rules");
        let layer = list_layer(
            Layer::Project,
            &rules,
            false,
            &policy,
            files,
            &display,
            &mut |_, entry| {
                exported.rule(entry);
                linter.check_rule_in(entry, Some(&dir))
            },
        );
        linter.add_nested(NestedInput {
            label: display.path(&rules),
            dir,
            layer,
        });
    }
    let all = linter.scoped_rules().len();
    let mut inner = walk::GlobTrial::new(linter.scoped_rules(), roots..all);
    if roots < all {
        let left = walk::Limits {
            max_files: limits.max_files.saturating_sub(walked.files),
            ..limits
        };
        let rules = linter.scoped_rules();
        truncated |= walk::try_nested(project, rules, roots..all, left, &mut inner).1;
    }
    if truncated {
        return;
    }
    let unmatched: Vec<(usize, usize)> = trial.unmatched().chain(inner.unmatched()).collect();
    for (rule, glob) in unmatched {
        linter.matched_nothing(rule, glob);
    }
}

/// Reads the three layers and the settings files.
pub fn gather(opts: &CheckOptions<'_>) -> Result<(Vec<LayerInput>, Vec<SettingsInput>)> {
    gather_each(opts, &mut |_, _| {})
}

/// What [`gather_each`] hands each entry to as soon as it is listed (and read, for a rule),
/// with its layer.
type EachEntry<'e> = dyn FnMut(Layer, &mut Entry) + 'e;

/// [`gather`], handing each entry to `each` as soon as it is listed and read, before it joins
/// its layer. The layers are listed in the order package, user, project.
fn gather_each(
    opts: &CheckOptions<'_>,
    each: &mut EachEntry<'_>,
) -> Result<(Vec<LayerInput>, Vec<SettingsInput>)> {
    let session = opts.session;
    let display = PathLabels::new(&opts.session.env);
    let policy = session.policy(false);
    let files = session.files();

    let package = match &opts.package {
        PackageSource::Embedded(rules) => {
            let mut entries = Vec::with_capacity(rules.len());
            for (name, text) in rules.iter() {
                let content = Content::Bytes(text.as_bytes().to_vec());
                let label = format!("<embedded>/{name}");
                let mut entry = Entry::new(*name, label, content);
                entry.file_id = Some(files.id(Path::new(&entry.path)));
                each(Layer::Package, &mut entry);
                entries.push(entry);
            }
            LayerInput::new(Layer::Package, entries)
        }
        // A package directory is asked for by name, so its absence is a problem too.
        PackageSource::Dir(dir) => {
            list_layer(Layer::Package, dir, true, &policy, files, &display, each)
        }
    };
    let mut layers = vec![package];
    if let Some(home) = &session.home {
        let dir = home.join(".pi").join("agent").join("rules");
        layers.push(list_layer(
            Layer::User,
            &dir,
            false,
            &policy,
            files,
            &display,
            each,
        ));
    }
    let dir = session.cwd.join(".pi").join("rules");
    layers.push(list_layer(
        Layer::Project,
        &dir,
        false,
        &policy,
        files,
        &display,
        each,
    ));

    let settings = gather_settings(session, &display);
    Ok((layers, settings))
}

/// Reads the settings files: the project's and the global one, each once, and a settings file
/// name that is a link leading nowhere.
fn gather_settings(session: &Session, display: &PathLabels) -> Vec<SettingsInput> {
    let files = session.files();
    let (project, global) = session.settings_files();
    // The project settings file must stay inside the directory it was looked for in: the
    // repository root (or the working directory outside a repository).
    let settings_root = files.canonical_or_same(session.repo_root().unwrap_or(&session.cwd));
    let mut settings: Vec<SettingsInput> = Vec::new();
    for (found, is_project) in [(Some(project), true), (global, false)] {
        let Some(found) = found else { continue };
        let dir = found.path.parent().map(Path::to_path_buf);
        if found.file.is_present() {
            let path = display.path(&found.path);
            if settings.iter().any(|s| s.path == path) {
                continue;
            }
            let escape = is_project
                .then(|| files.real_path(&found.path))
                .flatten()
                .filter(|real| !real.starts_with(&settings_root))
                .map(|real| Escape::OutsideProject {
                    real,
                    root: settings_root.clone(),
                });
            settings.push(SettingsInput {
                file_id: Some(files.id(&found.path)),
                path,
                text: found.text.unwrap_or_default(),
                file: found.file,
                ignored_json: found.ignored_json.as_deref().map(|p| display.path(p)),
                escape,
            });
        }
        // A settings file name that is a link leading nowhere counts as missing for the
        // loader, silently; say so.
        for name in pi_rules_core::settings::SETTINGS_FILE_NAMES {
            let Some(path) = dir.as_ref().map(|d| d.join(name)) else {
                continue;
            };
            // A link (it has an entry) that `stat` cannot follow; `err` says why.
            if files.overlay().contains(&path) || files.symlink_metadata(&path).is_none() {
                continue;
            }
            let Err(err) = files.stat(&path) else {
                continue;
            };
            let shown = display.path(&path);
            if settings.iter().any(|s| s.path == shown) {
                continue;
            }
            let reason =
                format!("it is a link that leads nowhere ({err}), so it counts as missing");
            settings.push(SettingsInput {
                file_id: Some(files.id(&path)),
                path: shown,
                text: String::new(),
                file: SettingsFile::unreadable(reason),
                ignored_json: None,
                escape: None,
            });
        }
    }
    settings
}

/// Paths for messages: relative to the process's directory when under it, else as they are.
#[derive(Debug)]
struct PathLabels {
    base: Option<PathBuf>,
}

impl PathLabels {
    /// Labels relative to the front end's working directory (the process's, for the CLI and
    /// `serve`), not the session's.
    fn new(env: &Env) -> Self {
        PathLabels {
            base: env.cwd().ok().map(Path::to_path_buf),
        }
    }

    fn path(&self, path: &Path) -> String {
        let relative = self
            .base
            .as_deref()
            .and_then(|base| path.strip_prefix(base).ok())
            .filter(|p| !p.as_os_str().is_empty());
        relative.unwrap_or(path).display().to_string()
    }
}

/// Lists one layer directory, every entry included, with the loader's listing
/// ([`loader::list_dir`]). A missing directory is an empty layer, and a problem when it was asked
/// for by name (`required`); a directory that cannot be listed is an empty layer with a problem.
/// Each entry goes to `each` as soon as it is listed and read.
///
/// A rule name among the editor's buffers whose parent is `dir` is an entry too, a regular file
/// with the buffer's text, in place of what is on disk under that name.
#[allow(clippy::too_many_arguments)]
fn list_layer(
    kind: Layer,
    dir: &Path,
    required: bool,
    policy: &Policy,
    files: &Files,
    display: &PathLabels,
    each: &mut EachEntry<'_>,
) -> LayerInput {
    let listing = files.list_dir(dir, |_| true);
    // The directory held open, to read its entries by name, as the loader does.
    let (open, problem) = match listing.dir {
        Ok(open) => (Some(open), None),
        Err(errno) => {
            let err = io::Error::from(errno);
            let problem =
                layer_problem(files, dir, &err, required).map(|reason| (display.path(dir), reason));
            (None, problem)
        }
    };
    let mut entries = Vec::new();
    for item in listing.entries {
        let Ok(listed) = item else { continue };
        if let Some(mut entry) = entry_of(kind, listed, open.as_ref(), policy, files, display) {
            each(kind, &mut entry);
            entries.push(entry);
        }
    }
    LayerInput {
        kind,
        entries,
        problem,
    }
}

/// One listed entry of a `kind` layer as the linter sees it: a rule read (from `open`, the
/// directory held open, when there is one), where a link points and where the file really is;
/// `None` when its type could not be told.
fn entry_of(
    kind: Layer,
    listed: Listed,
    open: Option<&bounded::Directory>,
    policy: &Policy,
    files: &Files,
    display: &PathLabels,
) -> Option<Entry> {
    let layer = kind;
    let Ok(file_type) = listed.file_type else {
        return None;
    };
    let path = listed.path;
    let name = listed.name;
    if listed.invalid_name {
        let mut entry = Entry::new(name, display.path(&path), Content::NotRead);
        entry.invalid_name = true;
        entry.file_id = Some(files.id(&path));
        return Some(entry);
    }
    let is_symlink = file_type == FileType::Symlink;
    let link = is_symlink.then(|| Link {
        target: files
            .read_link(&path)
            .unwrap_or_default()
            .display()
            .to_string(),
    });
    let rule = lint::is_rule_name(&name);
    // Where a rule that was opened really is comes from its open descriptor, as the loader
    // finds it (`None` here when it was not opened).
    let (content, opened) = if !rule {
        let content = if file_type == FileType::Directory {
            Content::Directory
        } else {
            Content::NotRead
        };
        (content, None)
    } else if file_type == FileType::Directory {
        (Content::Directory, None)
    } else if !matches!(file_type, FileType::RegularFile | FileType::Symlink) {
        let kind = bounded::raw_kind_name(file_type).to_owned();
        (Content::Special { kind }, None)
    } else {
        content_of(loader::read_raw_in(
            files, &path, is_symlink, open, layer, policy,
        ))
    };
    // Where any other rule really is: links on the file and on the directories above it
    // followed (for an editor buffer, its directory's).
    let escape = opened.unwrap_or_else(|| match &listed.overlay {
        Some(_) => policy.escape(layer, &files.buffer_real_path(&path), None),
        None => rule
            .then(|| files.canonical(&path))
            .flatten()
            .and_then(|real| policy.escape(layer, &real, files.metadata(&real).as_ref())),
    });
    Some(Entry {
        name,
        path: display.path(&path),
        file_id: Some(files.id(&path)),
        link,
        escape,
        invalid_name: false,
        content,
    })
}

/// Why a layer directory that could not be listed is a problem; `None` when it simply does not
/// exist and was not asked for.
fn layer_problem(files: &Files, dir: &Path, err: &io::Error, required: bool) -> Option<String> {
    if err.kind() == io::ErrorKind::NotFound {
        return match files.symlink_metadata(dir) {
            Some(_) => Some("it is a link that leads nowhere".to_owned()),
            None if required => Some("it does not exist".to_owned()),
            None => None,
        };
    }
    if err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        return Some("it is a link loop".to_owned());
    }
    match files.metadata(dir) {
        Some(metadata) if !metadata.is_dir() => Some(format!(
            "it is a {}, not a directory",
            bounded::kind_name(&metadata.file_type())
        )),
        _ => Some(format!("it cannot be listed: {err}")),
    }
}

/// What the linter is told of a rule entry read with the loader's own bounded read
/// ([`loader::read_raw_checked`] or [`loader::read_raw_in`]), the bytes kept undecoded so that
/// invalid UTF-8 can be located; when it was read, also how it escapes, judged from the open
/// file (`policy` never confines here, so nothing is refused).
fn content_of((raw, escape): (RawRead, Option<Escape>)) -> (Content, Option<Option<Escape>>) {
    let content = match raw {
        // Read, so it was opened and judged.
        RawRead::Bytes { bytes, .. } => return (Content::Bytes(bytes), Some(escape)),
        RawRead::Oversized { size, .. } => Content::Oversized { size },
        RawRead::Failed(FailureReason::Directory) => Content::Directory,
        RawRead::Failed(FailureReason::Special(kind)) => Content::Special {
            kind: kind.as_str().to_owned(),
        },
        RawRead::Failed(FailureReason::Stat(err)) if err.kind == io::ErrorKind::NotFound => {
            Content::Unreadable {
                reason: "it is a dangling link".to_owned(),
            }
        }
        RawRead::Failed(reason) => Content::Unreadable {
            reason: reason.to_string(),
        },
    };
    (content, None)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use std::borrow::Cow;
    use std::fs;

    /// Findings carry the id of their file, which maps back to the file itself whatever the
    /// label says; `--fix` finds a link's target through it, not through the label (which is
    /// relative to the front end's directory, not to where this process runs).
    #[test]
    fn findings_carry_their_files_id_and_fix_follows_the_id() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let project = root.join("project");
        let rules = project.join(".pi/rules");
        let home = root.join("home");
        fs::create_dir_all(&rules).unwrap();
        fs::create_dir_all(&home).unwrap();
        fs::write(rules.join("90-target.txt"), "{{if:dco}}signed{{/IF}}\n").unwrap();
        std::os::unix::fs::symlink("90-target.txt", rules.join("20-linked.md")).unwrap();
        fs::write(rules.join("10-plain.md"), "{{IF:dcoo}}x{{/IF}}\n").unwrap();
        let settings = project.join(".pi/pi-config-settings.json");
        fs::write(&settings, "{\"dcoo\": true}\n").unwrap();
        // Labels are relative to the front end's directory, the project.
        let env = Env::from_vars(project.clone(), [("HOME", home.as_os_str())]);
        let session = Session::in_env(
            env,
            project.clone(),
            Some(home),
            Cow::Borrowed(pi_rules_core::settings::Schema::embedded()),
        );
        let opts = CheckOptions {
            session: &session,
            package: PackageSource::Embedded(&[]),
            strict: false,
        };
        let report = check(&opts).unwrap();
        let mut seen = Vec::new();
        for d in &report.diagnostics {
            let id = d
                .file_id
                .expect("every finding here is on a file the host read");
            let path = session.files().path(id).unwrap();
            assert_eq!(
                path.strip_prefix(&project).unwrap(),
                Path::new(d.path.as_str())
            );
            seen.push(path.file_name().unwrap().to_owned());
        }
        for name in ["10-plain.md", "20-linked.md", "pi-config-settings.json"] {
            assert!(seen.iter().any(|n| n == name), "{name}: {seen:?}");
        }
        let plan = crate::fix::plan(&opts).unwrap();
        assert!(plan.refused.is_empty(), "{:?}", plan.refused);
        let linked = plan
            .files
            .iter()
            .find(|f| f.path == ".pi/rules/20-linked.md");
        assert_eq!(linked.unwrap().target, rules.join("90-target.txt"));
    }

    /// A session on `project` with `home`, labels relative to `project`.
    fn session_in(project: &Path, home: &Path) -> Session {
        let env = Env::from_vars(project.to_path_buf(), [("HOME", home.as_os_str())]);
        Session::in_env(
            env,
            project.to_path_buf(),
            Some(home.to_path_buf()),
            Cow::Borrowed(pi_rules_core::settings::Schema::embedded()),
        )
    }

    fn codes_and_paths(session: &Session, scoped: bool) -> Vec<(&'static str, String)> {
        let opts = CheckOptions {
            session,
            package: PackageSource::Embedded(&[]),
            strict: false,
        };
        let report = check_with(&opts, scoped).unwrap();
        let mut found: Vec<(&'static str, String)> = report
            .diagnostics
            .iter()
            .map(|d| (d.code.id(), d.path.to_string()))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn scopes_on_leave_out_the_findings_of_scopes_off() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let (project, home) = (root.join("project"), root.join("home"));
        fs::create_dir_all(project.join(".pi/rules")).unwrap();
        fs::create_dir_all(project.join("packages/api/.pi/rules")).unwrap();
        fs::create_dir_all(project.join("src")).unwrap();
        fs::create_dir_all(&home).unwrap();
        fs::write(project.join("src/a.ts"), "").unwrap();
        fs::write(
            project.join(".pi/rules/90-a.md"),
            "---\npaths: src/**\n---\nA.\n",
        )
        .unwrap();
        fs::write(project.join("packages/api/.pi/rules/90-a.md"), "B.\n").unwrap();
        let session = session_in(&project, &home);
        let nested = "packages/api/.pi/rules";
        let rule = ".pi/rules/90-a.md";
        assert_eq!(
            codes_and_paths(&session, false),
            [
                ("PR1006", format!("{nested}/90-a.md")),
                ("PR1007", rule.to_owned()),
                ("PR1008", nested.to_owned()),
            ]
        );
        assert_eq!(
            codes_and_paths(&session, true),
            [("PR1006", format!("{nested}/90-a.md"))]
        );
    }

    #[test]
    fn home_is_not_walked() {
        let tmp = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir_all(home.join(".pi/agent/rules")).unwrap();
        fs::create_dir_all(home.join("code/x/.pi/rules")).unwrap();
        fs::write(home.join("code/x/.pi/rules/90-x.md"), "X.\n").unwrap();
        let session = session_in(&home, &home);
        assert_eq!(codes_and_paths(&session, false), []);
        // The same tree below a project directory is walked.
        fs::create_dir_all(home.join("code/.pi")).unwrap();
        let session = session_in(&home.join("code"), &home);
        assert_eq!(
            codes_and_paths(&session, false),
            [("PR1008", "x/.pi/rules".to_owned())]
        );
    }

    #[test]
    fn status_table() {
        assert_eq!(CheckStatus::Clean.exit_code(), 0);
        assert_eq!(CheckStatus::Failed.exit_code(), 1);
        assert!(explain_code("PR101").is_some());
        assert!(explain_code("nope").is_none());
    }
}
