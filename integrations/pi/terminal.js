// What reaches the user's terminal: text that came from a rule file, a setting, the environment or
// the binary's output is shown with its unsafe characters written visibly, in the same forms the
// binary's own printers use (crates/pi-rules-host/src/escape.rs), so that a rule condition
// holding `ESC ] 0 ; … BEL` cannot retitle the terminal through a pi notification, and a newline
// inside a quoted value cannot forge a line of its own. Plain JavaScript, so that the launcher
// (`bin/pi-rules`) shares it with the extension.

/**
 * The characters that must not reach a terminal as themselves: C0 controls (tab and newline
 * included), DEL, C1 controls, the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
 * U+2066–U+2069), and the line and paragraph separators. The same set as the binary's `is_unsafe`.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** @param {string} c */
function visibleForm(c) {
  switch (c) {
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
    case "\0":
      return "\\0";
  }
  const code = c.codePointAt(0) ?? 0;
  return code < 0x100 ? `\\x${hex2(code)}` : `\\u{${code.toString(16)}}`;
}

/** @param {number} byte */
function hex2(byte) {
  return byte.toString(16).padStart(2, "0");
}

/**
 * `text` with every unsafe character written visibly: `\n`, `\r`, `\t`, `\0`; `\x1b` (two lower
 * hex digits) for the other C0 controls, DEL and the C1 controls; `\u{202e}` (lower hex) for the
 * rest. Everything else, emoji and every script included, is left as it is.
 * @param {string} text
 * @returns {string}
 */
export function escapeText(text) {
  return text.replace(UNSAFE, visibleForm);
}

/**
 * A multi-line text (a report the binary printed) escaped line by line: its LF line breaks stay
 * line breaks, and every other unsafe character is written as `escapeText` writes it. The binary's
 * reports are escaped already, and escaping escaped text changes nothing, so this only matters
 * when something got through.
 * @param {string} text
 * @returns {string}
 */
export function escapeLines(text) {
  return text.split("\n").map(escapeText).join("\n");
}

/**
 * Bytes a program printed (the binary's stderr, a line that is not JSON), as `escapeText` writes
 * their text, with every byte that is not part of valid UTF-8 written as `\xNN`, as the binary
 * writes such bytes (a lone `0x9b` is a control sequence to some terminals; decoding it to U+FFFD
 * would hide what was there).
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function escapeBytes(bytes) {
  const decoder = new TextDecoder();
  let out = "";
  let start = 0;
  let at = 0;
  while (at < bytes.length) {
    const length = sequenceAt(bytes, at);
    if (length > 0) {
      at += length;
      continue;
    }
    out += escapeText(decoder.decode(bytes.subarray(start, at))) + `\\x${hex2(bytes[at])}`;
    at += 1;
    start = at;
  }
  return out + escapeText(decoder.decode(bytes.subarray(start)));
}

/**
 * The length of the well-formed UTF-8 sequence starting at `at` (Unicode's table 3-7: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0 when none starts there.
 * @param {Uint8Array} bytes
 * @param {number} at
 */
function sequenceAt(bytes, at) {
  const lead = bytes[at];
  if (lead < 0x80) return 1;
  let length = 0;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return 0;
  if (at + length > bytes.length || bytes[at + 1] < low || bytes[at + 1] > high) return 0;
  for (let next = at + 2; next < at + length; next++) if ((bytes[next] & 0xc0) !== 0x80) return 0;
  return length;
}
