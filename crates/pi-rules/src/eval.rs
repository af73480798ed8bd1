//! `pi-rules eval`: the engine's line-oriented JSON interface for hosts and tests.
//!
//! One request per line in, one response per line out, flushed after each. An assembly request
//! has `rules`; a render request has `prompt`. A line that is not a valid request gets
//! `{"error": "..."}` and the stream goes on, and so does a line longer than
//! [`MAX_LINE`](crate::lines::MAX_LINE), which is skipped unread.
//!
//! Responses are written as they are built, straight into one buffered writer: the assembled
//! text and each warning's message go out escaped from the engine's own buffers and the rule
//! texts, without a `serde_json::Value` tree or a `String` per warning. The bytes are those
//! `serde_json` writes for the same response (compact, keys in the order `text`, `warnings`,
//! `files`).
//!
//! Requests are read by [`request`]: the rule texts, nearly all of a request, are decoded in
//! place, in the line, by this module's own JSON string decoder ([`unescape`]), while
//! `serde_json` parses the other fields and reads every line that is out of the ordinary, so that
//! answers and error messages are those of a plain `serde_json::Value` reading.

mod request;
mod unescape;

use crate::lines::{Line, LineReader};
use pi_rules_core::{render, Assembler, Message, Scope};
use request::{Reader, Request};
use std::fmt;
use std::io::{self, Read, Write};

/// Bytes gathered before a write to the output.
const OUTPUT_BUFFER: usize = 64 << 10;

/// Why `eval` stopped before the end of its input.
#[derive(Debug)]
pub enum EvalError {
    /// The input could not be read (an input error: exit code 3).
    Read(io::Error),
    /// The output could not be written (an output error: exit code 4).
    Write(io::Error),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Read(err) => write!(f, "cannot read the requests from stdin: {err}"),
            EvalError::Write(err) => write!(f, "cannot write the responses: {err}"),
        }
    }
}

impl std::error::Error for EvalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EvalError::Read(err) | EvalError::Write(err) => Some(err),
        }
    }
}

/// Answers every line of `input` on `output`, flushing after each response.
pub fn serve(input: impl Read, output: impl Write) -> Result<(), EvalError> {
    serve_lines(LineReader::new(input), output)
}

/// Like [`serve`], with the lines read by `lines` (and so with its limit).
pub fn serve_lines<R: Read>(mut lines: LineReader<R>, output: impl Write) -> Result<(), EvalError> {
    let limit = lines.limit();
    let mut out = JsonWriter::new(output);
    let mut engine = Engine::default();
    while let Some(line) = lines.next_line().map_err(EvalError::Read)? {
        let written = match line {
            Line::Complete(bytes) => {
                let end = bytes.iter().rposition(|b| !matches!(b, b'\n' | b'\r'));
                let line = bytes
                    .get_mut(..end.map_or(0, |end| end + 1))
                    .unwrap_or_default();
                let blank = std::str::from_utf8(line).map(|text| text.trim().is_empty());
                match blank {
                    Ok(true) => continue,
                    Ok(false) => engine.respond(line, &mut out),
                    // Bytes that are not UTF-8 are read as U+FFFD.
                    Err(_) => {
                        let mut text = String::from_utf8_lossy(line).into_owned().into_bytes();
                        engine.respond(&mut text, &mut out)
                    }
                }
            }
            Line::TooLong { bytes } => write_error(
                &mut out,
                &format!(
                    "the request line has {bytes} bytes, more than the limit of {limit}; it was \
                     skipped: split it into smaller requests"
                ),
            ),
        };
        written
            .and_then(|()| out.end_line())
            .map_err(EvalError::Write)?;
    }
    Ok(())
}

/// The response line (without newline) for one request line.
pub fn respond(line: &str) -> String {
    let mut out = JsonWriter::new(Vec::new());
    // Writing to a `Vec` cannot fail.
    let _ = Engine::default().respond(&mut line.as_bytes().to_vec(), &mut out);
    let _ = out.flush();
    String::from_utf8_lossy(&out.out).into_owned()
}

/// What answers requests; it keeps the reader's and the assembler's buffers from one request to
/// the next.
#[derive(Default)]
pub struct Engine {
    reader: Reader,
    assembler: Assembler,
}

