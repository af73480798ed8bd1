// Scoped rules: the rules whose `paths:` (or nested `.pi/rules` directory) match a file the agent
// reads, edits or writes are added to that tool's result, once per session. End to end, a real pi
// session in this process with the faux model calling pi's own tools; which rules and which text
// are expected always comes from the binary run as a separate process on the same project.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Message, TextContent } from "@earendil-works/pi-ai";
import { parseRulesForPaths, type RulesForPaths, type ScopedRule } from "../client.ts";
import { SECTION } from "../index.ts";
import { bashWords, DeliveredRules, MAX_PATHS, SCOPED_TAG, scopedRulesText, touchedPaths } from "../scoped.ts";
import {
  asSection,
  cliBlock,
  type Harness,
  makeProject,
  requireServe,
  startSession,
  withEnv,
  withSession,
  writeFile,
  writeScript,
} from "./harness.ts";

const API_RULE = "# API rule\n\nValidate every request body.\n";
const WEB_RULE = "# Web rule\n\nNo inline styles.\n";
const PACKAGE_RULE = "# Package rule\n\nLog through the package's own logger.\n";
const PROJECT_RULE = "# Project rule\n\nKeep the changelog current.\n";

const TURN_ON = "[rules]\nscoped = true\n";

/** pi's settings for a session whose manual compaction keeps no earlier turn. */
const COMPACT_ALL = { settings: { compaction: { keepRecentTokens: 1 } } };

/** A project with two path-scoped rules, one nested rule directory and one rule for everything. */
function scopedProject(scoped: boolean): string {
  return makeProject({
    ...(scoped ? { ".pi/pi-rules.toml": TURN_ON } : {}),
    ".pi/rules/80-api.md": `---\npaths: src/api/**\n---\n${API_RULE}`,
    ".pi/rules/81-web.md": `---\npaths:\n  - "web/**"\n---\n${WEB_RULE}`,
    ".pi/rules/90-project.md": PROJECT_RULE,
    "packages/api/.pi/rules/85-package.md": PACKAGE_RULE,
    "src/api/handler.ts": "export const handler = 1;\n",
    "src/api/other.ts": "export const other = 2;\n",
    "web/app.ts": "export const app = 3;\n",
    "packages/api/src/index.ts": "export const index = 4;\n",
    "README.md": "# readme\n",
  });
}

