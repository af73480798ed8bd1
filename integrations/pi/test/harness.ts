// Drives a real pi session in this process: the SDK, a DefaultResourceLoader that loads this
// package as an extension, and pi-ai's faux provider as the model, recording every request.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createAgentSession,
  DefaultResourceLoader,
  type EventBus,
  ModelRuntime,
  SessionManager,
  SettingsManager,
  type AgentSession,

} from "@earendil-works/pi-coding-agent";
import {
  type AssistantMessage,
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
  getCurrentSystemPrompt,
  InMemoryCredentialStore,
  type JsonObject,
  type Message,
} from "@earendil-works/pi-ai";

/** This package: what pi is given as an extension path, so its package.json manifest is used. */
export const PACKAGE_DIR = resolve(import.meta.dirname, "..");
const REPO_DIR = resolve(PACKAGE_DIR, "../..");

/** The pi-rules binary under test: PI_RULES_BIN, else the workspace's release build, else its debug build. */
export const BIN: string | undefined = (() => {
  const fromEnv = process.env.PI_RULES_BIN;
  if (fromEnv) return fromEnv;
  for (const profile of ["release", "debug"]) {
    const candidate = join(REPO_DIR, "target", profile, "pi-rules");
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
})();

/** Fails the calling test with a clear message unless the binary exists and has `serve`. */
export function requireServe(): string {
  if (BIN === undefined) {
    assert.fail(
      "no pi-rules binary: set PI_RULES_BIN or build one first (cargo build --release -p pi-rules); the tests build nothing",
    );
  }
  const probe = spawnSync(BIN, ["serve", "--help"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    assert.fail(`\`${BIN}\` has no working \`serve\` command (${probe.error?.message ?? probe.stderr.trim()})`);
  }
  return BIN;
}

// Every test runs with its own HOME, so the user layer and the global settings file are empty
// unless a test writes them. The binary inherits it, the CLI runs and serve children alike.
const ROOT = mkdtempSync(join(tmpdir(), "pi-rules-pi-test-"));
process.env.HOME = join(ROOT, "home");
mkdirSync(process.env.HOME, { recursive: true });
process.on("exit", () => rmSync(ROOT, { recursive: true, force: true }));

// The switches the extension reads come from the tests alone, not from the shell that runs them.
for (const name of ["PI_SUBAGENT_CHILD", "PI_RULES_CONFINE", "PI_RULES_TIMEOUT_MS"]) delete process.env[name];

let projects = 0;

/** A fresh project directory holding `files` (paths relative to the project root). */
export function makeProject(files: Record<string, string> = {}): string {
  const dir = join(ROOT, `project-${++projects}`);
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) writeFile(join(dir, path), text);
  return dir;
}

export function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** Runs the binary as its own process, without colour, and returns what it printed on stdout. */
export function cli(args: string[], input?: string): string {
  const bin = requireServe();
  const run = spawnSync(bin, args, {
    input,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: "1" },
  });
  assert.equal(run.error, undefined);
  assert.ok(run.status === 0 || run.status === 1, `pi-rules ${args.join(" ")} failed: ${run.stderr}`);
  return run.stdout;
}

/** The block `pi-rules assemble --format json` gives for `cwd`, from a separate process. */
export function cliBlock(cwd: string, extra: string[] = []): string {
  const block = JSON.parse(cli(["assemble", "--format", "json", "--cwd", cwd, ...extra])).block;
  assert.equal(typeof block, "string");
  return block as string;
}

/** The warnings `pi-rules assemble --format json` gives for `cwd`. */
export function cliWarnings(cwd: string): string[] {
  return JSON.parse(cli(["assemble", "--format", "json", "--cwd", cwd])).warnings as string[];
}

/** How pi shows a section's value to the model. */
export function asSection(name: string, value: string): string {
  return `<${name}>\n${value}\n</${name}>`;
}

export interface Note {
  message: string;
  type: string | undefined;
}

export interface Harness {
  session: AgentSession;
  /** Notifications the extension gave the user, in order. */
  notes: Note[];
  /** Extension errors pi reported; a handler that threw lands here. */
  errors: unknown[];
  /** The system prompt the model had at each of its calls, in order. */
  systemPrompts: string[];
  /** How many system messages the transcript held at each model call: one more means pi patched the prompt. */
  systemMessages: number[];
  /** The messages the model was sent at each of its calls, in order. */
  requests: (readonly Message[])[];
  /**
   * Queues the model's next answers: each call of `toolCalls` makes one answer that calls the
   * given tools (`[name, arguments]`); once the queue is empty, the model answers "done".
   */
  script(...answers: [string, JsonObject][][]): void;
  /** Sends a prompt and waits for the run (or the command) to finish. */
  prompt(text: string): Promise<void>;
  /** The system prompt of the latest model call. */
  lastSystemPrompt(): string;
  dispose(): void;
}

/**
 * A pi session on `cwd`. By default it loads this package as an extension and no context files;
 * `contextFiles` turns pi's own AGENTS.md/CLAUDE.md loading on, and `extension: false` leaves this
 * package out (a pi that only reads the files `pi-rules export` writes); `agentDir` is a pi agent
 * directory whose settings file and installed packages (`pi install`) the session uses instead of
 * this package; `settings` are pi's own settings for an in-memory session (`compaction`, say).
 */
