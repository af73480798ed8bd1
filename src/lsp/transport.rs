//! The protocol's framing on a byte stream, bounded: `Content-Length` headers, then a JSON body.
//!
//! `lsp-server`'s own stdio transport reads a body of any announced length into memory; this one
//! refuses a body over [`MAX_MESSAGE_BYTES`] (it is read and thrown away in pieces, so the stream
//! stays in step) and a header line over [`MAX_HEADER_LINE`], and says so with an error response.
//!
//! A header that cannot be read (no `Content-Length`, a length that is not a number, a line that
//! is not a header: what a wrong `Content-Length` before it leaves behind) is answered with a
//! parse error too, and [`Reader`] then skips to the next `Content-Length:` it finds, so one
//! broken message costs that message and the session goes on.

use lsp_server::Message;
use std::io::{self, BufRead, Write};

/// The largest message body read (16 MiB).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// The longest header line read.
pub const MAX_HEADER_LINE: u64 = 1024;

/// JSON-RPC's codes for a message that could not be read: not JSON (or no readable header
/// around it), and JSON that is not a request, notification or response.
pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;

/// What the reader hands the server.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A message that was read and refused (too large, not JSON, not a JSON-RPC message): the
    /// server answers with this error, with a null id, since the id could not be read.
    Refused {
        code: i32,
        message: String,
    },
}

/// What the server hands the writer.
#[derive(Debug)]
pub enum Outgoing {
    Message(Message),
    /// An error response to a message whose id could not be read.
    NullIdError {
        code: i32,
        message: String,
    },
}

/// The header name the reader looks for after a broken header, lower case, with its colon.
const LENGTH_HEADER: &[u8] = b"content-length:";

/// Reads messages from a byte stream in turn, finding its way back after a broken header.
pub struct Reader<R> {
    input: R,
    resync: Resync,
}

/// Where the last header left the stream.
enum Resync {
    /// In step: the next byte begins a header.
    InStep,
    /// After a broken header: what follows up to the next `Content-Length:` is skipped.
    Skip,
    /// A broken header line held `Content-Length:`: the rest of that line, its value.
    Found(Vec<u8>),
}

/// One header read: a body's length, the end of the stream, or why it is broken (with the line
/// that broke it, when a line did).
enum Header {
    Length(usize),
    End,
    Broken(&'static str, Vec<u8>),
}

impl<R: BufRead> Reader<R> {
    pub fn new(input: R) -> Reader<R> {
        Reader {
            input,
            resync: Resync::InStep,
        }
    }

