// Scoped rules in a session: which files a tool call touched, which of the rules that match them
// the model has already been given, and how they are added to the tool's result. Talks to nothing:
// index.ts asks the binary (`rules_for_paths`) and calls these.

import { statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { ScopedRule } from "./client.ts";

/** At most this many paths are asked about for one tool call. */
export const MAX_PATHS = 64;

/** A bash command is looked at up to this many characters, and this many words. */
const MAX_COMMAND_CHARS = 64 * 1024;
const MAX_WORDS = 1024;

/** The tag around the rules added to a tool result. */
export const SCOPED_TAG = "scoped_rules";

/**
 * The files a call of `toolName` with `input` touched, as paths for `rules_for_paths`: relative to
 * `cwd` when inside it, absolute otherwise. `read`, `edit` and `write`: their `path` argument, when
 * the call succeeded. `bash`: the words of its command that name existing files (see `bashWords`).
 * Any other tool: none.
 */
export function touchedPaths(toolName: string, input: Record<string, unknown>, isError: boolean, cwd: string): string[] {
  if (toolName === "read" || toolName === "edit" || toolName === "write") {
    if (isError || typeof input.path !== "string" || input.path === "") return [];
    return [requestPath(toolPath(input.path, cwd), cwd)];
  }
  if (toolName === "bash" && typeof input.command === "string") {
    const found = new Set<string>();
    for (const word of bashWords(input.command)) {
      if (found.size >= MAX_PATHS) break;
      const absolute = resolve(cwd, word);
      if (isFile(absolute)) found.add(requestPath(absolute, cwd));
    }
    return [...found];
  }
  return [];
}

/** The file a pi file tool works on for `path`, as pi resolves it: a leading `@` dropped, `~` expanded. */
function toolPath(path: string, cwd: string): string {
  const bare = path.startsWith("@") ? path.slice(1) : path;
  if (bare === "~") return homedir();
  if (bare.startsWith("~/")) return resolve(homedir(), bare.slice(2));
  return resolve(cwd, bare);
}

/** `absolute` relative to `cwd` when it is inside it, `absolute` itself otherwise. */
function requestPath(absolute: string, cwd: string): string {
  const rel = relative(cwd, absolute);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return absolute;
  return rel;
}

function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/**
 * The words of a shell command that may be file names, split without running anything: on
 * whitespace and the operators `; & | < > ( )`, with quotes and backslashes taken as the shell
 * takes them. A word the shell would expand (an unquoted or double-quoted `$` or backquote, an
 * unquoted glob character or leading `~`) is left out, since its value is not known here, and so
 * is an option (`-x`, `--x`); from `--opt=VALUE` and `NAME=VALUE` the value is kept. A `#` that
 * starts a word starts a comment up to the end of the line. At most `MAX_WORDS` words, from at most
 * the first `MAX_COMMAND_CHARS` characters.
 */
export function bashWords(command: string): string[] {
  const text = command.slice(0, MAX_COMMAND_CHARS);
  const words: string[] = [];
  let word = "";
  let started = false;
  let expands = false;
  const end = () => {
    if (started && !expands && word !== "") {
      const value = /^(?:--?[A-Za-z0-9][A-Za-z0-9_-]*|[A-Za-z_][A-Za-z0-9_]*)=/.exec(word);
      if (value) {
        if (word.length > value[0].length) words.push(word.slice(value[0].length));
      } else if (!word.startsWith("-")) {
        words.push(word);
      }
    }
    word = "";
    started = false;
    expands = false;
  };
  let at = 0;
  while (at < text.length && words.length < MAX_WORDS) {
    const char = text[at];
    if (char === " " || char === "\t" || char === "\n" || char === "\r" || ";&|<>()".includes(char)) {
      end();
      at++;
    } else if (char === "#" && !started) {
      const newline = text.indexOf("\n", at);
      at = newline === -1 ? text.length : newline;
    } else if (char === "'") {
      const close = text.indexOf("'", at + 1);
      if (close === -1) {
        // An unterminated quote: the shell would refuse the command; nothing more is a word.
        started = false;
        break;
      }
      word += text.slice(at + 1, close);
      started = true;
      at = close + 1;
    } else if (char === '"') {
      at++;
      started = true;
      while (at < text.length && text[at] !== '"') {
        if (text[at] === "\\" && at + 1 < text.length && '$`"\\\n'.includes(text[at + 1])) {
          word += text[at + 1];
          at += 2;
        } else {
          if (text[at] === "$" || text[at] === "`") expands = true;
          word += text[at];
          at++;
        }
      }
      if (at >= text.length) {
        started = false;
        break;
      }
      at++;
    } else if (char === "\\") {
      if (at + 1 < text.length && text[at + 1] !== "\n") {
        word += text[at + 1];
        started = true;
      }
      at += 2;
    } else {
      if ("$`*?[{".includes(char) || (char === "~" && !started)) expands = true;
      word += char;
      started = true;
      at++;
    }
  }
  end();
  return words.slice(0, MAX_WORDS);
}

/**
 * The rules the model has been given in this session, by rule (its source file, or its name and
 * scope directory for a rule embedded in the binary) with the text it was given: a rule comes
 * again only when its text changed meanwhile, or after `forget()` (a compaction, or a move to
 * another branch of the session, may have dropped the tool result that carried it).
 */
export class DeliveredRules {
  private readonly given = new Map<string, string>();

  /** The rules of `rules` not yet given with their present text, each once; they count as given from now on. */
  take(rules: readonly ScopedRule[]): ScopedRule[] {
    const fresh: ScopedRule[] = [];
    for (const rule of rules) {
      const key = rule.path ?? `\u0000${rule.name}\u0000${rule.dir}`;
      if (this.given.get(key) === rule.text) continue;
      this.given.set(key, rule.text);
      fresh.push(rule);
    }
    return fresh;
  }

  forget(): void {
    this.given.clear();
  }
}

/**
 * The text added to a tool result for `rules` (at least one): inside `<scoped_rules>` tags, for
 * each rule a header line naming the rule (its file), the touched file that brought it and the
 * scope that matched, then the rule's text. Paths are shown relative to `cwd` when inside it.
 */
export function scopedRulesText(rules: readonly ScopedRule[], cwd: string): string {
  const parts = rules.map((rule) => {
    // A rule's file names it (`.pi/rules/80-api.md`); a rule of the binary's own is named.
    const source = rule.path === null ? `\`${rule.name}\` (built in)` : shownPath(rule.path, cwd);
    const dir = shownPath(rule.dir, cwd);
    const scope =
      rule.matched.glob === null
        ? `the directory ${dir}/`
        : dir === "."
          ? `\`${rule.matched.glob}\``
          : `\`${rule.matched.glob}\` in ${dir}/`;
    const header = `[pi-rules] rule ${source} applies to ${rule.matched.path}: its scope is ${scope}`;
    return `${header}\n\n${rule.text.replace(/^\n+/, "").trimEnd()}`;
  });
  return `<${SCOPED_TAG}>\n${parts.join("\n\n")}\n</${SCOPED_TAG}>`;
}

function shownPath(path: string, cwd: string): string {
  const shown = requestPath(resolve(cwd, path), cwd);
  return shown === resolve(cwd) ? "." : shown;
}
