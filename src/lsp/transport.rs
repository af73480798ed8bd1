//! The protocol's framing on a byte stream, bounded: `Content-Length` headers, then a JSON body.
//!
//! `lsp-server`'s own stdio transport reads a body of any announced length into memory; this one
//! refuses a body over [`MAX_MESSAGE_BYTES`] (it is read and thrown away in pieces, so the stream
//! stays in step) and a header line over [`MAX_HEADER_LINE`], and says so with an error response.

use lsp_server::Message;
use std::io::{self, BufRead, Write};

/// The largest message body read (16 MiB).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// The longest header line read.
pub const MAX_HEADER_LINE: u64 = 1024;

/// JSON-RPC's codes for a message that could not be read.
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

/// Reads one message; `Ok(None)` at the end of the stream. A broken header is an error: the
/// stream cannot be followed after it.
pub fn read(input: &mut impl BufRead) -> io::Result<Option<Incoming>> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        let n = io::Read::take(&mut *input, MAX_HEADER_LINE).read_until(b'\n', &mut line)?;
        if n == 0 {
            if first {
                return Ok(None);
            }
            return Err(invalid("the stream ended inside a message's header"));
        }
        first = false;
        if line.last() != Some(&b'\n') {
            return Err(invalid("a header line is over 1024 bytes, or unterminated"));
        }
        let text = std::str::from_utf8(&line)
            .map_err(|_| invalid("a header line is not UTF-8"))?
            .trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(invalid("a header line has no `:`"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            length = Some(
                value
                    .parse()
                    .map_err(|_| invalid("Content-Length is not a number"))?,
            );
        }
    }
    let Some(length) = length else {
        return Err(invalid("a message has no Content-Length"));
    };
    if length > MAX_MESSAGE_BYTES {
        // Read past it without keeping it, so that the next message is found.
        let skipped = io::copy(
            &mut io::Read::take(&mut *input, length as u64),
            &mut io::sink(),
        )?;
        if skipped < length as u64 {
            return Err(invalid("the stream ended inside a message"));
        }
        return Ok(Some(Incoming::Refused {
            code: INVALID_REQUEST,
            message: format!(
                "a message of {length} bytes is over the limit of {MAX_MESSAGE_BYTES} bytes; it was not read"
            ),
        }));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(parse(&body)))
}

/// A message from its body.
pub fn parse(body: &[u8]) -> Incoming {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Err(err) => Incoming::Refused {
            code: PARSE_ERROR,
            message: format!("the message is not JSON: {err}"),
        },
        Ok(value) => match serde_json::from_value::<Message>(value) {
            Ok(message) => Incoming::Message(message),
            Err(err) => Incoming::Refused {
                code: INVALID_REQUEST,
                message: format!(
                    "the message is not a JSON-RPC request, notification or response: {err}"
                ),
            },
        },
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

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
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
        for bad in [
            &b"Content-Length: x\r\n\r\n"[..],
            b"Content-Type: a\r\n\r\n{}",
            b"Content-Length: 10\r\n\r\n{}",
            b"Content-Length: 2\r\n",
        ] {
            let mut input = bad;
            assert!(read(&mut input).is_err(), "{bad:?}");
        }
        let long = format!("X-Pad: {}\r\n", "y".repeat(4000));
        assert!(read(&mut long.as_bytes()).is_err());
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