    /// Reads one message; `Ok(None)` at the end of the stream. A broken header is refused (a
    /// parse error) and the next call skips to the next `Content-Length:`.
    pub fn read(&mut self) -> io::Result<Option<Incoming>> {
        let first = match std::mem::replace(&mut self.resync, Resync::InStep) {
            Resync::InStep => None,
            Resync::Skip => {
                if !skip_to_length(&mut self.input)? {
                    return Ok(None);
                }
                let mut line = LENGTH_HEADER.to_vec();
                io::Read::take(&mut self.input, MAX_HEADER_LINE).read_until(b'\n', &mut line)?;
                Some(line)
            }
            Resync::Found(mut rest) => {
                if rest.last() != Some(&b'\n') {
                    io::Read::take(&mut self.input, MAX_HEADER_LINE)
                        .read_until(b'\n', &mut rest)?;
                }
                Some([LENGTH_HEADER, &rest].concat())
            }
        };
        let length = match header(&mut self.input, first)? {
            Header::Length(length) => length,
            Header::End => return Ok(None),
            Header::Broken(why, line) => {
                // The line that broke the header may hold the next one's start (a wrong length
                // before it ran into it); else skip to it.
                self.resync = match find_length(line.get(1..).unwrap_or_default()) {
                    Some(at) => Resync::Found(line[1 + at + LENGTH_HEADER.len()..].to_vec()),
                    None => Resync::Skip,
                };
                return Ok(Some(Incoming::Refused {
                    code: PARSE_ERROR,
                    message: format!(
                        "a message's header could not be read ({why}); what follows it up to the \
                         next `Content-Length` header is skipped"
                    ),
                }));
            }
        };
        if length > MAX_MESSAGE_BYTES {
            // Read past it without keeping it, so that the next message is found.
            let skipped = io::copy(
                &mut io::Read::take(&mut self.input, length as u64),
                &mut io::sink(),
            )?;
            if skipped < length as u64 {
                return Ok(None);
            }
            return Ok(Some(Incoming::Refused {
                code: INVALID_REQUEST,
                message: format!(
                    "a message of {length} bytes is over the limit of {MAX_MESSAGE_BYTES} bytes; it was not read"
                ),
            }));
        }
        let mut body = vec![0; length];
        match self.input.read_exact(&mut body) {
            Ok(()) => Ok(Some(parse(&body))),
            Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// Reads one message from the start of a stream (see [`Reader::read`]).
pub fn read(input: &mut impl BufRead) -> io::Result<Option<Incoming>> {
    Reader::new(input).read()
}

/// Reads the header lines up to the empty line that ends them; `first` is a line already read.
fn header(input: &mut impl BufRead, mut first: Option<Vec<u8>>) -> io::Result<Header> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    let mut started = first.is_some();
    loop {
        match first.take() {
            Some(given) => line = given,
            None => {
                line.clear();
                io::Read::take(&mut *input, MAX_HEADER_LINE).read_until(b'\n', &mut line)?;
            }
        }
        if line.is_empty() {
            // The end of the stream: between messages, or inside a header.
            return Ok(Header::End);
        }
        if line.last() != Some(&b'\n') {
            // Over the limit, or the stream's last bytes: either way not a header line.
            if (line.len() as u64) < MAX_HEADER_LINE {
                return Ok(Header::End);
            }
            return Ok(Header::Broken("a header line is over 1024 bytes", line));
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            return Ok(Header::Broken("a header line is not UTF-8", line));
        };
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !started {
                // Blank lines between messages are skipped over, not refused.
                continue;
            }
            return Ok(match length {
                Some(length) => Header::Length(length),
                None => Header::Broken("a message has no Content-Length", line),
            });
        }
        started = true;
        let Some((name, value)) = text.split_once(':') else {
            return Ok(Header::Broken("a header line has no `:`", line));
        };
        let name = name.trim();
        if name.is_empty() || !name.bytes().all(is_token) {
            return Ok(Header::Broken("a header's name is not a name", line));
        }
        if name.eq_ignore_ascii_case("content-length") {
            match value.trim().parse() {
                Ok(n) => length = Some(n),
                Err(_) => {
                    return Ok(Header::Broken("Content-Length is not a number", line));
                }
            }
        }
    }
}

/// A byte of a header's name (HTTP's `tchar`).
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Where `Content-Length:` (in any case) starts in `bytes`.
fn find_length(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(LENGTH_HEADER.len())
        .position(|w| w.eq_ignore_ascii_case(LENGTH_HEADER))
}

/// Reads past everything up to and including the next `Content-Length:` (in any case), keeping
/// nothing; whether it was found before the stream ended.
fn skip_to_length(input: &mut impl BufRead) -> io::Result<bool> {
    let mut matched = 0;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        let mut used = buf.len();
        for (i, &b) in buf.iter().enumerate() {
            let b = b.to_ascii_lowercase();
            // `c` occurs in the name only at its start, so a mismatch restarts at this byte.
            matched = if b == LENGTH_HEADER[matched] {
                matched + 1
            } else {
                usize::from(b == LENGTH_HEADER[0])
            };
            if matched == LENGTH_HEADER.len() {
                used = i + 1;
                break;
            }
        }
        input.consume(used);
        if matched == LENGTH_HEADER.len() {
            return Ok(true);
        }
    }
}

/// A message from its body: not JSON is a parse error, and JSON that is not one request,
/// notification or response (an array, an `id` that is neither an integer nor a string, a
/// `method` missing or not a string) is an invalid request; JSON-RPC answers both with a null id.
pub fn parse(body: &[u8]) -> Incoming {
    let value = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(value) => value,
        Err(err) => {
            return Incoming::Refused {
                code: PARSE_ERROR,
                message: format!("the message is not JSON: {err}"),
            }
        }
    };
    let invalid = |why: String| Incoming::Refused {
        code: INVALID_REQUEST,
        message: format!("the message is not a JSON-RPC request, notification or response: {why}"),
    };
    if let Err(why) = shape(&value) {
        return invalid(why.to_owned());
    }
    match serde_json::from_value::<Message>(value) {
        Ok(message) => Incoming::Message(message),
        Err(err) => invalid(err.to_string()),
    }
}

