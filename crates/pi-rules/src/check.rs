//! `pi-rules check`: gathers the lint input from disk, runs the core linter and renders the
//! report.
//!
//! Gathering lists the three layer directories with every entry, ignored ones included (so that
//! `x.MD` or a directory named `x.md` can be reported), reads rule files bounded to 131073 bytes
//! (a FIFO or socket is never opened), notes where project-layer links point, and reads the
//! settings files in `<repo root>/.pi` and `$HOME/.pi` through [`Session`]. The checks themselves
//! live in [`pi_rules_core::lint`].
//!
//! Exit status: [`CheckStatus::Clean`] (0) when there is no error, and no warning under
//! `--strict`; [`CheckStatus::Failed`] (1) otherwise. Usage errors (2) are the caller's.

use crate::loader::{self, compare_names, FailureReason, PackageSource, RawRead, SpecialKind};
use crate::repo;
pub use crate::report::Format;
use crate::session::Session;
use anyhow::Result;
use pi_rules_core::lint::{
    self, Content, Entry, LayerInput, LayerKind, Link, LintInput, Report, SchemaInfo,
    SettingsInput, Severity,
};
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

/// What `pi-rules check` runs on and how it reports.
pub struct CheckOptions<'a> {
    /// The working directory, `$HOME` and the settings schema.
    pub session: &'a Session,
    /// The package layer: the embedded rules, or `--package-dir`.
    pub package: PackageSource,
    pub format: Format,
    /// Warnings fail the check too.
    pub strict: bool,
    /// Colour the `human` and `short` formats.
    pub color: bool,
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

/// Runs the check and writes the report to `out` in the chosen format. A failed write is an
/// error of the `io` kind, which the caller maps to exit code 4.
pub fn run_check(opts: &CheckOptions<'_>, out: &mut dyn Write) -> io::Result<CheckStatus> {
    let report = check(opts).map_err(io::Error::other)?;
    render(&report, opts, out)?;
    Ok(CheckStatus::of(&report, opts.strict))
}

/// Writes `report` to `out` in the format and colour of `opts`.
pub fn render(report: &Report, opts: &CheckOptions<'_>, out: &mut dyn Write) -> io::Result<()> {
    let color = opts.color && matches!(opts.format, Format::Human | Format::Short);
    crate::report::render(report, opts.format, color, out)
}

/// Gathers the input and lints it, without rendering.
pub fn check(opts: &CheckOptions<'_>) -> Result<Report> {
    let (layers, settings) = gather(opts)?;
    let schema = SchemaInfo::from_schema(&opts.session.schema);
    let input = LintInput {
        layers: &layers,
        settings: &settings,
        schema: &schema,
        features: lint::FEATURES,
        collate: &compare_names,
    };
    Ok(lint::lint(&input))
}

/// Reads the three layers and the settings files.
pub fn gather(opts: &CheckOptions<'_>) -> Result<(Vec<LayerInput>, Vec<SettingsInput>)> {
    let session = opts.session;
    let display = Display::new();
    let project_root = repo::repo_root(&session.cwd).unwrap_or_else(|| session.cwd.clone());
    let project_root = fs::canonicalize(&project_root).unwrap_or(project_root);

    let package = match &opts.package {
        PackageSource::Embedded(rules) => LayerInput {
            kind: LayerKind::Package,
            entries: rules
                .iter()
                .map(|(name, text)| Entry {
                    name: (*name).to_owned(),
                    path: format!("<embedded>/{name}"),
                    link: None,
                    content: Content::Bytes(text.as_bytes().to_vec()),
                })
                .collect(),
        },
        PackageSource::Dir(dir) => list_layer(LayerKind::Package, dir, None, &display)?,
    };
    let mut layers = vec![package];
    if let Some(home) = &session.home {
        let dir = home.join(".pi").join("agent").join("rules");
        layers.push(list_layer(LayerKind::User, &dir, None, &display)?);
    }
    let dir = session.cwd.join(".pi").join("rules");
    layers.push(list_layer(
        LayerKind::Project,
        &dir,
        Some(&project_root),
        &display,
    )?);

    let (project, global) = session.settings_files();
    let mut settings: Vec<SettingsInput> = Vec::new();
    for found in std::iter::once(project).chain(global) {
        if !found.file.is_present() {
            continue;
        }
        let path = display.path(&found.path);
        if settings.iter().any(|s| s.path == path) {
            continue;
        }
        settings.push(SettingsInput {
            path,
            text: found.text.unwrap_or_default(),
            file: found.file,
            ignored_json: found.ignored_json.as_deref().map(|p| display.path(p)),
        });
    }
    Ok((layers, settings))
}

