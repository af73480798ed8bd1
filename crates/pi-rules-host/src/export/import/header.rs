//! The frontmatter of another agent's rule file, read as leniently as those agents' readers
//! take it: `key: value` lines at the left margin, a value on its line (a flow list may run over
//! several), `- item` lines below an empty key, a `|` or `>` block below its key. Line breaks
//! may be LF or CRLF, a UTF-8 byte-order mark may come first, and the last line need not end.
//! Only the first `---` block is the frontmatter: a second one after it is text of the rule.

/// The most lines of a frontmatter that are read; the rest is ignored (and said).
pub const MAX_LINES: usize = 10_000;

/// A file's leading frontmatter.
#[derive(Debug)]
pub struct Header<'a> {
    /// The lines between the fences, each with its line number in the file (1-based), `\r`
    /// removed.
    lines: Vec<(usize, &'a str)>,
    /// Where the text after the closing fence starts, in bytes.
    pub body_start: usize,
    /// The number of lines past [`MAX_LINES`] that were not read.
    pub dropped: usize,
}

/// A key's value, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value<'a> {
    /// On the key's line (a flow list that runs over several lines joined into one, a block
    /// scalar's lines joined): raw, quotes and all.
    Line(String),
    /// `- item` lines below the key: each item raw.
    List(Vec<&'a str>),
}

/// One `key: value` of a frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub key: &'a str,
    /// The line number of the key in the file (1-based).
    pub line: usize,
    pub value: Value<'a>,
}

impl Value<'_> {
    /// Whether the key has no value at all (`globs:` and nothing below it).
    pub fn is_empty(&self) -> bool {
        match self {
            Value::Line(line) => line.trim().is_empty(),
            Value::List(items) => items.is_empty(),
        }
    }

    /// The value as a plain scalar: unquoted, its ` #` comment removed; a list is its first
    /// item.
    pub fn scalar(&self) -> String {
        match self {
            Value::Line(line) => scalar(line),
            Value::List(items) => items.first().map_or_else(String::new, |i| scalar(i)),
        }
    }
}

/// `text`'s leading frontmatter, if it has one: a first line `---`, and a later line `---`.
/// `text` has no byte-order mark (the caller takes it off).
pub fn split(text: &str) -> Option<Header<'_>> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if strip_eol(first).trim_end() != "---" {
        return None;
    }
    let mut at = first.len();
    let mut inside = Vec::new();
    let mut dropped = 0;
    for (i, raw) in lines.enumerate() {
        let line = strip_eol(raw);
        at += raw.len();
        if line.trim_end() == "---" {
            return Some(Header {
                lines: inside,
                body_start: at,
                dropped,
            });
        }
        if inside.len() < MAX_LINES {
            inside.push((i + 2, line));
        } else {
            dropped += 1;
        }
    }
    None
}

fn strip_eol(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

impl<'a> Header<'a> {
    /// Every key, in order (a key set twice is there twice).
    pub fn entries(&self) -> Vec<Entry<'a>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.lines.len() {
            let (number, line) = self.lines[i];
            i += 1;
            let Some((key, rest)) = key_line(line) else {
                continue;
            };
            let rest = rest.trim();
            let value = if rest.is_empty() || rest.starts_with('#') {
                // `- item` lines, or an indented plain value that continues below.
                let mut items = Vec::new();
                let mut plain = Vec::new();
                while i < self.lines.len() {
                    let (_, next) = self.lines[i];
                    let trimmed = next.trim();
                    if trimmed.is_empty() || trimmed.starts_with('#') {
                        i += 1;
                        continue;
                    }
                    if let Some(item) = trimmed.strip_prefix('-') {
                        if item.is_empty() || item.starts_with([' ', '\t']) {
                            items.push(item.trim());
                            i += 1;
                            continue;
                        }
                    }
                    if next.starts_with([' ', '\t']) && items.is_empty() {
                        plain.push(trimmed);
                        i += 1;
                        continue;
                    }
                    break;
                }
                if items.is_empty() {
                    Value::Line(plain.join(" "))
                } else {
                    Value::List(items)
                }
            } else if rest.starts_with('[') && !rest.contains(']') {
                // A flow list over several lines.
                let mut joined = rest.to_owned();
                while i < self.lines.len() {
                    let (_, next) = self.lines[i];
                    i += 1;
                    joined.push(' ');
                    joined.push_str(next.trim());
                    if next.contains(']') {
                        break;
                    }
                }
                Value::Line(joined)
            } else if is_block_scalar(rest) {
                let folded = rest.starts_with('>');
                let mut parts = Vec::new();
                while i < self.lines.len() {
                    let (_, next) = self.lines[i];
                    if !(next.trim().is_empty() || next.starts_with([' ', '\t'])) {
                        break;
                    }
                    parts.push(next.trim());
                    i += 1;
                }
                while parts.last() == Some(&"") {
                    parts.pop();
                }
                Value::Line(parts.join(if folded { " " } else { "\n" }))
            } else {
                Value::Line(rest.to_owned())
            };
            out.push(Entry {
                key,
                line: number,
                value,
            });
        }
        out
    }
}

