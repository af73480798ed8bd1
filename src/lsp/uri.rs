//! `file://` URIs to paths and back.
//!
//! A path from a URI is absolute and lexically normal (no `.`, no `..`, no empty segment), as the
//! host's overlay wants it; its bytes are the URI's path percent-decoded. Other schemes, and a
//! `file` URI with a host other than `localhost`, have no path.

use lsp_types::Uri;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Component, Path, PathBuf};
use std::str::FromStr as _;

/// The path of a `file://` URI.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let (host, path) = rest.split_at(rest.find('/')?);
    if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = decode(path.as_bytes())?;
    Some(normal(Path::new(&OsString::from_vec(bytes))))
}

/// The `file://` URI of an absolute path.
pub fn from_path(path: &Path) -> Uri {
    let mut text = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            text.push(char::from(b));
        } else {
            text.push_str(&format!("%{b:02X}"));
        }
    }
    // Every byte that is not unreserved is escaped: the text is a valid URI.
    Uri::from_str(&text).unwrap_or_else(|_| Uri::from_str("file:///").expect("a valid URI"))
}

/// `path` without `.` and `..` (lexically: `..` removes the component before it).
pub fn normal(path: &Path) -> PathBuf {
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

fn decode(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(s: &str) -> Uri {
        Uri::from_str(s).unwrap()
    }

    #[test]
    fn file_uris_round_trip() {
        for path in ["/a/b.md", "/tmp/with space/日本.md", "/x/%25/#?.md", "/"] {
            let u = from_path(Path::new(path));
            assert_eq!(
                to_path(&u).as_deref(),
                Some(Path::new(path)),
                "{}",
                u.as_str()
            );
        }
        assert_eq!(
            to_path(&uri("file:///a/./b/../c%20d.md")).as_deref(),
            Some(Path::new("/a/c d.md"))
        );
        assert_eq!(
            to_path(&uri("file://localhost/a.md")).as_deref(),
            Some(Path::new("/a.md"))
        );
    }

    #[test]
    fn other_uris_have_no_path() {
        for s in [
            "untitled:Untitled-1",
            "file://server/share/a.md",
            "https://x/a.md",
        ] {
            assert_eq!(to_path(&uri(s)), None, "{s}");
        }
    }
}
