//! What the commands that read and write single rule files share (`show`, `override`, `new`):
//! the arguments that locate the layers, finding a rule by name (with near names when there is
//! none), reading one copy byte for byte, and the directory of a layer that can be written;
//! nested rule directories (`DIR/.pi/rules`, [`NestedDir`]) for `new --dir` and `show --dir`; and
//! a scope written as frontmatter ([`scope_header`]) for `new` and `import`.

use crate::embedded;
use crate::error::UsageError;
use crate::error::{Error, Result};
use crate::loader::{self, Candidate, Layer, LayerDirs, Loaded, NameReport, RawRead};
use crate::notes::Note;
use crate::session::Session;
use crate::writing::{LayerDir, Place, WriteError};
use pi_rules_core::lint::suggest;
use std::path::{Component, Path, PathBuf};

/// The three layers as listed and read now.
pub struct Layers {
    pub session: Session,
    pub dirs: LayerDirs,
    pub loaded: Loaded,
    policy: loader::Policy,
}

/// Why a copy cannot be used.
#[derive(Debug)]
pub struct Unusable {
    pub reason: String,
    /// The copy is over the size limit: the loader skips the rule and hides the lower copies,
    /// so no lower copy may stand in for it.
    pub oversized: bool,
}

/// One copy of a rule, read.
pub struct RuleCopy {
    pub bytes: Vec<u8>,
    /// A link to a character device that reads as empty (`/dev/null`): it masks the lower copies.
    pub masked: bool,
    /// How the copy read escapes (outside the project, a special file), when it does: read all
    /// the same, as the loader reads it without `--confine`.
    pub escape: Option<loader::Escape>,
}

impl Layers {
    /// Lists and reads the three layers of `session`'s project, with the package layer from
    /// `package_dir` when given, and rules confined to the project with `--confine` (`confine`)
    /// or as the session's environment says.
    pub fn read(session: Session, package_dir: Option<&Path>, confine: bool) -> Layers {
        let policy = session.policy(session.env.confined(confine));
        let dirs = session.layer_dirs(package_dir);
        let loaded = loader::load_with(&dirs, &policy);
        Layers {
            session,
            dirs,
            loaded,
            policy,
        }
    }

    /// The rule named by `query`: its exact file name, the name without `.md`, or the name
    /// without its numeric prefix when exactly one rule has it (`critical-rules`). Anything
    /// else is a usage error that lists the near names.
    pub fn find(&self, query: &str) -> Result<&NameReport> {
        let names = &self.loaded.names;
        let stem = query.strip_suffix(".md").unwrap_or(query);
        if let Some(report) = names
            .iter()
            .find(|r| r.name == query || r.name.strip_suffix(".md") == Some(stem))
        {
            return Ok(report);
        }
        let unprefixed: Vec<&NameReport> = names
            .iter()
            .filter(|r| name_without_prefix(&r.name) == stem)
            .collect();
        match unprefixed.as_slice() {
            [one] => return Ok(one),
            [] => {}
            several => {
                let list = backticked(several.iter().map(|r| r.name.as_str()));
                return Err(UsageError(format!(
                    "`{}` names several rules: {list}; give the whole file name",
                    query
                ))
                .into());
            }
        }
        let near = self.near_names(stem);
        let message = if near.is_empty() {
            format!(
                "no rule is named `{}` in any layer; `pi-rules explain` lists the rules",
                query
            )
        } else {
            format!(
                "no rule is named `{}`; near names: {}",
                query,
                backticked(near.into_iter())
            )
        };
        Err(UsageError(message).into())
    }

