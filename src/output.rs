//! Where the commands write, and how a failed write becomes an exit code.
//!
//! Every command writes through a [`Context`](crate::invocation::Context): buffered stdout and
//! stderr (64 KiB each), flushed
//! at the end or per protocol line. Output that matters (the block, a report, a response) goes to
//! `out`, and a failure there is an [`ErrorKind::Output`] error (exit 4). Diagnostics on `err` are
//! best-effort: a stderr that is closed or full never costs the block ([`note`] ignores write
//! errors).
//!
//! Any `/dev/null` is a working sink: a harness that discards output (Python's
//! `subprocess.DEVNULL`, Node's `stdio: "ignore"`) opens it read-write, and the command runs and
//! exits as documented. Before `main`, Rust's runtime reopens a closed standard descriptor
//! (`>&-`) on `/dev/null` too, so a closed stdout cannot be told apart from a discarded one and
//! is treated the same way, as ripgrep does. A write that really fails (`/dev/full`, a pipe with
//! no reader) is exit 4.

use crate::terminal::{escape_text, JsonEscaper};
use pi_rules_host::notes::Note;
use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;

/// The size of the stdout and stderr buffers.
pub const BUFFER_BYTES: usize = 64 * 1024;

/// Writes to stdout of at least this many bytes skip the buffer: the block or a large report goes
/// to the descriptor from where it already is instead of being copied first.
pub const DIRECT_BYTES: usize = 16 * 1024;

/// How a command ended, as an exit code (documented in `--help` and the README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: success.
    Success = 0,
    /// 1: `check` found errors (or warnings, with `--strict`); `diff` found a difference.
    Findings = 1,
    /// 2: usage error (clap reports most of these itself).
    Usage = 2,
    /// 3: an input could not be read or used.
    Input = 3,
    /// 4: the output could not be written.
    Output = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}

pub use pi_rules_host::error::{Error, ErrorKind, UsageError};

/// A failed write to stdout: an [`ErrorKind::Output`] error (exit 4).
pub fn output<T>(result: io::Result<T>) -> Result<T, Error> {
    result.map_err(Error::output)
}

/// The exit code for a failed command, by its kind: 2 for usage, 3 for an input that could not
/// be read or used, 4 for output.
pub fn exit_for(err: &Error) -> Exit {
    match err.kind() {
        ErrorKind::Usage => Exit::Usage,
        ErrorKind::Input => Exit::Input,
        ErrorKind::Output => Exit::Output,
    }
}

/// Writes one diagnostic line to stderr, ignoring failures: a stderr that cannot be written must
/// not cost the command its real output.
pub fn note(err: &mut dyn Write, args: fmt::Arguments<'_>) {
    let _ = err.write_fmt(args);
    let _ = err.write_all(b"\n");
}

/// Writes a file's text (a rule, a rendered prompt) to `out`, which is the process's stdout:
/// the bytes exactly on a pipe or into a file, or with `raw`; on a terminal, as [`escape_text`]
/// shows them, and then, when something was escaped, a note on `err` that says so (after `out`
/// is flushed, so that it follows the text).
pub fn write_file_text(
    out: &mut dyn Write,
    err: &mut dyn Write,
    bytes: &[u8],
    raw: bool,
) -> Result<(), Error> {
    if raw || !io::stdout().is_terminal() {
        return output(out.write_all(bytes));
    }
    let (text, escaped) = escape_text(bytes);
    output(out.write_all(text.as_bytes()))?;
    if escaped > 0 {
        output(out.flush())?;
        let what = if escaped == 1 {
            "1 control character or byte that is not UTF-8 is".to_owned()
        } else {
            format!("{escaped} control characters or bytes that are not UTF-8 are")
        };
        note(
            err,
            format_args!(
                "pi-rules: note: {what} shown escaped (`\\x1b`, `\\u{{202e}}`, `\\xNN`); \
                 --raw prints the bytes"
            ),
        );
    }
    Ok(())
}

/// A host note as the command line shows it: `pi-rules: warning: MESSAGE`, the message escaped
/// for a terminal.
pub fn note_line(note: &Note) -> String {
    format!(
        "pi-rules: {}: {}",
        note.level.label(),
        crate::terminal::escape(&note.message)
    )
}

