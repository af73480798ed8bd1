// The extension's commands: each runs the CLI in a workspace folder and shows what it printed.

import { basename } from "node:path";
import * as vscode from "vscode";
import type { Tool } from "./binaryCheck";
import { commandLine, type Run, run } from "./cli";
import type { Outputs } from "./documents";
import { lastLine, ruleReport } from "./text";
import * as settings from "./settings";

export class Commands {
  constructor(
    private readonly tool: Tool,
    private readonly outputs: Outputs,
    private readonly log: vscode.LogOutputChannel,
    private readonly isRule: (document: vscode.TextDocument) => boolean,
    private readonly changed: () => void,
  ) {}

  /** `pi-rules explain`: the report of the folder, or the part of it on the open rule. */
  async explain(): Promise<void> {
    const folder = await pickFolder();
    if (folder === undefined) return;
    const cwd = folder.uri.fsPath;
    const result = await this.cli(folder, ["explain", "--cwd", cwd, ...this.flags(folder, { packageDir: true, comsActive: true, confine: true })]);
    if (result === undefined) return;
    const rule = this.openRule();
    const part = rule !== undefined ? ruleReport(result.stdout, rule) : undefined;
    if (rule !== undefined && part !== undefined) {
      await this.outputs.show(folder, `explain ${rule.replace(/\.md$/, "")}.txt`, part);
    } else {
      await this.outputs.show(folder, "explain.txt", result.stdout);
    }
  }

  /** `pi-rules assemble`: the block as pi is given it. */
  async showBlock(): Promise<void> {
    const folder = await pickFolder();
    if (folder === undefined) return;
    const cwd = folder.uri.fsPath;
    const result = await this.cli(folder, ["assemble", "--cwd", cwd, ...this.flags(folder, { packageDir: true, comsActive: true, confine: true })]);
    if (result === undefined) return;
    await this.outputs.show(folder, "assembled block.md", result.stdout);
  }

  /** `pi-rules export`: writes the configured exports; says which files it wrote. */
  async export(): Promise<void> {
    const folder = await pickFolder();
    if (folder === undefined) return;
    const cwd = folder.uri.fsPath;
    const result = await this.cli(folder, ["export", "--cwd", cwd, ...this.flags(folder, { packageDir: true, comsActive: true })]);
    if (result === undefined) return;
    const written = result.stdout.trim().split("\n").filter((line) => line !== "");
    await this.outputs.show(folder, "export.txt", joined(result));
    void vscode.window.showInformationMessage(
      written.length > 0 ? `pi-rules: exported ${written.join(", ")}` : "pi-rules: export wrote nothing",
    );
    this.changed();
  }

  /** `pi-rules export --check`: whether the exports are what `export` would write; the diff when not. */
  async exportCheck(): Promise<void> {
    const folder = await pickFolder();
    if (folder === undefined) return;
    const cwd = folder.uri.fsPath;
    const result = await this.cli(folder, ["export", "--check", "--cwd", cwd, ...this.flags(folder, { packageDir: true, comsActive: true })], [0, 1]);
    if (result === undefined) return;
    if (result.code === 0) {
      void vscode.window.showInformationMessage("pi-rules: the exports are up to date");
      return;
    }
    await this.outputs.show(folder, "export --check.diff", joined(result));
    const exportNow = "Export";
    const choice = await vscode.window.showWarningMessage(`pi-rules: ${lastLine(result.stderr) || "an export is stale"}`, exportNow);
    if (choice === exportNow) await this.export();
  }

  /** `pi-rules override NAME --project`: the open package or user rule, copied to the project layer. */
  async override(): Promise<void> {
    const folder = await pickFolder();
    if (folder === undefined) return;
    const name = this.openRule() ?? (await askName("The rule to copy into the project layer", "40-critical-rules"));
    if (name === undefined) return;
    const cwd = folder.uri.fsPath;
    const result = await this.cli(folder, ["override", name, "--project", "--cwd", cwd, ...this.flags(folder, { packageDir: true, confine: true })]);
    if (result === undefined) return;
    await openWritten(result);
    this.changed();
  }

