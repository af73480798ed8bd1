// The pi end-to-end test once more, against the package as users get it, installed the way a pi
// user installs it: pi's own `pi install`, from the npm tarballs of `scripts/npm-pack` (./run-tests
// passes their folder as PI_RULES_TARBALLS), into a temporary pi agent directory, offline. The
// extension must find the binary in the platform package by itself: no PI_RULES_BIN, and no
// pi-rules on PATH. Not a `*.test.ts` file: it needs the tarballs, so ./run-tests runs it by name.
//
// How pi takes a tarball (its docs/packages.md lists npm, git, URL and local-path sources):
// `pi install npm:NAME@file:TARBALL` runs `npm install NAME@file:TARBALL --prefix AGENT/npm
// --legacy-peer-deps` and records `npm:NAME@file:TARBALL` in the agent's settings.json, which the
// loader finds at AGENT/npm/node_modules/NAME, as `npm:pi-rules` from the registry would be.
// `pi install ./x.tgz` is a local path (a file is loaded as one extension), and `npm:/x.tgz`
// installs, but the loader looks for it under node_modules/<the whole path> and loads nothing.
// The platform package comes from the registry as pi-rules' optional dependency; offline it is
// installed from its own tarball first, by `pi install` too.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { pathBinary, platformPackage } from "../binary.js";
import { asSection, cliBlock, eventually, childrenNamed, makeProject, startSession, withEnv } from "./harness.ts";
import { SECTION } from "../index.ts";

const tarballs = process.env.PI_RULES_TARBALLS;
if (!tarballs) throw new Error("set PI_RULES_TARBALLS to the folder scripts/npm-pack wrote the tarballs to");
const version: string = JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")).version;

/** pi's command line, as installed with this package's development dependencies. */
const piCli = (() => {
  const name = "@earendil-works/pi-coding-agent";
  // Its package.json is not exported: found from its main module, up.
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  while (!existsSync(join(dir, "package.json")) || JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name !== name) {
    assert.notEqual(dirname(dir), dir, `no package.json of ${name}`);
    dir = dirname(dir);
  }
  const bin = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).bin.pi as string;
  return join(dir, bin);
})();

/** `pi ARGS` with `agentDir` as its agent directory, offline (pi's and npm's switches). */
function pi(agentDir: string, args: string[]): string {
  const run = spawnSync(process.execPath, [piCli, ...args], {
    encoding: "utf8",
    env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", npm_config_offline: "true" },
    timeout: 120_000,
  });
  assert.equal(run.status, 0, `pi ${args.join(" ")}: ${run.error?.message ?? ""}\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

test("pi install of the tarballs gives the model the block, with the binary from the platform package", async () => {
  const agentDir = mkdtempSync(join(tmpdir(), "pi-rules-pi-install-"));
  try {
    const platform = platformPackage();
    const sources = [
      `npm:${platform}@file:${join(tarballs, `${platform.slice(1).replace("/", "-")}-${version}.tgz`)}`,
      `npm:pi-rules@file:${join(tarballs, `pi-rules-${version}.tgz`)}`,
    ];
    for (const source of sources) pi(agentDir, ["install", source]);
    const npmRoot = join(agentDir, "npm", "node_modules");
    assert.ok(existsSync(join(npmRoot, platform, "bin", "pi-rules")), "no platform package");
    assert.ok(existsSync(join(npmRoot, "pi-rules", "index.ts")), "no pi-rules package");
    // Only what users get: the development manifest's test dependencies are not there.
    assert.ok(!existsSync(join(npmRoot, "@earendil-works")), "pi's own packages were installed");
    const listed = pi(agentDir, ["list"]);
    assert.ok(listed.includes(join(npmRoot, "pi-rules")), listed);

    const cwd = makeProject({ ".pi/rules/90-project.md": "Installed with pi install.\n" });
    const expected = asSection(SECTION, cliBlock(cwd));
    const path = (process.env.PATH ?? "")
      .split(delimiter)
      .filter((dir) => pathBinary({ PATH: dir }) === undefined)
      .join(delimiter);
    await withEnv({ PI_RULES_BIN: undefined, PATH: path, PI_OFFLINE: "1" }, async () => {
      assert.equal(pathBinary(), undefined);
      const h = await startSession(cwd, { agentDir });
      try {
        await h.prompt("hello");
        assert.deepEqual(h.errors, []);
        assert.ok(h.lastSystemPrompt().includes(expected), h.lastSystemPrompt());
        assert.ok(h.lastSystemPrompt().includes("Installed with pi install."));
      } finally {
        h.dispose();
      }
      assert.ok(await eventually(() => childrenNamed("pi-rules").length === 0), "a pi-rules child outlived the session");
    });
  } finally {
    rmSync(agentDir, { recursive: true, force: true });
  }
});
