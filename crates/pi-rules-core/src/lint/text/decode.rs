//! Decoding a rule file as the loader does, reporting each invalid UTF-8 sequence (PR502).

use crate::lint::codes::Code;
use crate::lint::diagnostic::FileDiagnostics;
use std::borrow::Cow;

/// Decodes `bytes` the way the loader does (invalid sequences become U+FFFD, a BOM is kept) and
/// reports each invalid sequence with its byte offset in the file.
pub(crate) fn decode<'b>(bytes: &'b [u8], out: &mut FileDiagnostics) -> Cow<'b, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut raw = 0;
    let mut decoded = 0;
    for chunk in bytes.utf8_chunks() {
        raw += chunk.valid().len();
        decoded += chunk.valid().len();
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        let span = decoded..decoded + '\u{fffd}'.len_utf8();
        if let Some(d) = out.report(Code::InvalidUtf8, Some(span)) {
            let shown: Vec<String> = invalid.iter().map(|b| format!("\\x{b:02X}")).collect();
            d.message(format!(
                "invalid UTF-8 at byte {raw}: `{}` is read as U+FFFD",
                shown.join("")
            ))
            .label("the model sees `\u{fffd}` here")
            .help("re-save the file as UTF-8");
        }
        raw += invalid.len();
        decoded += '\u{fffd}'.len_utf8();
    }
    String::from_utf8_lossy(bytes)
}
