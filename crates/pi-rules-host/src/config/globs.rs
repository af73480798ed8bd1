//! The globs of a `[[check.per-path]]` entry, gitignore-style as rule scopes read them
//! (DESIGN-34): relative to the project root, `*` and `?` never cross a `/`; a glob with no `/`
//! (but a trailing one) matches at any depth (`*.md` is `**/*.md`); a leading `/` anchors it at
//! the root; and a glob that names a directory also matches everything below it (`legacy` is
//! `legacy` and `legacy/**`); `./` in front is left out, and `!` is refused. All the globs of an
//! entry are compiled into one `GlobSet`. (The same reading as `rule_scope`'s globs of a rule.)

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The globs of one entry, compiled as they are added.
pub(super) struct Matcher {
    set: GlobSetBuilder,
}

impl Default for Matcher {
    fn default() -> Matcher {
        Matcher {
            set: GlobSetBuilder::new(),
        }
    }
}

impl Matcher {
    /// Adds `glob`; `Err` with the reason (raw) when it is not a valid glob.
    pub(super) fn add(&mut self, glob: &str) -> Result<(), String> {
        for pattern in patterns(glob)? {
            let compiled = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|err| err.kind().to_string())?;
            self.set.add(compiled);
        }
        Ok(())
    }

    /// The set of every glob added; `Err` with the reason (raw) when they are too large to be
    /// compiled together (globset's size limit on the compiled set).
    pub(super) fn build(self) -> Result<GlobSet, String> {
        self.set.build().map_err(|err| err.kind().to_string())
    }
}

/// The globset patterns `glob` stands for: itself (anchored, or at any depth), and everything
/// below it.
fn patterns(glob: &str) -> Result<Vec<String>, String> {
    let mut g = glob.trim();
    if g.is_empty() {
        return Err("it is empty".to_owned());
    }
    // The compiled matcher grows with the glob: bounded as a rule's glob is.
    let limit = pi_rules_core::rule_scope::MAX_ITEM_LEN;
    if g.len() > limit {
        return Err(format!(
            "it is {} bytes, over the {limit}-byte limit",
            g.len()
        ));
    }
    if g.starts_with('!') {
        return Err("`!` (negation) is not supported: list the paths the entry is for".to_owned());
    }
    while let Some(rest) = g.strip_prefix("./") {
        g = rest;
    }
    let anchored = g.starts_with('/');
    let body = g.trim_start_matches('/').trim_end_matches('/');
    if body.is_empty() {
        return Err("it names the whole project: use `[check]` itself".to_owned());
    }
    let base = if anchored || body.contains('/') || body.starts_with("**") {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    let mut out = vec![base.clone()];
    if !(base.ends_with("/**") || base == "**") {
        out.push(format!("{base}/**"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn matches(glob: &str, path: &str) -> bool {
        let mut m = Matcher::default();
        m.add(glob).unwrap();
        m.build().unwrap().is_match(Path::new(path))
    }

    #[test]
    fn glob_table() {
        let cases = [
            (".pi/rules/legacy/**", ".pi/rules/legacy/90-a.md", true),
            (".pi/rules/legacy/**", ".pi/rules/90-a.md", false),
            (".pi/rules/legacy", ".pi/rules/legacy/90-a.md", true),
            (".pi/rules/legacy/", ".pi/rules/legacy/x/90-a.md", true),
            ("*.md", ".pi/rules/90-a.md", true),
            ("*.md", "90-a.md", true),
            ("/*.md", ".pi/rules/90-a.md", false),
            ("/*.md", "90-a.md", true),
            (".pi/rules/*.md", ".pi/rules/sub/90-a.md", false),
            (".pi/rules/*.md", ".pi/rules/90-a.md", true),
            ("90-?.md", ".pi/rules/90-a.md", true),
            (".pi/pi-rules.toml", ".pi/pi-rules.toml", true),
            ("./.pi/rules/*.md", ".pi/rules/90-a.md", true),
            ("**/legacy", "a/legacy/90-a.md", true),
        ];
        for (glob, path, expected) in cases {
            assert_eq!(matches(glob, path), expected, "{glob} {path}");
        }
    }

    #[test]
    fn invalid_globs_say_why() {
        let long = "a".repeat(1 << 20);
        for glob in ["", "  ", "/", "a/[b", "{a,b", "!a/**", "[[[[", &long] {
            let mut m = Matcher::default();
            let err = m.add(glob).unwrap_err();
            assert!(!err.is_empty(), "{}", &glob[..glob.len().min(9)]);
        }
    }
}
