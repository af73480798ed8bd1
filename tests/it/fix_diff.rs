//! The diff `check --fix --dry-run` prints applies (issue 23 §3): to the original, it gives
//! exactly what `--fix` writes. Checked with a small, strict patch applier of our own (every
//! count in every hunk header exact, every context and removed line byte for byte, hunks in
//! order), on random texts through the diff printer and on random rule files through the fix
//! plan; and with the real `git apply` and `patch -p1` on the case from the issue.

use pi_rules::terminal::Paint;
use pi_rules::unified_diff::{self, Lines};
use pi_rules_core::settings::Schema;
use pi_rules_host::check::CheckOptions;
use pi_rules_host::loader::PackageSource;
use pi_rules_host::session::Session;
use proptest::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use common::{code, stderr, stdout, World};

// ---------------------------------------------------------------------------------------------
// A strict applier

/// A label's path: `a/x` and `b/x` give `x`; a quoted label is unquoted as git writes it.
fn label_path(label: &[u8]) -> Result<String, String> {
    let text = std::str::from_utf8(label).map_err(|e| e.to_string())?;
    let name = if let Some(inner) = text.strip_prefix('"') {
        let inner = inner.strip_suffix('"').ok_or("unterminated quoted label")?;
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next().ok_or("a lone backslash")? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                d @ '0'..='7' => {
                    let rest: String = chars.by_ref().take(2).collect();
                    let value =
                        u32::from_str_radix(&format!("{d}{rest}"), 8).map_err(|e| e.to_string())?;
                    out.push(char::from_u32(value).ok_or("bad octal escape")?);
                }
                other => return Err(format!("unknown escape \\{other}")),
            }
        }
        out
    } else {
        text.to_owned()
    };
    let path = name
        .strip_prefix("a/")
        .or_else(|| name.strip_prefix("b/"))
        .ok_or_else(|| format!("label `{name}` has no a/ or b/"))?;
    Ok(path.to_owned())
}

/// `start[,len]` of a hunk header side.
fn range(text: &str) -> Result<(usize, usize), String> {
    let (start, len) = match text.split_once(',') {
        Some((s, l)) => (s, l.parse::<usize>().map_err(|e| e.to_string())?),
        None => (text, 1),
    };
    Ok((start.parse::<usize>().map_err(|e| e.to_string())?, len))
}

/// The two sides of a hunk header: `(start, len)` each.
type Header = ((usize, usize), (usize, usize));

fn header(line: &[u8]) -> Result<Header, String> {
    let text = std::str::from_utf8(line).map_err(|e| e.to_string())?;
    let inner = text
        .strip_prefix("@@ -")
        .and_then(|t| t.strip_suffix(" @@"))
        .ok_or_else(|| format!("not a hunk header: {text:?}"))?;
    let (old, new) = inner.split_once(" +").ok_or("no + side")?;
    Ok((range(old)?, range(new)?))
}