impl Engine {
    /// Writes the response to one request line (without newline), valid UTF-8, to `out`. The
    /// line's texts are decoded where they are, in `line`.
    pub fn respond<W: Write>(
        &mut self,
        line: &mut [u8],
        out: &mut JsonWriter<W>,
    ) -> io::Result<()> {
        match self.reader.read(line) {
            Ok(Request::Assemble {
                rules,
                settings,
                features,
                cycles,
            }) => {
                let scope = Scope {
                    settings: &settings,
                    features: &features,
                    review_loop_max_cycles: &cycles,
                };
                let assembly = self.assembler.assemble(&rules, &scope);
                out.raw(b"{\"text\":")?;
                out.string(&assembly.text)?;
                out.raw(b",\"warnings\":[")?;
                for (i, message) in assembly.messages(&rules).enumerate() {
                    out.warning(i > 0, message)?;
                }
                out.raw(b"],\"files\":[")?;
                for (index, included) in assembly.included.iter().enumerate() {
                    if index > 0 {
                        out.raw(b",")?;
                    }
                    out.raw(b"{\"index\":")?;
                    out.raw(index.to_string().as_bytes())?;
                    out.raw(if *included {
                        b",\"included\":true}"
                    } else {
                        b",\"included\":false}"
                    })?;
                }
                out.raw(b"]}")?;
                Ok(())
            }
            Ok(Request::Render { prompt, settings }) => {
                out.raw(b"{\"text\":")?;
                out.string(&render::render(prompt, &settings))?;
                out.raw(b"}")?;
                Ok(())
            }
            Err(message) => write_error(out, &message),
        }
    }
}

/// Writes `{"error":"MESSAGE"}`.
fn write_error<W: Write>(out: &mut JsonWriter<W>, message: &str) -> io::Result<()> {
    out.raw(b"{\"error\":")?;
    out.string(message)?;
    out.raw(b"}")
}

/// The one buffered writer of the responses: JSON is written into a buffer, which goes to the
/// output whenever it holds 64 KiB and at the end of each line.
pub struct JsonWriter<W> {
    out: W,
    buffer: Vec<u8>,
}

impl<W: Write> JsonWriter<W> {
    pub fn new(out: W) -> Self {
        JsonWriter {
            out,
            buffer: Vec::with_capacity(OUTPUT_BUFFER),
        }
    }

    /// Appends bytes that are JSON already.
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.buffer.extend_from_slice(bytes);
        self.spill()
    }

    /// Passes a full buffer on to the output, so that it never holds much more than
    /// [`OUTPUT_BUFFER`] bytes whatever the response.
    fn spill(&mut self) -> io::Result<()> {
        if self.buffer.len() >= OUTPUT_BUFFER {
            self.out.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Writes `s` as a JSON string, quotes included.
    fn string(&mut self, s: &str) -> io::Result<()> {
        self.raw(b"\"")?;
        self.contents(s)?;
        self.raw(b"\"")?;
        Ok(())
    }

    /// Writes a warning's message as a JSON string, after a comma unless it is the first.
    fn warning(&mut self, comma: bool, message: Message<'_>) -> io::Result<()> {
        if comma {
            self.buffer.push(b',');
        }
        self.buffer.push(b'"');
        // The prefixes are ASCII without anything to escape; the quoted text is short.
        self.buffer.extend_from_slice(message.prefix().as_bytes());
        self.escape_bytes(message.subject().as_bytes());
        self.buffer.push(b'"');
        self.spill()
    }

    /// Writes `s` escaped, without quotes, passing full buffers on to the output.
    fn contents(&mut self, s: &str) -> io::Result<()> {
        if s.len() <= OUTPUT_BUFFER {
            self.escape_bytes(s.as_bytes());
            return self.spill();
        }
        for chunk in s.as_bytes().chunks(OUTPUT_BUFFER) {
            // Chunks end anywhere, even inside a character: escaping works on bytes, and only
            // ASCII bytes are escaped, so the chunks put back together are the same text.
            self.escape_bytes(chunk);
            self.spill()?;
        }
        Ok(())
    }

    /// Appends the bytes of a string escaped as `serde_json` does: `"`, `\` and the controls
    /// below U+0020 (`\n`, `\t`, … or `\u00XX` with lower-case hex); everything else, non-ASCII
    /// included, as it is.
    fn escape_bytes(&mut self, bytes: &[u8]) {
        let buffer = &mut self.buffer;
        // Shorter than a word: a warning's quoted marker or key, mostly with nothing to escape.
        if bytes.len() < 8 && bytes.iter().all(|&b| ESCAPE[usize::from(b)] == 0) {
            buffer.extend(bytes.iter().copied());
            return;
        }
        buffer.reserve(bytes.len());
        let mut i = 0;
        // Eight bytes at a time: copied whole, then cut back to the first byte to escape.
        while let Some(Ok(chunk)) = bytes.get(i..i + 8).map(<&[u8; 8]>::try_from) {
            buffer.extend_from_slice(chunk);
            let mask = escape_mask(u64::from_le_bytes(*chunk));
            if mask == 0 {
                i += 8;
                continue;
            }
            // The lowest flag marks the first byte to escape exactly (see `escape_mask`).
            let k = (mask.trailing_zeros() / 8) as usize;
            buffer.truncate(buffer.len() - (8 - k));
            push_escape(buffer, chunk[k]);
            i += k + 1;
        }
        // The last few bytes: the same test on a word padded with bytes that need no escape.
        let mut tail = bytes.get(i..).unwrap_or_default();
        while !tail.is_empty() {
            // Built in a register: a copy through memory would stall the load that follows.
            let word = tail
                .iter()
                .take(8)
                .enumerate()
                .fold(u64::from_le_bytes([b'a'; 8]), |word, (j, &b)| {
                    word & !(0xff << (8 * j)) | u64::from(b) << (8 * j)
                });
            let mask = escape_mask(word);
            let k = if mask == 0 {
                tail.len()
            } else {
                (mask.trailing_zeros() / 8) as usize
            };
            buffer.extend_from_slice(&tail[..k]);
            let Some(&byte) = tail.get(k) else { break };
            push_escape(buffer, byte);
            tail = &tail[k + 1..];
        }
    }

    /// Ends a response: a line feed, then everything to the output, flushed.
    fn end_line(&mut self) -> io::Result<()> {
        self.raw(b"\n")?;
        self.flush()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer)?;
        self.buffer.clear();
        self.out.flush()
    }
}

