// What reaches the user's terminal: text that came from a rule file, a setting, the environment or
// the binary's stderr is shown with its unsafe characters written visibly, in the same forms the
// binary's own printers use (src/terminal.rs `escape`), so that a rule condition
// holding `ESC ] 0 ; … BEL` cannot retitle the terminal through a pi notification, and a newline
// inside a quoted value cannot forge a line of its own.

/**
 * The characters that must not reach a terminal as themselves: C0 controls (tab and newline
 * included), DEL, C1 controls, the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
 * U+2066–U+2069), and the line and paragraph separators. The same set as the binary's `is_unsafe`.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

function visibleForm(c: string): string {
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
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
}

/**
 * `text` with every unsafe character written visibly: `\n`, `\r`, `\t`, `\0`; `\x1b` (two lower
 * hex digits) for the other C0 controls, DEL and the C1 controls; `\u{202e}` (lower hex) for the
 * rest. Everything else, emoji and every script included, is left as it is.
 */
export function escapeText(text: string): string {
  return text.replace(UNSAFE, visibleForm);
}

/**
 * A multi-line text (a report the binary printed) escaped line by line: its LF line breaks stay
 * line breaks, and every other unsafe character is written as `escapeText` writes it. The binary's
 * reports are escaped already, and escaping escaped text changes nothing, so this only matters
 * when something got through.
 */
export function escapeLines(text: string): string {
  return text.split("\n").map(escapeText).join("\n");
}