/// Applies a unified diff of one or more files to `files` (path → bytes), strictly.
fn apply(
    files: &BTreeMap<String, Vec<u8>>,
    patch: &[u8],
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut result = files.clone();
    let mut lines: Vec<&[u8]> = patch.split_inclusive(|&b| b == b'\n').collect();
    if lines.iter().any(|l| !l.ends_with(b"\n")) {
        return Err("the patch does not end with a line break".into());
    }
    lines.iter_mut().for_each(|l| *l = &l[..l.len() - 1]);
    let mut i = 0;
    while i < lines.len() {
        let old = lines[i].strip_prefix(b"--- ").ok_or_else(|| {
            format!(
                "line {}: expected `--- `: {:?}",
                i + 1,
                String::from_utf8_lossy(lines[i])
            )
        })?;
        let new = lines
            .get(i + 1)
            .and_then(|l| l.strip_prefix(b"+++ "))
            .ok_or("expected `+++ `")?;
        let (path, new_path) = (label_path(old)?, label_path(new)?);
        if path != new_path {
            return Err(format!("labels differ: {path} {new_path}"));
        }
        i += 2;
        let original = files.get(&path).ok_or_else(|| format!("no file {path}"))?;
        let old_lines: Vec<&[u8]> = original.split_inclusive(|&b| b == b'\n').collect();
        let mut out: Vec<u8> = Vec::new();
        let mut out_lines = 0usize;
        let mut pos = 0usize;
        let mut ended = false; // a line without a line break was written
        if !lines.get(i).is_some_and(|l| l.starts_with(b"@@ ")) {
            return Err("a file without hunks".into());
        }
        while lines.get(i).is_some_and(|l| l.starts_with(b"@@ ")) {
            let ((old_start, old_len), (new_start, new_len)) = header(lines[i])?;
            i += 1;
            let at = if old_len == 0 {
                old_start
            } else {
                old_start.checked_sub(1).ok_or("old start 0")?
            };
            if at < pos || at > old_lines.len() {
                return Err(format!("hunk at {at} out of order (at {pos})"));
            }
            for line in &old_lines[pos..at] {
                if ended {
                    return Err("text after a last line".into());
                }
                out.extend_from_slice(line);
                out_lines += 1;
            }
            pos = at;
            let expected_new = if new_len == 0 {
                new_start
            } else {
                new_start - 1
            };
            if expected_new != out_lines {
                return Err(format!(
                    "new start {new_start} but {out_lines} lines written"
                ));
            }
            let (mut seen_old, mut seen_new) = (0, 0);
            while seen_old < old_len || seen_new < new_len {
                let line = *lines.get(i).ok_or("hunk cut short")?;
                i += 1;
                let (&sign, body) = line.split_first().ok_or("an empty hunk line")?;
                let no_newline = lines.get(i) == Some(&&b"\\ No newline at end of file"[..]);
                if no_newline {
                    i += 1;
                }
                let mut full = body.to_vec();
                if !no_newline {
                    full.push(b'\n');
                }
                if sign == b' ' || sign == b'-' {
                    let have = old_lines.get(pos).ok_or("past the end of the file")?;
                    if *have != full.as_slice() {
                        return Err(format!(
                            "line {} is {:?}, the patch says {:?}",
                            pos + 1,
                            String::from_utf8_lossy(have),
                            String::from_utf8_lossy(&full)
                        ));
                    }
                    pos += 1;
                    seen_old += 1;
                }
                if sign == b' ' || sign == b'+' {
                    if ended {
                        return Err("text after a last line".into());
                    }
                    out.extend_from_slice(&full);
                    out_lines += 1;
                    ended = no_newline;
                    seen_new += 1;
                }
                if !matches!(sign, b' ' | b'-' | b'+') {
                    return Err(format!("bad line sign {:?}", sign as char));
                }
                if seen_old > old_len || seen_new > new_len {
                    return Err("a hunk longer than its header says".into());
                }
            }
        }
        for line in &old_lines[pos..] {
            if ended {
                return Err("text after a last line".into());
            }
            out.extend_from_slice(line);
        }
        result.insert(path, out);
    }
    Ok(result)
}

