//! A reader of LF-terminated lines with a bound on their length, for the line protocols (`eval`,
//! and the JSON-RPC of `serve`).
//!
//! Lines are split on the byte `\n` only. U+2028 and U+2029 may appear inside JSON strings and
//! rule texts, so they are kept inside the line (a reader that splits on them, as Node's
//! `readline` does, cuts a request in two). A `\r` before the `\n` is part of the line; callers
//! that accept CRLF strip it.
//!
//! A line longer than the limit is not kept: the reader reports its length as
//! [`Line::TooLong`] and skips the rest of it, holding at most the limit plus two read buffers
//! in memory whatever the input. A read error is returned as an [`io::Error`] from
//! [`LineReader::next_line`], apart from anything the caller writes, so that a command can tell
//! its input failing (exit 3) from its output failing (exit 4).

use pi_rules_core::find;
use std::io::{self, BufRead, BufReader, Read};

/// The longest line the protocols (`eval` and `serve`) accept, in bytes without the `\n`: 16 MiB.
///
/// A request of twelve rule files at the loader's bound (131,072 bytes each) is at most about
/// 9.5 MiB once JSON-escaped even if every byte needs a six-byte `\u00XX` escape, so any layer
/// fits, while one hostile line never takes more than 16 MiB.
pub const MAX_LINE: usize = 16 << 20;

/// Bytes read from the input at a time.
const READ_BUFFER: usize = 64 << 10;

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A whole line, without its `\n` (the last line of the input may lack one). It is the
    /// reader's own buffer, which the caller may change in place.
    Complete(&'a mut [u8]),
    /// A line longer than the limit, skipped; `bytes` is its length without the `\n`.
    TooLong { bytes: u64 },
}

/// Reads LF-terminated lines of at most `limit` bytes from `R`.
#[derive(Debug)]
pub struct LineReader<R> {
    input: BufReader<R>,
    line: Vec<u8>,
    limit: usize,
}

impl<R: Read> LineReader<R> {
    /// A reader with the protocols' limit, [`MAX_LINE`].
    pub fn new(input: R) -> Self {
        Self::with_limit(input, MAX_LINE)
    }

    /// A reader of lines of at most `limit` bytes.
    pub fn with_limit(input: R, limit: usize) -> Self {
        LineReader {
            input: BufReader::with_capacity(READ_BUFFER, input),
            line: Vec::new(),
            limit,
        }
    }

    /// The limit this reader enforces, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The next line, or `None` at the end of the input. An error is a read error of the input;
    /// reading may go on after it.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        // Capacity that lines much longer than the last one left behind is given back.
        if self.line.capacity() > 4 * self.line.len().max(READ_BUFFER) {
            self.line = Vec::new();
        }
        self.line.clear();
        // At most one byte more than the limit: enough to tell a line that is too long.
        let most = u64::try_from(self.limit)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let read = read_until_line_feed(&mut self.input, most, &mut self.line)?;
        if read == 0 {
            return Ok(None);
        }
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
            return Ok(Some(Line::Complete(&mut self.line)));
        }
        if self.line.len() <= self.limit {
            // The last line of the input, without `\n`.
            return Ok(Some(Line::Complete(&mut self.line)));
        }
        // Too long: forget it and skip to the end of the line, one read buffer at a time.
        let mut bytes = self.line.len() as u64;
        self.line = Vec::new();
        let mut skipped = Vec::with_capacity(READ_BUFFER);
        loop {
            skipped.clear();
            let read = read_until_line_feed(&mut self.input, READ_BUFFER as u64, &mut skipped)?;
            if skipped.last() == Some(&b'\n') {
                bytes += read as u64 - 1;
                break;
            }
            bytes += read as u64;
            if read == 0 {
                break;
            }
        }
        Ok(Some(Line::TooLong { bytes }))
    }
}

