// The package's own benchmark of an agent turn (issue 37), through the package's client as the
// extension uses it, interleaved in one run so that the shared machine's load falls on all alike:
//
// - turn: `ServeClient.assembleBlock` where nothing changed: `assemble` with `have`, answered
//   `{"unchanged":true}`, the held block used again;
// - version: a bare `version` request, the floor of a round trip through the client;
// - whole: `assemble` without `have`, the whole result (what every turn cost before);
// - one-shot: a `pi-rules assemble --format json` process, from spawn to exit;
// - reference floor: an in-process loader's own reads, in this process: the three layer
//   directories listed and every rule file and the settings file read, as pi-config's loader
//   reads them on every turn (its parsing and assembly left out, so this is less than its turn).
//
// Run: `npm run bench` (PI_RULES_BIN, else the workspace's release or debug build;
// TURN_ROUNDS, default 1000).

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ServeClient } from "../client.ts";

const here = import.meta.dirname;
const repo = resolve(here, "../../..");
const bin =
  process.env.PI_RULES_BIN ||
  ["release", "debug"].map((profile) => join(repo, "target", profile, "pi-rules")).find((path) => existsSync(path));
if (!bin) throw new Error("no pi-rules binary: set PI_RULES_BIN or build one");
const rounds = Number(process.env.TURN_ROUNDS ?? 1000);

// The typical project of scripts/serve_latency.py, and an empty HOME.
const root = mkdtempSync(join(tmpdir(), "pi-rules-turn-bench-"));
const cwd = join(root, "app");
const home = join(root, "home");
mkdirSync(join(cwd, ".pi", "rules"), { recursive: true });
mkdirSync(join(cwd, ".git"), { recursive: true });
mkdirSync(home, { recursive: true });
writeFileSync(join(cwd, ".git", "HEAD"), "ref: refs/heads/main\n");
writeFileSync(join(cwd, ".pi", "pi-config-settings.jsonc"), '{\n  // the team\'s settings\n  "dco": true,\n  "use_worktrees": true\n}\n');
writeFileSync(join(cwd, ".pi", "rules", "90-team.md"), "# Team\n\n{{IF:dco}}Sign off every commit.{{/IF}}\n\nKeep changes small.\n");
writeFileSync(join(cwd, ".pi", "rules", "95-deploy.md"), "# Deploy\n\nDeploy from main only, after review.\n");
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
const client = new ServeClient({ resolveBinary: () => bin, env });
const params = { cwd, coms_active: false, confine: true };

/** The reference's own reads on a turn: its layers listed, each rule file and the settings file read. */
function referenceReads(): number {
  let bytes = 0;
  for (const dir of [join(repo, "rules"), join(home, ".pi", "agent", "rules"), join(cwd, ".pi", "rules")]) {
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => name.endsWith(".md")).sort();
    } catch {
      continue;
    }
    for (const name of names) bytes += readFileSync(join(dir, name), "utf8").length;
  }
  bytes += readFileSync(join(cwd, ".pi", "pi-config-settings.jsonc"), "utf8").length;
  return bytes;
}

async function timed(work: () => unknown): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

// Files settle (stamps of files changed within two seconds before a run are not trusted).
await new Promise((done) => setTimeout(done, 2100));
const first = await client.assembleBlock(params);
const second = await client.assembleBlock(params);
if (first.unchanged || !second.unchanged || second.block !== first.block) throw new Error("the unchanged turn did not happen");

const labels = ["turn, unchanged", "version", "assemble, whole", "one-shot assemble process", "reference floor (in process)"];
const samples: number[][] = labels.map(() => []);
const warm = Math.min(50, rounds);
for (let round = 0; round < warm + rounds; round++) {
  // Each measurement in turn goes first, so that none always follows the one-shot process (the
  // server's pipe then wakes a CPU that went idle while it ran).
  const work: (() => unknown)[] = [
    () => client.assembleBlock(params),
    () => client.request("version"),
    () => client.request("assemble", params),
    () => {
      const run = spawnSync(bin, ["assemble", "--format", "json", "--cwd", cwd], { env, maxBuffer: 1 << 24 });
      if (run.status !== 0) throw new Error("one-shot assemble failed");
    },
    referenceReads,
  ];
  const row: number[] = new Array(work.length);
  for (let step = 0; step < work.length; step++) {
    const at = (round + step) % work.length;
    row[at] = await timed(work[at]);
  }
  if (round >= warm) row.forEach((value, at) => samples[at].push(value));
}
// The same two requests alone, alternated: a session between two turns, where nothing else
// opens the rule files (each open in a watched directory wakes the server's watcher thread).
const alone: number[][] = [[], []];
for (let round = 0; round < warm + rounds; round++) {
  const turnUs = await timed(() => client.assembleBlock(params));
  const versionUs = await timed(() => client.request("version"));
  if (round >= warm) {
    alone[0].push(turnUs);
    alone[1].push(versionUs);
  }
}
await client.close();
if (client.turns.whole !== 1) throw new Error(`a turn was answered whole: ${JSON.stringify(client.turns)}`);

const medians = samples.map(median);
console.log(`binary: ${bin}\n${rounds} rounds, interleaved`);
labels.forEach((label, at) => {
  const s = samples[at];
  console.log(`${label.padEnd(32)} median ${medians[at].toFixed(1).padStart(9)} µs   p10 ${percentile(s, 0.1).toFixed(1).padStart(9)}   p90 ${percentile(s, 0.9).toFixed(1).padStart(9)}`);
});
const [turn, version, whole, oneShot, reference] = medians;
const [turnAlone, versionAlone] = alone.map(median);
console.log(`turn, unchanged, alone            median ${turnAlone.toFixed(1).padStart(9)} µs   version alone ${versionAlone.toFixed(1)} µs`);
console.log(`turn / one-shot process:   ${(turn / oneShot).toFixed(4)}   (target <= 0.015)`);
console.log(`turn / reference floor:    ${(turn / reference).toFixed(3)}   (the reference's whole turn is more; target <= 0.1 of it)`);
console.log(`turn / reference's turn:   ${(turn / 792).toFixed(3)}–${(turn / 650).toFixed(3)}   (its published 650–792 µs)`);
console.log(`turn / version:            ${(turn / version).toFixed(2)}   (alone: ${(turnAlone / versionAlone).toFixed(2)})`);
console.log(`turn alone / one-shot:     ${(turnAlone / oneShot).toFixed(4)}`);
console.log(`turn alone / ref. floor:   ${(turnAlone / reference).toFixed(3)}`);
console.log(`turn / whole assemble:     ${(turn / whole).toFixed(3)}`);
