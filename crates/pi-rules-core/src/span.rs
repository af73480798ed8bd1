//! Byte offsets to line and column, computed only when something is printed.

/// A 1-based line and column; the column counts characters (Unicode scalar values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// The line and column of byte `offset` in `text` (clamped to the text, and to a char boundary).
pub fn line_col(text: &str, offset: usize) -> LineCol {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text.as_bytes()[..offset];
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    LineCol {
        line: memchr::memchr_iter(b'\n', before).count() + 1,
        column: text[line_start..offset].chars().count() + 1,
    }
}

/// The byte range of the line holding `offset`, without its line break.
pub fn line_span(text: &str, offset: usize) -> std::ops::Range<usize> {
    let offset = offset.min(text.len());
    let bytes = text.as_bytes();
    let start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |i| offset + i);
    let end = if end > start && bytes[end - 1] == b'\r' {
        end - 1
    } else {
        end
    };
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_table() {
        let text = "ab\ncé\nd";
        let cases = [
            (0, 1, 1),
            (2, 1, 3),
            (3, 2, 1),
            (5, 2, 2),
            (6, 2, 3),
            (7, 3, 1),
            (99, 3, 2),
        ];
        for (offset, line, column) in cases {
            assert_eq!(line_col(text, offset), LineCol { line, column }, "{offset}");
        }
        assert_eq!(line_span("a\r\nbc\n", 4), 3..5);
    }
}
