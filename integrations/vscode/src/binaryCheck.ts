// The binary, found and tried once per settings, and the one notification when it is missing or
// failing.

import * as vscode from "vscode";
import { type Binary, describeSource, findBinary, probe } from "./binary";
import * as settings from "./settings";

export class Tool {
  private found: Promise<Binary | undefined> | undefined;
  private readonly told = new Set<string>();

  constructor(
    private readonly extensionPath: string,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The binary when it runs; else `undefined`, after one notification naming `pi-rules.path`. */
  binary(): Promise<Binary | undefined> {
    this.found ??= this.look();
    return this.found;
  }

  /** Forgets the binary (the settings changed): the next use looks again. */
  forget(): void {
    this.found = undefined;
  }

  private async look(): Promise<Binary | undefined> {
    const found = findBinary(settings.read().path, this.extensionPath);
    if (typeof found === "string") {
      this.problem(found);
      return undefined;
    }
    const tried = await probe(found);
    if ("problem" in tried) {
      this.problem(tried.problem);
      return undefined;
    }
    this.log.info(`using ${found.path} (${tried.version}, ${describeSource(found.source)})`);
    return found;
  }

  /** One notification per problem, with a button to the `pi-rules.path` setting. */
  problem(text: string): void {
    this.log.error(text);
    if (this.told.has(text)) return;
    this.told.add(text);
    const open = "Open the pi-rules.path setting";
    const show = "Show the log";
    void vscode.window
      .showErrorMessage(`pi-rules: ${text}. Set \`pi-rules.path\` to a pi-rules binary (0.1.0 or later).`, open, show)
      .then((choice) => {
        if (choice === open) void vscode.commands.executeCommand("workbench.action.openSettings", "pi-rules.path");
        if (choice === show) this.log.show();
      });
  }
}
