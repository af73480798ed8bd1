// pi-rules for pi: puts the assembled rules block into every agent start, adds the rules scoped to
// the files a tool touched to that tool's result, and adds `/rules`.
//
// Everything that talks to the `pi-rules` binary goes through client.ts. Handlers never throw:
// pi would report the error and start the run without any rules. Everything shown to the user that
// came from a file, a setting or the binary passes through terminal.js first.

import type {
  BeforeAgentStartEvent,
  BeforeAgentStartEventResult,
  ExtensionAPI,
  ExtensionContext,
  ToolResultEvent,
  ToolResultEventResult,
} from "@earendil-works/pi-coding-agent";
import * as piAi from "@earendil-works/pi-ai";
import { DEFAULT_TIMEOUT_MS, INVALID_PARAMS, METHOD_NOT_FOUND, ServeClient, ServeError } from "./client.ts";
import { DeliveredRules, scopedRulesText, touchedPaths } from "./scoped.ts";
import { escapeLines, escapeText } from "./terminal.js";

/** The system prompt section that carries the block; pi renders it as `<orchestrator_rules>…</orchestrator_rules>`. */
export const SECTION = "orchestrator_rules";

/** What the model gets when the binary cannot give a block: the same text pi-rules falls back to. */
export const FALLBACK_BLOCK = "\n\n[ORCHESTRATOR RULES] You are a MANAGER. Delegate work to subagents.\n";

/** The inter-extension event (`pi.events`) that switches the `coms_active` feature: `true`, `false` or `{ active }`. */
export const COMS_EVENT = "pi-rules:coms-active";

// pi loads each extension with a fresh module instance, so a flag kept in this module would not be
// seen by the copy another extension imports. The flag lives on globalThis under a registered symbol.
const COMS_FLAG = Symbol.for("pi-rules.coms-active");

/** Tells pi-rules whether peer-to-peer messaging (coms) is running, for every session in this process. */
export function setComsActive(active: boolean): void {
  (globalThis as Record<symbol, unknown>)[COMS_FLAG] = active === true;
}

function comsActive(): boolean {
  return (globalThis as Record<symbol, unknown>)[COMS_FLAG] === true;
}

/** Confinement is on unless `PI_RULES_CONFINE` is exactly `0`. */
function confine(): boolean {
  return process.env.PI_RULES_CONFINE !== "0";
}

function isSubagent(): boolean {
  return process.env.PI_SUBAGENT_CHILD === "1";
}

/** `PI_RULES_TIMEOUT_MS` when it is a positive whole number, otherwise the default. */
function timeoutMs(): number {
  const raw = process.env.PI_RULES_TIMEOUT_MS;
  if (raw !== undefined && /^[1-9][0-9]{0,8}$/.test(raw)) return Number(raw);
  return DEFAULT_TIMEOUT_MS;
}

/**
 * Fills `{{SETTINGS}}` and `{{SETTINGS:key,...}}` in an agent prompt with the settings resolved for
 * `cwd`, as `pi-rules render` does. For hosts that dispatch subagent prompts. Starts a
 * `pi-rules serve` child for the call and ends it before resolving. Rejects with an Error whose
 * message says what went wrong (no binary, a failed request); the prompt is not changed then.
 */
export async function renderSettings(prompt: string, cwd: string): Promise<string> {
  const client = new ServeClient({ timeoutMs: timeoutMs() });
  try {
    const result = await client.request("render", { cwd, prompt });
    if (!isRecord(result) || typeof result.text !== "string") {
      throw new ServeError("protocol", "`pi-rules serve` answered `render` without a `text` string");
    }
    return result.text;
  } finally {
    await client.close();
  }
}