/// Appends the input up to the next `\n`, included, to `out`, reading at most `most` bytes, and
/// returns how many it appended (0 at the end of the input). It is `BufRead::read_until` on
/// `input.take(most)`, with the SSE2 search of [`find`] for the line feed.
fn read_until_line_feed(
    input: &mut impl BufRead,
    most: u64,
    out: &mut Vec<u8>,
) -> io::Result<usize> {
    let mut read = 0;
    while (read as u64) < most {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let left = usize::try_from(most - read as u64).unwrap_or(usize::MAX);
        let available = available.get(..left).unwrap_or(available);
        let (used, found) = match find::memchr(b'\n', available) {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        out.extend_from_slice(&available[..used]);
        input.consume(used);
        read += used;
        if found || used == 0 {
            break;
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `input` with limit `limit`, as owned values.
    fn lines(input: &[u8], limit: usize) -> Vec<Result<Vec<u8>, u64>> {
        let mut reader = LineReader::with_limit(input, limit);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().expect("in-memory input") {
            out.push(match line {
                Line::Complete(bytes) => Ok(bytes.to_vec()),
                Line::TooLong { bytes } => Err(bytes),
            });
        }
        out
    }

    fn ok(s: &str) -> Result<Vec<u8>, u64> {
        Ok(s.as_bytes().to_vec())
    }

    #[test]
    fn splits_on_line_feed_only() {
        let input = "a\u{2028}b\u{2029}c\rd\r\n\ne\u{85}f".as_bytes();
        assert_eq!(
            lines(input, 100),
            [ok("a\u{2028}b\u{2029}c\rd\r"), ok(""), ok("e\u{85}f")]
        );
        assert_eq!(lines(b"", 100), []);
        assert_eq!(lines(b"\n", 100), [ok("")]);
        assert_eq!(lines(b"x\n", 100), [ok("x")]);
    }

    #[test]
    fn a_line_over_the_limit_is_reported_and_skipped() {
        let input = b"abc\n0123456789\nxy\n0123456789";
        assert_eq!(lines(input, 5), [ok("abc"), Err(10), ok("xy"), Err(10)]);
        // Exactly at the limit is fine.
        assert_eq!(lines(b"12345\n", 5), [ok("12345")]);
    }

    /// An input of `len` bytes of `x` (no line feed) and then `tail`, produced on the fly.
    struct Endless {
        left: u64,
        tail: &'static [u8],
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.left > 0 {
                let n = buf
                    .len()
                    .min(usize::try_from(self.left).unwrap_or(usize::MAX));
                buf[..n].fill(b'x');
                self.left -= n as u64;
                return Ok(n);
            }
            let n = buf.len().min(self.tail.len());
            buf[..n].copy_from_slice(&self.tail[..n]);
            self.tail = &self.tail[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_huge_line_is_skipped_in_bounded_memory() {
        // 1 GiB without a line feed, then a good line: the reader never holds more than its limit
        // and its read buffer.
        let huge = 1u64 << 30;
        let mut reader = LineReader::with_limit(
            Endless {
                left: huge,
                tail: b"\nnext\n",
            },
            1 << 20,
        );
        assert_eq!(
            reader.next_line().expect("read"),
            Some(Line::TooLong { bytes: huge })
        );
        assert!(reader.line.capacity() <= 1 << 20);
        assert_eq!(
            reader.next_line().expect("read"),
            Some(Line::Complete(&mut b"next".to_vec()[..]))
        );
        assert_eq!(reader.next_line().expect("read"), None);
    }

    /// An input read a few bytes at a time, interrupted now and then.
    struct Trickle<'a> {
        input: &'a [u8],
        reads: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            if self.reads.is_multiple_of(5) {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            let n = buf.len().min(self.input.len()).min(self.reads % 7 + 1);
            buf[..n].copy_from_slice(&self.input[..n]);
            self.input = &self.input[n..];
            Ok(n)
        }
    }

    #[test]
    fn lines_read_a_few_bytes_at_a_time_are_the_same() {
        let long = "y".repeat(3 * READ_BUFFER + 5);
        let input = format!("abc\n\n12345\n123456\n{long}\nxy\n{long}z\nlast");
        for limit in [5, 6, 3 * READ_BUFFER + 5, 1 << 20] {
            let mut reader = LineReader::with_limit(
                Trickle {
                    input: input.as_bytes(),
                    reads: 0,
                },
                limit,
            );
            let mut trickled = Vec::new();
            while let Some(line) = reader.next_line().expect("no error but interruptions") {
                trickled.push(match line {
                    Line::Complete(bytes) => Ok(bytes.to_vec()),
                    Line::TooLong { bytes } => Err(bytes),
                });
            }
            assert_eq!(trickled, lines(input.as_bytes(), limit), "{limit}");
        }
    }

    struct Failing;

    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::InvalidData, "broken input"))
        }
    }

    #[test]
    fn a_read_error_is_returned() {
        let err = LineReader::new(Failing).next_line().expect_err("fails");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }
}