/** What `pi-rules serve`, run as its own process, answers `rules_for_paths` for `paths` in `cwd`. */
function served(cwd: string, paths: string[]): RulesForPaths {
  const request = { jsonrpc: "2.0", id: 1, method: "rules_for_paths", params: { cwd, paths, agent: "pi", confine: true } };
  const run = spawnSync(requireServe(), ["serve"], { input: `${JSON.stringify(request)}\n`, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const reply = JSON.parse(run.stdout.split("\n")[0]);
  assert.equal(reply.error, undefined, `rules_for_paths failed: ${JSON.stringify(reply.error)}`);
  return parseRulesForPaths(reply.result);
}

/** The text parts of every tool result the model was sent, by tool call, from the latest request. */
function toolResults(h: Harness): string[][] {
  const messages: readonly Message[] = h.requests[h.requests.length - 1] ?? [];
  return messages
    .filter((message) => message.role === "toolResult")
    .map((message) => message.content.filter((part): part is TextContent => part.type === "text").map((part) => part.text));
}

/** The parts of the tool results that pi-rules added. */
function added(results: string[][]): string[] {
  return results.flatMap((parts) => parts.filter((part) => part.startsWith(`<${SCOPED_TAG}>`)));
}

describe("scoped rules in a pi session", () => {
  test("reading src/api/handler.ts adds the src/api/** rule to that result, and not web's; the block holds neither", async () => {
    const cwd = scopedProject(true);
    await withSession(cwd, async (h) => {
      h.script([["read", { path: "src/api/handler.ts" }]]);
      await h.prompt("look at the handler");
      assert.equal(h.requests.length, 2, "the model was not called again after the tool");

      const [result] = toolResults(h);
      assert.equal(result.length, 2, `expected the tool's output and the rules: ${JSON.stringify(result)}`);
      // The tool's own output first and whole, the rules after it.
      assert.ok(result[0].includes("export const handler = 1;"), result[0]);
      assert.ok(!result[0].includes(`<${SCOPED_TAG}>`));
      const expected = served(cwd, ["src/api/handler.ts"]);
      assert.equal(expected.scoped, true);
      assert.deepEqual(
        expected.rules.map((rule) => rule.name),
        ["80-api.md"],
      );
      assert.equal(result[1], scopedRulesText(expected.rules, cwd));
      assert.ok(result[1].includes("Validate every request body."));
      assert.ok(result[1].includes("applies to src/api/handler.ts: its scope is `src/api/**`"), result[1]);
      assert.ok(!result[1].includes("No inline styles."));

      // The always-on block is the binary's, and with scopes on it holds neither scoped rule.
      const block = cliBlock(cwd);
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, block)));
      assert.ok(block.includes("Keep the changelog current."));
      for (const prompt of h.systemPrompts) {
        assert.ok(!prompt.includes("Validate every request body."), "the src/api rule is in the system prompt");
        assert.ok(!prompt.includes("No inline styles."), "the web rule is in the system prompt");
        assert.ok(!prompt.includes("Log through the package's own logger."), "the nested rule is in the system prompt");
      }
      assert.deepEqual(h.notes, []);
    });
  });

  test("reading a file in packages/api brings that directory's own rule, and no root-scoped one", async () => {
    const cwd = scopedProject(true);
    await withSession(cwd, async (h) => {
      h.script([["read", { path: "packages/api/src/index.ts" }]]);
      await h.prompt("look at the package");
      const [result] = toolResults(h);
      assert.equal(result.length, 2, JSON.stringify(result));
      const expected = served(cwd, ["packages/api/src/index.ts"]);
      assert.deepEqual(
        expected.rules.map((rule) => rule.name),
        ["85-package.md"],
      );
      assert.equal(result[1], scopedRulesText(expected.rules, cwd));
      assert.ok(result[1].includes("Log through the package's own logger."));
      assert.ok(result[1].includes("rule packages/api/.pi/rules/85-package.md applies to packages/api/src/index.ts"), result[1]);
      assert.ok(!result[1].includes("Validate every request body."));
    });
  });

  test("a rule comes once per session: a second matching file, by any tool, adds nothing", async () => {
    const cwd = scopedProject(true);
    await withSession(cwd, async (h) => {
      h.script(
        [["read", { path: "src/api/handler.ts" }]],
        [["read", { path: "src/api/other.ts" }]],
        [["bash", { command: "cat src/api/handler.ts" }]],
      );
      await h.prompt("read both");
      h.script([["edit", { path: "src/api/other.ts", edits: [{ oldText: "2", newText: "3" }] }]]);
      await h.prompt("and edit one");
      const results = toolResults(h);
      assert.equal(results.length, 4);
      assert.equal(added(results).length, 1, JSON.stringify(results));
      assert.equal(results[0].length, 2);
      for (const result of results.slice(1)) assert.equal(result.length, 1, JSON.stringify(result));
      assert.equal(readFileSync(join(cwd, "src/api/other.ts"), "utf8"), "export const other = 3;\n");
    });
  });

  test("bash: the files a command names bring their rules; words that are not files bring nothing", async () => {
    const cwd = scopedProject(true);
    await withSession(cwd, async (h) => {
      h.script(
        [["bash", { command: "echo src/api/missing.ts web/*.ts $HOME 'README.md'" }]],
        [["bash", { command: "wc -l 'web/app.ts' < src/api/handler.ts && echo done" }]],
      );
      await h.prompt("count");
      const results = toolResults(h);
      assert.equal(results.length, 2);
      assert.equal(results[0].length, 1, JSON.stringify(results[0]));
      assert.equal(results[1].length, 2, JSON.stringify(results[1]));
      const expected = served(cwd, ["web/app.ts", "src/api/handler.ts"]);
      assert.deepEqual(expected.rules.map((rule) => rule.name).sort(), ["80-api.md", "81-web.md"]);
      assert.equal(results[1][1], scopedRulesText(expected.rules, cwd));
    });
  });

  test("write and edit bring the rules of the file they change", async () => {
    const cwd = scopedProject(true);
    await withSession(cwd, async (h) => {
      h.script(
        [["write", { path: "web/new.ts", content: "export const fresh = 5;\n" }]],
        [["edit", { path: "src/api/handler.ts", edits: [{ oldText: "1", newText: "7" }] }]],
      );
      await h.prompt("change things");
      const results = toolResults(h);
      assert.equal(results.length, 2);
      assert.ok(results[0][1]?.includes("No inline styles."), JSON.stringify(results[0]));
      assert.ok(results[0][1]?.includes("applies to web/new.ts"), JSON.stringify(results[0]));
      assert.ok(results[1][1]?.includes("Validate every request body."), JSON.stringify(results[1]));
    });
  });

  test("after a compaction, the next matching file brings the rule again", async () => {
    const cwd = scopedProject(true);
    await withSession(cwd, async (h) => {
      h.script([["read", { path: "src/api/handler.ts" }]]);
      await h.prompt("one");
      assert.equal(added(toolResults(h)).length, 1);
      await h.session.compact();
      h.script([["read", { path: "src/api/other.ts" }]]);
      await h.prompt("two");
      const results = toolResults(h);
      const last = results[results.length - 1];
      assert.equal(last.length, 2, JSON.stringify(results));
      assert.ok(last[1].includes("Validate every request body."));
      assert.ok(last[1].includes("applies to src/api/other.ts"));
      // The first read, and the rule in it, went into the summary.
      assert.equal(results.length, 1, "the compaction kept the first tool result");
    }, COMPACT_ALL);
  });

  test("after a move to another branch of the session (/tree), the rule comes again", async () => {
    const cwd = scopedProject(true);
    await withSession(cwd, async (h) => {
      h.script([["read", { path: "src/api/handler.ts" }]]);
      await h.prompt("one");
      assert.equal(added(toolResults(h)).length, 1);
      // Back to before the first prompt: the branch with the rule is left behind.
      const [first] = h.session.getUserMessagesForForking();
      const moved = await h.session.navigateTree(first.entryId, { summarize: false });
      assert.equal(moved.cancelled, false);
      h.script([["read", { path: "src/api/other.ts" }]]);
      await h.prompt("two");
      const results = toolResults(h);
      assert.equal(results.length, 1, "the old branch's tool result is still in the context");
      assert.equal(results[0].length, 2, JSON.stringify(results));
      assert.ok(results[0][1].includes("Validate every request body."));
    });
  });

  test("a rule edited during the session comes again, with its new text", async () => {
    const cwd = scopedProject(true);
    await withSession(cwd, async (h) => {
      h.script([["read", { path: "src/api/handler.ts" }]]);
      await h.prompt("one");
      writeFile(join(cwd, ".pi/rules/80-api.md"), "---\npaths: src/api/**\n---\n# API rule\n\nValidate every response too.\n");
      h.script([["read", { path: "src/api/other.ts" }]], [["read", { path: "src/api/handler.ts" }]]);
      await h.prompt("two");
      const results = toolResults(h);
      assert.equal(results.length, 3);
      assert.ok(results[0][1].includes("Validate every request body."));
      assert.equal(results[1].length, 2, JSON.stringify(results[1]));
      assert.ok(results[1][1].includes("Validate every response too."));
      assert.ok(!results[1][1].includes("Validate every request body."));
      assert.equal(results[2].length, 1, JSON.stringify(results[2]));
    });
  });

  test("with scoped off (no .pi/pi-rules.toml), the block is pi-config's and no rule is added", async () => {
    const cwd = scopedProject(false);
    await withSession(cwd, async (h) => {
      h.script(
        [["read", { path: "src/api/handler.ts" }]],
        [["read", { path: "packages/api/src/index.ts" }]],
        [["bash", { command: "cat web/app.ts" }]],
      );
      await h.prompt("read");
      const results = toolResults(h);
      assert.equal(results.length, 3);
      for (const result of results) assert.equal(result.length, 1, JSON.stringify(result));
      // pi-config ignores `paths:` and nested directories: both path rules are in the block, always.
      const block = cliBlock(cwd);
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, block)));
      assert.ok(block.includes("Validate every request body."));
      assert.ok(block.includes("No inline styles."));
      assert.ok(!block.includes("Log through the package's own logger."));
      const answer = served(cwd, ["src/api/handler.ts"]);
      assert.deepEqual([answer.scoped, answer.rules], [false, []]);
    });
  });

  test("a subagent gets no scoped rules", async () => {
    const cwd = scopedProject(true);
    await withEnv({ PI_SUBAGENT_CHILD: "1" }, () =>
      withSession(cwd, async (h) => {
        h.script([["read", { path: "src/api/handler.ts" }]]);
        await h.prompt("read");
        const [result] = toolResults(h);
        assert.equal(result.length, 1);
      }),
    );
  });
});

