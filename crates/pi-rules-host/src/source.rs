//! The file source's editor layer: an [`Overlay`] of open documents whose text stands in for the
//! file on disk at the same path.
//!
//! An [`Env`](crate::env::Env) carries one (empty unless a front end gives it one), and every read
//! that the host does of a rule file, a layer listing or a settings file consults it first:
//! - a rule file whose path is in the overlay reads as that text, with no disk access: it is
//!   never a link, a special file or missing, and it is oversized only when the text is over the
//!   limit;
//! - a rule name (`*.md`) in the overlay whose parent is a layer directory is listed in that
//!   layer, as a regular file, whether or not it is on disk;
//! - a settings file whose path is in the overlay reads as that text (and so exists).
//!
//! Where an overlaid rule "really is", for `--confine`, is its directory's real path joined with
//! its name ([`real_path`]): a buffer in the project's `.pi/rules` is inside the project, one in a
//! layer directory that is a link out of the project is outside it.
//!
//! Paths are matched as given: absolute and lexically normal, as a front end gets them from a
//! `file://` URI (a `..` is taken away lexically on both sides; links are not resolved).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Editor buffers that stand in for files on disk: the text of an open, maybe unsaved document.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    files: BTreeMap<PathBuf, Arc<str>>,
}

impl Overlay {
    /// An empty overlay: every read goes to the disk.
    pub fn new() -> Overlay {
        Overlay::default()
    }

    /// Puts `text` in place of the file at `path`, replacing any text given before.
    pub fn insert(&mut self, path: PathBuf, text: impl Into<Arc<str>>) {
        let path = match normal(&path) {
            Cow::Borrowed(_) => path,
            Cow::Owned(normal) => normal,
        };
        self.files.insert(path, text.into());
    }

    /// Takes `path` out: it reads from the disk again. Whether it was in.
    pub fn remove(&mut self, path: &Path) -> bool {
        self.files.remove(normal(path).as_ref()).is_some()
    }

    /// The text standing in for `path`, when there is one.
    pub fn get(&self, path: &Path) -> Option<&Arc<str>> {
        if self.files.is_empty() {
            return None;
        }
        self.files.get(normal(path).as_ref())
    }

    /// Whether `path` is in the overlay.
    pub fn contains(&self, path: &Path) -> bool {
        self.get(path).is_some()
    }

    /// Whether nothing is overlaid.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The overlaid paths, in byte order.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.keys().map(PathBuf::as_path)
    }

    /// The overlaid files directly in `dir` whose names are UTF-8: (path, name, text), in byte
    /// order of their names.
    pub fn in_dir<'a>(
        &'a self,
        dir: &Path,
    ) -> impl Iterator<Item = (&'a Path, &'a str, &'a Arc<str>)> + 'a {
        // Nothing to compare when nothing is overlaid: the common case costs no allocation.
        let dir = (!self.files.is_empty()).then(|| normal(dir).into_owned());
        self.files.iter().filter_map(move |(path, text)| {
            if path.parent() != dir.as_deref() {
                return None;
            }
            let name = path.file_name()?.to_str()?;
            Some((path.as_path(), name, text))
        })
    }

    /// Reads the settings file at `path` as [`crate::bounded::read_text`] does, from the overlay
    /// when it is there (over `limit` bytes, it is refused as a file on disk would be).
    pub fn read_text(&self, path: &Path, limit: u64) -> Result<Option<String>, String> {
        match self.get(path) {
            Some(text) if text.len() as u64 > limit => {
                Err(format!("{} bytes, over the {limit}-byte limit", text.len()))
            }
            Some(text) => Ok(Some(text.to_string())),
            None => crate::bounded::read_text(path, limit),
        }
    }

    /// Whether a file exists at `path` (following links): in the overlay, or on disk.
    pub fn exists(&self, path: &Path) -> bool {
        self.contains(path) || path.exists()
    }
}

/// Where an overlaid file at `path` would really be: its directory's real path (links followed)
/// joined with its name; `path` itself when the directory does not resolve.
pub fn real_path(path: &Path) -> PathBuf {
    let resolved = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .zip(path.file_name())
        .and_then(|(dir, name)| Some(std::fs::canonicalize(dir).ok()?.join(name)));
    resolved.unwrap_or_else(|| normal(path).into_owned())
}

/// `path` with its `..` taken away lexically (`.` and repeated separators are already ignored
/// when paths are compared); borrowed when it has none.
fn normal(path: &Path) -> Cow<'_, Path> {
    if !path.components().any(|c| c == Component::ParentDir) {
        return Cow::Borrowed(path);
    }
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlay_maps_paths_to_texts() {
        let mut overlay = Overlay::new();
        assert!(overlay.is_empty());
        overlay.insert(PathBuf::from("/p/.pi/rules/10-a.md"), "one");
        overlay.insert(PathBuf::from("/p/.pi/rules/x/../20-b.md"), "two");
        overlay.insert(PathBuf::from("/p/.pi/rules/10-a.md"), "again");
        overlay.insert(PathBuf::from("/p/.pi/other/30-c.md"), "three");
        assert_eq!(
            overlay.get(Path::new("/p/.pi/rules/10-a.md")).map(|t| &**t),
            Some("again")
        );
        assert_eq!(
            overlay
                .get(Path::new("/p/./.pi/rules/20-b.md"))
                .map(|t| &**t),
            Some("two")
        );
        let names: Vec<&str> = overlay
            .in_dir(Path::new("/p/.pi/rules/"))
            .map(|(_, name, _)| name)
            .collect();
        assert_eq!(names, ["10-a.md", "20-b.md"]);
        assert_eq!(overlay.paths().count(), 3);
        assert!(overlay.remove(Path::new("/p/.pi/rules/10-a.md")));
        assert!(!overlay.remove(Path::new("/p/.pi/rules/10-a.md")));
        assert!(!overlay.contains(Path::new("/p/.pi/rules/10-a.md")));
    }

    #[test]
    fn an_overlaid_settings_text_is_bounded_like_a_file() {
        let mut overlay = Overlay::new();
        let path = PathBuf::from("/nowhere/.pi/pi-config-settings.jsonc");
        overlay.insert(path.clone(), "{\"dco\": true}");
        assert!(overlay.exists(&path));
        assert_eq!(
            overlay.read_text(&path, 64).unwrap().as_deref(),
            Some("{\"dco\": true}")
        );
        let err = overlay.read_text(&path, 4).unwrap_err();
        assert!(err.contains("over the 4-byte limit"), "{err}");
        assert_eq!(
            overlay.read_text(Path::new("/nowhere/x.json"), 64),
            Ok(None)
        );
    }

    #[test]
    fn the_real_path_of_a_buffer_is_its_directory_resolved() {
        let tmp = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(real.join("d")).unwrap();
        std::os::unix::fs::symlink(real.join("d"), real.join("l")).unwrap();
        assert_eq!(real_path(&real.join("l/x.md")), real.join("d/x.md"));
        assert_eq!(
            real_path(Path::new("/no/such/dir/x.md")),
            Path::new("/no/such/dir/x.md")
        );
    }
}
