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
//! Requests are read by the `request` module: the rule texts, nearly all of a request, are
//! decoded in place, in the line, by this module's own JSON string decoder (`unescape`), while
//! `serde_json` parses the other fields and reads every line that is out of the ordinary, so
//! that answers and error messages are those of a plain `serde_json::Value` reading.

mod request;
mod unescape;

use crate::json::JsonWriter;
use crate::lines::{Line, LineReader};
use pi_rules_core::{render, Assembler, Scope};
use request::{Reader, Request};
use std::fmt;
use std::io::{self, Read, Write};

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
    let out = out.into_inner().unwrap_or_default();
    String::from_utf8_lossy(&out).into_owned()
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
                    out.uint(index)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::OUTPUT_BUFFER;

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
        let capacity = out.buffer_capacity();
        assert!(capacity <= 2 * OUTPUT_BUFFER, "{capacity}");
        assert!(out.into_inner().expect("vec").len() > 10 * OUTPUT_BUFFER);
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