/**
 * A `pi-rules` that passes every request to the real binary except `rules_for_paths`, which it
 * answers as `mode` says: `missing`, as a binary from before scopes (-32601), or `hang`, never.
 * Each `rules_for_paths` it gets is logged, one line each, to `log`.
 */
function proxyBinary(mode: "missing" | "hang", log: string): string {
  const program = join(makeProject(), "proxy.mjs");
  writeFile(
    program,
    `import { spawn } from "node:child_process";
    import { appendFileSync } from "node:fs";
    const child = spawn(${JSON.stringify(requireServe())}, process.argv.slice(2), { stdio: ["pipe", "inherit", "inherit"] });
    child.on("exit", (code) => process.exit(code ?? 1));
    let buffered = "";
    process.stdin.setEncoding("utf8").on("data", (text) => {
      buffered += text;
      for (let lf = buffered.indexOf("\\n"); lf !== -1; lf = buffered.indexOf("\\n")) {
        const line = buffered.slice(0, lf + 1);
        buffered = buffered.slice(lf + 1);
        const { id, method } = JSON.parse(line);
        if (method !== "rules_for_paths") { child.stdin.write(line); continue; }
        appendFileSync(${JSON.stringify(log)}, method + "\\n");
        if (${JSON.stringify(mode)} === "missing") {
          process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: "unknown method \`rules_for_paths\`" } }) + "\\n");
        }
      }
    });
    process.stdin.on("end", () => child.stdin.end());`,
  );
  return writeScript(`exec '${process.execPath}' '${program}' "$@"`);
}

