// The extension's pieces that need no editor: the binary lookup and the explain report's cut,
// the latter on what the real CLI prints (PI_RULES_BIN, else `pi-rules` on PATH).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findBinary } from "../src/binary";
import { formatTokens, lastLine, ruleReport } from "../src/text";

const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-rules-vscode-")));

function executable(path: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, "#!/bin/sh\n");
  chmodSync(path, 0o755);
  return path;
}

test("the binary: the setting, else the one in the extension, else PATH", () => {
  const extension = join(root, "ext");
  const onPath = executable(join(root, "path-dir", "pi-rules"));
  const env = { PATH: join(root, "path-dir") };
  assert.deepEqual(findBinary("", extension, env), { path: onPath, source: "PATH" });
  const bundled = executable(join(extension, "bin", "pi-rules"));
  assert.deepEqual(findBinary("", extension, env), { path: bundled, source: "bundled" });
  const mine = executable(join(root, "mine", "pi-rules"));
  assert.deepEqual(findBinary(mine, extension, env), { path: mine, source: "setting" });
  // A setting that names no binary is said, not replaced by another binary.
  const missing = findBinary(join(root, "nowhere", "pi-rules"), extension, env);
  assert.equal(typeof missing, "string");
  assert.match(missing as string, /pi-rules\.path/);
  // Nothing anywhere: a sentence, not a path.
  assert.equal(typeof findBinary("", join(root, "no-ext"), { PATH: join(root, "empty") }), "string");
});

test("explain's report cut to the open rule: its entry between the head and the tail", () => {
  const project = join(root, "project");
  mkdirSync(join(project, ".git"), { recursive: true });
  mkdirSync(join(project, ".pi", "rules"), { recursive: true });
  writeFileSync(join(project, ".pi", "rules", "91-first.md"), "{{IF:dco}}\nsigned\n{{/IF}}\n");
  writeFileSync(join(project, ".pi", "rules", "92-second.md"), "Plain.\n");
  const bin = process.env.PI_RULES_BIN || "pi-rules";
  const report = execFileSync(bin, ["explain", "--cwd", project], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: join(root, "home") },
  });
  const first = ruleReport(report, "91-first.md");
  assert.ok(first !== undefined);
  const lines = first.split("\n");
  const entries = lines.filter((l) => l.startsWith("├─ ") || l.startsWith("└─ "));
  assert.equal(entries.length, 1, first);
  assert.match(entries[0]!, /^├─ 91-first\.md +included +project /);
  // Its block, from the report, and none of the other files' lines.
  assert.ok(lines.some((l) => l.includes("{{IF:dco}} dropped")), first);
  assert.ok(!first.includes("92-second.md"));
  assert.ok(!first.includes("00-orchestrator-core.md"));
  // The head and the tail, as the report has them.
  const all = report.split("\n");
  assert.equal(lines[0], all[0]);
  assert.equal(lines.at(-2), all.at(-2));
  assert.match(lines.at(-2)!, /^total: /);
  // The last entry (└─) is cut the same way, and a name with no entry gives nothing.
  const last = ruleReport(report, "92-second.md");
  assert.ok(last !== undefined && last.includes("└─ 92-second.md") && !last.includes("91-first.md"));
  assert.equal(ruleReport(report, "93-none.md"), undefined);
});

test("tokens in the status bar, and the CLI's last line", () => {
  assert.equal(formatTokens(512), "512");
  assert.equal(formatTokens(7825), "7.8k");
  assert.equal(formatTokens(12000), "12k");
  assert.equal(formatTokens(250_400), "250k");
  assert.equal(lastLine("a\npi-rules: error: no target given\n"), "error: no target given");
});
