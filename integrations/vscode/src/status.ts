// The status bar item: the rules block's size in estimated tokens and its rule count, red when an
// export is stale or `check` has errors. Shown for a folder with pi rules or pi-rules' own
// configuration (which is where the exports are configured).

import * as vscode from "vscode";
import type { Tool } from "./binaryCheck";
import { run } from "./cli";
import * as settings from "./settings";
import { formatTokens, lastLine } from "./text";

const DEBOUNCE_MS = 400;

/** What the item shows, from three runs of the CLI. */
export interface Facts {
  tokens: number;
  rules: number;
  files: number;
  /** `export --check` failed: an export is stale (undefined: no export configured or made). */
  staleExports: string | undefined;
  errors: number;
  warnings: number;
}

export class Status implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("pi-rules.status", vscode.StatusBarAlignment.Left, 10);
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  /** The folder the item was last refreshed for. */
  private shown: string | undefined;

  constructor(
    private readonly tool: Tool,
    private readonly log: vscode.LogOutputChannel,
    private readonly folderOf: () => vscode.WorkspaceFolder | undefined,
  ) {
    this.item.name = "pi-rules";
    this.item.command = "pi-rules.explain";
  }

  /** Refreshes when the active editor moved to another workspace folder. */
  editorChanged(): void {
    if (this.folderOf()?.uri.toString() !== this.shown) this.schedule();
  }

  /** Refreshes after a pause: a burst of saves runs the CLI once. */
  schedule(delay = DEBOUNCE_MS): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, delay);
  }

  private async refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      await this.update();
    } catch (error) {
      this.log.error(`status: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.schedule(0);
      }
    }
  }

  private async update(): Promise<void> {
    const folder = this.folderOf();
    this.shown = folder?.uri.toString();
    if (folder === undefined || !(await hasRules(folder))) {
      this.item.hide();
      return;
    }
    const binary = await this.tool.binary();
    if (binary === undefined) {
      this.item.hide();
      return;
    }
    const cwd = folder.uri.fsPath;
    const current = settings.read(folder);
    const layers = settings.flags(current, cwd, { packageDir: true, comsActive: true, confine: true });
    const [explain, exports, check] = await Promise.all([
      run(binary.path, ["explain", "--cwd", cwd, "--format", "json", ...layers], cwd),
      run(binary.path, ["export", "--check", "--cwd", cwd, ...settings.flags(current, cwd, { packageDir: true, comsActive: true })], cwd),
      run(binary.path, ["check", "--cwd", cwd, "--format", "json", ...settings.flags(current, cwd, { packageDir: true, comsActive: true, confine: true, strict: true })], cwd),
    ]);
    let report: { totals?: { tokens?: number; included?: number; files?: number } };
    try {
      report = JSON.parse(explain.stdout) as typeof report;
    } catch {
      this.log.error(`status: \`pi-rules explain --format json\` gave no report: ${explain.failure ?? explain.stderr.trim()}`);
      this.show(folder, undefined, "pi-rules: the rules could not be explained; the log says why");
      return;
    }
    let summary: { errors?: number; warnings?: number } = {};
    try {
      summary = (JSON.parse(check.stdout) as { summary?: typeof summary }).summary ?? {};
    } catch {
      this.log.warn(`status: \`pi-rules check --format json\` gave no report: ${check.failure ?? check.stderr.trim()}`);
    }
    const facts: Facts = {
      tokens: report.totals?.tokens ?? 0,
      rules: report.totals?.included ?? 0,
      files: report.totals?.files ?? 0,
      // 1: a file is not what export writes; 2 (a usage error) is a project with no export.
      staleExports: exports.code === 1 ? lastLine(exports.stderr) : undefined,
      errors: summary.errors ?? 0,
      warnings: summary.warnings ?? 0,
    };
    this.show(folder, facts);
  }

  private show(folder: vscode.WorkspaceFolder, facts: Facts | undefined, problem?: string): void {
    if (facts === undefined) {
      this.item.text = "$(warning) pi-rules";
      this.item.tooltip = problem;
      this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
      this.item.show();
      return;
    }
    const bad = facts.staleExports !== undefined || facts.errors > 0;
    this.item.text = `${bad ? "$(error)" : "$(book)"} ${formatTokens(facts.tokens)} tokens · ${facts.rules} rules`;
    this.item.backgroundColor = bad ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
    const lines = [
      `pi-rules in ${folder.name}: the rules block is about ${facts.tokens} tokens (one per four bytes), from ${facts.rules} of ${facts.files} rule files.`,
      `check: ${facts.errors} errors, ${facts.warnings} warnings.`,
      facts.staleExports !== undefined ? `export --check: stale. ${facts.staleExports}` : "export --check: up to date, or nothing exported.",
      "Click for pi-rules: Explain.",
    ];
    this.item.tooltip = lines.join("\n");
    this.item.show();
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.item.dispose();
  }
}

/** Whether `folder` has project rules or pi-rules' configuration file. */
export async function hasRules(folder: vscode.WorkspaceFolder): Promise<boolean> {
  const pi = vscode.Uri.joinPath(folder.uri, ".pi");
  try {
    await vscode.workspace.fs.stat(vscode.Uri.joinPath(pi, "pi-rules.toml"));
    return true;
  } catch {
    // No configuration file: are there rules?
  }
  try {
    const entries = await vscode.workspace.fs.readDirectory(vscode.Uri.joinPath(pi, "rules"));
    return entries.some(([name]) => name.endsWith(".md"));
  } catch {
    return false;
  }
}
