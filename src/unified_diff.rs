//! Unified diffs of two texts, for people: `diff` and `watch` print the assembled block this way.
//!
//! The format is the one `diff -u` and `git diff` print: `---`/`+++` labels, `@@ -a,b +c,d @@`
//! hunk headers (a count of one is left out), context lines, and `\ No newline at end of file`
//! after a last line without one. Lines end at `\n` and are compared whole (the line ending
//! included, so a change from `\n` to `\r\n` shows). For reading ([`Lines::Escaped`], `diff` and
//! `watch`), every line passes through [`escape`] with tabs kept, so a rule file cannot drive the
//! terminal; a carriage return shows as `\r`. For applying ([`Lines::Raw`], `check --fix
//! --dry-run` on a pipe), the lines are written byte for byte.
//!
//! The diff (Myers, through `similar`) has a deadline: past [`DEADLINE`], what remains is
//! reported as removed and added whole rather than minimised, so a huge, wholly different pair
//! of texts cannot stall the command.

use crate::terminal::{escape, escape_keeping_tabs, Paint};
use pi_rules_host::fix::Plan;
use similar::{ChangeTag, TextDiff};
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// How long the diff may spend minimising before it settles for a larger result.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// The default number of context lines around each change.
pub const DEFAULT_CONTEXT: usize = 3;

/// SGR styles: bold labels, cyan hunk headers, red removals, green additions.
const LABEL: &str = "1";
const HUNK: &str = "36";
const REMOVED: &str = "31";
const ADDED: &str = "32";

/// How the lines of a diff are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// For reading on a terminal: control characters shown escaped (tabs kept), labels too.
    Escaped,
    /// For `git apply` and `patch`: every line byte for byte (a carriage return stays one), and
    /// a label quoted as git quotes a path when it holds a space, a quote, a backslash or a
    /// control character.
    Raw,
}

/// Writes the unified diff of `old` against `new` to `out`, labelled `old_label` and
/// `new_label`, with `context` lines of context, escaped for reading ([`Lines::Escaped`]);
/// nothing at all when the texts are equal. Returns whether they differ.
pub fn write(
    out: &mut dyn Write,
    old: (&str, &str),
    new: (&str, &str),
    context: usize,
    paint: Paint,
) -> io::Result<bool> {
    write_with(out, old, new, context, paint, Lines::Escaped)
}