    /// Up to five rule names close to `stem`, closest first: by edit distance to the name with
    /// or without its prefix, or to one of its words, or containing it.
    pub fn near_names(&self, stem: &str) -> Vec<&str> {
        let lower = stem.to_ascii_lowercase();
        let word: Vec<char> = lower.chars().collect();
        // Whole names allow two edits even when short; single words, one per three letters.
        let close_within = |candidate: &str, floor: usize| {
            let cand: Vec<char> = candidate.chars().collect();
            let limit = (cand.len() / 3)
                .max(floor)
                .min(word.len().saturating_sub(1));
            suggest::distance(&word, &cand, limit)
        };
        let mut scored: Vec<(usize, &str)> = Vec::new();
        for report in &self.loaded.names {
            let name = report.name.as_str();
            let full = name
                .strip_suffix(".md")
                .unwrap_or(name)
                .to_ascii_lowercase();
            let bare = name_without_prefix(name).to_ascii_lowercase();
            let whole = close_within(&full, 2)
                .into_iter()
                .chain(close_within(&bare, 2))
                .min();
            let by_word = || {
                bare.split(['-', '_'])
                    .filter(|w| w.len() >= 3)
                    .filter_map(|w| close_within(w, 1))
                    .min()
                    .map(|d| d + 1)
            };
            let contained = || (lower.len() >= 3 && full.contains(&lower)).then_some(1);
            if let Some(score) = whole.or_else(by_word).or_else(contained) {
                scored.push((score, name));
            }
        }
        scored.sort_by_key(|(score, _)| *score);
        scored.into_iter().take(5).map(|(_, name)| name).collect()
    }

    /// Reads `candidate` of the rule `name` byte for byte, as the loader would (bounded, never
    /// from a FIFO, under `--confine`, an editor buffer in place of the file); embedded package
    /// rules come from the binary.
    pub fn read_copy(&self, name: &str, candidate: &Candidate) -> Result<RuleCopy, Unusable> {
        let failed = |reason: String| Unusable {
            reason,
            oversized: false,
        };
        let Some(path) = &candidate.path else {
            return embedded::PACKAGE_RULES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| RuleCopy {
                    bytes: text.as_bytes().to_vec(),
                    masked: false,
                    escape: None,
                })
                .ok_or_else(|| failed("it is not embedded in this build".to_owned()));
        };
        let (read, escape) = loader::read_raw_in(
            &self.dirs.files,
            path,
            candidate.is_symlink,
            None,
            candidate.layer,
            &self.policy,
        );
        match read {
            RawRead::Bytes { bytes, masked } => Ok(RuleCopy {
                bytes,
                masked,
                escape,
            }),
            RawRead::Oversized { size, by_read } => Err(Unusable {
                reason: if by_read {
                    format!(
                        "it reads past the {}-byte limit, so the rule is skipped",
                        loader::MAX_RULE_BYTES
                    )
                } else {
                    format!(
                        "it is {size} bytes, over the {}-byte limit, so the rule is skipped",
                        loader::MAX_RULE_BYTES
                    )
                },
                oversized: true,
            }),
            RawRead::Failed(reason) => Err(failed(reason.to_string())),
        }
    }

    /// The directory of a layer that rules are written to: the user layer needs `$HOME`.
    pub fn writable_dir(&self, layer: Layer) -> Result<PathBuf> {
        match layer {
            Layer::Project => Ok(self.dirs.project.clone()),
            Layer::User => self.dirs.user.clone().ok_or_else(|| {
                Error::input("there is no user layer: `HOME` is not set; set it, or use --project")
            }),
            Layer::Package => Err(UsageError(
                "the package layer is not written to; use --user or --project".to_owned(),
            )
            .into()),
        }
    }
}

impl Layers {
    /// Opens the directory of `layer` for writing, creating it if needed, after checking that
    /// neither it nor a directory above it leads out of the project (the project layer) or
    /// `$HOME` (the user layer); see [`crate::writing`].
    pub fn open_layer(&self, layer: Layer) -> Result<LayerDir> {
        let place = match layer {
            Layer::Project => Place::project(&self.session.cwd, self.session.project_root()),
            Layer::User => Place::user(self.session.home.as_deref()),
            Layer::Package => {
                return Err(UsageError(
                    "the package layer is not written to; use --user or --project".to_owned(),
                )
                .into())
            }
        };
        Ok(place.and_then(|place| place.open(true))?)
    }

