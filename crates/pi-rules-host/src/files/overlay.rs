//! The file source's editor layer: an [`Overlay`] of open documents whose text stands in for the
//! file on disk at the same path.
//!
//! A [`Files`](super::Files) view holds one (empty unless a front end gives it one), and every
//! read that the host does of a rule file, a layer listing or a settings file consults it first:
//! - a rule file whose path is in the overlay reads as that text, with no disk access: it is
//!   never a link, a special file or missing, and it is oversized only when the text is over the
//!   limit;
//! - a rule name (`*.md`) in the overlay whose parent is a layer directory is listed in that
//!   layer, as a regular file, whether or not it is on disk;
//! - a settings file whose path is in the overlay reads as that text (and so exists).
//!
//! Where an overlaid rule "really is", for `--confine`, is its directory's real path joined with
//! its name ([`Files::real_path`](super::Files::real_path)): a buffer in the project's `.pi/rules` is inside the project, one in a
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
}

/// `path` with its `..` taken away lexically (`.` and repeated separators are already ignored
/// when paths are compared); borrowed when it has none.
pub(crate) fn normal(path: &Path) -> Cow<'_, Path> {
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
}
