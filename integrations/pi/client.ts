// The one place that knows a `pi-rules serve` child process exists.
//
// Framing: one JSON-RPC 2.0 message per line, lines split on LF (0x0A) only. Rule text may hold
// U+2028 and U+2029, which JSON.stringify leaves raw, so no line reader that treats them as line
// ends may touch the stream (Node's `readline` does). Bytes are split first and decoded per line,
// so a multi-byte character cut between two chunks is never mangled.

import { spawn, type ChildProcess } from "node:child_process";
import { explicitBinary, packagedBinary, pathBinary } from "./binary.js";
import { escapeBytes } from "./terminal.js";

/** How long one request may take before the child is considered hung, unless told otherwise. */
export const DEFAULT_TIMEOUT_MS = 5000;

/** A response line longer than this ends the child: nothing pi-rules prints comes close. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** How much of the child's stderr is kept to explain a failure. */
const STDERR_TAIL_BYTES = 4096;

/**
 * How deep a response may nest, and how many commas it may hold outside its strings. The
 * protocol's answers are a few levels deep and hold a few values per file, warning or finding
 * (tens of thousands in a project of thousands of rules); a line that is nothing but brackets or
 * commas would cost JSON.parse seconds with the event loop held, and gigabytes, before anything
 * could look at it. A million values parse in about a quarter of a second.
 */
const MAX_DEPTH = 64;
const MAX_COMMAS = 1_000_000;

/** How much of a line that is not JSON an error quotes. */
const QUOTED_LINE_BYTES = 200;

/**
 * How long ending a child waits after EOF, and again after SIGTERM, before the next step; and how
 * long the pipes of a child that has exited may stay open before they are let go.
 */
export const CLOSE_GRACE_MS = 1000;

// Every child runs in a process group of its own (`detached: true`: its pid is the group id), so a
// wrapper's children (a shell script, a version manager's shim) are signalled with it. The groups
// still running are kept here, shared by every copy of this module in the process (pi loads an
// extension afresh for each session), and killed when the process exits normally: a detached child
// is no longer in the terminal's foreground group, and an unref'd one does not hold the process.
const LIVE_GROUPS = Symbol.for("pi-rules.serve-groups");

// The signals whose default action ends the process without its `exit` event: Ctrl-C on `pi -p`
// (whose own handlers take SIGTERM and SIGHUP only), a closed terminal, a plain `kill`. The child's
// group gets none of them, being out of the terminal's foreground group.
const ENDING_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

function liveGroups(): Set<number> {
  const global = globalThis as Record<symbol, unknown>;
  let groups = global[LIVE_GROUPS] as Set<number> | undefined;
  if (groups === undefined) {
    const created = new Set<number>();
    groups = created;
    global[LIVE_GROUPS] = created;
    const killAll = () => {
      for (const pgid of created) signalGroup(pgid, "SIGKILL");
      created.clear();
    };
    process.once("exit", killAll);
    if (process.platform !== "win32") {
      for (const signal of ENDING_SIGNALS) {
        // Run first: kill the groups, since the signal is likely to end the process (if it does
        // not, a new child starts at the next request, and a request in flight is sent again).
        // Then get out of the way: some listeners end the process only when they count no
        // listener but their own (signal-exit, which pi loads, does that for SIGINT). Where no
        // other listener is left, send the signal again, which now ends the process as it would
        // have without this listener; otherwise come back once the others have had their say.
        const onSignal = () => {
          killAll();
          process.removeListener(signal, onSignal);
          if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
          else setImmediate(() => process.prependListener(signal, onSignal));
        };
        process.prependListener(signal, onSignal);
      }
    }
  }
  return groups;
}

/**
 * Sends `signal` to every process in the group `pgid`; to the process `pgid` alone when the group
 * cannot be signalled (it is not a group leader). Returns whether anything was signalled.
 */