    /// The two-digit prefixes of the rule names in every layer, for [`next_free`].
    pub fn used_prefixes(&self) -> Vec<u64> {
        self.loaded
            .names
            .iter()
            .filter_map(|r| {
                let (digits, _) = prefix_of(&r.name)?;
                (digits.len() == 2).then(|| digits.parse::<u64>().ok())?
            })
            .collect()
    }
}

/// A nested rule directory that `new --dir` writes to: `<project dir>/<dir>/.pi/rules`, whose
/// rules are for the subtree `dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedDir {
    /// `dir`, relative to the project directory, its components plain (no `.`, `..` or root).
    pub dir: PathBuf,
    /// The rule directory: the project directory joined with `dir` and `.pi/rules`.
    pub rules: PathBuf,
}

impl Layers {
    /// The nested rule directory of `dir`, a directory below the project directory (the
    /// working directory, whose `.pi/rules` is the project layer): relative to it, or absolute
    /// and inside it; `..` and the project directory itself are refused (usage errors).
    pub fn nested_dir(&self, dir: &Path) -> Result<NestedDir> {
        let shown = dir.display();
        let relative = if dir.is_absolute() {
            dir.strip_prefix(&self.session.cwd).map_err(|_| {
                UsageError(format!(
                    "`{shown}` is not inside the project directory `{}`; give a directory \
                     below it, e.g. `packages/api`",
                    self.session.cwd.display()
                ))
            })?
        } else {
            dir
        };
        let mut plain = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => plain.push(name),
                Component::CurDir => {}
                _ => {
                    return Err(UsageError(format!(
                        "`{shown}` leads out of the project directory; give a directory below \
                         it, e.g. `packages/api`"
                    ))
                    .into())
                }
            }
        }
        if plain.as_os_str().is_empty() {
            return Err(UsageError(format!(
                "`{shown}` is the project directory itself, whose rules are the project layer; \
                 use --project, or give a directory below it"
            ))
            .into());
        }
        let rules = self.session.cwd.join(&plain).join(".pi").join("rules");
        Ok(NestedDir { dir: plain, rules })
    }

    /// Opens the nested rule directory for writing, creating `.pi/rules` in it if needed, after
    /// checking, as for the project layer, that no directory on the way is a link leading out of
    /// the project. The directory `dir` itself must exist.
    pub fn open_nested(&self, nested: &NestedDir) -> Result<LayerDir> {
        let components: Vec<std::ffi::OsString> = nested
            .dir
            .components()
            .map(|c| c.as_os_str().to_owned())
            .collect();
        let place = Place::nested(&self.session.cwd, self.session.project_root(), &components)?;
        let resolved = place.resolve()?;
        // Only `.pi` and `rules` may be missing: a directory to hold rules for is not made up.
        if resolved.missing.len() > 2 {
            return Err(Error::input(format!(
                "`{}` is not a directory of the project `{}`; nested rules are for a directory \
                 that exists",
                nested.dir.display(),
                self.session.cwd.display()
            )));
        }
        Ok(place.open(true)?)
    }

    /// The rule files in the nested rule directory, by name, each as a project-layer candidate
    /// that [`Layers::read_copy`] reads (none when the directory does not exist yet).
    pub fn nested_rules(&self, nested: &NestedDir) -> Vec<(String, Candidate)> {
        self.session
            .files()
            .list_dir(&nested.rules, loader::is_rule_name)
            .entries
            .into_iter()
            .filter_map(|entry| {
                let entry = entry.ok().filter(|e| !e.invalid_name)?;
                let candidate = Candidate {
                    layer: Layer::Project,
                    is_symlink: entry.file_type == Ok(rustix::fs::FileType::Symlink),
                    path: Some(entry.path),
                };
                Some((entry.name, candidate))
            })
            .collect()
    }

    /// The rule of the nested rule directory that `query` names, as [`Layers::find`] takes a
    /// name: the file name, without `.md`, or without its prefix when one rule there has it.
    pub fn find_nested(&self, nested: &NestedDir, query: &str) -> Result<(String, Candidate)> {
        let mut rules = self.nested_rules(nested);
        rules.sort_by(|a, b| a.0.cmp(&b.0));
        let stem = query.strip_suffix(".md").unwrap_or(query);
        let shown = nested.rules.display();
        if let Some(at) = rules
            .iter()
            .position(|(name, _)| name == query || name.strip_suffix(".md") == Some(stem))
        {
            return Ok(rules.swap_remove(at));
        }
        let mut unprefixed: Vec<(String, Candidate)> = rules
            .iter()
            .filter(|(name, _)| name_without_prefix(name) == stem)
            .cloned()
            .collect();
        match unprefixed.len() {
            1 => Ok(unprefixed.remove(0)),
            0 => {
                let names = backticked(rules.iter().map(|(n, _)| n.as_str()));
                Err(UsageError(if rules.is_empty() {
                    format!("no rule is named `{query}` in `{shown}`, which holds no rule")
                } else {
                    format!("no rule is named `{query}` in `{shown}`; it holds {names}")
                })
                .into())
            }
            _ => Err(UsageError(format!(
                "`{query}` names several rules in `{shown}`: {}; give the whole file name",
                backticked(unprefixed.iter().map(|(n, _)| n.as_str()))
            ))
            .into()),
        }
    }
}