/// Writes each of `notes` to `err` as [`note_line`] shows it, best-effort.
pub fn write_notes(err: &mut dyn Write, notes: &[Note]) {
    for one in notes {
        note(err, format_args!("{}", note_line(one)));
    }
}

/// Buffered handles on the process's stdout and stderr.
pub struct StdStreams {
    pub out: Buffered<RawStdout>,
    pub err: Buffered<io::Stderr>,
}

impl StdStreams {
    /// Our own buffers in front of the two descriptors. Stdout is written through its descriptor,
    /// past std's line buffering, which would otherwise look for a line break in every buffer we
    /// hand it.
    pub fn new() -> StdStreams {
        StdStreams {
            out: Buffered::new(RawStdout { json: None }),
            err: Buffered::new(io::stderr()),
        }
    }

    /// [`StdStreams::new`] for a command that writes JSON to a terminal: what JSON carries as
    /// itself but a terminal would act on is written escaped (see [`JsonEscaper`]).
    pub fn json_on_terminal() -> StdStreams {
        let mut streams = StdStreams::new();
        streams.out = Buffered::new(RawStdout {
            json: Some(JsonEscaper::default()),
        });
        streams
    }
}

impl Default for StdStreams {
    fn default() -> Self {
        StdStreams::new()
    }
}

/// The process's stdout descriptor, written with plain `write` calls; through a
/// [`JsonEscaper`] when it carries JSON to a terminal.
pub struct RawStdout {
    json: Option<JsonEscaper>,
}

impl Write for RawStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.json {
            None => Ok(rustix::io::write(io::stdout().as_fd(), buf)?),
            // A terminal: std's handle writes all of it, and speed does not matter.
            Some(escaper) => {
                let mut stdout = io::stdout().lock();
                stdout.write_all(&escaper.escape(buf))?;
                stdout.flush()?;
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.json {
            None => Ok(()),
            Some(escaper) => {
                let mut stdout = io::stdout().lock();
                stdout.write_all(&escaper.finish())?;
                stdout.flush()
            }
        }
    }
}

/// A write buffer of [`BUFFER_BYTES`] that passes writes of [`DIRECT_BYTES`] or more straight to
/// the writer beneath, after what it holds: small writes are gathered, and a large one is not
/// copied. The buffer is allocated by the first small write, so a command that writes one
/// block, or nothing, never has one. What is still buffered when it is dropped is written then,
/// ignoring failures (call [`Write::flush`] to see them).
pub struct Buffered<W: Write> {
    inner: W,
    buffer: Vec<u8>,
}

impl<W: Write> Buffered<W> {
    pub fn new(inner: W) -> Self {
        Buffered {
            inner,
            buffer: Vec::new(),
        }
    }

    /// Writes out what the buffer holds. After a failure the buffer keeps what was not written.
    fn flush_buffer(&mut self) -> io::Result<()> {
        let mut written = 0;
        let result = loop {
            let Some(rest) = self.buffer.get(written..).filter(|rest| !rest.is_empty()) else {
                break Ok(());
            };
            match self.inner.write(rest) {
                Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => written += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => break Err(err),
            }
        };
        self.buffer.drain(..written.min(self.buffer.len()));
        result
    }

    /// Writes out what the buffer holds, without flushing the writer beneath, and gives the
    /// failure if that fails (dropping would ignore it).
    pub fn finish(mut self) -> io::Result<()> {
        self.flush_buffer()
    }

    /// Whether `buf` goes into the room left: the common case, of a few bytes.
    #[inline]
    fn fits(&self, buf: &[u8]) -> bool {
        buf.len() < DIRECT_BYTES && buf.len() <= self.buffer.capacity() - self.buffer.len()
    }

