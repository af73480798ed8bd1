//! A buffered JSON writer for output written by hand, with a `serde_json`-compatible string
//! escaper that works eight bytes at a time.

use pi_rules_core::Message;
use serde::Serialize;
use std::io::{self, Write};

/// Bytes gathered before a write to the output.
pub const OUTPUT_BUFFER: usize = 64 << 10;

/// A JSON writer for output built by hand: JSON is written into a buffer, which goes to the
/// output whenever it holds [`OUTPUT_BUFFER`] bytes and when a line ends. Strings are escaped
/// as `serde_json` escapes them, eight bytes at a time, and any `Serialize` value can be put in
/// between, so a command writes its hot records by hand and the rest through `serde`.
/// The last string written by [`JsonWriter::string_memo`] and its escaped form. `serve` answers
/// every turn of a session with the same rules block, tens of kilobytes: comparing it with the
/// last one costs a small part of escaping it again.
#[derive(Default)]
pub struct EscapeMemo {
    source: String,
    escaped: Vec<u8>,
}

impl EscapeMemo {
    /// Longer strings are not kept: the memo holds two copies of its string.
    pub const MAX_BYTES: usize = 1 << 20;
}

pub struct JsonWriter<W> {
    out: W,
    buffer: Vec<u8>,
    /// The buffer goes to the output when it holds this many bytes ([`OUTPUT_BUFFER`], or never
    /// for a writer [`over`](JsonWriter::over) a buffer).
    spill_at: usize,
}

impl JsonWriter<io::Sink> {
    /// A writer that appends to `buffer` and nowhere else: what a caller that wants the bytes
    /// in memory uses, so that they are not copied from the writer's buffer into its own.
    pub fn over(buffer: Vec<u8>) -> Self {
        JsonWriter {
            out: io::sink(),
            buffer,
            spill_at: usize::MAX,
        }
    }

    /// The bytes written, after those the buffer held before.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buffer
    }
}

impl<W: Write> JsonWriter<W> {
    pub fn new(out: W) -> Self {
        JsonWriter {
            out,
            buffer: Vec::with_capacity(OUTPUT_BUFFER),
            spill_at: OUTPUT_BUFFER,
        }
    }

    /// Appends bytes that are JSON already. Inlined: most are a few constant bytes, a key and
    /// its punctuation, which are then copied without a call.
    #[inline(always)]
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.buffer.extend_from_slice(bytes);
        self.spill()
    }

    /// Passes a full buffer on to the output, so that it never holds much more than
    /// [`OUTPUT_BUFFER`] bytes whatever the response.
    #[inline(always)]
    fn spill(&mut self) -> io::Result<()> {
        if self.buffer.len() >= self.spill_at {
            self.pass_on()?;
        }
        Ok(())
    }

    #[cold]
    fn pass_on(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer)?;
        self.buffer.clear();
        Ok(())
    }

    /// Writes `s` as a JSON string, quotes included, taking its escaped form from `memo` when
    /// `memo` holds the same text, and keeping it there otherwise.
    pub fn string_memo(&mut self, s: &str, memo: &mut EscapeMemo) -> io::Result<()> {
        if s.len() > EscapeMemo::MAX_BYTES {
            *memo = EscapeMemo::default();
            return self.string(s);
        }
        if memo.source != s {
            memo.source.clear();
            memo.source.push_str(s);
            memo.escaped.clear();
            escape_into(&mut memo.escaped, s.as_bytes());
        }
        self.buffer.push(b'"');
        self.buffer.extend_from_slice(&memo.escaped);
        self.buffer.push(b'"');
        self.spill()
    }

    /// Writes `s` as a JSON string, quotes included.
    pub fn string(&mut self, s: &str) -> io::Result<()> {
        self.buffer.push(b'"');
        self.contents(s)?;
        self.buffer.push(b'"');
        Ok(())
    }

    /// Writes `n` as a JSON number.
    #[inline]
    pub fn uint(&mut self, n: usize) -> io::Result<()> {
        self.raw(itoa::Buffer::new().format(n).as_bytes())
    }

    /// Writes `value` as `serde_json` writes it, compact.
    pub fn value(&mut self, value: &impl Serialize) -> io::Result<()> {
        serde_json::to_writer(&mut self.buffer, value).map_err(io::Error::from)?;
        self.spill()
    }

    /// How much the buffer holds room for.
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.buffer.capacity()
    }

    /// The output, after everything buffered was written to it.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.write_all(&self.buffer)?;
        self.buffer.clear();
        Ok(self.out)
    }

    /// Writes a warning's message as a JSON string, after a comma unless it is the first.
    pub fn warning(&mut self, comma: bool, message: Message<'_>) -> io::Result<()> {
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
    pub fn contents(&mut self, s: &str) -> io::Result<()> {
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

    /// Appends the bytes of a string escaped as `serde_json` does (see [`escape_into`]).
    fn escape_bytes(&mut self, bytes: &[u8]) {
        escape_into(&mut self.buffer, bytes);
    }

    /// Ends a response: a line feed, then everything to the output, flushed.
    pub fn end_line(&mut self) -> io::Result<()> {
        self.raw(b"\n")?;
        self.flush()
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer)?;
        self.buffer.clear();
        self.out.flush()
    }
}