/// [`write()`], with the lines written as `lines` says.
///
/// The hunks are cut from the sequence of lines the diff produces (each kept, removed or
/// added), and each header counts the lines of its hunk on either side: the diff's own indexes
/// are not trusted, so that the diff always applies to `old` and gives `new`.
pub fn write_with(
    out: &mut dyn Write,
    (old_label, old): (&str, &str),
    (new_label, new): (&str, &str),
    context: usize,
    paint: Paint,
    lines: Lines,
) -> io::Result<bool> {
    if old == new {
        return Ok(false);
    }
    // Lines end at `\n` only (`similar`'s own splitting also ends one at a lone `\r`, which
    // `patch` would not).
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let diff = TextDiff::configure()
        .deadline(Instant::now() + DEADLINE)
        .diff_slices(&old_lines, &new_lines);
    let seq: Vec<(ChangeTag, &str)> = diff
        .ops()
        .iter()
        .flat_map(|op| diff.iter_changes(op))
        .map(|change| (change.tag(), change.value()))
        .collect();
    let line = |out: &mut dyn Write, style: &str, text: &str| -> io::Result<()> {
        writeln!(out, "{}", paint.paint(style, text))
    };
    let label = |text: &str| match lines {
        Lines::Escaped => escape(text).into_owned(),
        Lines::Raw => quote_label(text),
    };
    line(out, LABEL, &format!("--- {}", label(old_label)))?;
    line(out, LABEL, &format!("+++ {}", label(new_label)))?;
    // Lines of `old` and of `new` before each position of the sequence.
    let mut old_before = Vec::with_capacity(seq.len() + 1);
    let mut new_before = Vec::with_capacity(seq.len() + 1);
    let (mut o, mut n) = (0usize, 0usize);
    for (tag, _) in &seq {
        old_before.push(o);
        new_before.push(n);
        o += usize::from(*tag != ChangeTag::Insert);
        n += usize::from(*tag != ChangeTag::Delete);
    }
    old_before.push(o);
    new_before.push(n);
    let changed = |i: usize| seq[i].0 != ChangeTag::Equal;
    let mut next = 0;
    while let Some(first) = (next..seq.len()).find(|&i| changed(i)) {
        // Extend over changes separated by at most twice the context.
        let mut end = first;
        loop {
            while end < seq.len() && changed(end) {
                end += 1;
            }
            match (end..seq.len()).find(|&i| changed(i)) {
                Some(i) if i - end <= 2 * context => end = i,
                _ => break,
            }
        }
        let from = first.saturating_sub(context).max(next);
        let to = (end + context).min(seq.len());
        let header = format!(
            "@@ -{} +{} @@",
            hunk_range(old_before[from], old_before[to] - old_before[from]),
            hunk_range(new_before[from], new_before[to] - new_before[from])
        );
        line(out, HUNK, &header)?;
        for &(tag, value) in &seq[from..to] {
            let (sign, style) = match tag {
                ChangeTag::Equal => (' ', ""),
                ChangeTag::Delete => ('-', REMOVED),
                ChangeTag::Insert => ('+', ADDED),
            };
            let text = value.strip_suffix('\n');
            let body = text.unwrap_or(value);
            match lines {
                Lines::Raw if style.is_empty() || !paint.on => {
                    out.write_all(&[sign as u8])?;
                    out.write_all(body.as_bytes())?;
                    out.write_all(b"\n")?;
                }
                _ => {
                    let shown = match lines {
                        Lines::Escaped => format!("{sign}{}", escape_keeping_tabs(body)),
                        Lines::Raw => format!("{sign}{body}"),
                    };
                    if style.is_empty() {
                        writeln!(out, "{shown}")?;
                    } else {
                        line(out, style, &shown)?;
                    }
                }
            }
            if text.is_none() {
                writeln!(out, "\\ No newline at end of file")?;
            }
        }
        next = to;
    }
    Ok(true)
}

