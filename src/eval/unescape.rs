//! Decoding JSON strings in place, fast, for the long rule texts of `eval` requests.
//!
//! A rule text has an escape on every line (`\n`), often more, and `serde_json` decodes strings
//! at over 100 instructions an escape, into fresh memory. [`unescape`] decodes a string where it
//! is, in the request line: it moves the bytes between escapes eight at a time and decodes the
//! two-character escapes itself. What it decodes, [`reencode`] can put back exactly, so that a line
//! found to be out of the ordinary further on can still be read as it came. It leaves `\u` escapes
//! (and with them surrogate pairs and lone surrogates), `\/` (which would not be put back) and
//! every malformed string to `serde_json`.

use crate::json::escape_mask;

/// Decodes in place the JSON string whose contents start `buf` (just after its opening quote):
/// its text is written to the start of `buf`. Returns how many bytes it read, closing quote
/// included, and how many it wrote.
///
/// At a `\u` or `\/` escape, and at whatever makes it no JSON string (a control character, an
/// unknown escape, no closing quote), it stops and returns `Err` with how many bytes it had read
/// and written: [`reencode`] puts them back.
pub fn unescape(buf: &mut [u8]) -> Result<(usize, usize), (usize, usize)> {
    let (mut read, mut written) = (0, 0);
    loop {
        if let Some(Ok(&chunk)) = buf.get(read..read + 8).map(<&[u8; 8]>::try_from) {
            let mask = escape_mask(u64::from_le_bytes(chunk));
            // The lowest flag marks the first byte that ends the run exactly.
            let run = if mask == 0 {
                8
            } else {
                (mask.trailing_zeros() / 8) as usize
            };
            move_run(buf, &chunk, read, written, run);
            read += run;
            written += run;
            if mask == 0 {
                continue;
            }
        } else {
            // The last few bytes, one at a time.
            while let Some(&byte) = buf.get(read).filter(|&&b| is_plain(b)) {
                if let Some(to) = buf.get_mut(written) {
                    *to = byte;
                }
                read += 1;
                written += 1;
            }
        }
        match buf.get(read) {
            Some(b'"') => return Ok((read + 1, written)),
            Some(b'\\') => {
                let Some(decoded) = buf.get(read + 1).and_then(|&letter| decode(letter)) else {
                    return Err((read, written));
                };
                if let Some(to) = buf.get_mut(written) {
                    *to = decoded;
                }
                read += 2;
                written += 1;
            }
            // A control character (which must be escaped), or the end of `buf`.
            _ => return Err((read, written)),
        }
    }
}

/// Moves the first `run` bytes of `chunk`, the eight bytes of `buf` at `read`, to `written`.
///
/// Eight bytes are written at once when that overwrites nothing unread (the bytes past `run` are
/// overwritten later, or lie past the end of the text).
fn move_run(buf: &mut [u8], chunk: &[u8; 8], read: usize, written: usize, run: usize) {
    if read.saturating_sub(written) >= 8 {
        if let Some(to) = buf.get_mut(written..written + 8) {
            to.copy_from_slice(chunk);
        }
    } else if read != written && read + run <= buf.len() {
        buf.copy_within(read..read + run, written);
    }
}

/// Puts back the JSON that [`unescape`] read as the first `read` bytes of `buf` (without the
/// closing quote), `written` bytes of text now. It works from the back: each character that a
/// string must escape gets its two-character escape again, which is what it was, since `unescape`
/// leaves `\u` and `\/` alone.
pub fn reencode(buf: &mut [u8], read: usize, written: usize) {
    let mut to = read;
    for from in (0..written).rev() {
        let Some(&byte) = buf.get(from) else { return };
        let (escape, len) = match ENCODE[usize::from(byte)] {
            0 => ([byte, 0], 1),
            letter => ([b'\\', letter], 2),
        };
        // `to` stays at least `from + 1`: the text before `from` took at least `from` bytes.
        let Some(at) = to.checked_sub(len) else {
            return;
        };
        if let Some(place) = buf.get_mut(at..to) {
            place.copy_from_slice(&escape[..len]);
        }
        to = at;
    }
}

/// Whether `byte` stands for itself inside a JSON string.
fn is_plain(byte: u8) -> bool {
    byte >= 0x20 && byte != b'"' && byte != b'\\'
}

/// The byte that the escape `\` `letter` stands for, unless it is `\u`, `\/` or no escape.
fn decode(letter: u8) -> Option<u8> {
    match DECODE[usize::from(letter)] {
        0 => None,
        byte => Some(byte),
    }
}

