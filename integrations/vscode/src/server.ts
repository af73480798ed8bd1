// The language client of `pi-rules lsp`: started once a served document is open, restarted after
// a crash (a few times, then it stops and says so), and restarted when a setting it was started
// with changes (the server reads its options once, at `initialize`).

import * as vscode from "vscode";
import {
  CloseAction,
  type CloseHandlerResult,
  ErrorAction,
  type ErrorHandler,
  type ErrorHandlerResult,
  LanguageClient,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import type { Tool } from "./binaryCheck";
import { clientSelector, selector, served } from "./documents";
import * as settings from "./settings";

/** At most this many crashes in `WINDOW_MS` are restarted; the next one stops the server. */
const RESTARTS = 4;
const WINDOW_MS = 3 * 60 * 1000;

class Restarts implements ErrorHandler {
  private readonly crashes: number[] = [];

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly giveUp: () => void,
  ) {}

  error(error: Error, _message: unknown, count: number | undefined): ErrorHandlerResult {
    this.log.error(`connection to the server: ${error.message}`);
    // A few errors in a row are read or write failures the server may survive; more end it.
    return (count ?? 1) <= 3 ? { action: ErrorAction.Continue, handled: true } : { action: ErrorAction.Shutdown, handled: true };
  }

  closed(): CloseHandlerResult {
    const now = Date.now();
    this.crashes.push(now);
    while (this.crashes.length > 0 && this.crashes[0]! < now - WINDOW_MS) this.crashes.shift();
    if (this.crashes.length <= RESTARTS) {
      this.log.warn(`the server stopped; restarting it (${this.crashes.length} of ${RESTARTS} restarts in 3 minutes)`);
      return { action: CloseAction.Restart, handled: true };
    }
    this.giveUp();
    return { action: CloseAction.DoNotRestart, handled: true };
  }
}

/**
 * The language client, with its own notifications kept to the log: the extension says what went
 * wrong itself, once (a server that fails at every start would otherwise be a stack of them).
 */
class Client extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | "force"): void {
    super.error(message, data, false);
  }
}

export class Server implements vscode.Disposable {
  private client: LanguageClient | undefined;
  /** The start or stop under way; each waits for the one before. */
  private queue: Promise<unknown> = Promise.resolve();
  private filters: vscode.DocumentFilter[];
  /** A failure was shown since the server last ran or the user last (re)started it. */
  private told = false;

  constructor(
    private readonly tool: Tool,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.filters = selector(settings.read());
  }

  /** Whether `document` is one the server is for (with the current settings). */
  serves(document: vscode.TextDocument): boolean {
    return served(document, this.filters);
  }

  get running(): boolean {
    return this.client !== undefined;
  }

  /** Starts the server if a served document is open and it is not running. */
  startIfServing(): Promise<void> {
    if (this.client !== undefined) return Promise.resolve();
    if (!vscode.workspace.textDocuments.some((d) => this.serves(d))) return Promise.resolve();
    return this.start();
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  /** Stops the server and starts it again with the settings as they are now. */
  restart(): Promise<void> {
    this.told = false;
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  /** The settings changed: a running server restarts with them; a stopped one starts if it serves now. */
  settingsChanged(): Promise<void> {
    this.told = false;
    this.filters = selector(settings.read());
    return this.client !== undefined ? this.restart() : this.startIfServing();
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) return;
    const binary = await this.tool.binary();
    if (binary === undefined) return;
    const current = settings.read();
    this.filters = selector(current);
    const client = new Client(
      "pi-rules",
      "pi-rules",
      { command: binary.path, args: ["lsp"], transport: TransportKind.stdio },
      {
        documentSelector: clientSelector(current),
        outputChannel: this.log,
        initializationOptions: settings.initializationOptions(current),
        errorHandler: new Restarts(this.log, () => this.gaveUp()),
        initializationFailedHandler: (error: unknown) => {
          const why = error instanceof Error ? error.message : String(error);
          this.tell(() => this.tool.problem(`${binary.path} failed to start as a language server (${why}); the pi-rules log has its output`));
          return false;
        },
      },
    );
    client.onDidChangeState((change) => {
      if (change.newState === State.Running) this.told = false;
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      this.log.error(`the language server did not start: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) return;
    try {
      await client.stop(5000);
    } catch (error) {
      this.log.warn(`stopping the server: ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      await client.dispose();
    } catch {
      // Already stopped.
    }
  }

  /** Shows a failure unless one was shown since the server last ran. */
  private tell(show: () => void): void {
    if (this.told) return;
    this.told = true;
    show();
  }

  private gaveUp(): void {
    this.client = undefined;
    this.tell(() => this.giveUpMessage());
  }

  private giveUpMessage(): void {
    const restart = "Restart the server";
    const show = "Show the log";
    void vscode.window
      .showErrorMessage(
        `pi-rules: the language server stopped ${RESTARTS + 1} times in 3 minutes and is not restarted again. The log says why.`,
        restart,
        show,
      )
      .then((choice) => {
        if (choice === restart) void vscode.commands.executeCommand("pi-rules.restartServer");
        if (choice === show) this.log.show();
      });
  }

  dispose(): void {
    void this.stop();
  }
}