function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    try {
      process.kill(pgid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/** Why a request failed. `kind` lets callers word the message without parsing it. */
export type FailureKind = "missing" | "spawn" | "exited" | "timeout" | "protocol" | "closed" | "rpc";

export class ServeError extends Error {
  readonly kind: FailureKind;
  /** The JSON-RPC error code, for `kind: "rpc"`. */
  readonly code: number | undefined;
  /** The JSON-RPC error data, for `kind: "rpc"`. */
  readonly data: unknown;

  constructor(kind: FailureKind, message: string, code?: number, data?: unknown) {
    super(message);
    this.name = "ServeError";
    this.kind = kind;
    this.code = code;
    this.data = data;
  }
}

/**
 * The binary to run, found the launcher's way first: `PI_RULES_BIN` when set and non-empty (used
 * as given), then the binary in this platform's package (`@pi-rules/cli-<platform>`, installed
 * with this package); otherwise the first executable `pi-rules` in an absolute `PATH` entry.
 * Relative and empty `PATH` entries are skipped, so a `pi-rules` planted in the project directory
 * is never picked up through `PATH=.:...`.
 */
export function findBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return explicitBinary(env) ?? packagedBinary() ?? pathBinary(env);
}

/** Splits a byte stream into LF-terminated lines, given as bytes: the reader decodes each whole line. */
export class LineDecoder {
  private chunks: Buffer[] = [];
  private pending = 0;
  private readonly maxLineBytes: number;

  constructor(maxLineBytes: number = MAX_LINE_BYTES) {
    this.maxLineBytes = maxLineBytes;
  }

  /** Feeds bytes; returns the lines they complete, without their LF. Throws past the line limit. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    let lf = chunk.indexOf(0x0a, start);
    while (lf !== -1) {
      const tail = chunk.subarray(start, lf);
      const line = this.chunks.length === 0 ? tail : Buffer.concat([...this.chunks, tail]);
      this.chunks = [];
      this.pending = 0;
      lines.push(line);
      start = lf + 1;
      lf = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.length) {
      this.pending += chunk.length - start;
      if (this.pending > this.maxLineBytes) {
        this.chunks = [];
        this.pending = 0;
        throw new Error(`a response line is longer than ${this.maxLineBytes} bytes`);
      }
      this.chunks.push(chunk.subarray(start));
    }
    return lines;
  }
}

export interface ServeClientOptions {
  /** Finds the binary each time a child is started. Default: `findBinary()`. */
  resolveBinary?: () => string | undefined;
  /** Per-request timeout in milliseconds. Default: `DEFAULT_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Environment of the child. Default: this process's environment at start time. */
  env?: NodeJS.ProcessEnv;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: ServeError) => void;
  timer: NodeJS.Timeout;
}

/** One live `pi-rules serve` process with its in-flight requests. */
class Child {
  readonly process: ChildProcess;
  readonly pending = new Map<number, Pending>();
  /** Settles once the child has exited and its output has been read to the end. */
  readonly exited: Promise<void>;
  /** Settles once the child itself has exited (or never started), whoever still holds its pipes. */
  readonly leaderExited: Promise<void>;
  alive = true;
  /** The child's process group (its pid), while one may be running. */
  private pgid: number | undefined;
  /** The last bytes of the child's stderr, and whether earlier ones were dropped. */
  private stderrTail = Buffer.alloc(0);
  private stderrCut = false;
  private readonly decoder = new LineDecoder();
  private readonly onGone: (child: Child) => void;