  /** `pi-rules new NAME --project`: a new project rule, opened. */
  async newRule(): Promise<void> {
    const folder = await pickFolder();
    if (folder === undefined) return;
    const name = await askName("The new rule's name (a free prefix from 90 to 99 is added when it has none)", "team-conventions");
    if (name === undefined) return;
    const cwd = folder.uri.fsPath;
    const result = await this.cli(folder, ["new", name, "--project", "--cwd", cwd, ...this.flags(folder, { packageDir: true, confine: true })]);
    if (result === undefined) return;
    await openWritten(result);
    this.changed();
  }

  private flags(folder: vscode.WorkspaceFolder, takes: settings.Takes): string[] {
    return settings.flags(settings.read(folder), folder.uri.fsPath, takes);
  }

  /** The open rule file's name, when the active editor holds one. */
  private openRule(): string | undefined {
    const document = vscode.window.activeTextEditor?.document;
    if (document === undefined || document.uri.scheme !== "file" || !document.uri.fsPath.endsWith(".md")) return undefined;
    return this.isRule(document) ? basename(document.uri.fsPath) : undefined;
  }

  /** Runs the CLI; a failure (an exit code not in `ok`) is one error message, and `undefined`. */
  private async cli(folder: vscode.WorkspaceFolder, args: string[], ok: number[] = [0]): Promise<Run | undefined> {
    const binary = await this.tool.binary();
    if (binary === undefined) return undefined;
    this.log.info(`in ${folder.uri.fsPath}: ${commandLine(args)}`);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `pi-rules ${args[0] ?? ""}` },
      () => run(binary.path, args, folder.uri.fsPath),
    );
    if (result.stderr.trim() !== "") this.log.info(result.stderr.trimEnd());
    if (result.code !== null && ok.includes(result.code)) return result;
    const why = result.failure ?? (lastLine(result.stderr).replace(/^error: /, "") || `exit code ${result.code}`);
    const show = "Show the log";
    void vscode.window.showErrorMessage(`pi-rules ${args[0] ?? ""}: ${why}`, show).then((choice) => {
      if (choice === show) this.log.show();
    });
    return undefined;
  }
}

/** The workspace folder of the active editor, else the only one, else the one the user picks. */
export async function pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
  const active = vscode.window.activeTextEditor?.document.uri;
  const folders = vscode.workspace.workspaceFolders ?? [];
  const own = active !== undefined ? vscode.workspace.getWorkspaceFolder(active) : undefined;
  if (own !== undefined) return own;
  if (folders.length === 1) return folders[0];
  if (folders.length === 0) {
    void vscode.window.showErrorMessage("pi-rules: open a folder first: the commands run in a workspace folder, the project.");
    return undefined;
  }
  return vscode.window.showWorkspaceFolderPick({ placeHolder: "The project folder to run pi-rules in" });
}

async function askName(prompt: string, placeHolder: string): Promise<string | undefined> {
  const name = await vscode.window.showInputBox({
    prompt,
    placeHolder,
    validateInput: (value) =>
      value.trim() === "" ? "a name" : /[/\\]/.test(value) ? "a file name, without a directory" : undefined,
  });
  return name?.trim() || undefined;
}

/** Opens the file whose path a command printed last on stdout. */
async function openWritten(result: Run): Promise<void> {
  const path = lastLine(result.stdout);
  if (path === "") return;
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
  await vscode.window.showTextDocument(document, { preview: false });
}

/** stdout, then stderr: what a person would see in a terminal. */
function joined(result: Run): string {
  const out = result.stdout;
  const err = result.stderr;
  if (err === "") return out;
  return out === "" || out.endsWith("\n") ? `${out}${err}` : `${out}\n${err}`;
}
