// `npm run bench`'s runner: the benchmark needs Node 22's type stripping, as the tests do (see
// test/run.js): the Node 22 of test/node22 when it is installed, else this Node when new enough.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const here = import.meta.dirname ?? new URL(".", import.meta.url).pathname;
const local = join(here, "..", "test", "node22", "node_modules", ".bin", "node");
const [major, minor] = process.versions.node.split(".").map(Number);
const node = existsSync(local) ? local : major > 22 || (major === 22 && minor >= 19) ? process.execPath : undefined;
if (node === undefined) {
  process.stderr.write(`the benchmark needs Node >= 22.19 (this is ${process.version}): run \`npm ci\` in test/node22\n`);
  process.exit(1);
}
const run = spawnSync(node, [join(here, "turn.ts")], { stdio: "inherit" });
process.exit(run.status ?? 1);