/// A label as git writes a path: as it is, or in double quotes with C escapes when it holds a
/// space, a tab, a double quote, a backslash or another control character (which `git apply`
/// and GNU `patch` both read back).
fn quote_label(label: &str) -> String {
    let needs = |c: char| c == ' ' || c == '"' || c == '\\' || c.is_ascii_control();
    if !label.contains(needs) {
        return label.to_owned();
    }
    let mut out = String::with_capacity(label.len() + 2);
    out.push('"');
    for c in label.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_ascii_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `start,len` of a hunk side, 1-based, as `diff -u` writes it: an empty side names the line
/// before it, and a length of one is implied.
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// Writes the plan as a unified diff, one file after another. With `raw`, every line is written
/// byte for byte, so that `git apply` and `patch -p1` (run from the process's directory) make
/// exactly what `--fix` would write; without it, control characters are shown escaped, for a
/// terminal. A file outside the process's directory, whose path is absolute, is labelled from
/// the root (`a/home/…`), for `patch -p1 -d /`.
pub fn write_plan(plan: &Plan, out: &mut dyn Write, paint: Paint, raw: bool) -> io::Result<()> {
    let lines = if raw { Lines::Raw } else { Lines::Escaped };
    for file in &plan.files {
        let path = file.path.trim_start_matches('/');
        write_with(
            out,
            (&format!("a/{path}"), &file.before),
            (&format!("b/{path}"), &file.after),
            DEFAULT_CONTEXT,
            paint,
            lines,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(old: &str, new: &str, context: usize) -> (bool, String) {
        let mut out = Vec::new();
        let differs = write(
            &mut out,
            ("a", old),
            ("b", new),
            context,
            Paint { on: false },
        )
        .unwrap();
        (differs, String::from_utf8(out).unwrap())
    }

    #[test]
    fn equal_texts_print_nothing() {
        assert_eq!(diff("x\ny\n", "x\ny\n", 3), (false, String::new()));
        assert_eq!(diff("", "", 3), (false, String::new()));
    }

    #[test]
    fn hunks_table() {
        let cases: [(&str, &str, usize, &str); 6] = [
            (
                "a\nb\nc\n",
                "a\nB\nc\n",
                3,
                "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
            ),
            (
                "a\nb\nc\n",
                "a\nB\nc\n",
                0,
                "--- a\n+++ b\n@@ -2 +2 @@\n-b\n+B\n",
            ),
            ("", "new\n", 3, "--- a\n+++ b\n@@ -0,0 +1 @@\n+new\n"),
            ("old\n", "", 3, "--- a\n+++ b\n@@ -1 +0,0 @@\n-old\n"),
            (
                "a\nb",
                "a\nb\n",
                3,
                "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
            ),
            (
                "x\r\n\x1b[2J\tt\n",
                "x\n\x1b[2J\tt\n",
                3,
                "--- a\n+++ b\n@@ -1,2 +1,2 @@\n-x\\r\n+x\n \\x1b[2J\tt\n",
            ),
        ];
        for (old, new, context, expected) in cases {
            assert_eq!(
                diff(old, new, context),
                (true, expected.to_owned()),
                "{old:?}"
            );
        }
    }

    fn raw(old: &str, new: &str, label: &str) -> String {
        let mut out = Vec::new();
        write_with(
            &mut out,
            (&format!("a/{label}"), old),
            (&format!("b/{label}"), new),
            3,
            Paint { on: false },
            Lines::Raw,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn headers_count_the_lines_when_a_kept_line_moves() {
        // Issue 23's case: the fence `---` matches the old third line, so the diff removes two
        // lines before it and adds two after; the header counts four lines on each side.
        let text = raw(
            "---   \nrequires_setting: dcoo\n---\n# T\n",
            "---\nrequires_setting: dco\n---\n# T\n",
            "x",
        );
        let header = text.lines().find(|l| l.starts_with("@@")).unwrap();
        assert_eq!(header, "@@ -1,4 +1,4 @@", "{text}");
    }

    #[test]
    fn raw_lines_keep_their_bytes_and_labels_are_quoted_as_git_does() {
        assert_eq!(
            raw("x\r\n\x1b[2J\n", "y\r\n\x1b[2J\n", "r.md"),
            "--- a/r.md\n+++ b/r.md\n@@ -1,2 +1,2 @@\n-x\r\n+y\r\n \x1b[2J\n"
        );
        // A lone carriage return does not end a line.
        assert_eq!(
            raw("a\rb", "a\rc", "r.md"),
            "--- a/r.md\n+++ b/r.md\n@@ -1 +1 @@\n-a\rb\n\\ No newline at end of file\n+a\rc\n\\ No newline at end of file\n"
        );
        let text = raw("a\n", "b\n", "two words \"q\"\\\n\x01.md");
        assert!(
            text.starts_with("--- \"a/two words \\\"q\\\"\\\\\\n\\001.md\"\n+++ \"b/two words"),
            "{text}"
        );
    }

    #[test]
    fn distant_changes_make_separate_hunks() {
        let line = |i: usize| match i {
            2 => "two\n".to_owned(),
            19 => "nineteen\n".to_owned(),
            i => format!("{i}\n"),
        };
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20).map(line).collect();
        let (_, text) = diff(&old, &new, 1);
        let headers: Vec<&str> = text.lines().filter(|l| l.starts_with("@@")).collect();
        assert_eq!(headers, ["@@ -1,3 +1,3 @@", "@@ -18,3 +18,3 @@"]);
    }

    #[test]
    fn colour_wraps_whole_lines() {
        let mut out = Vec::new();
        write(&mut out, ("a", "x\n"), ("b", "y\n"), 3, Paint { on: true }).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\x1b[31m-x\x1b[0m\n"), "{text:?}");
        assert!(text.contains("\x1b[32m+y\x1b[0m\n"), "{text:?}");
        assert!(text.contains("\x1b[36m@@ -1 +1 @@\x1b[0m\n"), "{text:?}");
    }

    #[test]
    fn labels_are_escaped() {
        let (_, text) = diff("a\n", "b\n", 3);
        assert!(text.starts_with("--- a\n"));
        let mut out = Vec::new();
        write(
            &mut out,
            ("evil\x1b]0;x\x07", "a\n"),
            ("b", "b\n"),
            3,
            Paint { on: false },
        )
        .unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .starts_with("--- evil\\x1b]0;x\\x07\n"));
    }
}
