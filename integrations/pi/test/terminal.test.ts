// The package's escaper against the binary's: the same hostile text goes through both, and what
// the package would show must be what `pi-rules` itself prints on a terminal.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { escapeBytes, escapeLines, escapeText } from "../terminal.js";
import { cli, makeProject, requireServe } from "./harness.ts";

/** Every character the binary escapes, and some it must leave alone, in one string. */
const HOSTILE = [
  ...Array.from({ length: 0x20 }, (_, c) => String.fromCharCode(c)).filter((c) => c !== "\n"),
  "\x7f",
  ...Array.from({ length: 0x20 }, (_, c) => String.fromCharCode(0x80 + c)),
  "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029",
  // Left alone by both: invisible but inert (the lint reports them), and ordinary text.
  "\u200b\ufeff\u{e0041}é漢👨\u200d👩\u200d👧\\x1b `quoted`",
].join("");

/** Raw characters no text shown to the user may hold (the escaped set, LF included). */
const RAW_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

describe("escapeBytes", () => {
  test("valid UTF-8 as escapeText writes it, every other byte as \\xNN", () => {
    const cases: [number[], string][] = [
      [[0x61, 0x1b, 0x5b, 0x32, 0x4a, 0x0a], "a\\x1b[2J\\n"],
      // A lone 0xFF, a lone C1 byte, and C1 and U+202E written in UTF-8.
      [[0xff, 0x9b, 0xc2, 0x9b, 0xe2, 0x80, 0xae], "\\xff\\x9b\\x9b\\u{202e}"],
      // A sequence cut short by an ASCII byte, and one cut short by the end.
      [[0xe2, 0x82, 0x41, 0xf0, 0x9f, 0x98], "\\xe2\\x82A\\xf0\\x9f\\x98"],
      // An overlong '/', an encoded surrogate, a code point past U+10FFFF: none is UTF-8.
      [[0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80], "\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80"],
      // Four-byte and three-byte characters at their edges stay as they are.
      [[0xf0, 0x9f, 0x98, 0x80, 0xf4, 0x8f, 0xbf, 0xbf, 0xef, 0xbf, 0xbd, 0xe0, 0xa0, 0x80], "😀\u{10ffff}\ufffd\u0800"],
      [[], ""],
    ];
    for (const [bytes, expected] of cases) assert.equal(escapeBytes(Buffer.from(bytes)), expected, JSON.stringify(bytes));
  });

  test("valid UTF-8 comes out as escapeText of its text", () => {
    assert.equal(escapeBytes(Buffer.from(HOSTILE, "utf8")), escapeText(HOSTILE));
  });
});

describe("escapeText", () => {
  test("the visible forms", () => {
    const cases: [string, string][] = [
      ["plain name.md", "plain name.md"],
      ["x\x1b]0;OWNED\x07\x1b[2J.md", "x\\x1b]0;OWNED\\x07\\x1b[2J.md"],
      ["a\nb\rc\td\0e\bf", "a\\nb\\rc\\td\\0e\\x08f"],
      ["del\x7f c1\u009b", "del\\x7f c1\\x9b"],
      ["rlo\u202etxt isolate\u2066 alm\u061c sep\u2028\u2029", "rlo\\u{202e}txt isolate\\u{2066} alm\\u{61c} sep\\u{2028}\\u{2029}"],
      ["emoji 👨‍👩‍👧 and CJK 漢字, zwsp\u200b", "emoji 👨‍👩‍👧 and CJK 漢字, zwsp\u200b"],
    ];
    for (const [input, expected] of cases) assert.equal(escapeText(input), expected, JSON.stringify(input));
  });

  test("escaped text holds nothing unsafe, and escaping it again changes nothing", () => {
    const once = escapeText(HOSTILE);
    assert.doesNotMatch(once, RAW_UNSAFE);
    assert.equal(escapeText(once), once);
  });

  test("escapeLines keeps line breaks and escapes the rest", () => {
    assert.equal(escapeLines("one\x1b[2J\ntwo\u202e\n"), "one\\x1b[2J\ntwo\\u{202e}\n");
  });

  test("gives what the binary prints for the same warnings, character for character", () => {
    requireServe();
    // A malformed condition and an unknown requires_setting key: both warnings quote the text.
    const cwd = makeProject({
      ".pi/rules/90-condition.md": `{{IF:x${HOSTILE}}}y{{/IF}}\n`,
      ".pi/rules/91-setting.md": `---\nrequires_setting: k${HOSTILE.replace("\r", "")}\n---\nbody\n`,
    });
    const warnings = JSON.parse(cli(["assemble", "--format", "json", "--cwd", cwd])).warnings as string[];
    assert.equal(warnings.length, 2);
    for (const warning of warnings) assert.ok(warning.includes("\x1b") && warning.includes("\u202e"), "raw in JSON");

    // On stderr, the binary shows each as `rule assembly: MESSAGE`, escaped by its own printer.
    const run = spawnSync(requireServe(), ["assemble", "--cwd", cwd], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    assert.equal(run.status, 0, run.stderr);
    const printed = run.stderr.split("\n").filter((line) => line.startsWith("rule assembly: "));
    assert.deepEqual(
      printed,
      warnings.map((w) => `rule assembly: ${escapeText(w)}`),
    );
  });

  test("gives what the binary prints for a file name with a line break and escapes", () => {
    const name = "92-a\nb\x1b]0;t\x07\u009b\u202e.md";
    const cwd = makeProject({ [`.pi/rules/${name}`]: "body\n" });
    const explained = cli(["explain", "--cwd", cwd]);
    assert.ok(explained.includes(`─ ${escapeText(name)}  included`), explained);
    // The binary's report is escaped already: escaping it line by line leaves it as it is.
    assert.equal(escapeLines(explained), explained);
  });
});