export default function piRules(pi: ExtensionAPI): void {
  // One client per session; it starts its child on the first request.
  let client: ServeClient | undefined;
  let ended = false;
  let stopCleanup: (() => void) | undefined;
  let notifiedWarnings = "";
  let notifiedFailure = false;
  // Scoped rules: those the model has been given, whether the binary has `rules_for_paths` at all,
  // and whether the last request failed for want of a working child (asked again once an agent
  // start has its block, so that a hung binary costs one timeout, not one per tool call).
  const delivered = new DeliveredRules();
  const notifiedScopeNotes = new Set<string>();
  let scopedUnsupported = false;
  let scopedPaused = false;

  function sessionClient(ctx: ExtensionContext): ServeClient {
    if (client) return client;
    if (ended) throw new ServeError("closed", "the session has ended");
    const sessionId = ctx.sessionManager.getSessionId();
    client = new ServeClient({ timeoutMs: timeoutMs() });
    // An SDK host may dispose a session without `session_shutdown`; pi still runs the session
    // resource cleanups then, so the child ends with the session either way.
    const register = (piAi as { registerSessionResourceCleanup?: (cleanup: (id?: string) => void) => () => void })
      .registerSessionResourceCleanup;
    stopCleanup = register?.((id) => {
      if (id === undefined || id === sessionId) endNow();
    });
    return client;
  }

  function endNow(): void {
    ended = true;
    stopCleanup?.();
    stopCleanup = undefined;
    client?.closeNow();
  }

  /**
   * Shows `message` (already escaped) to the user: as a notification where pi has a UI (the TUI,
   * RPC), on stderr where it has none (print mode, JSON mode), where notifications go nowhere.
   */
  function notify(ctx: ExtensionContext, message: string, type: "info" | "warning" | "error"): void {
    let hasUI: boolean;
    try {
      hasUI = ctx.hasUI;
    } catch {
      // A stale context (the session was replaced meanwhile) has nowhere to show anything.
      return;
    }
    if (!hasUI) {
      writeStderr(message);
      return;
    }
    try {
      ctx.ui.notify(message, type);
    } catch {
      // As above: the context went stale between the two calls.
    }
  }

  function reportWarnings(ctx: ExtensionContext, warnings: string[]): void {
    const key = JSON.stringify(warnings);
    if (warnings.length === 0) {
      notifiedWarnings = "";
    } else if (key !== notifiedWarnings) {
      notifiedWarnings = key;
      notify(ctx, warnings.map((w) => `rule assembly: ${escapeText(w)}`).join("\n"), "warning");
    }
  }

  /** Whether `error` only says that this session ended while a request was in flight: nothing to fix. */
  function endedMeanwhile(error: unknown): boolean {
    return ended && error instanceof ServeError && error.kind === "closed";
  }

  function reportFailure(ctx: ExtensionContext, error: unknown): void {
    if (notifiedFailure || endedMeanwhile(error)) return;
    notifiedFailure = true;
    notify(ctx, `pi-rules: ${describe(error)}; the rules block is the one-line fallback until this is fixed`, "error");
  }

  /** The explain view for `/rules`, with pi's coms state and the binary's notes. */
  async function explainView(ctx: ExtensionContext): Promise<string> {
    const client = sessionClient(ctx);
    const coms = comsActive();
    const params = { cwd: ctx.cwd, coms_active: coms, confine: confine() };
    // Sent together: serve answers in order, and the second costs a warm child next to nothing.
    const [explained, assembled] = await Promise.all([
      client.request("explain", { ...params, format: "text" }),
      // Its notes only; when it fails, the explain request says why.
      client.request("assemble", params).catch(() => undefined),
    ]);
    const text = withComsState(textOf(explained, "explain"), coms);
    return withNotes(escapeLines(text), [...notesOf(explained), ...notesOf(assembled)]);
  }

  async function assembledBlock(ctx: ExtensionContext): Promise<string> {
    try {
      // The token of the block held goes with the request: a turn where no file changed is
      // answered in a few dozen bytes, and the held block is used again.
      const result = await sessionClient(ctx).assembleBlock({
        cwd: ctx.cwd,
        coms_active: comsActive(),
        confine: confine(),
      });
      notifiedFailure = false;
      scopedPaused = false;
      reportWarnings(ctx, result.warnings);
      return result.block;
    } catch (error) {
      reportFailure(ctx, error);
      return FALLBACK_BLOCK;
    }
  }

  pi.on("before_agent_start", async (event: BeforeAgentStartEvent, ctx: ExtensionContext) => {
    if (isSubagent()) return undefined;
    const block = await assembledBlock(ctx);
    return inject(event, block);
  });

  /**
   * The rules scoped to the files `event`'s tool touched that the model has not been given yet, as
   * the text to add to its result; undefined when there are none, when scopes are off, and when the
   * binary cannot say (an older binary without `rules_for_paths`, or a failure): never throws.
   */
  async function scopedRulesFor(event: ToolResultEvent, ctx: ExtensionContext): Promise<string | undefined> {
    // A nested call's result reaches only the tool that made it, never the model.
    if (isSubagent() || scopedUnsupported || scopedPaused || event.parentToolCallId !== undefined) return undefined;
    try {
      const paths = touchedPaths(event.toolName, event.input, event.isError, ctx.cwd);
      if (paths.length === 0) return undefined;
      const answer = await sessionClient(ctx).rulesForPaths({
        cwd: ctx.cwd,
        paths,
        agent: "pi",
        coms_active: comsActive(),
        confine: confine(),
      });
      const notes = answer.notes.filter((note) => !notifiedScopeNotes.has(note));
      if (notes.length > 0) {
        for (const note of notes) notifiedScopeNotes.add(note);
        notify(ctx, notes.map((note) => `pi-rules: ${escapeText(note)}`).join("\n"), "warning");
      }
      if (!answer.scoped) return undefined;
      const fresh = delivered.take(answer.rules);
      return fresh.length === 0 ? undefined : scopedRulesText(fresh, ctx.cwd);
    } catch (error) {
      if (error instanceof ServeError && error.kind === "rpc") {
        if (error.code === METHOD_NOT_FOUND || error.code === INVALID_PARAMS) scopedUnsupported = true;
      } else {
        scopedPaused = true;
      }
      return undefined;
    }
  }

  pi.on("tool_result", async (event: ToolResultEvent, ctx: ExtensionContext): Promise<ToolResultEventResult | undefined> => {
    const text = await scopedRulesFor(event, ctx);
    if (text === undefined) return undefined;
    // The tool's own output stays first and whole; the rules follow as one more text part.
    const result: ToolResultEventResult = { content: [...event.content, { type: "text", text }] };
    if (event.structuredContent !== undefined) result.structuredContent = event.structuredContent;
    return result;
  });

  // A compaction replaces the older tool results, and the rules in them, with a summary; another
  // branch of the session never had them. Either way the model is given them again when it next
  // touches a matching file.
  pi.on("session_compact", async () => {
    delivered.forget();
  });
  pi.on("session_tree", async () => {
    delivered.forget();
  });

  pi.registerCommand("rules", {
    description: "Show why each rule and block is in the rules block here; `/rules check` lints rules and settings",
    getArgumentCompletions: (prefix: string) =>
      "check".startsWith(prefix.trim()) ? [{ value: "check", label: "check", description: "lint rules and settings files" }] : null,
    handler: async (args: string, ctx: ExtensionContext) => {
      const sub = args.trim();
      try {
        if (sub === "") {
          notify(ctx, await explainView(ctx), "info");
        } else if (sub === "check") {
          const result = await sessionClient(ctx).request("check", { cwd: ctx.cwd, format: "human" });
          const text = withNotes(escapeLines(textOf(result, "check")), notesOf(result));
          const findings = isRecord(result) ? Number(result.errors ?? 0) + Number(result.warnings ?? 0) : 0;
          notify(ctx, text, findings > 0 ? "warning" : "info");
        } else {
          notify(ctx, "usage: /rules (the explain view) or /rules check (the lint findings)", "warning");
        }
      } catch (error) {
        if (!endedMeanwhile(error)) notify(ctx, `pi-rules: ${describe(error)}`, "error");
      }
    },
  });

  const stopComs = pi.events.on(COMS_EVENT, (data: unknown) => {
    const active = isRecord(data) ? data.active : data;
    if (typeof active === "boolean") setComsActive(active);
  });

  pi.on("session_shutdown", async () => {
    ended = true;
    stopComs();
    stopCleanup?.();
    stopCleanup = undefined;
    await client?.close();
  });
}