describe("when the binary cannot give scoped rules", () => {
  for (const mode of ["missing", "hang"] as const) {
    test(`rules_for_paths ${mode === "missing" ? "unknown (an older binary)" : "never answered"}: results stay the tool's own, asked once ${mode === "missing" ? "a session" : "an agent start"}`, async () => {
      const cwd = scopedProject(true);
      const log = join(makeProject(), "asked.log");
      writeFile(log, "");
      const proxy = proxyBinary(mode, log);
      await withEnv({ PI_RULES_BIN: proxy, PI_RULES_TIMEOUT_MS: "500" }, async () => {
        // withSession sets PI_RULES_BIN to the real binary: this test runs its own session.
        const h = await startSession(cwd);
        try {
          h.script([["read", { path: "src/api/handler.ts" }]], [["read", { path: "web/app.ts" }]]);
          await h.prompt("read");
          const results = toolResults(h);
          assert.equal(results.length, 2);
          for (const result of results) assert.equal(result.length, 1, JSON.stringify(result));
          assert.ok(results[0][0].includes("export const handler = 1;"));
          assert.deepEqual(h.errors, []);
          assert.equal(readFileSync(log, "utf8"), "rules_for_paths\n", "asked again after a failure");
          // The next agent start: an older binary is not asked again, a hung one (replaced) is.
          h.script([["read", { path: "src/api/other.ts" }]]);
          await h.prompt("again");
          assert.equal(toolResults(h).every((result) => result.length === 1), true);
          assert.equal(readFileSync(log, "utf8"), "rules_for_paths\n".repeat(mode === "missing" ? 1 : 2));
          assert.deepEqual(h.errors, []);
        } finally {
          h.dispose();
        }
      });
    });
  }
});