export async function startSession(
  cwd: string,
  options: { eventBus?: EventBus; contextFiles?: boolean; extension?: boolean; agentDir?: string; settings?: Parameters<typeof SettingsManager.inMemory>[0] } = {},
): Promise<Harness> {
  const agentDir = options.agentDir ?? join(ROOT, `agent-${++projects}`);
  mkdirSync(agentDir, { recursive: true });
  const faux = fauxProvider();
  const systemPrompts: string[] = [];
  const systemMessages: number[] = [];
  const requests: (readonly Message[])[] = [];
  const queued: AssistantMessage[] = [];
  const answer = (context: { messages: readonly Message[] }) => {
    systemPrompts.push(getCurrentSystemPrompt(context.messages));
    systemMessages.push(context.messages.filter((message) => message.role === "system").length);
    requests.push(structuredClone(context.messages));
    return queued.shift() ?? fauxAssistantMessage("done");
  };
  faux.setResponses(Array.from({ length: 50 }, () => answer));

  const modelRuntime = await ModelRuntime.create({
    credentials: new InMemoryCredentialStore(),
    modelsPath: null,
    refreshOnCreate: false,
  });
  modelRuntime.registerNativeProvider(faux.provider);
  const settingsManager = options.agentDir ? SettingsManager.create(cwd, agentDir) : SettingsManager.inMemory(options.settings);
  const resourceLoader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    eventBus: options.eventBus,
    additionalExtensionPaths: options.extension === false || options.agentDir ? [] : [PACKAGE_DIR],
    noExtensions: options.extension === false,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: options.contextFiles !== true,
  });
  await resourceLoader.reload();
  const { session } = await createAgentSession({
    cwd,
    agentDir,
    modelRuntime,
    model: faux.getModel(),
    resourceLoader,
    settingsManager,
    sessionManager: SessionManager.inMemory(cwd),
  });
  const notes: Note[] = [];
  const errors: unknown[] = [];
  await session.bindExtensions({
    uiContext: { notify: (message: string, type?: string) => notes.push({ message, type }) } as never,
    onError: (error: unknown) => errors.push(error),
  });
  return {
    session,
    notes,
    errors,
    systemPrompts,
    systemMessages,
    requests,
    script: (...answers) => {
      for (const calls of answers) {
        const content = calls.map(([name, args]) => fauxToolCall(name, args));
        queued.push(fauxAssistantMessage(content, { stopReason: "toolUse" }));
      }
    },
    prompt: (text) => session.prompt(text).then(() => undefined),
    lastSystemPrompt: () => {
      assert.ok(systemPrompts.length > 0, "the model was never called");
      return systemPrompts[systemPrompts.length - 1];
    },
    dispose: () => session.dispose(),
  };
}

interface ProcessInfo {
  pid: number;
  /** The command name (at most 15 bytes): a script's own file name, for a script. */
  comm: string;
  ppid: number;
  pgrp: number;
}

/** Every live (not zombie) process, from /proc. */
function processes(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const close = stat.lastIndexOf(")");
    const [state, ppid, pgrp] = stat.slice(close + 2).split(" ");
    if (state === "Z") continue;
    found.push({ pid: Number(entry), comm: stat.slice(stat.indexOf("(") + 1, close), ppid: Number(ppid), pgrp: Number(pgrp) });
  }
  return found;
}

/** Live child processes of this process whose command name is `name`. */
export function childrenNamed(name: string): number[] {
  return processes()
    .filter((p) => p.comm === name && p.ppid === process.pid)
    .map((p) => p.pid);
}

/** Live processes whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  return processes()
    .filter((p) => p.pgrp === pgid)
    .map((p) => p.pid);
}

/** Live child processes of `ppid`. */
export function childrenOf(ppid: number): number[] {
  return processes()
    .filter((p) => p.ppid === ppid)
    .map((p) => p.pid);
}

/** Whether signal 0 to `target` (a pid, or a process group as `-pgid`) says nothing is there. */
export function noSuchProcess(target: number): boolean {
  try {
    process.kill(target, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * An executable shell script named `pi-rules` (so that it shows as such among the children) in a
 * directory of its own, holding `body` after the `#!/bin/sh` line. Returns its path.
 */
export function writeScript(body: string): string {
  const dir = join(ROOT, `bin-${++projects}`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "pi-rules");
  writeFileSync(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return path;
}

/** Waits up to `ms` for `check` to hold, polling; returns whether it did. */
export async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Runs `body` with a session on `cwd` and the real binary, then disposes the session and sees its child gone. */
export async function withSession(
  cwd: string,
  body: (h: Harness) => Promise<void>,
  options: Parameters<typeof startSession>[1] = {},
): Promise<void> {
  const bin = requireServe();
  await withEnv({ PI_RULES_BIN: bin }, async () => {
    const h = await startSession(cwd, options);
    try {
      await body(h);
      assert.deepEqual(h.errors, [], "an extension handler failed");
    } finally {
      h.dispose();
    }
    // Every session leaves no child behind, and the next test starts from none.
    assert.ok(await eventually(() => childrenNamed("pi-rules").length === 0), "a pi-rules child outlived the session");
  });
}

/** Sets environment variables for the duration of `body`, then puts the old values back. */
export async function withEnv<T>(vars: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const old: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(vars)) {
    old[key] = process.env[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  try {
    return await body();
  } finally {
    for (const [key, value] of Object.entries(old)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}
