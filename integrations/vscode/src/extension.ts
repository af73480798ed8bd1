// pi-rules for VS Code: a client of `pi-rules lsp` (diagnostics, quick fixes, hover, completion,
// definition, inlay hints, outline), commands that run the CLI, and a status bar item.

import * as vscode from "vscode";
import { Tool } from "./binaryCheck";
import { Commands } from "./commands";
import { Outputs, SCHEME } from "./documents";
import { Server } from "./server";
import { SERVER_SETTINGS } from "./settings";
import { Status } from "./status";

let running: Server | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel("pi-rules", { log: true });
  const tool = new Tool(context.extensionPath, log);
  const server = new Server(tool, log);
  running = server;
  const outputs = new Outputs();
  const status = new Status(tool, log, currentFolder);
  const commands = new Commands(
    tool,
    outputs,
    log,
    (document) => server.serves(document),
    () => status.schedule(),
  );
  context.subscriptions.push(
    log,
    server,
    outputs,
    status,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, outputs),
    vscode.commands.registerCommand("pi-rules.explain", () => commands.explain()),
    vscode.commands.registerCommand("pi-rules.showBlock", () => commands.showBlock()),
    vscode.commands.registerCommand("pi-rules.export", () => commands.export()),
    vscode.commands.registerCommand("pi-rules.exportCheck", () => commands.exportCheck()),
    vscode.commands.registerCommand("pi-rules.override", () => commands.override()),
    vscode.commands.registerCommand("pi-rules.newRule", () => commands.newRule()),
    vscode.commands.registerCommand("pi-rules.restartServer", async () => {
      tool.forget();
      await server.restart();
      status.schedule(0);
    }),
    // The server starts with the first served document: a rule file, a settings file or the
    // configuration file, wherever it is (the user layer is outside every workspace).
    vscode.workspace.onDidOpenTextDocument((document) => {
      if (!server.running && server.serves(document)) void server.start();
    }),
    vscode.workspace.onDidSaveTextDocument((document) => {
      if (server.serves(document)) status.schedule();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => status.editorChanged()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => status.schedule()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!SERVER_SETTINGS.some((key) => event.affectsConfiguration(key))) return;
      if (event.affectsConfiguration("pi-rules.path")) tool.forget();
      void server.settingsChanged();
      status.schedule();
    }),
  );
  // Rules added or removed outside the editor (git, a terminal) change the block too.
  const watcher = vscode.workspace.createFileSystemWatcher("**/.pi/{rules/*.md,pi-rules.toml,pi-config-settings.json,pi-config-settings.jsonc}");
  context.subscriptions.push(
    watcher,
    watcher.onDidCreate(() => status.schedule()),
    watcher.onDidDelete(() => status.schedule()),
    watcher.onDidChange(() => status.schedule()),
  );
  void server.startIfServing();
  status.schedule(0);
}

/** Stops the server, and lets VS Code wait for it to end. */
export function deactivate(): Promise<void> | undefined {
  const server = running;
  running = undefined;
  return server?.stop();
}

/** The folder the status bar is about: the active editor's, else the first. */
function currentFolder(): vscode.WorkspaceFolder | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  const own = active !== undefined ? vscode.workspace.getWorkspaceFolder(active) : undefined;
  return own ?? vscode.workspace.workspaceFolders?.[0];
}