/// The prefix a new rule in `lo..=hi` gets (`new`, `import`): the one after the highest used in
/// the range, or the lowest free one when the highest is `hi`; `None` when all are used.
pub fn next_free(used: &[u64], lo: u64, hi: u64) -> Option<u64> {
    let in_range = || used.iter().copied().filter(|n| (lo..=hi).contains(n));
    match in_range().max() {
        None => Some(lo),
        Some(top) if top < hi => Some(top + 1),
        Some(_) => (lo..=hi).find(|n| !in_range().any(|u| u == *n)),
    }
}

/// A rule name without `.md` and without a leading `NN-` prefix of digits.
pub fn name_without_prefix(name: &str) -> &str {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    match prefix_of(stem) {
        Some((_, rest)) => rest,
        None => stem,
    }
}

/// The numeric prefix of a name (`40` of `40-critical-rules.md`) and what follows its `-`.
pub fn prefix_of(name: &str) -> Option<(&str, &str)> {
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    let rest = name[digits..].strip_prefix('-')?;
    (digits > 0).then(|| (&name[..digits], rest))
}

/// The items of a comma-separated list of globs (`src/api/**, **/*.sql`), each trimmed, empty
/// ones left out; a comma inside braces, brackets or quotes (`*.{ts,tsx}`, `"a,b"`) is part of
/// its item. Quotes are kept.
pub fn split_globs(list: &str) -> Vec<String> {
    pi_rules_core::rule_scope::list_pieces(list)
        .map(|piece| list[piece].trim())
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A rule's scope as frontmatter, in pi-rules' form: `paths:` on one line, comma-separated, each
/// glob as written (or, when a glob holds a comma or a quote or starts with `[`, as a list of
/// `  - "glob"` lines), then `agents:` on one line; fenced by `---` lines. Empty when both are
/// empty.
pub fn scope_header(paths: &[String], agents: &[String]) -> String {
    if paths.is_empty() && agents.is_empty() {
        return String::new();
    }
    let mut out = String::from("---\n");
    let listed = |g: &String| g.contains([',', '"', '\'']) || g.starts_with('[');
    if paths.iter().any(listed) {
        out.push_str("paths:\n");
        for glob in paths {
            let q = if glob.contains('"') { '\'' } else { '"' };
            out.push_str(&format!("  - {q}{glob}{q}\n"));
        }
    } else if !paths.is_empty() {
        out.push_str(&format!("paths: {}\n", paths.join(", ")));
    }
    if !agents.is_empty() {
        out.push_str(&format!("agents: {}\n", agents.join(", ")));
    }
    out.push_str("---\n");
    out
}

/// `` `a`, `b` `` for messages.
fn backticked<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_table() {
        let cases = [
            ("40-critical-rules.md", Some(("40", "critical-rules.md"))),
            ("5-x", Some(("5", "x"))),
            ("100-x", Some(("100", "x"))),
            ("x-40", None),
            ("-x", None),
            ("40x", None),
            ("", None),
        ];
        for (name, expected) in cases {
            assert_eq!(prefix_of(name), expected, "{name}");
        }
        assert_eq!(
            name_without_prefix("40-critical-rules.md"),
            "critical-rules"
        );
        assert_eq!(name_without_prefix("notes.md"), "notes");
    }

    #[test]
    fn split_globs_table() {
        let cases: &[(&str, &[&str])] = &[
            ("src/api/**, **/*.sql", &["src/api/**", "**/*.sql"]),
            ("a,,b ,", &["a", "b"]),
            ("src/**/*.{ts,tsx}, x", &["src/**/*.{ts,tsx}", "x"]),
            ("[a,b]*.c,d", &["[a,b]*.c", "d"]),
            ("\"a,b\", 'c,d'", &["\"a,b\"", "'c,d'"]),
            ("", &[]),
        ];
        for (list, expected) in cases {
            assert_eq!(split_globs(list), *expected, "{list:?}");
        }
    }

    #[test]
    fn scope_headers() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(scope_header(&[], &[]), "");
        assert_eq!(
            scope_header(&s(&["src/api/**", "**/*.sql"]), &[]),
            "---\npaths: src/api/**, **/*.sql\n---\n"
        );
        assert_eq!(
            scope_header(&s(&["*.{ts,tsx}", "b"]), &s(&["claude", "cursor"])),
            "---\npaths:\n  - \"*.{ts,tsx}\"\n  - \"b\"\nagents: claude, cursor\n---\n"
        );
        assert_eq!(
            scope_header(&s(&["[ab]/**"]), &[]),
            "---\npaths:\n  - \"[ab]/**\"\n---\n"
        );
        assert_eq!(scope_header(&[], &s(&["pi"])), "---\nagents: pi\n---\n");
    }

    #[test]
    fn next_free_table() {
        let cases: [(&[u64], Option<u64>); 8] = [
            (&[], Some(70)),
            (&[0, 40, 69], Some(70)),
            (&[70, 72], Some(73)),
            (&[72, 89], Some(70)),
            (&[70, 71, 89], Some(72)),
            (&[0, 40, 90, 95], Some(70)),
            (&(70..=89).collect::<Vec<_>>(), None),
            (&(90..=99).collect::<Vec<_>>(), Some(70)),
        ];
        for (used, expected) in cases {
            assert_eq!(next_free(used, 70, 89), expected, "{used:?}");
        }
        assert_eq!(next_free(&[], 90, 99), Some(90));
        assert_eq!(next_free(&[90, 93], 90, 99), Some(94));
        assert_eq!(next_free(&[91, 99], 90, 99), Some(90));
        assert_eq!(next_free(&(90..=99).collect::<Vec<_>>(), 90, 99), None);
    }
}

