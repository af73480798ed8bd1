// The extension's settings, read in one place, and the CLI flags and server options they become.

import { isAbsolute, join } from "node:path";
import * as vscode from "vscode";

export const SECTION = "pi-rules";

/** The settings that change what the server or the CLI is started with. */
export const SERVER_SETTINGS = ["path", "packageDir", "comsActive", "confine", "strict"].map((key) => `${SECTION}.${key}`);

export interface Settings {
  path: string;
  packageDir: string;
  comsActive: boolean;
  confine: boolean;
  strict: boolean;
}

export function read(scope?: vscode.ConfigurationScope): Settings {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return {
    path: config.get<string>("path", ""),
    packageDir: config.get<string>("packageDir", ""),
    comsActive: config.get<boolean>("comsActive", false),
    confine: config.get<boolean>("confine", false),
    strict: config.get<boolean>("strict", false),
  };
}

/** The package directory for `folder`, absolute (a relative one is the folder's, as the server reads it). */
export function packageDir(settings: Settings, folder: string): string | undefined {
  const dir = settings.packageDir.trim();
  if (dir === "") return undefined;
  return isAbsolute(dir) ? dir : join(folder, dir);
}

/** The server's initializationOptions (`pi-rules lsp --help` names them). */
export function initializationOptions(settings: Settings): Record<string, unknown> {
  const dir = settings.packageDir.trim();
  return {
    packageDir: dir === "" ? null : dir,
    comsActive: settings.comsActive,
    confine: settings.confine,
    strict: settings.strict,
  };
}

/** Which of the flags a CLI command takes (each command's `--help` lists its own). */
export interface Takes {
  packageDir?: boolean;
  comsActive?: boolean;
  confine?: boolean;
  strict?: boolean;
}

/** The CLI flags for `settings` that a command taking `takes` accepts, for a run in `folder`. */
export function flags(settings: Settings, folder: string, takes: Takes): string[] {
  const out: string[] = [];
  const dir = packageDir(settings, folder);
  if (takes.packageDir && dir !== undefined) out.push("--package-dir", dir);
  if (takes.comsActive && settings.comsActive) out.push("--coms-active");
  if (takes.confine && settings.confine) out.push("--confine");
  if (takes.strict && settings.strict) out.push("--strict");
  return out;
}