/// What each two-character escape that [`unescape`] decodes stands for, by its letter; 0 for
/// the others.
const DECODE: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 256 {
        if ENCODE[byte] != 0 {
            table[ENCODE[byte] as usize] = byte as u8;
        }
        byte += 1;
    }
    table
};

/// The letter of the escape of each byte that [`unescape`] decodes; 0 for the others.
const ENCODE: [u8; 256] = {
    let mut table = [0; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `unescape` does to the JSON string `raw` (quotes included) followed by more JSON:
    /// the text and the length it read, or `None`. Either way, `reencode` must put it all back.
    fn decoded(raw: &str) -> Option<(String, usize)> {
        let line = format!("{raw}, \"more\"]}}");
        let mut buf = line.as_bytes()[1..].to_vec();
        let result = unescape(&mut buf);
        let mut back = buf.clone();
        match result {
            // The closing quote stays where it is.
            Ok((read, written)) => reencode(&mut back, read - 1, written),
            Err((read, written)) => reencode(&mut back, read, written),
        }
        assert_eq!(back, &line.as_bytes()[1..], "{raw}");
        let (read, written) = result.ok()?;
        buf.truncate(written);
        Some((String::from_utf8(buf).expect("utf-8"), read + 1))
    }

    #[test]
    fn two_character_escapes_are_decoded_as_serde_json_does() {
        let long = serde_json::to_string(&"{{/IF}}\n\"é\"\\".repeat(1000)).expect("json");
        let cases = [
            r#""""#,
            r#""plain""#,
            r#""\"\\\b\f\n\r\t""#,
            r#""a\nb""#,
            r#""\n\n""#,
            r#""{{/IF}}\n{{/IF}}\n""#,
            r#""é\t😀 \\n""#,
            r#""ends with a backslash \\""#,
            r#""\n\n\n\n\n\n\n\n\n0123456789abcdef\n0123456789abcdef""#,
            "\"\u{2028}\u{2029}\u{7f}\u{80}\u{ff}\u{feff}/\"",
            &long,
        ];
        for raw in cases {
            let expected: String = serde_json::from_str(raw).expect(raw);
            assert_eq!(decoded(raw), Some((expected, raw.len())), "{raw}");
        }
    }

    #[test]
    fn escapes_and_quotes_at_every_offset() {
        for run in 0..40 {
            for end in ["\n", "\"", "\\", "é", "\u{7f}", "\n\n\n\n\n\n\n\n\n"] {
                let text = format!("{}{end}", "x".repeat(run)).repeat(3);
                let raw = serde_json::to_string(&text).expect("json");
                assert_eq!(decoded(&raw), Some((text, raw.len())), "{raw}");
            }
        }
    }

    #[test]
    fn anything_else_is_put_back_for_serde_json() {
        let cases = [
            r#""\u0041""#,
            r#""a\ud83d\ude00""#,
            r#""\ud800""#,
            r#""\/""#,
            r#""\x""#,
            r#""\n\n\n\n\n\n\n\n\n\n\n\n\n0123456789abcdef\u0041""#,
            "\"raw \u{1}\"",
            "\"raw\ttab\"",
            "\"raw\nline feed\"",
        ];
        for raw in cases {
            assert_eq!(decoded(raw), None, "{raw}");
        }
        // Cut short: no closing quote, or a backslash last.
        for raw in [
            "\"",
            "\"unterminated",
            "\"a\\",
            "\"12345678\\",
            "\"\\n\\n\\n\\n\\n\\n\\n\\n\\n\\",
        ] {
            let mut buf = raw.as_bytes()[1..].to_vec();
            let Err((read, written)) = unescape(&mut buf) else {
                panic!("{raw}")
            };
            reencode(&mut buf, read, written);
            assert_eq!(buf, &raw.as_bytes()[1..], "{raw}");
        }
    }

    proptest! {
        /// Any string, escaped any way serde_json and JSON allow, is decoded as serde_json does,
        /// or left to it, and put back exactly.
        #[test]
        fn decodes_as_serde_json_does_or_puts_back(
            text in "([a-z{}/ é😀\u{2028}\"\\\\\n\t\r\u{8}\u{c}\u{1}\u{7f}])*",
            slashes in any::<bool>(),
        ) {
            let mut raw = serde_json::to_string(&text).expect("json");
            if slashes {
                raw = raw.replace('/', "\\/");
            }
            match decoded(&raw) {
                Some(got) => prop_assert_eq!(got, (text, raw.len())),
                None => prop_assert!(raw.contains("\\u") || raw.contains("\\/"), "{}", raw),
            }
        }
    }
}