/// `key` and what follows its `:`, for a line at the left margin that sets a key.
fn key_line(line: &str) -> Option<(&str, &str)> {
    if line.starts_with([' ', '\t', '-', '#']) {
        return None;
    }
    let (key, rest) = line.split_once(':')?;
    let key = key.trim();
    let key = ['"', '\'']
        .iter()
        .find_map(|q| key.strip_prefix(*q).and_then(|k| k.strip_suffix(*q)))
        .unwrap_or(key);
    (!key.is_empty()).then_some((key, rest))
}

/// `|`, `>`, `|-`, `>+`, `|2`...
fn is_block_scalar(value: &str) -> bool {
    let mut chars = value.chars();
    matches!(chars.next(), Some('|' | '>'))
        && chars.all(|c| matches!(c, '-' | '+') || c.is_ascii_digit())
}

/// A plain or quoted scalar's text: `"a\"b"` is `a"b`, `'it''s'` is `it's`, and a plain value
/// loses a ` #` comment.
pub fn scalar(value: &str) -> String {
    let value = value.trim();
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        let inner = &value[1..value.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.extend(chars.next()),
                c => out.push(c),
            }
        }
        return out;
    }
    if value.len() >= 2 && value.starts_with('\'') && value.ends_with('\'') {
        return value[1..value.len() - 1].replace("''", "'");
    }
    let plain = match value.find(" #") {
        Some(at) => &value[..at],
        None => value,
    };
    plain.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Vec<(String, usize, Value<'_>)> {
        split(text)
            .expect("a header")
            .entries()
            .into_iter()
            .map(|e| (e.key.to_owned(), e.line, e.value))
            .collect()
    }

    fn line(s: &str) -> Value<'static> {
        Value::Line(s.to_owned())
    }

    #[test]
    fn forms_of_values() {
        let text = "---\r\nglobs: a, b\r\npaths:\r\n  - \"x\"\r\n  # c\r\n  - 'y' \r\nflow: [\r\n  \"p\",\r\n  \"q\"\r\n]\r\nempty:\r\nblock: >-\r\n  one\r\n  two\r\nnext: 1\r\n---\r\nbody";
        assert_eq!(
            entries(text),
            vec![
                ("globs".to_owned(), 2, line("a, b")),
                ("paths".to_owned(), 3, Value::List(vec!["\"x\"", "'y'"])),
                ("flow".to_owned(), 7, line("[ \"p\", \"q\" ]")),
                ("empty".to_owned(), 11, line("")),
                ("block".to_owned(), 12, line("one two")),
                ("next".to_owned(), 15, line("1")),
            ]
        );
        assert_eq!(&text[split(text).unwrap().body_start..], "body");
    }

    #[test]
    fn where_a_header_is_and_is_not() {
        // No closing fence: no header; the first closing fence ends it (a second block is text).
        assert!(split("---\na: b\n").is_none());
        assert!(split("# x\n---\na: b\n---\n").is_none());
        let text = "---\na: 1\n---\n---\nb: 2\n---\ntext";
        let header = split(text).unwrap();
        assert_eq!(&text[header.body_start..], "---\nb: 2\n---\ntext");
        // A closing fence that ends the file, and trailing spaces on a fence.
        let text = "--- \na: 1\n---";
        assert_eq!(split(text).unwrap().body_start, text.len());
        // Unindented list items, a key with a quoted name, a key set twice.
        let text = "---\nglobs:\n- a\n- b\n\"paths\": c\npaths: d\n---\n";
        assert_eq!(
            entries(text),
            vec![
                ("globs".to_owned(), 2, Value::List(vec!["a", "b"])),
                ("paths".to_owned(), 5, line("c")),
                ("paths".to_owned(), 6, line("d")),
            ]
        );
    }

    #[test]
    fn scalars() {
        for (raw, want) in [
            ("true", "true"),
            ("\"a\\\"b\"", "a\"b"),
            ("'it''s'", "it's"),
            ("glob # comment", "glob"),
            ("\"x # y\"", "x # y"),
            ("", ""),
        ] {
            assert_eq!(scalar(raw), want, "{raw}");
        }
    }

    #[test]
    fn long_headers_are_bounded() {
        let mut text = String::from("---\n");
        for i in 0..MAX_LINES + 5 {
            text.push_str(&format!("k{i}: v\n"));
        }
        text.push_str("---\nbody");
        let header = split(&text).unwrap();
        assert_eq!(header.dropped, 5);
        assert_eq!(header.entries().len(), MAX_LINES);
    }
}
