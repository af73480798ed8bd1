// The npm launcher, `bin/pi-rules`, run as users run it: from a copy of the package in a
// node_modules folder, with fake binaries (shell scripts) in the platform package's place or in
// PI_RULES_BIN. It must pass exit codes and signals through, prefer PI_RULES_BIN, and say what
// is missing when the platform package is not there.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { platformKey, platformPackage } from "../binary.js";

const PACKAGE_DIR = resolve(import.meta.dirname, "..");
const root = mkdtempSync(join(tmpdir(), "pi-rules-launcher-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A node_modules folder holding the package, and the platform package when `packaged` is given. */
function install(name: string, packaged?: string): string {
  const modules = join(root, name, "node_modules");
  const pkg = join(modules, "pi-rules");
  mkdirSync(join(pkg, "bin"), { recursive: true });
  for (const file of ["package.json", "binary.js", "terminal.js", "bin/pi-rules"]) cpSync(join(PACKAGE_DIR, file), join(pkg, file));
  if (packaged !== undefined) {
    const platform = join(modules, platformPackage());
    mkdirSync(join(platform, "bin"), { recursive: true });
    writeFileSync(join(platform, "package.json"), JSON.stringify({ name: platformPackage(), version: "0.0.0" }));
    script(join(platform, "bin", "pi-rules"), packaged);
  }
  return join(pkg, "bin", "pi-rules");
}

function script(path: string, body: string): string {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

function launch(launcher: string, args: string[], env: Record<string, string | undefined> = {}) {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete merged[key];
  return spawnSync(process.execPath, [launcher, ...args], { encoding: "utf8", env: merged });
}

describe("the launcher", () => {
  test("runs the platform package's binary with the arguments, and passes its exit code", () => {
    const launcher = install("packaged", 'echo "packaged $*"; echo err >&2; exit 3');
    const run = launch(launcher, ["check", "a b"], { PI_RULES_BIN: undefined });
    assert.equal(run.stdout, "packaged check a b\n");
    assert.equal(run.stderr, "err\n");
    assert.equal(run.status, 3);
  });

  test("PI_RULES_BIN comes first, even with the platform package installed", () => {
    const launcher = install("both", 'echo packaged');
    const explicit = script(join(root, "explicit"), 'echo "explicit $*"');
    const run = launch(launcher, ["--version"], { PI_RULES_BIN: explicit });
    assert.equal(run.stdout, "explicit --version\n");
    assert.equal(run.status, 0);
  });

  test("a binary killed by a signal: exit 128 + its number", () => {
    const selfKill = script(join(root, "self-term"), "kill -TERM $$");
    const run = launch(install("signal"), [], { PI_RULES_BIN: selfKill });
    assert.equal(run.status, 128 + 15);
    const interrupted = script(join(root, "self-int"), "kill -KILL $$");
    assert.equal(launch(install("signal"), [], { PI_RULES_BIN: interrupted }).status, 128 + 9);
  });

  test("without the platform package: which package, what to do, exit 1", () => {
    const run = launch(install("missing"), ["--version"], { PI_RULES_BIN: undefined });
    assert.equal(run.status, 1);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, new RegExp(`the binary for this platform \\(${platformKey()}\\) is not installed`));
    assert.ok(run.stderr.includes(platformPackage()), run.stderr);
    assert.match(run.stderr, /--omit=optional/);
    assert.match(run.stderr, /PI_RULES_BIN/);
  });

  test("a PI_RULES_BIN that cannot be run: said with its escapes shown, exit 1", () => {
    const hostile = join(root, "no-such\x1b]0;t\x07\u009b\u202e\npi-rules");
    const run = launch(install("hostile"), [], { PI_RULES_BIN: hostile });
    assert.equal(run.status, 1);
    assert.equal(run.stdout, "");
    assert.doesNotMatch(run.stderr.trimEnd(), /[\u0000-\u001f\u007f-\u009f\u202e]/u);
    const shown = join(root, "no-such\\x1b]0;t\\x07\\x9b\\u{202e}\\npi-rules");
    assert.ok(run.stderr.startsWith(`pi-rules: cannot run ${shown}: `), run.stderr);
    assert.match(run.stderr, /ENOENT\n$/);
  });

  for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
    test(`${signal} to the launcher goes on to the binary, and the launcher exits as it does`, async () => {
      // A long-running command (`pi-rules watch`, `lsp`) that says what it got and exits 7.
      const body = `trap 'echo "got ${signal}"; exit 7' ${signal.slice(3)}\necho "ready $$"\nwhile :; do sleep 0.05; done`;
      const launcher = install(`forward-${signal}`, body);
      const run = spawn(process.execPath, [launcher], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, PI_RULES_BIN: "" } });
      // On `exit`: an orphaned binary would hold the pipe, and `close` never come.
      const ended = new Promise<number | NodeJS.Signals | null>((done) => run.on("exit", (status, sig) => done(sig ?? status)));
      let stdout = "";
      run.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
      let pid = 0;
      try {
        const deadline = Date.now() + 10_000;
        while (!(pid = Number(/^ready ([0-9]+)\n/.exec(stdout)?.[1] ?? 0)) && Date.now() < deadline) await sleep(20);
        assert.ok(pid > 0, `the binary never started: ${stdout}`);
        run.kill(signal);
        assert.equal(await ended, 7, `the launcher did not exit as the binary did: ${stdout}`);
        const gone = () => {
          try {
            process.kill(pid, 0);
            return false;
          } catch {
            return true;
          }
        };
        assert.ok(gone(), "the binary outlived its launcher");
        // The binary's last line may come after the launcher's exit.
        for (const until = Date.now() + 2000; !stdout.endsWith(`got ${signal}\n`) && Date.now() < until; ) await sleep(20);
        assert.match(stdout, new RegExp(`got ${signal}\n$`));
      } finally {
        run.kill("SIGKILL");
        if (pid > 0) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // Gone, as it should be.
          }
        }
      }
    });
  }

  test("an empty PI_RULES_BIN counts as unset", () => {
    const launcher = install("empty", "echo packaged");
    assert.equal(launch(launcher, [], { PI_RULES_BIN: "" }).stdout, "packaged\n");
  });
});
