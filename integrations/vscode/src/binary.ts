// Which pi-rules binary the extension runs, in rust-analyzer's order: the `pi-rules.path`
// setting, else the binary shipped inside this platform's .vsix (`bin/`), else `pi-rules` on PATH.

import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";

export type Source = "setting" | "bundled" | "PATH";

export interface Binary {
  path: string;
  source: Source;
}

const exe = process.platform === "win32" ? "pi-rules.exe" : "pi-rules";

/**
 * The binary to run, or a sentence saying why there is none. `setting` is the `pi-rules.path`
 * value: when set, it is the answer (a wrong path is reported, not silently replaced).
 */
export function findBinary(setting: string, extensionPath: string, env = process.env): Binary | string {
  const configured = setting.trim();
  if (configured !== "") {
    const path = configured === "~" || configured.startsWith("~/") ? join(homedir(), configured.slice(1)) : configured;
    if (isAbsolute(path) && !isExecutableFile(path)) {
      return `\`pi-rules.path\` is ${JSON.stringify(configured)}, which is not an executable file`;
    }
    if (!isAbsolute(path)) {
      const found = onPath(path, env);
      if (found === undefined) return `\`pi-rules.path\` is ${JSON.stringify(configured)}, which is not found on PATH`;
      return { path: found, source: "setting" };
    }
    return { path, source: "setting" };
  }
  const bundled = join(extensionPath, "bin", exe);
  if (isExecutableFile(bundled)) return { path: bundled, source: "bundled" };
  const found = onPath("pi-rules", env);
  if (found !== undefined) return { path: found, source: "PATH" };
  return "no pi-rules binary was found: this extension has none inside it, and there is none on PATH";
}

/** The first executable `name` in an absolute PATH entry; `name` itself when it has a slash. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (name.includes("/") || name.includes("\\")) return isExecutableFile(name) ? name : undefined;
  const names = process.platform === "win32" && !name.endsWith(".exe") ? [`${name}.exe`, name] : [name];
  for (const dir of (env.PATH ?? env.Path ?? "").split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    for (const candidate of names.map((n) => join(dir, n))) {
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (process.platform !== "win32") accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the binary runs and serves the protocol as this extension starts it (`lsp --stdio`;
 * a pi-rules from before the extension refuses `--stdio`): its version, or why not.
 */
export function probe(binary: Binary): Promise<{ version: string } | { problem: string }> {
  return new Promise((resolve) => {
    execFile(binary.path, ["--version"], { timeout: 10_000, windowsHide: true }, (error, stdout, stderr) => {
      if (error) {
        resolve({ problem: `${binary.path} (${describeSource(binary.source)}) does not run: ${firstLine(stderr) || error.message}` });
        return;
      }
      const version = stdout.trim();
      execFile(binary.path, ["lsp", "--stdio", "--help"], { timeout: 10_000, windowsHide: true }, (lspError, _out, lspStderr) => {
        if (lspError) {
          resolve({
            problem: `${binary.path} (${version}, ${describeSource(binary.source)}) cannot serve this extension: \`pi-rules lsp --stdio\` failed: ${firstLine(lspStderr) || lspError.message}`,
          });
        } else {
          resolve({ version });
        }
      });
    });
  });
}

export function describeSource(source: Source): string {
  switch (source) {
    case "setting":
      return "from the pi-rules.path setting";
    case "bundled":
      return "shipped with the extension";
    case "PATH":
      return "found on PATH";
  }
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0]?.replace(/^error: /, "") ?? "";
}