describe("touchedPaths", () => {
  const cwd = makeProject({ "src/a.ts": "", "src/b c.ts": "", "web/x.ts": "", "dir/.keep": "" });
  const cases: { name: string; tool: string; input: Record<string, unknown>; isError?: boolean; paths: string[] }[] = [
    { name: "read's path", tool: "read", input: { path: "src/a.ts" }, paths: ["src/a.ts"] },
    { name: "a missing file is still asked about for read", tool: "read", input: { path: "nope.ts" }, paths: ["nope.ts"] },
    { name: "a failed read: nothing", tool: "read", input: { path: "src/a.ts" }, isError: true, paths: [] },
    { name: "an absolute path inside cwd becomes relative", tool: "edit", input: { path: join(cwd, "src/a.ts") }, paths: ["src/a.ts"] },
    { name: "pi's leading @ is dropped", tool: "write", input: { path: "@src/a.ts" }, paths: ["src/a.ts"] },
    { name: "a path outside cwd stays absolute", tool: "read", input: { path: "/etc/hostname" }, paths: ["/etc/hostname"] },
    { name: "../ is resolved", tool: "read", input: { path: "web/../src/a.ts" }, paths: ["src/a.ts"] },
    { name: "other tools: nothing", tool: "grep", input: { path: "src/a.ts", pattern: "x" }, paths: [] },
    { name: "bash: existing files only", tool: "bash", input: { command: "cat src/a.ts src/none.ts dir web/x.ts" }, paths: ["src/a.ts", "web/x.ts"] },
    { name: "bash: quoted names and escapes", tool: "bash", input: { command: `wc "src/b c.ts" src/b\\ c.ts` }, paths: ["src/b c.ts"] },
    { name: "bash: no expansion", tool: "bash", input: { command: "cat src/*.ts $F ~/x `ls` \"$(echo src/a.ts)\"" }, paths: [] },
    { name: "bash: redirections and option values", tool: "bash", input: { command: "sort <src/a.ts >out --file=web/x.ts" }, paths: ["src/a.ts", "web/x.ts"] },
    { name: "bash: a failed command still names its files", tool: "bash", input: { command: "false src/a.ts" }, isError: true, paths: ["src/a.ts"] },
    { name: "bash: no command", tool: "bash", input: {}, paths: [] },
  ];
  for (const { name, tool, input, isError, paths } of cases) {
    test(name, () => assert.deepEqual(touchedPaths(tool, input, isError ?? false, cwd), paths));
  }

  test(`bash: at most ${MAX_PATHS} paths`, () => {
    const files: Record<string, string> = {};
    for (let n = 0; n < MAX_PATHS + 10; n++) files[`f${n}.txt`] = "";
    const many = makeProject(files);
    const command = `cat ${Object.keys(files).join(" ")}`;
    assert.deepEqual(touchedPaths("bash", { command }, false, many), Object.keys(files).slice(0, MAX_PATHS));
  });
});

describe("bashWords", () => {
  const cases: [string, string[]][] = [
    ["cat a b", ["cat", "a", "b"]],
    ["a;b|c&&d||e&f", ["a", "b", "c", "d", "e", "f"]],
    ["x >out 2>>err <in", ["x", "out", "2", "err", "in"]],
    ["'a b' \"c d\" e\\ f", ["a b", "c d", "e f"]],
    ['"a\\"b" \'c\\d\'', ['a"b', "c\\d"]],
    ["ls -la --color=auto --out=o.txt X=1 -", ["ls", "auto", "o.txt", "1"]],
    ["echo $A \"$B\" '$C' `d` e*.ts f? [g] {h,i} ~/j k~", ["echo", "$C", "k~"]],
    ["a # b c\nd", ["a", "d"]],
    ["a#b", ["a#b"]],
    ["a \\\nb", ["a", "b"]],
    ["cat 'unterminated", ["cat"]],
    ['cat "unterminated', ["cat"]],
    ["(cd x && ls)", ["cd", "x", "ls"]],
    ["", []],
  ];
  for (const [command, words] of cases) {
    test(JSON.stringify(command), () => assert.deepEqual(bashWords(command), words));
  }

  test("a huge command ends quickly, with at most 1,024 words", () => {
    const words = bashWords("a ".repeat(1_000_000));
    assert.equal(words.length, 1024);
  });
});