/// Flags (bit 7 of each byte) the bytes of `word` (little-endian) that need escaping inside a
/// JSON string: below 0x20, `"` or `\`. The lowest flag is exact; a byte above a flagged one may
/// be flagged wrongly (a borrow carries into it), which only matters for bytes that are looked at
/// again from there.
fn escape_mask(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let is_quote = quote.wrapping_sub(ONES) & !quote;
    let is_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below_space | is_quote | is_backslash) & HIGH
}

/// Appends the escape of `byte`, one that [`ESCAPE`] marks.
fn push_escape(buffer: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match ESCAPE[usize::from(byte)] {
        b'u' => buffer.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]),
        letter => buffer.extend_from_slice(&[b'\\', letter]),
    }
}

/// What a byte becomes inside a JSON string, as `serde_json` writes it: 0 for itself, else the
/// letter of its two-character escape, or `u` for `\u00XX`.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time test finds the first byte to escape wherever it is, whatever follows.
    #[test]
    fn escape_mask_finds_the_first_byte_to_escape() {
        let interesting = [
            0u8, 0x01, 0x1f, 0x20, b'!', b'"', b'#', b'\\', b']', 0x7f, 0x80, 0xa2, 0xdc, 0xff,
            b'a',
        ];
        for &x in &interesting {
            for at in 0..8 {
                for &filler in &[b'a', 0xff, 0x80, 0x21] {
                    for &after in &interesting {
                        let mut word = [filler; 8];
                        word[at] = x;
                        if at + 1 < 8 {
                            word[at + 1] = after;
                        }
                        let first = word.iter().position(|&b| ESCAPE[usize::from(b)] != 0);
                        let mask = escape_mask(u64::from_le_bytes(word));
                        let got = (mask != 0).then(|| (mask.trailing_zeros() / 8) as usize);
                        assert_eq!(got, first, "{word:?}");
                    }
                }
            }
        }
    }

    /// `JsonWriter::string` agrees with `serde_json` on every byte that can need escaping.
    #[test]
    fn strings_are_escaped_as_serde_json_does() {
        let mut all: String = (0u8..0x80).map(char::from).collect();
        all.push_str("é\u{2028}\u{2029}\u{feff}/\u{7f}😀");
        let long = format!("{}é\n", "x".repeat(OUTPUT_BUFFER - 1)).repeat(3);
        // Texts shorter than a word take their own path: each ASCII byte alone and in the middle
        // of seven.
        let short: Vec<String> = (0u8..0x80)
            .flat_map(|b| {
                [
                    char::from(b).to_string(),
                    format!("abc{}def", char::from(b)),
                ]
            })
            .collect();
        let cases = [all.as_str(), "", "plain", "\"\\", "a\nb\r\n\tc", &long];
        for s in cases.into_iter().chain(short.iter().map(String::as_str)) {
            let mut out = JsonWriter::new(Vec::new());
            out.string(s).expect("vec");
            out.flush().expect("vec");
            assert_eq!(
                String::from_utf8(out.out).expect("utf-8"),
                serde_json::to_string(s).expect("json"),
                "{s:?}"
            );
        }
    }

    /// The streamed responses are byte for byte what `serde_json` gives for the same data.
    #[test]
    fn responses_are_the_bytes_serde_json_writes() {
        let cases = [
            (
                r#"{"rules": ["a{{/IF}}\"q\"\n", "---\nrequires: nope\n---\nb", "{{IF: x y}}z{{/IF}}"], "settings": {"dco": true}}"#,
                serde_json::json!({
                    // The third file is kept, empty: a blank line joins it.
                    "text": "a{{/IF}}\"q\"\n\n\n",
                    "warnings": [
                        "unbalanced conditional marker: {{/IF}}",
                        "unknown feature predicate: nope",
                        "malformed conditional condition:  x y",
                    ],
                    "files": [
                        {"index": 0, "included": true},
                        {"index": 1, "included": false},
                        {"index": 2, "included": true},
                    ],
                }),
            ),
            (
                r#"{"prompt": "{{SETTINGS}}\u0001", "settings": {"dco": false}}"#,
                serde_json::json!({"text": "{\"dco\":false}\u{1}"}),
            ),
            (
                r#"{"rules": 3}"#,
                serde_json::json!({"error": "`rules` must be an array of strings"}),
            ),
            (
                "{\"rules\": []",
                serde_json::json!({"error": "request is not valid JSON: EOF while parsing an object at line 1 column 12"}),
            ),
        ];
        for (request, expected) in cases {
            assert_eq!(respond(request), expected.to_string(), "{request}");
        }
    }

    #[test]
    fn the_buffer_stays_small_whatever_the_response() {
        // 200,000 files and as many warnings: several MB of response through a 64 KiB buffer.
        let request = format!(
            "{{\"rules\": [{}]}}",
            vec!["\"{{/IF}}\""; 200_000].join(",")
        );
        let mut out = JsonWriter::new(Vec::new());
        Engine::default()
            .respond(&mut request.into_bytes(), &mut out)
            .expect("vec");
        assert!(out.out.len() > 10 * OUTPUT_BUFFER);
        assert!(
            out.buffer.capacity() <= 2 * OUTPUT_BUFFER,
            "{}",
            out.buffer.capacity()
        );
    }

    #[test]
    fn read_and_write_errors_are_told_apart() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("no input"))
            }
        }
        impl Write for Failing {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("no output"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Err(io::Error::other("no output"))
            }
        }
        assert!(matches!(
            serve(Failing, Vec::new()),
            Err(EvalError::Read(_))
        ));
        assert!(matches!(
            serve(&b"{\"rules\": []}\n"[..], Failing),
            Err(EvalError::Write(_))
        ));
    }

    #[test]
    fn a_line_over_the_limit_gets_an_error_and_the_stream_goes_on() {
        let input = format!(
            "{{\"rules\": [\"{}\"]}}\n{{\"rules\": [\"ok\"]}}\n",
            "x".repeat(100)
        );
        let mut out = Vec::new();
        serve_lines(LineReader::with_limit(input.as_bytes(), 64), &mut out).expect("serve");
        let out = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "{\"error\":\"the request line has 115 bytes, more than the limit of 64; it was \
                 skipped: split it into smaller requests\"}",
                "{\"text\":\"ok\",\"warnings\":[],\"files\":[{\"index\":0,\"included\":true}]}",
            ]
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_are_read_as_replacement_characters() {
        // Inside a text (decoded by `eval` itself), and inside a `\u` text (by serde_json).
        let input = b"{\"rules\": [\"a\xffb\\n\", \"\\u00e9\xc3\"]}\n{\"rules\": [\"\xe9\"]\n";
        let mut out = Vec::new();
        serve(&input[..], &mut out).expect("serve");
        let out = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "{\"text\":\"a\u{fffd}b\\n\\n\\n\u{e9}\u{fffd}\",\"warnings\":[],\"files\":[{\"index\":0,\
                 \"included\":true},{\"index\":1,\"included\":true}]}",
                "{\"error\":\"request is not valid JSON: EOF while parsing an object at line 1 \
                 column 17\"}",
            ]
        );
    }

    #[test]
    fn lines_are_read_as_before() {
        // CRLF, blank lines (no response), U+2028 inside a string, a line without `\n` at the end.
        let input = "{\"rules\": [\"a\"]}\r\n\n  \r\n{\"rules\": [\"b\u{2028}c\"]}";
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out).expect("serve");
        let out = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].starts_with("{\"text\":\"a\""));
        assert!(lines[1].starts_with("{\"text\":\"b\u{2028}c\""));
    }
}