  constructor(bin: string, env: NodeJS.ProcessEnv, onGone: (child: Child) => void) {
    this.onGone = onGone;
    this.process = spawn(bin, ["serve"], { stdio: ["pipe", "pipe", "pipe"], env, detached: true });
    // A session that is never shut down must not keep its host alive; when the host exits, the
    // group is killed (see `liveGroups`), and a child that outlives even that (the host was killed)
    // reads EOF on stdin, on which serve exits. Pending requests keep the loop alive by their timers.
    this.process.unref();
    const pgid = this.process.pid;
    this.pgid = pgid;
    if (pgid !== undefined) liveGroups().add(pgid);
    for (const stream of [this.process.stdin, this.process.stdout, this.process.stderr]) {
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    }
    this.exited = new Promise((resolve) => {
      this.process.once("close", () => resolve());
      this.process.once("error", () => resolve());
    });
    this.leaderExited = new Promise((resolve) => {
      this.process.once("exit", () => resolve());
      this.process.once("error", () => resolve());
    });
    // Whatever the direct child leaves in its group (a wrapper's own children) goes with it. A
    // process that left the group (`setsid`) is out of reach, and may hold the pipes: then "close"
    // never comes, and the child would count as alive until a request timed out. A grace period
    // after the exit (its last output is read by then), the pipes are let go and the child is gone.
    void this.leaderExited.then(async () => {
      this.killGroup("SIGKILL");
      if (await settlesWithin(this.exited, CLOSE_GRACE_MS)) return;
      for (const stream of [this.process.stdin, this.process.stdout, this.process.stderr]) stream?.destroy();
      this.ended(this.process.exitCode, this.process.signalCode);
    });
    this.process.on("error", (error: NodeJS.ErrnoException) => {
      const kind: FailureKind = error.code === "ENOENT" ? "missing" : "spawn";
      const what =
        kind === "missing"
          ? `cannot run \`${bin}\`: no such file (point PI_RULES_BIN at the pi-rules binary, or put pi-rules on PATH)`
          : `cannot run \`${bin}\`: ${error.message}`;
      this.fail(new ServeError(kind, what));
    });
    // "close" comes after stdout has been read to its end, so a last answer is not lost.
    this.process.on("close", (code, signal) => this.ended(code, signal));
    // Writes to a child that has just died fail with EPIPE; the exit handler reports it.
    this.process.stdin?.on("error", () => {});
    this.process.stdout?.on("data", (chunk: Buffer) => this.onData(chunk));
    // Kept as bytes: what it says is shown escaped, bytes that are not UTF-8 as `\xNN`.
    this.process.stderr?.on("data", (chunk: Buffer) => {
      const joined = Buffer.concat([this.stderrTail, chunk]);
      if (joined.length <= STDERR_TAIL_BYTES) {
        this.stderrTail = joined;
      } else {
        this.stderrTail = Buffer.from(joined.subarray(joined.length - STDERR_TAIL_BYTES));
        this.stderrCut = true;
      }
    });
  }

  send(id: number, line: string, entry: Pending): void {
    this.pending.set(id, entry);
    this.process.stdin?.write(line);
  }

  /** Ends the child now: pending requests fail with `error`, and its whole group gets SIGKILL. */
  kill(error: ServeError): void {
    this.fail(error);
    this.killGroup("SIGKILL");
  }

  /** Sends `signal` to the child's process group, while it may have one. */
  killGroup(signal: NodeJS.Signals): void {
    const pgid = this.pgid;
    if (pgid === undefined) return;
    signalGroup(pgid, signal);
    // Nothing survives SIGKILL: once the leader has exited as well, nothing of the group is left.
    if (signal === "SIGKILL" && (this.process.exitCode !== null || this.process.signalCode !== null)) {
      liveGroups().delete(pgid);
      this.pgid = undefined;
    }
  }

  /**
   * Ends the child and everything in its process group: EOF first (serve exits 0 on it), SIGTERM
   * to the group if the child is still there after a grace period, SIGKILL to the group after
   * another, and SIGKILL to what the child left in its group once it has exited. Resolves once the
   * child has exited. The one way a child is ended on purpose (dispose, `/reload`, `close()`).
   */
  async terminate(): Promise<void> {
    this.fail(new ServeError("closed", "the pi-rules client is closed"));
    if (this.process.exitCode === null && this.process.signalCode === null) {
      // The child is unref'd so that it never holds its host; while it is being ended, it does,
      // so that an awaited end is not cut short (at most the two grace periods, SIGKILL works).
      this.process.ref();
      this.process.stdin?.end();
      if (!(await settlesWithin(this.leaderExited, CLOSE_GRACE_MS))) {
        this.killGroup("SIGTERM");
        if (!(await settlesWithin(this.leaderExited, CLOSE_GRACE_MS))) this.killGroup("SIGKILL");
      }
    }
    await this.leaderExited;
    this.killGroup("SIGKILL");
  }