const rule = (over: Partial<ScopedRule>): ScopedRule => ({
  name: "80-api.md",
  path: "/p/.pi/rules/80-api.md",
  layer: "project",
  dir: "/p",
  matched: { path: "src/api/h.ts", glob: "src/api/**" },
  text: "\n\n# API\n\nValidate.\n",
  ...over,
});

describe("DeliveredRules", () => {
  test("each rule once, by its file; again when its text changed, and after forget()", () => {
    const delivered = new DeliveredRules();
    assert.deepEqual(delivered.take([rule({}), rule({})]), [rule({})]);
    assert.deepEqual(delivered.take([rule({ matched: { path: "src/api/x.ts", glob: "src/api/**" } })]), []);
    const nested = rule({ path: "/p/packages/api/.pi/rules/80-api.md", dir: "/p/packages/api" });
    assert.deepEqual(delivered.take([nested]), [nested]);
    const edited = rule({ text: "Validate twice.\n" });
    assert.deepEqual(delivered.take([edited]), [edited]);
    delivered.forget();
    assert.deepEqual(delivered.take([edited, nested]), [edited, nested]);
  });

  test("built-in rules (no file) are told apart by name and directory", () => {
    const delivered = new DeliveredRules();
    const a = rule({ path: null, name: "a" });
    const b = rule({ path: null, name: "b" });
    assert.deepEqual(delivered.take([a, b, a]), [a, b]);
    assert.equal(delivered.take([rule({ path: null, name: "a", dir: "/p/x" })]).length, 1);
  });
});

describe("scopedRulesText", () => {
  test("a header per rule (name, file, touched file, scope), then its text", () => {
    const text = scopedRulesText(
      [
        rule({}),
        rule({
          name: "85-package.md",
          path: "/p/packages/api/.pi/rules/85-package.md",
          dir: "/p/packages/api",
          matched: { path: "packages/api/src/i.ts", glob: null },
          text: "Log.\n",
        }),
        rule({
          name: "86-sql.md",
          path: "/p/packages/api/.pi/rules/86-sql.md",
          dir: "/p/packages/api",
          matched: { path: "packages/api/q.sql", glob: "*.sql" },
          text: "SQL.\n",
        }),
        rule({ name: "00-core.md", path: null, matched: { path: "/elsewhere/x.ts", glob: "**" }, text: "Core." }),
      ],
      "/p",
    );
    assert.equal(
      text,
      [
        "<scoped_rules>",
        "[pi-rules] rule .pi/rules/80-api.md applies to src/api/h.ts: its scope is `src/api/**`",
        "",
        "# API",
        "",
        "Validate.",
        "",
        "[pi-rules] rule packages/api/.pi/rules/85-package.md applies to packages/api/src/i.ts: its scope is the directory packages/api/",
        "",
        "Log.",
        "",
        "[pi-rules] rule packages/api/.pi/rules/86-sql.md applies to packages/api/q.sql: its scope is `*.sql` in packages/api/",
        "",
        "SQL.",
        "",
        "[pi-rules] rule `00-core.md` (built in) applies to /elsewhere/x.ts: its scope is `**`",
        "",
        "Core.",
        "</scoped_rules>",
      ].join("\n"),
    );
  });
});

describe("parseRulesForPaths", () => {
  test("takes the design's answer, and refuses one without its fields", () => {
    const answer = {
      scoped: true,
      rules: [{ name: "a", path: null, layer: "package", dir: "/p", matched: { path: "x", glob: null }, text: "t" }],
      elapsed_us: 12,
      notes: ["a note", 3],
    };
    assert.deepEqual(parseRulesForPaths(answer), {
      scoped: true,
      rules: [{ name: "a", path: null, layer: "package", dir: "/p", matched: { path: "x", glob: null }, text: "t" }],
      elapsed_us: 12,
      notes: ["a note"],
    });
    for (const bad of [null, {}, { scoped: true }, { scoped: true, rules: [{ name: "a" }] }, { scoped: "yes", rules: [] }]) {
      assert.throws(() => parseRulesForPaths(bad), /answered `rules_for_paths`/);
    }
  });
});