/// Appends the bytes of a string escaped as `serde_json` does: `"`, `\` and the controls
/// below U+0020 (`\n`, `\t`, … or `\u00XX` with lower-case hex); everything else, non-ASCII
/// included, as it is.
fn escape_into(buffer: &mut Vec<u8>, bytes: &[u8]) {
    // Shorter than a word: a warning's quoted marker or key, mostly with nothing to escape.
    if bytes.len() < 8 && bytes.iter().all(|&b| ESCAPE[usize::from(b)] == 0) {
        buffer.extend(bytes.iter().copied());
        return;
    }
    buffer.reserve(bytes.len());
    let mut rest = bytes;
    // Each run up to the next byte to escape is found a word at a time and copied whole:
    // rule text escapes a line break every line or so, and one copy of a line costs less
    // than a copy of every word of it.
    while let Some(k) = first_to_escape(rest) {
        buffer.extend_from_slice(&rest[..k]);
        push_escape(buffer, rest[k]);
        rest = &rest[k + 1..];
    }
    buffer.extend_from_slice(rest);
}

/// Flags (bit 7 of each byte) the bytes of `word` (little-endian) that need escaping inside a
/// JSON string: below 0x20, `"` or `\`. The lowest flag is exact; a byte above a flagged one may
/// be flagged wrongly (a borrow carries into it), which only matters for bytes that are looked at
/// again from there.
pub fn escape_mask(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let is_quote = quote.wrapping_sub(ONES) & !quote;
    let is_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below_space | is_quote | is_backslash) & HIGH
}

/// The offset of the first byte of `bytes` that needs escaping, tested sixteen bytes at a time
/// (the last few in a word padded with bytes that need none).
fn first_to_escape(bytes: &[u8]) -> Option<usize> {
    let (pairs, rest) = bytes.as_chunks::<16>();
    for (i, pair) in pairs.iter().enumerate() {
        let (low, high) = pair.split_at(8);
        let low = escape_mask(u64::from_le_bytes(low.try_into().unwrap_or([b'a'; 8])));
        let high = escape_mask(u64::from_le_bytes(high.try_into().unwrap_or([b'a'; 8])));
        if low | high != 0 {
            // The lowest flag of a word marks its first byte to escape exactly (see
            // `escape_mask`); a flag in the high word counts only when the low word has none.
            let k = if low != 0 {
                low.trailing_zeros() / 8
            } else {
                8 + high.trailing_zeros() / 8
            };
            return Some(16 * i + k as usize);
        }
    }
    let mut at = bytes.len() - rest.len();
    for part in rest.chunks(8) {
        // Built in a register: a copy through memory would stall the load that follows.
        let word = part
            .iter()
            .enumerate()
            .fold(u64::from_le_bytes([b'a'; 8]), |word, (j, &b)| {
                word & !(0xff << (8 * j)) | u64::from(b) << (8 * j)
            });
        let mask = escape_mask(word);
        if mask != 0 {
            return Some(at + (mask.trailing_zeros() / 8) as usize);
        }
        at += part.len();
    }
    None
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
        // Longer ones: one byte to escape (or not) at every place of a text of five words and of
        // one with a tail of seven bytes after them, and two such bytes close together.
        let placed: Vec<String> = [b'\n', b'"', b'\\', 0x01, 0x1f, b' ', b'a']
            .into_iter()
            .flat_map(|b| [(b, 40), (b, 47)])
            .flat_map(|(b, len)| {
                (0..len).flat_map(move |at| {
                    let mut one = vec![b'x'; len];
                    one[at] = b;
                    let mut two = one.clone();
                    two[(at + 3) % len] = b'\t';
                    [one, two].map(|bytes| String::from_utf8(bytes).expect("ascii"))
                })
            })
            .collect();
        let cases = [all.as_str(), "", "plain", "\"\\", "a\nb\r\n\tc", &long];
        for s in cases
            .into_iter()
            .chain(short.iter().map(String::as_str))
            .chain(placed.iter().map(String::as_str))
        {
            let mut out = JsonWriter::new(Vec::new());
            out.string(s).expect("vec");
            assert_eq!(
                String::from_utf8(out.into_inner().expect("vec")).expect("utf-8"),
                serde_json::to_string(s).expect("json"),
                "{s:?}"
            );
        }
    }

    /// Numbers and `serde` values land between hand-written pieces as `serde_json` writes them.
    #[test]
    fn numbers_and_values_are_written_as_serde_json_does() {
        let numbers = [0, 7, 10, 65_535, usize::MAX];
        let value = ("a\\nb\t\"", Some(1.5), [true, false], None::<u8>);
        let mut out = JsonWriter::new(Vec::new());
        out.raw(b"[").expect("vec");
        for n in numbers {
            out.uint(n).expect("vec");
            out.raw(b",").expect("vec");
        }
        out.value(&value).expect("vec");
        out.raw(b"]").expect("vec");
        let (a, b, c, d, e) = numbers.into();
        assert_eq!(
            String::from_utf8(out.into_inner().expect("vec")).expect("utf-8"),
            serde_json::to_string(&(a, b, c, d, e, value)).expect("json")
        );
    }

    proptest::proptest! {
        /// Any string, mostly plain with a few bytes to escape anywhere, is escaped as
        /// `serde_json` escapes it.
        #[test]
        fn any_string_is_escaped_as_serde_json_does(
            s in "([a-z |é😀]{0,20}[\"\\\\\n\t\r\u{1}\u{1f}\u{7f}]?){0,12}",
        ) {
            let mut out = JsonWriter::new(Vec::new());
            out.string(&s).expect("vec");
            let got = String::from_utf8(out.into_inner().expect("vec")).expect("utf-8");
            proptest::prop_assert_eq!(got, serde_json::to_string(&s).expect("json"));
        }
    }
}