/// What [`Layers::override_rule`] wrote.
#[derive(Debug)]
pub struct Overridden {
    /// The new copy's path.
    pub dest: PathBuf,
    /// The layer of the copy it was copied from.
    pub from: Layer,
    /// That copy is a link to an empty device (it masks the name), so the new copy is empty.
    pub masked: bool,
    /// A copy in a layer above the target that still wins over the new one.
    pub still_shadowed_by: Option<Candidate>,
    /// Lower copies passed over because they could not be read (raw: the front end escapes).
    pub notes: Vec<Note>,
}

/// Why [`Layers::override_rule`] wrote nothing.
#[derive(Debug)]
pub enum OverrideError {
    /// The target layer has a file of that name already, and `force` was not given.
    Exists {
        /// That file.
        dest: PathBuf,
        /// The layer of the copy that would have been written over it.
        from: Layer,
    },
    /// Any other failure: no such rule, no readable copy below the target, a refused layer
    /// directory, a failed write.
    Failed(Error),
}

impl From<Error> for OverrideError {
    fn from(err: Error) -> OverrideError {
        OverrideError::Failed(err)
    }
}

impl Layers {
    /// `pi-rules override`: copies the copy of the rule `query` names that wins below `target`
    /// (for the user layer the package copy; for the project layer the user copy when one can
    /// be read, else the package copy) into `target`'s directory, through the layer-confined
    /// writer, replacing a file there only with `force`.
    pub fn override_rule(
        &self,
        query: &str,
        target: Layer,
        force: bool,
    ) -> Result<Overridden, OverrideError> {
        let report = self.find(query)?;
        let name = report.name.as_str();
        let layer = target.as_str();
        let below: Vec<&Candidate> = report
            .candidates
            .iter()
            .filter(|c| c.layer < target)
            .collect();
        if below.is_empty() {
            return Err(Error::input(format!(
                "`{name}` has no copy below the {layer} layer to start from; \
                 `pi-rules new` writes a new rule from a template"
            ))
            .into());
        }
        let (candidate, copy, notes) =
            self.first_readable(name, &below, &format!("below the {layer} layer"))?;
        let dest = self.writable_dir(target)?.join(name);
        let dir = self
            .open_layer(target)
            .map_err(|err| Error::input(format!("cannot write `{}`: {err}", dest.display())))?;
        write_copy(&dir, &dest, name, &copy, candidate.layer, force)?;
        Ok(Overridden {
            dest,
            from: candidate.layer,
            masked: copy.masked,
            still_shadowed_by: report.candidates.iter().find(|c| c.layer > target).cloned(),
            notes,
        })
    }

