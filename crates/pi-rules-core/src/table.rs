//! Table repair: removing blank lines between markdown table rows.
//!
//! The reference runs `text.replace(/(\|[^\n]*)\n(?:[ \t]*\n)+(?=\|)/g, "$1\n")`: a run of blank
//! lines (spaces and tabs only; a `\r` makes a line non-blank) goes when the line before it holds
//! a `|` and the line after it starts with `|`. That is what dropping a conditional table row
//! leaves behind. This is the same rewrite done line by line, in linear time (the regex itself
//! rescans long lines once per `|`).

/// Appends `text` with its table gaps closed to `out`.
pub fn repair_into(text: &str, out: &mut String) {
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut line_start = 0;
    while let Some(off) = memchr::memchr(b'\n', &bytes[line_start..]) {
        let newline = line_start + off;
        let run_start = newline + 1;
        let has_pipe = memchr::memchr(b'|', &bytes[line_start..newline]).is_some();
        if has_pipe {
            let run_end = blank_run_end(bytes, run_start);
            if run_end > run_start && bytes.get(run_end) == Some(&b'|') {
                out.push_str(&text[copied..run_start]);
                copied = run_end;
                line_start = run_end;
                continue;
            }
        }
        line_start = run_start;
    }
    out.push_str(&text[copied..]);
}

/// Repairs `text` into a new string.
pub fn repair(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    repair_into(text, &mut out);
    out
}

/// The end of the run of blank lines (`[ \t]*\n`) starting at `start`: the start of the first line
/// that is not blank, or `start` when there is no blank line there.
fn blank_run_end(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' => i += 1,
            b'\n' => {
                i += 1;
                end = i;
            }
            _ => break,
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repair_table() {
        let cases = [
            ("| a |\n\n| b |", "| a |\n| b |"),
            ("| a |\n \t\n\n| b |", "| a |\n| b |"),
            ("| a |\n\n| b |\n\n\n| c |", "| a |\n| b |\n| c |"),
            ("x | y\n\n|z", "x | y\n|z"),
            ("| a |\n\n b |", "| a |\n\n b |"),
            ("| a |\n\r\n| b |", "| a |\n\r\n| b |"),
            ("| a |\r\n\n| b |", "| a |\r\n| b |"),
            ("a\n\n| b |", "a\n\n| b |"),
            ("| a |\n\n", "| a |\n\n"),
            ("| a |\n| b |", "| a |\n| b |"),
            ("||||\n\n\n", "||||\n\n\n"),
            ("| a |\n  \n  | b |", "| a |\n  \n  | b |"),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(repair(input), expected, "{input:?}");
        }
    }
}
