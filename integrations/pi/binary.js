// Where the pi-rules binary is: shared by the launcher (`bin/pi-rules`) and the pi extension.
// Plain JavaScript, so that the launcher runs on any Node without a type-stripping step.

import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, isAbsolute, join } from "node:path";

/**
 * The platform packages, by `${process.platform}-${process.arch}` (and the C library on Linux).
 * Each holds the binary at `bin/pi-rules` (`bin/pi-rules.exe` on Windows). `scripts/npm-pack`
 * reads this table to write their manifests, so the names live in one place.
 */
export const PLATFORMS = {
  "linux-x64-gnu": { os: "linux", cpu: "x64", libc: "glibc", target: "x86_64-unknown-linux-gnu" },
  "linux-arm64-gnu": { os: "linux", cpu: "arm64", libc: "glibc", target: "aarch64-unknown-linux-gnu" },
  "linux-x64-musl": { os: "linux", cpu: "x64", libc: "musl", target: "x86_64-unknown-linux-musl" },
  "darwin-x64": { os: "darwin", cpu: "x64", target: "x86_64-apple-darwin" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", target: "aarch64-apple-darwin" },
  "win32-x64": { os: "win32", cpu: "x64", target: "x86_64-pc-windows-msvc" },
};

/** The platform key of this process, e.g. `linux-x64-gnu`; it may name no package in the table. */
export function platformKey() {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform !== "linux") return base;
  // glibc reports its version; musl does not.
  const header = process.report?.getReport?.().header;
  return `${base}-${header?.glibcVersionRuntime ? "gnu" : "musl"}`;
}

/** The npm package that holds the binary for `key`. */
export function platformPackage(key = platformKey()) {
  return `@pi-rules/cli-${key}`;
}

/** The binary inside this platform's package when it is installed, else undefined. */
export function packagedBinary(key = platformKey()) {
  const require = createRequire(import.meta.url);
  let manifest;
  try {
    manifest = require.resolve(`${platformPackage(key)}/package.json`);
  } catch {
    return undefined;
  }
  const file = join(dirname(manifest), "bin", key.startsWith("win32") ? "pi-rules.exe" : "pi-rules");
  return isExecutableFile(file) ? file : undefined;
}

/** The first executable `pi-rules` in an absolute `PATH` entry (relative and empty ones skipped). */
export function pathBinary(env = process.env) {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    for (const name of process.platform === "win32" ? ["pi-rules.exe", "pi-rules"] : ["pi-rules"]) {
      const candidate = join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** `PI_RULES_BIN` when set and non-empty, used as given. */
export function explicitBinary(env = process.env) {
  const explicit = env.PI_RULES_BIN;
  return explicit !== undefined && explicit !== "" ? explicit : undefined;
}

function isExecutableFile(path) {
  try {
    if (!statSync(path).isFile()) return false;
    if (process.platform !== "win32") accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