    /// Copies the rule that wins in the three layers into the nested rule directory `nested`
    /// (`override --dir`), where it replaces that rule for the files of its subtree.
    pub fn override_into_nested(
        &self,
        query: &str,
        nested: &NestedDir,
        force: bool,
    ) -> Result<Overridden, OverrideError> {
        let report = self.find(query)?;
        let name = report.name.as_str();
        let all: Vec<&Candidate> = report.candidates.iter().collect();
        let (candidate, copy, notes) = self.first_readable(name, &all, "in the layers")?;
        let dest = nested.rules.join(name);
        let dir = self.open_nested(nested)?;
        write_copy(&dir, &dest, name, &copy, candidate.layer, force)?;
        Ok(Overridden {
            dest,
            from: candidate.layer,
            masked: copy.masked,
            still_shadowed_by: None,
            notes,
        })
    }

    /// The first of `candidates` (highest precedence first) that can be read, with a note for
    /// each passed over; an oversized copy ends the search, as it ends the loader's.
    fn first_readable<'c>(
        &self,
        name: &str,
        candidates: &[&'c Candidate],
        place: &str,
    ) -> Result<(&'c Candidate, RuleCopy, Vec<Note>)> {
        let mut notes = Vec::new();
        for &candidate in candidates {
            match self.read_copy(name, candidate) {
                Ok(copy) => return Ok((candidate, copy, notes)),
                Err(unusable) if unusable.oversized => {
                    return Err(Error::input(format!(
                        "cannot copy `{}`: {}",
                        candidate.display_path(name),
                        unusable.reason
                    )))
                }
                Err(unusable) => notes.push(Note::info(format!(
                    "the {} copy `{}` cannot be read ({}); trying the next lower layer",
                    candidate.layer.as_str(),
                    candidate.display_path(name),
                    unusable.reason
                ))),
            }
        }
        Err(Error::input(format!(
            "no copy of `{name}` {place} can be read"
        )))
    }
}

/// Writes `copy` as `name` in `dir` (at `dest`), refusing to replace a file there without
/// `force`.
fn write_copy(
    dir: &LayerDir,
    dest: &Path,
    name: &str,
    copy: &RuleCopy,
    from: Layer,
    force: bool,
) -> Result<(), OverrideError> {
    match dir.write(name, &copy.bytes, force) {
        Ok(()) => Ok(()),
        Err(WriteError::Exists) => Err(OverrideError::Exists {
            dest: dest.to_path_buf(),
            from,
        }),
        Err(err) => Err(Error::input(format!("cannot write `{}`: {err}", dest.display())).into()),
    }
}