#[test]
fn the_strict_applier_refuses_what_it_should() {
    let files = BTreeMap::from([("x".to_owned(), b"a\nb\nc\n".to_vec())]);
    let good = b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
    assert_eq!(apply(&files, good).unwrap()["x"], b"a\nB\nc\n");
    for bad in [
        &b"--- a/x\n+++ b/x\n@@ -1,4 +3,2 @@\n a\n-b\n+B\n c\n"[..],
        b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-x\n+B\n c\n",
        b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n",
        b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+B\n c\n",
        b"--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
    ] {
        assert!(
            apply(&files, bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Random texts through the printer

fn diff(old: &str, new: &str, context: usize) -> Vec<u8> {
    let mut out = Vec::new();
    unified_diff::write_with(
        &mut out,
        ("a/x", old),
        ("b/x", new),
        context,
        Paint { on: false },
        Lines::Raw,
    )
    .unwrap();
    out
}

/// Lines that are hard for a diff: empty, white space, carriage returns (at the end, alone in
/// the middle), and text that looks like diff syntax.
const LINE_PIECES: &[&str] = &[
    "a",
    "b",
    "c",
    "",
    " ",
    "\t",
    "x\r",
    "\r",
    "mid\rdle",
    "---",
    "--- a/x",
    "+++ b/x",
    "@@ -1 +1 @@",
    "\\ No newline at end of file",
    "-",
    "+",
    "é漢",
    "\u{feff}",
    "\x1b[2J",
];

fn text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(LINE_PIECES.to_vec()), 0..14),
        prop::sample::select(vec!["\n", "\r\n"]),
        any::<bool>(),
    )
        .prop_map(|(lines, eol, final_break)| {
            let mut text = lines.join(eol);
            if final_break && !lines.is_empty() {
                text.push_str(eol);
            }
            text
        })
}

/// `old` with a few lines deleted, inserted or replaced, and maybe its last line break changed.
fn edited() -> impl Strategy<Value = (String, String)> {
    (
        text(),
        prop::collection::vec(
            (
                0usize..20,
                0u8..3,
                prop::sample::select(LINE_PIECES.to_vec()),
            ),
            0..5,
        ),
        0u8..3,
    )
        .prop_map(|(old, edits, ending)| {
            let mut lines: Vec<String> = old.split_inclusive('\n').map(str::to_owned).collect();
            for (at, kind, piece) in edits {
                let at = at.min(lines.len());
                match kind {
                    0 if at < lines.len() => {
                        lines.remove(at);
                    }
                    1 if at < lines.len() => lines[at] = format!("{piece}\n"),
                    _ => lines.insert(at, format!("{piece}\n")),
                }
            }
            let mut new = lines.concat();
            match ending {
                0 if new.ends_with('\n') => {
                    new.pop();
                }
                1 if !new.ends_with('\n') => new.push('\n'),
                _ => {}
            }
            (old, new)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The raw diff of any two texts, with any context, applies to the first and gives the
    /// second.
    #[test]
    fn a_raw_diff_applies_exactly((old, new) in edited(), context in 0usize..5) {
        let patch = diff(&old, &new, context);
        let files = BTreeMap::from([("x".to_owned(), old.as_bytes().to_vec())]);
        if old == new {
            prop_assert!(patch.is_empty());
        } else {
            let applied = apply(&files, &patch);
            prop_assert!(applied.is_ok(), "{:?}\n{}", applied, String::from_utf8_lossy(&patch));
            prop_assert_eq!(&applied.unwrap()["x"], new.as_bytes(), "{}", String::from_utf8_lossy(&patch));
        }
    }

    /// The same for unrelated texts.
    #[test]
    fn a_raw_diff_of_unrelated_texts_applies_exactly(old in text(), new in text(), context in 0usize..4) {
        let patch = diff(&old, &new, context);
        if old != new {
            let files = BTreeMap::from([("x".to_owned(), old.as_bytes().to_vec())]);
            let applied = apply(&files, &patch);
            prop_assert!(applied.is_ok(), "{:?}\n{}", applied, String::from_utf8_lossy(&patch));
            prop_assert_eq!(&applied.unwrap()["x"], new.as_bytes());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random rule files through `--fix`

/// Pieces of rule text with things `--fix` repairs (several per file: that is what broke the
/// hunk headers) and things it leaves alone.
const RULE_PIECES: &[&str] = &[
    "{{if:dco}}x{{/IF}}",
    "{{IF:dcoo}}",
    "{{/IF }}",
    "{{/IF}}",
    "{{ IF:use_worktrees}}",
    "{{REVIEW_LOOP_MAX_CYCLE}}",
    "{{IF:review_loop_enforcment}}",
    "text",
    "# Heading",
    " ",
    "\n",
    "\n",
    "\r\n",
    "\r",
    "é",
    "\u{feff}",
    "---",
    "|",
];

fn rule() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "",
            "---   \nrequires_setting: dcoo\n---\n",
            "---\t\r\nrequires_setting: dco\r\n---  \r\n",
            "--- \nrequires: coms_active\n--- \n",
        ]),
        prop::collection::vec(prop::sample::select(RULE_PIECES.to_vec()), 0..30),
    )
        .prop_map(|(head, body)| format!("{head}{}", body.concat()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For random project and user rule files: the diff `--dry-run` prints (raw) applies to the
    /// files as they are, and gives byte for byte what `--fix` then writes.
    #[test]
    fn the_dry_run_diff_gives_what_fix_writes(texts in prop::collection::vec(rule(), 1..4)) {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let project = root.join("proj/.pi/rules");
        let user = root.join("home/.pi/agent/rules");
        fs::create_dir_all(&project).unwrap();
        fs::create_dir_all(&user).unwrap();
        fs::create_dir_all(root.join("pkg")).unwrap();
        let mut paths: Vec<PathBuf> = Vec::new();
        for (n, text) in texts.iter().enumerate() {
            let path = if n % 2 == 0 {
                project.join(format!("9{n}-r.md"))
            } else {
                user.join(format!("7{n}-r.md"))
            };
            fs::write(&path, text).unwrap();
            paths.push(path);
        }
        let session = Session::from_parts(
            root.join("proj"),
            Some(root.join("home")),
            Cow::Borrowed(Schema::embedded()),
        );
        let opts = CheckOptions {
            session: &session,
            package: PackageSource::Dir(root.join("pkg")),
            strict: false,
        };
        let plan = pi_rules_host::fix::plan(&opts).unwrap();
        let mut patch = Vec::new();
        pi_rules::unified_diff::write_plan(&plan, &mut patch, Paint { on: false }, true).unwrap();
        let key = |p: &Path| p.display().to_string().trim_start_matches('/').to_owned();
        let originals: BTreeMap<String, Vec<u8>> =
            paths.iter().map(|p| (key(p), fs::read(p).unwrap())).collect();
        let patched = if patch.is_empty() { Ok(originals.clone()) } else { apply(&originals, &patch) };
        prop_assert!(patched.is_ok(), "{:?}\n{}", patched, String::from_utf8_lossy(&patch));
        let patched = patched.unwrap();
        prop_assert!(pi_rules_host::fix::apply(&plan).is_empty());
        for path in &paths {
            let written = fs::read(path).unwrap();
            prop_assert_eq!(&patched[&key(path)], &written, "{}", String::from_utf8_lossy(&patch));
        }
        // Every planned file is in the diff, and nothing else changed.
        prop_assert_eq!(
            plan.files.iter().filter(|f| f.before != f.after).count(),
            originals.iter().filter(|(k, v)| patched[*k] != **v).count()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The real tools

fn tool(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The rules of [`git_apply_and_patch_take_the_dry_run_diff`].
const FILES: &[(&str, &str)] = &[
    // The case from the issue: two fixes in one file.
    ("95-team.md", "---   \nrequires_setting: dcoo\n---\n# T\n"),
    // CRLF, a lone carriage return, no final line break.
    (
        "96-crlf.md",
        "---\t\r\nrequires_setting: dco\r\n---\r\nUse {{if:use_worktrees}}a\rworktree{{/IF }}.\r\nEnd{{IF:dcoo}}x{{/IF}}",
    ),
    // A name that needs quoting.
    ("97-two words.md", "Line\n{{IF:dcoo}}x{{/IF}}\n"),
];

fn world_with_files() -> World {
    let world = World::new();
    for (name, text) in FILES {
        world.rule(name, text);
    }
    world
}

/// `git apply` and `patch -p1` take the diff of [`FILES`], and applying it gives what `--fix`
/// writes.
#[test]
fn git_apply_and_patch_take_the_dry_run_diff() {
    let world = world_with_files();
    let dry = world.run(&["check", "--fix", "--dry-run"]);
    assert_eq!(code(&dry), 0, "{}", stderr(&dry));
    assert!(
        stdout(&dry).contains("@@ -1,4 +1,4 @@\n"),
        "{}",
        stdout(&dry)
    );
    assert!(
        stdout(&dry).contains("--- \"a/.pi/rules/97-two words.md\"\n"),
        "{}",
        stdout(&dry)
    );
    let patch_file = world.root().join("fix.patch");
    fs::write(&patch_file, &dry.stdout).unwrap();
    let patch_arg = patch_file.display().to_string();

    // What --fix writes.
    let fixed = world_with_files();
    // (exit 1: the lone carriage return is an error that no fix repairs)
    let out = fixed.expect(&["check", "--fix"], 1);
    assert_eq!(
        stderr(&out).matches("pi-rules: fixed").count(),
        3,
        "{}",
        stderr(&out)
    );
    let assert_fixed = |applied: &World, by: &str| {
        for (name, _) in FILES {
            assert_eq!(
                fs::read(applied.project_rules().join(name)).unwrap(),
                fs::read(fixed.project_rules().join(name)).unwrap(),
                "{name}, by {by}"
            );
        }
    };
    let run = |world: &World, program: &str, args: &[&str]| {
        let out = world.program(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
    };
    assert!(
        tool("git") && tool("patch"),
        "git and patch are needed for this test"
    );
    run(&world, "git", &["apply", "--check", &patch_arg]);
    run(&world, "patch", &["-p1", "--dry-run", "-i", &patch_arg]);
    run(&world, "patch", &["-p1", "-s", "-i", &patch_arg]);
    assert_fixed(&world, "patch");
    let again = world_with_files();
    run(&again, "git", &["apply", &patch_arg]);
    assert_fixed(&again, "git apply");
}
