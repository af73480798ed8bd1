//! Decoding JSON strings fast, for the long rule texts of `eval` requests.
//!
//! A rule text has an escape on every line (`\n`), often more, and `serde_json` decodes strings
//! at over 100 instructions an escape. This decoder copies the bytes between escapes eight at a
//! time and decodes the two-character escapes itself. It leaves `\u` escapes (and with them
//! surrogate pairs and lone surrogates) and every malformed string to `serde_json`, so that what
//! they decode to, or the error they are, stays `serde_json`'s.

use super::escape_mask;

/// Decodes the contents of the JSON string that starts `src` (just after its opening quote) to
/// the start of `dst`; returns how many bytes it read, closing quote included, and how many it
/// wrote.
///
/// Returns `None` at a `\u` escape, at whatever makes it no JSON string (a control character, an
/// unknown escape, no closing quote), and when `dst` is too short (it never needs to be longer
/// than `src`). The caller leaves such a string to `serde_json`.
pub fn unescape(src: &[u8], dst: &mut [u8]) -> Option<(usize, usize)> {
    let (mut read, mut written) = (0, 0);
    loop {
        // Eight bytes at a time: copied whole, then counted up to the first byte that ends the
        // run of plain bytes (the lowest flag marks it exactly).
        if let (Some(Ok(chunk)), Some(to)) = (
            src.get(read..read + 8).map(<&[u8; 8]>::try_from),
            dst.get_mut(written..written + 8),
        ) {
            to.copy_from_slice(chunk);
            let mask = escape_mask(u64::from_le_bytes(*chunk));
            let run = if mask == 0 {
                8
            } else {
                (mask.trailing_zeros() / 8) as usize
            };
            read += run;
            written += run;
            if mask == 0 {
                continue;
            }
        } else {
            let run = copy_plain(src.get(read..)?, dst.get_mut(written..)?);
            read += run;
            written += run;
        }
        match *src.get(read)? {
            b'"' => return Some((read + 1, written)),
            b'\\' => {
                *dst.get_mut(written)? = decode(*src.get(read + 1)?)?;
                read += 2;
                written += 1;
            }
            // A control character (which must be escaped), or `dst` is full.
            _ => return None,
        }
    }
}

/// Copies the bytes of `src` before the first control character, `"` or `\` to the start of
/// `dst`, one at a time, as far as it holds them; returns how many it copied.
fn copy_plain(src: &[u8], dst: &mut [u8]) -> usize {
    let mut copied = 0;
    for (from, to) in src.iter().zip(dst) {
        if *from < 0x20 || *from == b'"' || *from == b'\\' {
            break;
        }
        *to = *from;
        copied += 1;
    }
    copied
}

/// The byte that the escape `\` `letter` stands for, unless it is `\u` or no escape.
fn decode(letter: u8) -> Option<u8> {
    match DECODE[usize::from(letter)] {
        0 => None,
        byte => Some(byte),
    }
}

/// What each two-character escape stands for, by its letter; 0 for the others.
const DECODE: [u8; 256] = {
    let mut table = [0; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0c;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of the JSON string `raw` (quotes included) and the length `unescape` read, or
    /// `None`; `raw` is followed by more JSON, which must not be read.
    fn decoded(raw: &str) -> Option<(String, usize)> {
        let followed = format!("{raw}, \"more\"]}}");
        let src = followed.as_bytes().get(1..)?;
        let mut dst = vec![b'?'; src.len()];
        let (read, written) = unescape(src, &mut dst)?;
        dst.truncate(written);
        Some((String::from_utf8(dst).expect("utf-8"), read + 1))
    }

    #[test]
    fn two_character_escapes_are_decoded_as_serde_json_does() {
        let long = serde_json::to_string(&"{{/IF}}\n\"é\"\\/".repeat(1000)).expect("json");
        let cases = [
            r#""""#,
            r#""plain""#,
            r#""\"\\\/\b\f\n\r\t""#,
            r#""a\nb""#,
            r#""\n\n""#,
            r#""{{/IF}}\n{{/IF}}\n""#,
            r#""é\t😀 \\n""#,
            r#""ends with a backslash \\""#,
            "\"\u{2028}\u{2029}\u{7f}\u{80}\u{ff}\u{feff}\"",
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
            for end in ["\n", "\"", "\\", "/", "é", "\u{7f}"] {
                let text = format!("{}{end}", "x".repeat(run)).repeat(3);
                let raw = serde_json::to_string(&text).expect("json");
                assert_eq!(decoded(&raw), Some((text, raw.len())), "{raw}");
            }
        }
    }

    #[test]
    fn anything_else_is_left_to_serde_json() {
        let cases = [
            r#""\u0041""#,
            r#""a\ud83d\ude00""#,
            r#""\ud800""#,
            r#""\x""#,
            "\"raw \u{1}\"",
            "\"raw\ttab\"",
            "\"raw\nline feed\"",
        ];
        for raw in cases {
            assert_eq!(decoded(raw), None, "{raw}");
        }
        // Cut short: no closing quote, or a backslash last.
        for raw in ["\"", "\"unterminated", "\"a\\", "\"12345678\\"] {
            let mut dst = vec![0; raw.len()];
            assert_eq!(unescape(&raw.as_bytes()[1..], &mut dst), None, "{raw}");
        }
    }

    #[test]
    fn a_destination_too_short_is_refused() {
        let src = b"0123456789abcdef\\n\"";
        for len in 0..17 {
            let mut dst = vec![0; len];
            assert_eq!(unescape(src, &mut dst), None, "{len}");
        }
        let mut dst = vec![0; 17];
        assert_eq!(unescape(src, &mut dst), Some((19, 17)));
        assert_eq!(dst, b"0123456789abcdef\n");
    }
}
