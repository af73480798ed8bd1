// Which documents the server is for, and the read-only documents the commands' outputs open in.

import * as vscode from "vscode";
import type { DocumentSelector } from "vscode-languageclient";
import { packageDir, type Settings } from "./settings";

/**
 * The files `pi-rules lsp` serves (src/lsp/workspace.rs, `Workspace::serves`), wherever they
 * are, so that a user rule outside every workspace folder is served too: the rule files of a
 * project layer and of nested rule directories (`D/.pi/rules/NAME.md`), of the user layer
 * (`~/.pi/agent/rules`), the cached copies of the embedded package rules
 * (`$XDG_CACHE_HOME/pi-rules/VERSION/package`), the two settings files (`.pi/` of the project,
 * `~/.pi/`), pi-rules' configuration files, and the package directory when one is set.
 */
export const PATTERNS = [
  "**/.pi/rules/*.md",
  "**/.pi/agent/rules/*.md",
  "**/pi-rules/*/package/*.md",
  "**/.pi/pi-config-settings.{json,jsonc}",
  "**/.pi/pi-rules.toml",
  "**/.pi/agent/pi-rules.toml",
];

/** The package directories the settings name, one per workspace folder at most. */
function packageDirs(settings: Settings): string[] {
  const dirs = new Set<string>();
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const dir = packageDir(settings, folder.uri.fsPath);
    if (dir !== undefined) dirs.add(dir);
  }
  return [...dirs];
}

/** The documents the server is for, as the editor matches them. */
export function selector(settings: Settings): vscode.DocumentFilter[] {
  return [
    ...PATTERNS.map((pattern) => ({ scheme: "file", pattern })),
    ...packageDirs(settings).map((dir) => ({ scheme: "file", pattern: new vscode.RelativePattern(vscode.Uri.file(dir), "*.md") })),
  ];
}

/** The same documents, as the protocol's selector (which the language client takes). */
export function clientSelector(settings: Settings): DocumentSelector {
  return [
    ...PATTERNS.map((pattern) => ({ scheme: "file", pattern })),
    ...packageDirs(settings).map((dir) => ({ scheme: "file", pattern: { baseUri: vscode.Uri.file(dir).toString(), pattern: "*.md" } })),
  ];
}

/** Whether `document` is one the server serves. */
export function served(document: vscode.TextDocument, filters: vscode.DocumentFilter[]): boolean {
  return vscode.languages.match(filters, document) > 0;
}

export const SCHEME = "pi-rules";

/** The commands' outputs, as read-only documents of the `pi-rules` scheme. */
export class Outputs implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changes = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changes.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  /**
   * Shows `text` in the document `name` of `folder` (the same name again replaces its text):
   * `pi-rules:/FOLDER/NAME`, so the editor's tab says NAME and which folder it is of.
   */
  async show(folder: vscode.WorkspaceFolder, name: string, text: string): Promise<vscode.TextEditor> {
    const base = folder.uri.path.endsWith("/") ? folder.uri.path : `${folder.uri.path}/`;
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `${base}${name}` });
    const key = uri.toString();
    const known = this.texts.has(key);
    this.texts.set(key, text);
    if (known) this.changes.fire(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    return vscode.window.showTextDocument(document, { preview: false });
  }

  dispose(): void {
    this.changes.dispose();
  }
}
