// The pi end-to-end test once more, against the package as users get it: the npm tarballs of
// `scripts/npm-pack` installed into a folder (./run-tests does that and passes the folder as
// PI_RULES_INSTALLED). The extension must find the binary in the platform package by itself:
// no PI_RULES_BIN, and no pi-rules on PATH. Not a `*.test.ts` file: it needs that folder, so
// ./run-tests runs it by name.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { test } from "node:test";
import { pathBinary, platformPackage } from "../binary.js";
import { asSection, cliBlock, eventually, childrenNamed, makeProject, startSession, withEnv } from "./harness.ts";
import { SECTION } from "../index.ts";

const installed = process.env.PI_RULES_INSTALLED;
if (!installed) throw new Error("set PI_RULES_INSTALLED to the folder the tarballs were installed into");
const extensionDir = join(installed, "node_modules", "pi-rules");

test("the installed package gives the model the block, with the binary from its platform package", async () => {
  assert.ok(existsSync(join(installed, "node_modules", platformPackage(), "bin", "pi-rules")), "no platform package");
  const cwd = makeProject({ ".pi/rules/90-project.md": "Installed from the tarballs.\n" });
  const expected = asSection(SECTION, cliBlock(cwd));
  const path = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => pathBinary({ PATH: dir }) === undefined)
    .join(delimiter);
  await withEnv({ PI_RULES_BIN: undefined, PATH: path }, async () => {
    assert.equal(pathBinary(), undefined);
    const h = await startSession(cwd, { extensionDir });
    try {
      await h.prompt("hello");
      assert.deepEqual(h.errors, []);
      assert.ok(h.lastSystemPrompt().includes(expected), h.lastSystemPrompt());
      assert.ok(h.lastSystemPrompt().includes("Installed from the tarballs."));
    } finally {
      h.dispose();
    }
    assert.ok(await eventually(() => childrenNamed("pi-rules").length === 0), "a pi-rules child outlived the session");
  });
});
