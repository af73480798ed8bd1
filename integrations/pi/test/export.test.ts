// `pi-rules export agents-md` read by a real agent: a pi session with pi's own context files on
// and this package's extension not loaded, so that the only way the rules reach the model is the
// AGENTS.md file the binary wrote. The faux model records the system prompt pi sends it.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cliBlock, makeProject, requireServe, startSession } from "./harness.ts";

const RULE = "# Release rule\n\nTag every release as vMAJOR.MINOR.PATCH.\n";
const HAND = "# Notes for agents\n\nThe build is `make`.\n";

/** Runs `pi-rules ARGS`, asserting exit 0, and returns stdout. */
function run(args: string[]): string {
  const result = spawnSync(requireServe(), args, { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

test("pi reads the block `pi-rules export agents-md` wrote into AGENTS.md", async () => {
  const cwd = makeProject({ ".pi/rules/90-release.md": RULE, "AGENTS.md": HAND });
  assert.equal(run(["export", "agents-md", "--cwd", cwd]), "AGENTS.md\n");
  const file = readFileSync(join(cwd, "AGENTS.md"), "utf8");
  assert.ok(file.startsWith(HAND), file);
  // What export wrote is the block `assemble` prints with export's selection: the project layer
  // alone (the package rules are pi's orchestrator's), the project settings file.
  const block = cliBlock(cwd, ["--layers", "project", "--settings", "project", "--confine"]).replace(/^\n\n/, "");
  assert.ok(block.includes("Tag every release"), block);
  assert.ok(file.includes(block), "AGENTS.md holds the assembled block");

  const harness = await startSession(cwd, { contextFiles: true, extension: false });
  try {
    await harness.prompt("hello");
    const prompt = harness.lastSystemPrompt();
    // pi put the file in the system prompt: the hand-written text, the markers and the block.
    assert.ok(prompt.includes(HAND.trimEnd()), prompt);
    assert.ok(prompt.includes("<!-- pi-rules:begin"), prompt);
    assert.ok(prompt.includes(block.trimEnd()), "the system prompt holds the exported block");
    // Once: the extension, which would append the block itself, is not loaded.
    assert.equal(prompt.split("Tag every release").length - 1, 1, prompt);
    // And none of the package rules: they are written for pi's orchestrator, not for AGENTS.md.
    assert.ok(!prompt.includes("You are the orchestrator"), prompt);
  } finally {
    harness.dispose();
  }

  // The control: with pi's context files off and no extension, the rule is nowhere.
  const bare = await startSession(cwd, { contextFiles: false, extension: false });
  try {
    await bare.prompt("hello");
    assert.ok(!bare.lastSystemPrompt().includes("Tag every release"));
  } finally {
    bare.dispose();
  }
});