    /// Writes `buf`, which does not [fit](Buffered::fits): directly when it is large, else into a
    /// buffer flushed or allocated for it. Kept out of line, so that the common case stays small.
    #[cold]
    #[inline(never)]
    fn write_slow(&mut self, buf: &[u8], all: bool) -> io::Result<usize> {
        if buf.len() >= DIRECT_BYTES {
            self.flush_buffer()?;
            return if all {
                self.inner.write_all(buf).map(|()| buf.len())
            } else {
                self.inner.write(buf)
            };
        }
        if self.buffer.len() + buf.len() > BUFFER_BYTES {
            self.flush_buffer()?;
        }
        if self.buffer.capacity() == 0 {
            self.buffer.reserve_exact(BUFFER_BYTES);
        }
        self.buffer.extend_from_slice(buf);
        Ok(buf.len())
    }
}

impl<W: Write> Write for Buffered<W> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.fits(buf) {
            return self.write_slow(buf, false);
        }
        self.buffer.extend_from_slice(buf);
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if !self.fits(buf) {
            return self.write_slow(buf, true).map(|_| ());
        }
        self.buffer.extend_from_slice(buf);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_buffer()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Buffered<W> {
    fn drop(&mut self) {
        let _ = self.flush_buffer();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_error_kind() {
        let out = output::<()>(Err(io::Error::from(io::ErrorKind::BrokenPipe))).unwrap_err();
        assert_eq!(exit_for(&out), Exit::Output);
        assert!(out.is_broken_pipe());
        let usage: Error = UsageError("bad".into()).into();
        assert_eq!(exit_for(&usage), Exit::Usage);
        let input: Error = anyhow::anyhow!("no such file").into();
        assert_eq!(exit_for(&input), Exit::Input);
        assert_eq!(input.message(), "no such file");
    }

    /// Records each write that reaches it.
    #[derive(Default)]
    struct Recorder {
        writes: Vec<Vec<u8>>,
    }

    impl Write for Recorder {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.writes.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn small_writes_are_gathered_and_a_large_one_follows_them_unbuffered() {
        let mut out = Buffered::new(Recorder::default());
        out.write_all(b"a").unwrap();
        out.write_all(b"b").unwrap();
        assert!(out.inner.writes.is_empty());
        assert_eq!(out.buffer.capacity(), BUFFER_BYTES);
        let large = vec![b'x'; DIRECT_BYTES];
        out.write_all(&large).unwrap();
        out.write_all(b"c").unwrap();
        out.flush().unwrap();
        let writes = &out.inner.writes;
        assert_eq!(writes.len(), 3);
        assert_eq!(writes[0], b"ab");
        assert_eq!(writes[1], large);
        assert_eq!(writes[2], b"c");
        assert_eq!(out.write(&large).unwrap(), DIRECT_BYTES);
    }

    /// Takes at most three bytes per call, after an interruption and then one failure.
    #[derive(Default)]
    struct Trickle {
        calls: usize,
        taken: Vec<u8>,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            match self.calls {
                1 => Err(io::Error::from(io::ErrorKind::Interrupted)),
                3 => Err(io::Error::from_raw_os_error(28)),
                _ => {
                    let n = buf.len().min(3);
                    self.taken.extend_from_slice(&buf[..n]);
                    Ok(n)
                }
            }
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn short_writes_and_failures_lose_and_repeat_nothing() {
        let mut out = Buffered::new(Trickle::default());
        out.write_all(b"abcdefgh").unwrap();
        // Interrupted, then three bytes, then a failure: the rest stays buffered.
        assert!(out.flush().is_err());
        assert_eq!(out.inner.taken, b"abc");
        assert_eq!(out.buffer, b"defgh");
        out.write_all(b"ij").unwrap();
        out.flush().unwrap();
        assert_eq!(out.inner.taken, b"abcdefghij");
        assert!(out.buffer.is_empty());
    }

    #[test]
    fn dropping_writes_what_is_buffered() {
        let mut taken = Vec::new();
        {
            let mut out = Buffered::new(&mut taken);
            out.write_all(b"kept").unwrap();
        }
        assert_eq!(taken, b"kept");
    }

    #[test]
    fn note_ignores_a_failing_writer() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from_raw_os_error(28))
            }
            fn flush(&mut self) -> io::Result<()> {
                Err(io::Error::from_raw_os_error(28))
            }
        }
        note(&mut Full, format_args!("warning"));
    }
}