/**
 * Gives the block to the model. pi 1.x keeps named prompt sections and sends only the ones that
 * changed, so an unchanged block keeps the provider's prompt cache; a host without sections gets
 * the block appended to its system prompt.
 */
function inject(event: BeforeAgentStartEvent, block: string): BeforeAgentStartEventResult | undefined {
  const sections = (event.systemPromptOptions as { sections?: unknown } | undefined)?.sections;
  if (isRecord(sections)) {
    sections[SECTION] = block;
    return undefined;
  }
  return { systemPrompt: event.systemPrompt + block };
}

function textOf(result: unknown, method: string): string {
  if (isRecord(result) && typeof result.text === "string") return result.text;
  throw new ServeError("protocol", `\`pi-rules serve\` answered \`${method}\` without a \`text\` string`);
}

/** An error's message, escaped: it can quote a path, the binary's stderr or a request's reply. */
function describe(error: unknown): string {
  if (error instanceof ServeError && error.kind === "rpc") {
    return `\`pi-rules serve\` refused the request: ${escapeText(error.message)}`;
  }
  return escapeText(error instanceof Error ? error.message : String(error));
}

/** Writes one message (already escaped) to stderr, ignoring a stderr that is gone. */
function writeStderr(message: string): void {
  try {
    process.stderr.write(`${message}\n`);
  } catch {
    // Nowhere left to say it.
  }
}

/** The `notes` a result carries (an array of strings), if any. */
function notesOf(result: unknown): string[] {
  return isRecord(result) && isStringArray(result.notes) ? result.notes : [];
}

/** `text` (escaped) followed by each distinct note, escaped, as a `note:` line. */
function withNotes(text: string, notes: readonly string[]): string {
  const distinct = [...new Set(notes)];
  if (distinct.length === 0) return text;
  return `${text.trimEnd()}\n${distinct.map((note) => `note: ${escapeText(note)}`).join("\n")}`;
}

/**
 * The explain view with its `coms_active` line saying where the value came from in pi terms: the
 * binary words the source for its command line (`--coms-active was not given`), which a pi user
 * never typed. The package sent the value, so it knows what it stands for.
 */
function withComsState(text: string, active: boolean): string {
  return text.replace(
    /^(feature coms_active = (?:true|false)) \(.*\)$/m,
    (_line, head: string) => `${head} (from pi: coms ${active ? "active" : "inactive"} in this pi session)`,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}
