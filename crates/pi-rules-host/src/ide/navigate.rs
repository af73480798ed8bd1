//! Definition and references: from a rule file to the copies of its name in the other layers,
//! and from a key in a condition to the settings file lines that set it. Embedded package rules
//! get a read-only copy in the user's cache, so that an editor can open them.

use super::json;
use super::scan::{self, clamp};
use super::{DocumentKind, IdeContext};
use crate::embedded;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::loader::{Candidate, Layer};
use crate::writing::{Bound, Place};
use std::ops::Range;
use std::path::PathBuf;

/// A place in a file: `range` is a byte range of that file's text (`None`: the file's start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub path: PathBuf,
    pub range: Option<Range<usize>>,
}

/// Where what is at `offset` is defined: on a settings key (in a condition or
/// `requires_setting`), the settings file lines that set it, the one whose value counts first;
/// elsewhere in a rule file, the lower layers' copies of the file that this one overrides,
/// highest first; in a nested rule, the layers' copies of the name, which it replaces for the
/// files of its directory.
pub fn definition(ctx: &IdeContext, kind: &DocumentKind, text: &str, offset: usize) -> Vec<Target> {
    let (name, below): (&str, &dyn Fn(Layer) -> bool) = match kind {
        DocumentKind::Rule { layer, name } => (name, &move |l| l < *layer),
        DocumentKind::NestedRule { name, .. } => (name, &|_| true),
        _ => return Vec::new(),
    };
    let offset = clamp(text, offset);
    if let Some(key) = key_at(text, offset) {
        return setting_lines(ctx, &key);
    }
    copies(ctx, name, below)
}

/// Every place that has what is at `offset`: on a settings key, the settings file lines that set
/// it; elsewhere in a rule file, every copy of the file's name in every layer (this one
/// included; for a nested rule, the layers' copies), highest precedence first.
pub fn references(ctx: &IdeContext, kind: &DocumentKind, text: &str, offset: usize) -> Vec<Target> {
    let (DocumentKind::Rule { name, .. } | DocumentKind::NestedRule { name, .. }) = kind else {
        return Vec::new();
    };
    let offset = clamp(text, offset);
    if let Some(key) = key_at(text, offset) {
        return setting_lines(ctx, &key);
    }
    copies(ctx, name, |_| true)
}

/// The settings key at `offset`: the key of the opener's condition under the cursor, or the
/// value of `requires_setting`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    if let Some(attribute) = scan::gate_attribute_at(text, offset) {
        return (attribute.key == "requires_setting"
            && attribute.value_span.start <= offset
            && offset <= attribute.value_span.end)
            .then(|| attribute.value.to_owned());
    }
    let (_, markers) = scan::body_markers(text);
    let (_, marker) = scan::marker_at(&markers, offset)?;
    if !marker.is_opener() {
        return None;
    }
    scan::condition_key(text, marker).map(|(key, _)| key)
}

/// The lines of the two settings files that set `key` (the last one of each file, whose value
/// counts), the project file's first.
fn setting_lines(ctx: &IdeContext, key: &str) -> Vec<Target> {
    [Some(&ctx.project_file), ctx.global_file.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|found| {
            let text = found.text.as_deref()?;
            let at = json::top_level_keys(text)
                .into_iter()
                .rev()
                .find(|k| k.name == key)?;
            Some(Target {
                path: found.path.clone(),
                range: Some(at.range),
            })
        })
        .collect()
}

/// The copies of the rule `name` in the layers that `layer` accepts, highest precedence first;
/// an embedded package rule as its cache copy.
fn copies(ctx: &IdeContext, name: &str, layer: impl Fn(Layer) -> bool) -> Vec<Target> {
    let Some(report) = ctx.name_report(name) else {
        return Vec::new();
    };
    report
        .candidates
        .iter()
        .filter(|c| layer(c.layer))
        .filter_map(|c| target_of(&ctx.session.env, name, c))
        .collect()
}

fn target_of(env: &Env, name: &str, candidate: &Candidate) -> Option<Target> {
    let path = match &candidate.path {
        Some(path) => path.clone(),
        None => materialize_package_rule(env, name).ok()?,
    };
    Some(Target { path, range: None })
}

/// The directory that holds the copies of the embedded package rules:
/// `$XDG_CACHE_HOME/pi-rules/VERSION/package` when `XDG_CACHE_HOME` is an absolute path, else
/// `$HOME/.cache/pi-rules/VERSION/package`; `None` without either.
pub fn package_cache_dir(env: &Env) -> Option<PathBuf> {
    let (base, below) = cache_base(env)?;
    let mut dir = base;
    dir.extend(below);
    Some(dir)
}

/// The directory the cache copies must stay in, and the components below it.
fn cache_base(env: &Env) -> Option<(PathBuf, Vec<&'static str>)> {
    let version = env!("CARGO_PKG_VERSION");
    match env
        .var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        Some(xdg) => Some((xdg, vec!["pi-rules", version, "package"])),
        None => Some((env.home()?, vec![".cache", "pi-rules", version, "package"])),
    }
}

/// Writes the embedded package rule `name` to [`package_cache_dir`], read-only (mode 0444), and
/// returns its path there (as [`package_cache_dir`] names it, links in it unresolved). A copy that already holds the same bytes is left alone; one that does not
/// is replaced atomically. The directories are created and opened one at a time without
/// following a link that leads outside the cache's base directory (`$XDG_CACHE_HOME` or
/// `$HOME`), as every write of the host is ([`crate::writing`]).
// It makes and resolves the cache directory it writes into, as every writer does.
#[allow(clippy::disallowed_methods)]
pub fn materialize_package_rule(env: &Env, name: &str) -> Result<PathBuf> {
    let Some((_, text)) = embedded::PACKAGE_RULES.iter().find(|(n, _)| *n == name) else {
        return Err(Error::usage(format!(
            "`{name}` is not an embedded package rule"
        )));
    };
    let Some((base, below)) = cache_base(env) else {
        crate::bail!("there is no cache directory: neither XDG_CACHE_HOME nor HOME is set");
    };
    let shown = base.display().to_string();
    if !base.is_dir() {
        std::fs::create_dir_all(&base)
            .map_err(|err| Error::input(format!("cannot create `{shown}`: {err}")))?;
    }
    let root = std::fs::canonicalize(&base)
        .map_err(|err| Error::input(format!("cannot resolve `{shown}`: {err}")))?;
    let below_names = below.clone();
    let place = Place::new(
        Bound::Home,
        root,
        below.into_iter().map(Into::into).collect(),
    );
    let dir = place.open(true)?;
    let same = dir
        .read(name, text.len() as u64 + 1)
        .is_ok_and(|bytes| bytes == text.as_bytes());
    if !same {
        dir.write(name, text.as_bytes(), true)?;
    }
    dir.make_read_only(name).map_err(|err| {
        Error::input(format!(
            "cannot make `{}` read-only: {err}",
            dir.real().join(name).display()
        ))
    })?;
    // The path as the environment names it (as `package_cache_dir` gives it), so that a
    // front end that knows the cache directory recognises the file it opens.
    let mut path = base;
    path.extend(below_names);
    path.push(name);
    Ok(path)
}
