//! Unified diffs of two texts, for people: `diff` and `watch` print the assembled block this way.
//!
//! The format is the one `diff -u` and `git diff` print: `---`/`+++` labels, `@@ -a,b +c,d @@`
//! hunk headers (a count of one is left out), context lines, and `\ No newline at end of file`
//! after a last line without one. Lines are compared whole (the line ending included, so a
//! change from `\n` to `\r\n` shows). Every line passes through [`escape`] with tabs kept, so a
//! rule file cannot drive the terminal; a carriage return shows as `\r`.
//!
//! The diff (Myers, through `similar`) has a deadline: past [`DEADLINE`], what remains is
//! reported as removed and added whole rather than minimised, so a huge, wholly different pair
//! of texts cannot stall the command.

use crate::terminal::{escape, Paint};
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

/// Writes the unified diff of `old` against `new` to `out`, labelled `old_label` and
/// `new_label`, with `context` lines of context; nothing at all when the texts are equal.
/// Returns whether they differ.
pub fn write(
    out: &mut dyn Write,
    (old_label, old): (&str, &str),
    (new_label, new): (&str, &str),
    context: usize,
    paint: Paint,
) -> io::Result<bool> {
    if old == new {
        return Ok(false);
    }
    let diff = TextDiff::configure()
        .deadline(Instant::now() + DEADLINE)
        .diff_lines(old, new);
    let line = |out: &mut dyn Write, style: &str, text: &str| -> io::Result<()> {
        writeln!(out, "{}", paint.paint(style, text))
    };
    line(out, LABEL, &format!("--- {}", escape(old_label)))?;
    line(out, LABEL, &format!("+++ {}", escape(new_label)))?;
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let header = format!(
            "@@ -{} +{} @@",
            hunk_range(old_range.start, old_range.len()),
            hunk_range(new_range.start, new_range.len())
        );
        line(out, HUNK, &header)?;
        for op in &group {
            for change in diff.iter_changes(op) {
                let (sign, style) = match change.tag() {
                    ChangeTag::Equal => (' ', ""),
                    ChangeTag::Delete => ('-', REMOVED),
                    ChangeTag::Insert => ('+', ADDED),
                };
                let value = change.value();
                let text = value.strip_suffix('\n').unwrap_or(value);
                let shown = format!("{sign}{}", escape_keeping_tabs(text));
                if style.is_empty() {
                    writeln!(out, "{shown}")?;
                } else {
                    line(out, style, &shown)?;
                }
                if change.missing_newline() {
                    writeln!(out, "\\ No newline at end of file")?;
                }
            }
        }
    }
    Ok(true)
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

/// [`escape`], except that tabs stay tabs: they are common in text and harmless to a terminal.
fn escape_keeping_tabs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, piece) in text.split('\t').enumerate() {
        if i > 0 {
            out.push('\t');
        }
        out.push_str(&escape(piece));
    }
    out
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