/// Whether a JSON value has the shape of one message. `lsp-server` alone would read an `id` it
/// cannot hold (an object, an array, a number outside the protocol's integers) as a notification
/// without one, and a message with an `id` and no `method` as a response: each would then go
/// unanswered.
fn shape(value: &serde_json::Value) -> Result<(), &'static str> {
    use serde_json::Value;
    let Some(object) = value.as_object() else {
        return Err("it is not an object (the protocol sends no batches)");
    };
    match object.get("id") {
        None | Some(Value::String(_)) => {}
        Some(Value::Number(n)) if n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => {}
        Some(_) => return Err("its `id` is neither an integer nor a string"),
    }
    match object.get("method") {
        Some(Value::String(_)) => Ok(()),
        Some(_) => Err("its `method` is not a string"),
        None if object.contains_key("id")
            && (object.contains_key("result") != object.contains_key("error")) =>
        {
            Ok(())
        }
        None => Err("it has no `method`"),
    }
}

/// Writes one message with its header; for a terminal (`escaped`), with what JSON carries as
/// itself but a terminal would act on escaped (see [`crate::terminal::escape_json`]), and the
/// length counted after.
pub fn write(out: &mut dyn Write, message: Outgoing, escaped: bool) -> io::Result<()> {
    let body = match message {
        Outgoing::Message(message) => {
            let mut value = serde_json::to_value(&message).map_err(io::Error::other)?;
            if let Some(object) = value.as_object_mut() {
                object.insert("jsonrpc".to_owned(), "2.0".into());
            }
            serde_json::to_vec(&value).map_err(io::Error::other)?
        }
        Outgoing::NullIdError { code, message } => serde_json::to_vec(&serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": code, "message": message },
        }))
        .map_err(io::Error::other)?,
    };
    let body = if escaped {
        crate::terminal::escape_json(&body).into_owned()
    } else {
        body
    };
    write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
    out.write_all(&body)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn reads_messages_in_turn_and_ends() {
        let mut bytes = framed(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#);
        bytes.extend(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
        bytes.extend(framed(r#"{"jsonrpc":"2.0","method":"exit"}"#));
        let mut input = &bytes[..];
        let Some(Incoming::Message(Message::Request(r))) = read(&mut input).unwrap() else {
            panic!("a request")
        };
        assert_eq!(r.method, "shutdown");
        let Some(Incoming::Message(Message::Notification(n))) = read(&mut input).unwrap() else {
            panic!("a notification")
        };
        assert_eq!(n.method, "exit");
        assert!(read(&mut input).unwrap().is_none());
    }

    #[test]
    fn an_oversized_body_is_skipped_and_refused() {
        let huge = format!(r#"{{"pad":"{}"}}"#, "x".repeat(MAX_MESSAGE_BYTES));
        let mut bytes = framed(&huge);
        bytes.extend(framed(r#"{"jsonrpc":"2.0","method":"exit"}"#));
        let mut input = &bytes[..];
        match read(&mut input).unwrap() {
            Some(Incoming::Refused { code, message }) => {
                assert_eq!(code, INVALID_REQUEST);
                assert!(message.contains("over the limit"), "{message}");
            }
            other => panic!("refused, got {other:?}"),
        }
        assert!(matches!(
            read(&mut input).unwrap(),
            Some(Incoming::Message(Message::Notification(_)))
        ));
    }

    #[test]
    fn broken_input_is_refused_or_an_error() {
        let mut input = &framed("{not json")[..];
        assert!(matches!(
            read(&mut input).unwrap(),
            Some(Incoming::Refused {
                code: PARSE_ERROR,
                ..
            })
        ));
        let mut input = &framed("[1,2]")[..];
        assert!(matches!(
            read(&mut input).unwrap(),
            Some(Incoming::Refused {
                code: INVALID_REQUEST,
                ..
            })
        ));
        // Shapes that are JSON but no message: an invalid request, with nothing read as one.
        for body in [
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":5000000000,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
            "3",
        ] {
            match read(&mut &framed(body)[..]).unwrap() {
                Some(Incoming::Refused { code, .. }) => assert_eq!(code, INVALID_REQUEST, "{body}"),
                other => panic!("{body}: refused, got {other:?}"),
            }
        }
        // A response to the server's own request is still one.
        assert!(matches!(
            read(&mut &framed(r#"{"jsonrpc":"2.0","id":"s1","result":null}"#)[..]).unwrap(),
            Some(Incoming::Message(Message::Response(_)))
        ));
        // A broken header is a parse error; the stream's end after it is the end.
        for bad in [
            &b"Content-Length: x\r\n\r\n"[..],
            b"Content-Type: a\r\n\r\n{}",
            b"{\"jsonrpc\":\"2.0\"}\r\n",
            b"garbage\r\n\r\n",
        ] {
            let mut reader = Reader::new(bad);
            assert!(
                matches!(
                    reader.read().unwrap(),
                    Some(Incoming::Refused {
                        code: PARSE_ERROR,
                        ..
                    })
                ),
                "{bad:?}"
            );
            assert!(reader.read().unwrap().is_none(), "{bad:?}");
        }
        // A body or a header cut short by the stream's end is the end.
        for cut in [
            &b"Content-Length: 10\r\n\r\n{}"[..],
            b"Content-Length: 2\r\n",
        ] {
            assert!(read(&mut &cut[..]).unwrap().is_none(), "{cut:?}");
        }
        let long = format!("X-Pad: {}\r\n", "y".repeat(4000));
        assert!(matches!(
            read(&mut long.as_bytes()).unwrap(),
            Some(Incoming::Refused {
                code: PARSE_ERROR,
                ..
            })
        ));
    }

    /// After each kind of broken framing the reader finds the next message: one refusal for the
    /// broken one, then the message.
    #[test]
    fn the_reader_finds_its_way_back_after_broken_framing() {
        let good = r#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#;
        let sacrifice = r#"{"jsonrpc":"2.0","method":"$/x"}"#;
        let cases: Vec<Vec<u8>> = vec![
            // No Content-Length at all, the body after it.
            format!("Content-Type: x\r\n\r\n{sacrifice}").into_bytes(),
            // A body with no header.
            sacrifice.as_bytes().to_vec(),
            format!("\r\n{sacrifice}").into_bytes(),
            // A length that is not a number.
            format!("Content-Length: -3\r\n\r\n{sacrifice}").into_bytes(),
            // A length too short: the rest of the body stands where a header should.
            format!("Content-Length: 10\r\n\r\n{sacrifice}").into_bytes(),
            // Junk of more than a header line's length, with no line break.
            "z".repeat(5000).into_bytes(),
            // Bytes that are not UTF-8.
            b"\xff\xfe\r\n\r\n".to_vec(),
        ];
        for case in cases {
            let mut bytes = case.clone();
            bytes.extend(framed(good));
            let mut reader = Reader::new(&bytes[..]);
            let mut refused = 0;
            loop {
                match reader.read().unwrap() {
                    Some(Incoming::Refused { code, .. }) => {
                        assert_eq!(code, PARSE_ERROR);
                        refused += 1;
                    }
                    Some(Incoming::Message(Message::Request(r))) => {
                        assert_eq!(r.method, "shutdown");
                        break;
                    }
                    other => panic!("{:?}: {other:?}", String::from_utf8_lossy(&case)),
                }
            }
            assert!(
                (1..=2).contains(&refused),
                "{:?}",
                String::from_utf8_lossy(&case)
            );
            assert!(reader.read().unwrap().is_none());
        }
        // A length too long runs into the next message's header, which is lost with it; the
        // one after is read.
        for over in 1..framed(sacrifice).len() {
            let mut bytes =
                format!("Content-Length: {}\r\n\r\n{good}", good.len() + over).into_bytes();
            bytes.extend(framed(sacrifice));
            bytes.extend(framed(good));
            let mut reader = Reader::new(&bytes[..]);
            let mut seen = Vec::new();
            while let Some(incoming) = reader.read().unwrap() {
                seen.push(incoming);
            }
            assert!(
                matches!(seen.last(), Some(Incoming::Message(Message::Request(r))) if r.id == 7.into()),
                "{over}: {seen:?}"
            );
            assert!(seen[..seen.len() - 1].iter().all(|m| matches!(
                m,
                Incoming::Refused {
                    code: PARSE_ERROR,
                    ..
                }
            )));
        }
    }

    #[test]
    fn writes_a_header_and_jsonrpc() {
        for escaped in [false, true] {
            let mut out = Vec::new();
            write(
                &mut out,
                Outgoing::NullIdError {
                    code: PARSE_ERROR,
                    message: "m \u{9b}2J \u{202e}".into(),
                },
                escaped,
            )
            .unwrap();
            let text = String::from_utf8(out).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert_eq!(head, format!("Content-Length: {}", body.len()));
            assert_eq!(body.contains("\\u202e"), escaped, "{body}");
            let value: serde_json::Value = serde_json::from_str(body).unwrap();
            assert_eq!(value["id"], serde_json::Value::Null);
            assert_eq!(value["error"]["code"], PARSE_ERROR);
            assert_eq!(value["error"]["message"], "m \u{9b}2J \u{202e}");
        }
    }
}