/// Paths for messages: relative to the process's directory when under it, else as they are.
struct Display {
    base: Option<PathBuf>,
}

impl Display {
    fn new() -> Self {
        Display {
            base: std::env::current_dir().ok(),
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

/// Lists one layer directory. A missing directory is an empty layer; so is one that cannot be
/// listed (the loader then contributes nothing from it either).
fn list_layer(
    kind: LayerKind,
    dir: &Path,
    project_root: Option<&Path>,
    display: &Display,
) -> Result<LayerInput> {
    let mut entries = Vec::new();
    let read_dir = match fs::read_dir(dir) {
        Ok(read_dir) => read_dir,
        Err(_) => return Ok(LayerInput { kind, entries }),
    };
    for item in read_dir {
        let Ok(item) = item else { continue };
        let Ok(name) = item.file_name().into_string() else {
            continue;
        };
        let path = dir.join(&name);
        let Ok(file_type) = item.file_type() else {
            continue;
        };
        let link = file_type.is_symlink().then(|| {
            let target = fs::read_link(&path).unwrap_or_default();
            Link {
                target: target.display().to_string(),
                outside_project: project_root.is_some_and(|root| outside(&path, &target, root)),
            }
        });
        let content = if !lint::is_rule_name(&name) {
            if file_type.is_dir() {
                Content::Directory
            } else {
                Content::NotRead
            }
        } else if file_type.is_dir() {
            Content::Directory
        } else if !(file_type.is_file() || file_type.is_symlink()) {
            Content::Special {
                kind: special_name(&file_type).to_owned(),
            }
        } else {
            read_bounded(&path, file_type.is_symlink())
        };
        entries.push(Entry {
            name,
            path: display.path(&path),
            link,
            content,
        });
    }
    Ok(LayerInput { kind, entries })
}

fn special_name(file_type: &fs::FileType) -> &'static str {
    if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_block_device() {
        "block device"
    } else if file_type.is_char_device() {
        "character device"
    } else {
        "special file"
    }
}

/// Reads a rule entry with the loader's own bounded read, keeping the bytes undecoded so that
/// invalid UTF-8 can be located.
fn read_bounded(path: &Path, is_symlink: bool) -> Content {
    match loader::read_raw(path, is_symlink) {
        RawRead::Bytes { bytes, .. } => Content::Bytes(bytes),
        RawRead::Oversized { size, .. } => Content::Oversized { size },
        RawRead::Failed(FailureReason::Directory) => Content::Directory,
        RawRead::Failed(FailureReason::Special(kind)) => Content::Special {
            kind: match kind {
                SpecialKind::Fifo => "FIFO",
                SpecialKind::Socket => "socket",
            }
            .to_owned(),
        },
        RawRead::Failed(FailureReason::Stat(err)) if err.kind == io::ErrorKind::NotFound => {
            Content::Unreadable {
                reason: "it is a dangling link".to_owned(),
            }
        }
        RawRead::Failed(reason) => Content::Unreadable {
            reason: reason.to_string(),
        },
    }
}

/// Whether the link at `path` (with `target` as written) resolves outside `root`. A link to
/// `/dev/null` (a mask) is not counted.
fn outside(path: &Path, target: &Path, root: &Path) -> bool {
    if target == Path::new("/dev/null") {
        return false;
    }
    let resolved = fs::canonicalize(path).unwrap_or_else(|_| {
        let base = path.parent().unwrap_or(Path::new("/"));
        normalize(&base.join(target))
    });
    !resolved.starts_with(root)
}

/// `path` with `.` and `..` resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_table() {
        let cases = [
            ("/a/b/../c", "/a/c"),
            ("/a/./b", "/a/b"),
            ("/a/../../b", "/b"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize(Path::new(input)), PathBuf::from(expected));
        }
    }

    #[test]
    fn status_table() {
        assert_eq!(CheckStatus::Clean.exit_code(), 0);
        assert_eq!(CheckStatus::Failed.exit_code(), 1);
        assert!(explain_code("PR101").is_some());
        assert!(explain_code("nope").is_none());
    }
}