  /** Fails what is pending: the child exited with `code`, or was killed by `signal`. */
  private ended(code: number | null, signal: NodeJS.Signals | null): void {
    const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
    const stderr = shownStderr(this.stderrTail, this.stderrCut);
    this.fail(new ServeError("exited", `\`pi-rules serve\` ${how}${stderr ? `: ${stderr}` : ""}`));
  }

  private onData(chunk: Buffer): void {
    let lines: Buffer[];
    try {
      lines = this.decoder.push(chunk);
    } catch (error) {
      this.kill(new ServeError("protocol", (error as Error).message));
      return;
    }
    for (const line of lines) this.onLine(line);
  }

  private onLine(bytes: Buffer): void {
    if (!withinShape(bytes)) {
      const what = `nested deeper than ${MAX_DEPTH} levels or holding more than ${MAX_COMMAS} values`;
      this.kill(new ServeError("protocol", `\`pi-rules serve\` printed a line ${what}`));
      return;
    }
    const line = bytes.toString("utf8");
    if (line.trim() === "") return;
    let message: { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    try {
      message = JSON.parse(line);
    } catch {
      const quoted = escapeBytes(bytes.subarray(0, characterStart(bytes, QUOTED_LINE_BYTES)));
      this.kill(new ServeError("protocol", `\`pi-rules serve\` printed a line that is not JSON: ${quoted}`));
      return;
    }
    if (typeof message !== "object" || message === null || typeof message.id !== "number") return;
    const entry = this.pending.get(message.id);
    if (!entry) return;
    this.pending.delete(message.id);
    clearTimeout(entry.timer);
    if (message.error !== undefined && message.error !== null) {
      const code = typeof message.error.code === "number" ? message.error.code : undefined;
      const text = typeof message.error.message === "string" ? message.error.message : "unknown error";
      entry.reject(new ServeError("rpc", text, code, message.error.data));
    } else {
      entry.resolve(message.result);
    }
  }

  private fail(error: ServeError): void {
    if (this.alive) {
      this.alive = false;
      this.onGone(this);
    }
    for (const entry of this.pending.values()) {
      clearTimeout(entry.timer);
      entry.reject(error);
    }
    this.pending.clear();
  }
}

/** The JSON-RPC error code for a method the server does not have (an older binary). */
export const METHOD_NOT_FOUND = -32601;

/** The JSON-RPC error code for parameters the server refuses (unknown to an older binary). */
export const INVALID_PARAMS = -32602;

/** What `rules_for_paths` is asked: the files an agent touched, and the settings of the block. */
export interface RulesForPathsParams {
  cwd: string;
  /** Relative to `cwd`, or absolute. */
  paths: string[];
  /** The agent whose `agents:` scopes hold; the server's default is `pi`. */
  agent?: string;
  coms_active?: boolean;
  confine?: boolean;
}

/** One rule whose scope matches one of the paths asked. */
export interface ScopedRule {
  name: string;
  /** The rule's source file; null for a rule embedded in the binary. */
  path: string | null;
  /** The layer the rule comes from, as the server names it. */
  layer: string | undefined;
  /** The scope's directory, absolute. */
  dir: string;
  /** The path asked (as given) that the scope matched, and the glob that did; null for a directory scope. */
  matched: { path: string; glob: string | null };
  /** The rule assembled alone, with the request's settings. */
  text: string;
}

/** The answer of `rules_for_paths`. With scopes off, `scoped` is false and `rules` empty. */
export interface RulesForPaths {
  scoped: boolean;
  rules: ScopedRule[];
  /** The server's own time for the request, in microseconds. */
  elapsed_us: number | undefined;
  /** What the user should hear (say, a nested rule directory that is refused); empty when none. */
  notes: string[];
}

/** Reads a `rules_for_paths` result, or throws a `ServeError` of kind `protocol` saying what is wrong. */
export function parseRulesForPaths(result: unknown): RulesForPaths {
  const bad = (what: string) => new ServeError("protocol", `\`pi-rules serve\` answered \`rules_for_paths\` ${what}`);
  if (!isObject(result) || typeof result.scoped !== "boolean" || !Array.isArray(result.rules)) {
    throw bad("without `scoped` and `rules`");
  }
  const rules = result.rules.map((rule: unknown, at: number): ScopedRule => {
    const matched = isObject(rule) ? rule.matched : undefined;
    if (
      !isObject(rule) ||
      typeof rule.name !== "string" ||
      !(typeof rule.path === "string" || rule.path === null) ||
      typeof rule.dir !== "string" ||
      typeof rule.text !== "string" ||
      !isObject(matched) ||
      typeof matched.path !== "string" ||
      !(typeof matched.glob === "string" || matched.glob === null || matched.glob === undefined)
    ) {
      throw bad(`with a rule (at ${at}) lacking \`name\`, \`path\`, \`dir\`, \`matched\` or \`text\``);
    }
    return {
      name: rule.name,
      path: rule.path,
      layer: typeof rule.layer === "string" ? rule.layer : undefined,
      dir: rule.dir,
      matched: { path: matched.path, glob: typeof matched.glob === "string" ? matched.glob : null },
      text: rule.text,
    };
  });
  const notes = Array.isArray(result.notes) ? result.notes.filter((note): note is string => typeof note === "string") : [];
  return {
    scoped: result.scoped,
    rules,
    elapsed_us: typeof result.elapsed_us === "number" ? result.elapsed_us : undefined,
    notes,
  };
}

/** What `assemble` is asked for the rules block of a turn. */
export interface AssembleParams {
  cwd: string;
  coms_active?: boolean;
  confine?: boolean;
}

/** The rules block of a turn and its warnings, and whether the server said nothing changed. */
export interface AssembledBlock {
  block: string;
  warnings: string[];
  /** The server answered `{"unchanged":true}`: the block is the one held from an earlier turn. */
  unchanged: boolean;
}

/** How the turns went: answered "unchanged", or with the whole result. */
export interface TurnCounts {
  unchanged: number;
  whole: number;
}

/** Reads an `assemble` result's block and warnings, or throws a `ServeError` of kind `protocol`. */
function blockOf(result: unknown): { block: string; warnings: string[] } {
  if (
    !isObject(result) ||
    typeof result.block !== "string" ||
    !Array.isArray(result.warnings) ||
    !result.warnings.every((w) => typeof w === "string")
  ) {
    throw new ServeError("protocol", "`pi-rules serve` answered `assemble` without `block` and `warnings`");
  }
  return { block: result.block, warnings: result.warnings as string[] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A client for one session: starts `pi-rules serve` on the first request, starts a new one when
 * the previous child died, ends a child that does not answer in time, and ends it on `close()`.
 */
export class ServeClient {
  private child: Child | undefined;
  private nextId = 1;
  private closed = false;
  private readonly resolveBinary: () => string | undefined;
  private readonly timeoutMs: number;
  private readonly env: NodeJS.ProcessEnv | undefined;
  /** The last block with the token `serve` gave it, and the parameters it was asked with. */
  private held: { key: string; token: string; block: string; warnings: string[] } | undefined;
  /** Whether the binary refused `have` (an older one): then every turn asks for the whole result. */
  private wholeOnly = false;
  /** How the turns went (`assembleBlock`). */
  readonly turns: TurnCounts = { unchanged: 0, whole: 0 };
  /** The last `eval` response with its token, and the token of its rule texts (`evaluate`). */
  private evalHeld: { rules: string; rulesToken: string; token: string; response: Record<string, unknown> } | undefined;
  /** How the `evaluate` calls went. */
  readonly evals: TurnCounts = { unchanged: 0, whole: 0 };

  constructor(options: ServeClientOptions = {}) {
    this.resolveBinary = options.resolveBinary ?? (() => findBinary());
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.env = options.env;
  }

  /** The pid of the running child, if there is one. */
  get pid(): number | undefined {
    return this.child?.alive ? this.child.process.pid : undefined;
  }

  /**
   * Sends one request and resolves with its `result`. Rejects with a `ServeError`; never throws
   * synchronously. A child that exits before answering is replaced and the request sent once more.
   */
  async request(method: string, params?: Record<string, unknown>): Promise<unknown> {
    try {
      return await this.attempt(method, params);
    } catch (error) {
      if (error instanceof ServeError && error.kind === "exited" && !this.closed) {
        return this.attempt(method, params);
      }
      throw error;
    }
  }

  /**
   * The rules whose scope matches one of `params.paths` (`rules_for_paths`). Rejects with a
   * `ServeError`: of kind `rpc` with code `METHOD_NOT_FOUND` from a binary that predates scopes.
   */
  async rulesForPaths(params: RulesForPathsParams): Promise<RulesForPaths> {
    return parseRulesForPaths(await this.request("rules_for_paths", { ...params }));
  }

  /**
   * The rules block for a turn (`assemble`). Sends the token of the block it holds (`have`), so
   * that a turn where nothing changed is answered `{"unchanged":true}`, a few dozen bytes, instead
   * of the whole result; a binary that does not know `have` is asked for the whole result from
   * then on. Rejects with a `ServeError`.
   */
  async assembleBlock(params: AssembleParams): Promise<AssembledBlock> {
    const key = JSON.stringify([params.cwd, params.coms_active === true, params.confine === true]);
    const plain = { cwd: params.cwd, coms_active: params.coms_active === true, confine: params.confine === true };
    if (!this.wholeOnly) {
      const held = this.held?.key === key ? this.held : undefined;
      let result: unknown;
      try {
        result = await this.request("assemble", { ...plain, have: held?.token ?? "" });
      } catch (error) {
        if (!(error instanceof ServeError && error.kind === "rpc" && error.code === INVALID_PARAMS)) throw error;
        this.wholeOnly = true;
        this.held = undefined;
        return this.assembleBlock(params);
      }
      if (isObject(result) && result.unchanged === true && held !== undefined) {
        this.turns.unchanged++;
        return { block: held.block, warnings: held.warnings, unchanged: true };
      }
      const { block, warnings } = blockOf(result);
      this.turns.whole++;
      this.held = isObject(result) && typeof result.token === "string" ? { key, token: result.token, block, warnings } : undefined;
      return { block, warnings, unchanged: false };
    }
    const { block, warnings } = blockOf(await this.request("assemble", plain));
    this.turns.whole++;
    return { block, warnings, unchanged: false };
  }

  /**
   * An `eval` request through `serve`, its rule texts sent once: while they are the last ones
   * sent, the request carries their `rules_token` instead, and the token of the response held
   * (`have`), so that a response that would be the same is `{"unchanged":true}` and the held one
   * is given again. A server that no longer holds the rules (restarted) is sent them again.
   * Resolves with the `eval` response object (without the tokens); rejects with a `ServeError`.
   */
  async evaluate(request: Record<string, unknown> & { rules?: unknown }): Promise<Record<string, unknown>> {
    const { rules, ...rest } = request;
    const rulesText = JSON.stringify(rules ?? null);
    const held = rules !== undefined && this.evalHeld?.rules === rulesText ? this.evalHeld : undefined;
    let result: unknown;
    if (held !== undefined) {
      try {
        result = await this.request("eval", { ...rest, rules_token: held.rulesToken, have: held.token });
      } catch (error) {
        if (!(error instanceof ServeError && error.kind === "rpc" && error.code === INVALID_PARAMS)) throw error;
        this.evalHeld = undefined;
        return this.evaluate(request);
      }
      if (isObject(result) && result.unchanged === true) {
        this.evals.unchanged++;
        return { ...held.response };
      }
    } else {
      result = await this.request("eval", { ...request, have: "" });
    }
    if (!isObject(result)) throw new ServeError("protocol", "`pi-rules serve` answered `eval` without an object");
    this.evals.whole++;
    const { token, rules_token: rulesToken, ...response } = result;
    this.evalHeld =
      typeof token === "string" && typeof rulesToken === "string" && rules !== undefined
        ? { rules: rulesText, rulesToken, token, response }
        : undefined;
    return { ...response };
  }

  private attempt(method: string, params: Record<string, unknown> | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new ServeError("closed", "the pi-rules client is closed"));
        return;
      }
      let child: Child;
      try {
        child = this.ensureChild();
      } catch (error) {
        reject(error);
        return;
      }
      const id = this.nextId++;
      const line = `${JSON.stringify({ jsonrpc: "2.0", id, method, params: params ?? {} })}\n`;
      const timer = setTimeout(() => {
        // Responses come in order, so a hung request blocks every later one: end this child.
        child.kill(new ServeError("timeout", `\`pi-rules serve\` did not answer \`${method}\` within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      child.send(id, line, { resolve, reject, timer });
    });
  }

  private ensureChild(): Child {
    if (this.child?.alive) return this.child;
    const bin = this.resolveBinary();
    if (bin === undefined) {
      throw new ServeError(
        "missing",
        "cannot find `pi-rules`: install the npm package pi-rules with its optional dependencies, set PI_RULES_BIN to a binary, or put pi-rules on PATH",
      );
    }
    const child = new Child(bin, this.env ?? process.env, (gone) => {
      if (this.child === gone) this.child = undefined;
    });
    this.child = child;
    return child;
  }

  /**
   * Ends the child and its process group: EOF, then SIGTERM and SIGKILL each after a grace period
   * (`Child.terminate`). Resolves once the child is gone. Safe to call more than once.
   */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.child = undefined;
    if (!child) return;
    await child.terminate();
  }

  /**
   * Starts ending the child as `close()` does, without waiting: for callbacks that cannot await.
   * A process that exits before the grace periods are over kills the group in its exit hook.
   */
  closeNow(): void {
    void this.close();
  }
}

/**
 * Whether the JSON text `bytes` nests at most `MAX_DEPTH` levels deep and holds at most
 * `MAX_COMMAS` commas outside its strings. Looks at each byte once, without building anything.
 */
function withinShape(bytes: Buffer): boolean {
  let depth = 0;
  let commas = 0;
  let inString = false;
  for (let at = 0; at < bytes.length; at++) {
    const byte = bytes[at];
    if (inString) {
      if (byte === 0x5c) at++; // a backslash: what it escapes ends nothing
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) {
      inString = true;
    } else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > MAX_DEPTH) return false;
    } else if (byte === 0x5d || byte === 0x7d) {
      depth--;
    } else if (byte === 0x2c) {
      if (++commas > MAX_COMMAS) return false;
    }
  }
  return true;
}

/**
 * The end of the child's stderr as an error quotes it: without the surrounding whitespace and,
 * when its start was dropped, without the rest of a character cut there; escaped, with the bytes
 * that are not UTF-8 as `\xNN`.
 */
function shownStderr(tail: Buffer, cut: boolean): string {
  let start = cut ? characterStart(tail, 0) : 0;
  let end = tail.length;
  const blank = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
  while (start < end && blank(tail[start])) start++;
  while (end > start && blank(tail[end - 1])) end--;
  return escapeBytes(tail.subarray(start, end));
}

/**
 * The first offset from `at` on (at most 3 bytes on, at most `bytes.length`) that does not hold a
 * UTF-8 continuation byte: a cut there splits no character that a cut at `at` would.
 */
function characterStart(bytes: Buffer, at: number): number {
  let start = Math.min(at, bytes.length);
  while (start < bytes.length && start < at + 3 && (bytes[start] & 0xc0) === 0x80) start++;
  return start;
}

/** Whether `promise` settles within `ms`. The timer holds the process, so an awaited close ends. */
function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
