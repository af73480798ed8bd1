// End to end: a real pi session in this process loads this package, and the faux model records
// the system prompt it is sent. The expected text always comes from the binary run as a separate
// process on the same project.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createEventBus } from "@earendil-works/pi-coding-agent";
import { CLOSE_GRACE_MS } from "../client.ts";
import { COMS_EVENT, FALLBACK_BLOCK, renderSettings, SECTION, setComsActive } from "../index.ts";
import { escapeText } from "../terminal.js";
import { FAUX_ANSWER } from "./faux-provider.ts";
import {
  asSection,
  childrenNamed,
  cli,
  cliBlock,
  cliWarnings,
  eventually,
  groupMembers,
  makeProject,
  noSuchProcess,
  PACKAGE_DIR,
  requireServe,
  startSession,
  withEnv,
  withSession,
  writeFile,
  writeScript,
} from "./harness.ts";

const RULE = "# Project rule\n\nKeep the changelog current.\n";

/** A condition that would retitle the terminal, clear it, and reorder what follows it. */
const HOSTILE_CONDITION = "a\x1b]0;title\x07\x1b[2J\u009b\u202e";

/** Raw characters no line shown to the user may hold (LF separates lines and is allowed). */
const RAW_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

/** The `rule assembly:` lines `pi-rules assemble` prints on stderr for `cwd`: the binary's own escaping. */
function cliWarningLines(cwd: string): string[] {
  const run = spawnSync(requireServe(), ["assemble", "--cwd", cwd], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  assert.equal(run.status, 0, run.stderr);
  return run.stderr.split("\n").filter((line) => line.startsWith("rule assembly: "));
}

/** The explain view the package should show: the binary's, with the coms line in pi's terms. */
function expectedExplain(cwd: string, coms: boolean): string {
  const lines = cli(["explain", "--cwd", cwd, ...(coms ? ["--coms-active"] : [])]).trimEnd().split("\n");
  const at = lines.findIndex((line) => line.startsWith("feature coms_active = "));
  assert.ok(at >= 0, "explain has no coms_active line");
  assert.match(lines[at], coms ? /--coms-active\)$/ : /--coms-active was not given\)$/);
  lines[at] = `feature coms_active = ${coms} (from pi: coms ${coms ? "active" : "inactive"} in this pi session)`;
  return lines.join("\n");
}

function sectionsIn(prompt: string): number {
  return prompt.split(`<${SECTION}>`).length - 1;
}

describe("the rules block", () => {
  test("the model gets exactly the block pi-rules assemble prints, once, as a section", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withSession(cwd, async (h) => {
      await h.prompt("hello");
      const block = cliBlock(cwd);
      assert.ok(block.includes("Keep the changelog current."));
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, block)));
      assert.equal(sectionsIn(h.lastSystemPrompt()), 1);
      assert.deepEqual(h.notes, []);
    });
  });

  test("an edit shows at the next prompt; an unchanged block adds no system message", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withSession(cwd, async (h) => {
      await h.prompt("one");
      const before = cliBlock(cwd);
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, before)));

      await h.prompt("two");
      assert.deepEqual(h.systemMessages, [1, 1], "an unchanged block must leave the cached prompt alone");

      writeFile(join(cwd, ".pi/rules/90-project.md"), "# Project rule\n\nKeep the release notes current.\n");
      await h.prompt("three");
      const after = cliBlock(cwd);
      assert.notEqual(after, before);
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, after)));
      assert.ok(!h.lastSystemPrompt().includes("Keep the changelog current."));
      assert.equal(sectionsIn(h.lastSystemPrompt()), 1);
      assert.deepEqual(h.systemMessages, [1, 1, 2], "a changed block is sent as one patch");
    });
  });

  test("a settings edit shows at the very next turn", async () => {
    const cwd = makeProject({
      ".pi/rules/90-project.md": "# Project rule\n\n{{IF:dco}}Sign off every commit.{{/IF}}\n",
      ".pi/pi-config-settings.json": '{"dco": true}',
    });
    await withSession(cwd, async (h) => {
      await h.prompt("one");
      assert.ok(h.lastSystemPrompt().includes("Sign off every commit."));
      await h.prompt("two");
      writeFile(join(cwd, ".pi/pi-config-settings.json"), '{"dco": false}');
      await h.prompt("three");
      const after = cliBlock(cwd);
      assert.ok(!after.includes("Sign off every commit."));
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, after)));
      assert.ok(!h.lastSystemPrompt().includes("Sign off every commit."));
    });
  });

  test("a turn where nothing changed is answered in a few dozen bytes, and the model still gets the block", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    // The wire, as serve writes it: a wrapper copies serve's answers into a log.
    const log = join(cwd, "..", `serve-${process.pid}-${Date.now()}.log`);
    const wrapper = writeScript(`'${requireServe()}' "$@" | tee -a '${log}'`);
    await withEnv({ PI_RULES_BIN: wrapper }, async () => {
      const h = await startSession(cwd);
      try {
        for (const turn of ["one", "two", "three"]) await h.prompt(turn);
        const block = asSection(SECTION, cliBlock(cwd));
        assert.equal(h.systemPrompts.filter((prompt) => prompt.includes(block)).length, 3);
        writeFile(join(cwd, ".pi/rules/90-project.md"), "# Project rule\n\nKeep the release notes current.\n");
        await h.prompt("four");
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
        assert.deepEqual(h.errors, []);
      } finally {
        h.dispose();
      }
      // The wrapper, tee and serve are gone before the next test counts its children.
      assert.ok(await eventually(() => childrenNamed("pi-rules").length === 0, 5000), "a pi-rules child outlived the session");
      const answers = readFileSync(log, "utf8").split("\n").filter((line) => line !== "");
      assert.equal(answers.length, 4, answers.join("\n").slice(0, 500));
      const [first, second, third, fourth] = answers.map((line) => JSON.parse(line) as { result: Record<string, unknown> });
      assert.equal(typeof first.result.token, "string");
      assert.ok(typeof first.result.block === "string" && first.result.block.includes("Keep the changelog current."));
      for (const [at, answer] of [answers[1], answers[2]].entries()) {
        assert.deepEqual([second, third][at].result, { unchanged: true });
        assert.ok(answer.length < 64, `${answer.length} bytes: ${answer}`);
      }
      assert.notEqual(fourth.result.token, first.result.token);
      assert.ok(typeof fourth.result.block === "string" && fourth.result.block.includes("Keep the release notes current."));
    });
  });

  test("thirty turns in a row: one child throughout, and the block every time", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withSession(cwd, async (h) => {
      const seen = new Set<number>();
      for (let turn = 0; turn < 30; turn++) {
        await h.prompt(`turn ${turn}`);
        for (const pid of childrenNamed("pi-rules")) seen.add(pid);
      }
      assert.equal(seen.size, 1, "a child was started more than once");
      const block = asSection(SECTION, cliBlock(cwd));
      assert.equal(h.systemPrompts.filter((prompt) => prompt.includes(block)).length, 30);
      assert.deepEqual(h.notes, []);
    });
  });

  test("a subagent (PI_SUBAGENT_CHILD=1) gets no block and starts no pi-rules", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withEnv({ PI_SUBAGENT_CHILD: "1" }, () =>
      withSession(cwd, async (h) => {
        await h.prompt("hello");
        assert.equal(sectionsIn(h.lastSystemPrompt()), 0);
        assert.ok(!h.lastSystemPrompt().includes("Keep the changelog current."));
        assert.deepEqual(childrenNamed("pi-rules"), []);
        assert.deepEqual(h.notes, []);
      }),
    );
  });

  test("only PI_SUBAGENT_CHILD exactly 1 means a subagent", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withEnv({ PI_SUBAGENT_CHILD: "true" }, () =>
      withSession(cwd, async (h) => {
        await h.prompt("hello");
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
      }),
    );
  });
});

describe("warnings", () => {
  test("notified once per distinct set, not every turn", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": "{{IF:no_such_setting}}dropped{{/IF}}kept\n" });
    await withSession(cwd, async (h) => {
      const first = cliWarnings(cwd);
      assert.ok(first.length > 0);
      await h.prompt("one");
      await h.prompt("two");
      const expected = (warnings: string[]) => warnings.map((w) => `rule assembly: ${w}`).join("\n");
      assert.deepEqual(h.notes, [{ message: expected(first), type: "warning" }]);
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));

      writeFile(join(cwd, ".pi/rules/91-more.md"), "{{IF:another_unknown}}x{{/IF}}\n");
      const second = cliWarnings(cwd);
      assert.ok(second.length > first.length);
      await h.prompt("three");
      await h.prompt("four");
      assert.deepEqual(h.notes.slice(1), [{ message: expected(second), type: "warning" }]);
    });
  });

  test("a hostile condition reaches the user escaped, as the binary prints it", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": `{{IF:${HOSTILE_CONDITION}}}x{{/IF}}\nkept\n` });
    await withSession(cwd, async (h) => {
      await h.prompt("hello");
      assert.equal(h.notes.length, 1);
      assert.equal(h.notes[0].type, "warning");
      const shown = h.notes[0].message;
      assert.doesNotMatch(shown, RAW_UNSAFE);
      assert.doesNotMatch(shown, /\n/);
      assert.ok(shown.includes("a\\x1b]0;title\\x07\\x1b[2J\\x9b\\u{202e}"), shown);
      assert.deepEqual([shown], cliWarningLines(cwd));
      // The model still gets the block the binary assembles.
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
    });
  });
});

describe("/rules", () => {
  test("/rules shows the explain view and does not call the model", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withSession(cwd, async (h) => {
      await h.prompt("/rules");
      assert.equal(h.systemPrompts.length, 0, "the model was called");
      assert.equal(h.notes.length, 1);
      assert.equal(h.notes[0].type, "info");
      assert.equal(h.notes[0].message.trimEnd(), expectedExplain(cwd, false));
      assert.ok(h.notes[0].message.includes("90-project.md"));
    });
  });

  test("/rules says pi's coms state, not the binary's command-line flag", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    try {
      await withSession(cwd, async (h) => {
        await h.prompt("/rules");
        assert.match(h.notes[0].message, /^feature coms_active = false \(from pi: coms inactive in this pi session\)$/m);
        setComsActive(true);
        await h.prompt("/rules");
        assert.equal(h.notes[1].message.trimEnd(), expectedExplain(cwd, true));
        assert.match(h.notes[1].message, /^feature coms_active = true \(from pi: coms active in this pi session\)$/m);
        for (const note of h.notes) assert.ok(!note.message.includes("--coms-active"), note.message);
      });
    } finally {
      setComsActive(false);
    }
  });

  test("/rules and /rules check show a hostile rule escaped", async () => {
    const name = "91-x\x1b]0;t\x07\u202e.md";
    const cwd = makeProject({
      ".pi/rules/90-project.md": `---\nrequires_setting: k${HOSTILE_CONDITION}\n---\n{{IF:${HOSTILE_CONDITION}}}x{{/IF}}\n`,
      [`.pi/rules/${name}`]: RULE,
    });
    await withSession(cwd, async (h) => {
      await h.prompt("/rules");
      await h.prompt("/rules check");
      assert.equal(h.notes.length, 2);
      for (const note of h.notes) assert.doesNotMatch(note.message, RAW_UNSAFE);
      assert.equal(h.notes[0].message.trimEnd(), expectedExplain(cwd, false));
      assert.ok(h.notes[0].message.includes(escapeText(name)));
      assert.equal(h.notes[1].message.trimEnd(), cli(["check", "--cwd", cwd, "--format", "human"]).trimEnd());
      assert.equal(h.notes[1].type, "warning");
    });
  });

  test("/rules shows the notes the binary gives, escaped", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    const fifo = join(cwd, ".pi/rules/95-pipe\x1b[2J.md");
    const made = spawnSync("mkfifo", [fifo]);
    assert.equal(made.status, 0, "mkfifo failed");
    const notes = JSON.parse(cli(["assemble", "--format", "json", "--cwd", cwd])).notes as string[];
    assert.equal(notes.length, 1);
    assert.match(notes[0], /FIFO/);
    await withSession(cwd, async (h) => {
      await h.prompt("/rules");
      assert.equal(h.notes.length, 1);
      const shown = h.notes[0].message;
      assert.doesNotMatch(shown, RAW_UNSAFE);
      assert.equal(shown, `${expectedExplain(cwd, false)}\nnote: ${escapeText(notes[0])}`);
      assert.ok(shown.endsWith("95-pipe\\x1b[2J.md` in the project layer: it is a FIFO, not a file"), shown);
    });
  });

  test("/rules check shows the lint findings and does not call the model", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": "{{IF:no_such_setting}}x{{/IF}}\n" });
    await withSession(cwd, async (h) => {
      await h.prompt("/rules check");
      assert.equal(h.systemPrompts.length, 0, "the model was called");
      assert.equal(h.notes.length, 1);
      assert.equal(h.notes[0].type, "warning");
      assert.equal(h.notes[0].message.trimEnd(), cli(["check", "--cwd", cwd, "--format", "human"]).trimEnd());
      assert.ok(h.notes[0].message.includes("no_such_setting"));
    });
  });

  test("an unknown argument gets the usage", async () => {
    const cwd = makeProject();
    await withSession(cwd, async (h) => {
      await h.prompt("/rules frobnicate");
      assert.equal(h.systemPrompts.length, 0);
      assert.equal(h.notes.length, 1);
      assert.match(h.notes[0].message, /^usage: \/rules/);
    });
  });
});

describe("when the binary fails", () => {
  test("a missing binary gives the fallback line and one error notification", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withEnv({ PI_RULES_BIN: join(cwd, "no-such-pi-rules") }, async () => {
      const h = await startSession(cwd);
      try {
        await h.prompt("one");
        await h.prompt("two");
        assert.equal(FALLBACK_BLOCK, "\n\n[ORCHESTRATOR RULES] You are a MANAGER. Delegate work to subagents.\n");
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, FALLBACK_BLOCK)));
        assert.equal(h.notes.length, 1);
        assert.equal(h.notes[0].type, "error");
        assert.match(h.notes[0].message, /no-such-pi-rules/);
        assert.deepEqual(h.errors, []);
      } finally {
        h.dispose();
      }
    });
  });

  test("a faulty binary's stderr and output reach the user escaped, bytes that are not UTF-8 as \\xNN", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    // Raw escapes, lone bytes, and C1 and U+202E in UTF-8: on stderr before exiting, and as a line on stdout.
    const hostile = "bad\\033]0;t\\007\\033[2J\\377\\376 \\302\\233\\342\\200\\256\\nend";
    const shown = "bad\\x1b]0;t\\x07\\x1b[2J\\xff\\xfe \\x9b\\u{202e}\\nend";
    const cases = [
      { binary: writeScript(`printf '${hostile}\\n' >&2; exit 3`), said: `\`pi-rules serve\` exited with status 3: ${shown}` },
      { binary: writeScript(`printf '${hostile}\\n'; cat >/dev/null`), said: `\`pi-rules serve\` printed a line that is not JSON: bad\\x1b]0;t\\x07\\x1b[2J\\xff\\xfe \\x9b\\u{202e}` },
    ];
    for (const { binary, said } of cases) {
      await withEnv({ PI_RULES_BIN: binary }, async () => {
        const h = await startSession(cwd);
        try {
          await h.prompt("one");
          await h.prompt("/rules");
          assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, FALLBACK_BLOCK)));
          assert.deepEqual(
            h.notes.map((note) => note.message),
            [`pi-rules: ${said}; the rules block is the one-line fallback until this is fixed`, `pi-rules: ${said}`],
          );
          for (const note of h.notes) assert.doesNotMatch(note.message, RAW_UNSAFE);
          assert.deepEqual(h.errors, []);
        } finally {
          h.dispose();
        }
      });
    }
  });

  test("a PI_RULES_BIN with escapes in its path, missing or not executable, is named escaped", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    const name = "pi-rules\x1b]0;t\x07\n\u202e";
    const plain = join(cwd, `plain-${name}`);
    writeFile(plain, "not a program\n");
    for (const [binary, why] of [
      [join(cwd, `missing-${name}`), /: no such file \(point PI_RULES_BIN/],
      [plain, /EACCES/],
    ] as const) {
      await withEnv({ PI_RULES_BIN: binary }, async () => {
        const h = await startSession(cwd);
        try {
          await h.prompt("one");
          assert.equal(h.notes.length, 1);
          const shown = h.notes[0].message;
          assert.doesNotMatch(shown, RAW_UNSAFE);
          assert.doesNotMatch(shown, /\n/);
          assert.ok(shown.startsWith(`pi-rules: cannot run \`${escapeText(binary)}\``), shown);
          assert.match(shown, why);
        } finally {
          h.dispose();
        }
      });
    }
  });

  test("the fallback line is what pi-rules itself gives when no rule can be read", async () => {
    const cwd = makeProject();
    const block = await withEnv({ PI_RULES_PACKAGE_DIR: join(cwd, "none") }, async () => cliBlock(cwd));
    assert.equal(block, FALLBACK_BLOCK);
  });

  test("a child killed between prompts is replaced without a word", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withSession(cwd, async (h) => {
      await h.prompt("one");
      const [pid] = childrenNamed("pi-rules");
      assert.ok(pid !== undefined);
      process.kill(pid, "SIGKILL");
      assert.ok(await eventually(() => !childrenNamed("pi-rules").includes(pid)));
      await h.prompt("two");
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
      assert.deepEqual(h.notes, []);
    });
  });

  test("a hung child: fallback and one error, then the rules come back on a new child", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withEnv({ PI_RULES_TIMEOUT_MS: "1000" }, () =>
      withSession(cwd, async (h) => {
        await h.prompt("one");
        const [pid] = childrenNamed("pi-rules");
        assert.ok(pid !== undefined);
        process.kill(pid, "SIGSTOP");
        await h.prompt("two");
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, FALLBACK_BLOCK)));
        assert.equal(h.notes.length, 1);
        assert.equal(h.notes[0].type, "error");
        assert.match(h.notes[0].message, /did not answer `assemble` within 1000 ms/);
        assert.ok(await eventually(() => !childrenNamed("pi-rules").includes(pid)), "the hung child is still there");

        await h.prompt("three");
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
        assert.equal(h.notes.length, 1);
      }),
    );
  });
});

describe("pi's print mode (pi -p), through pi's own CLI", () => {
  // pi's CLI as installed, in print mode, with this package and the faux model as extensions.
  const CLI = join(PACKAGE_DIR, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
  const FAUX = join(PACKAGE_DIR, "test/faux-provider.ts");

  function printMode(cwd: string, env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
    const run = spawnSync(
      process.execPath,
      [CLI, "-p", "--no-session", "-e", FAUX, "-e", PACKAGE_DIR, "--model", "faux/faux-1", "hello"],
      { cwd, encoding: "utf8", timeout: 60_000, env: { ...process.env, NO_COLOR: "1", ...env } },
    );
    assert.equal(run.error, undefined);
    return run;
  }

  test("a missing binary: the answer on stdout, exit 0, and the error on stderr", () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    const run = printMode(cwd, { PI_RULES_BIN: join(cwd, "no-such-pi-rules") });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), FAUX_ANSWER);
    const said = run.stderr.split("\n").filter((line) => line.startsWith("pi-rules: "));
    assert.equal(said.length, 1, run.stderr);
    assert.match(said[0], /no-such-pi-rules/);
    assert.match(said[0], /the rules block is the one-line fallback/);
  });

  test("Ctrl-C (SIGINT, which pi -p leaves to its default) ends pi and the child's whole group", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    const started = join(cwd, "started");
    // A shim that leaves a helper running and never answers: pi waits in the agent start.
    const hanging = writeScript(`sleep 1000 </dev/null >/dev/null 2>&1 &\necho $$ >'${started}'\nexec sleep 1000`);
    const pi = spawn(process.execPath, [CLI, "-p", "--no-session", "-e", FAUX, "-e", PACKAGE_DIR, "--model", "faux/faux-1", "hello"], {
      cwd,
      stdio: "ignore",
      env: { ...process.env, NO_COLOR: "1", PI_RULES_BIN: hanging, PI_RULES_TIMEOUT_MS: "60000" },
    });
    const ended = new Promise<NodeJS.Signals | number | null>((resolve) => pi.on("close", (status, signal) => resolve(signal ?? status)));
    let pgid = 0;
    try {
      assert.ok(
        await eventually(() => {
          pgid = Number(readFileSync(started, { encoding: "utf8", flag: "a+" }));
          return pgid > 0 && groupMembers(pgid).length === 2;
        }, 30_000),
        "the shim never ran",
      );
      pi.kill("SIGINT");
      assert.equal(await ended, "SIGINT", "pi did not end by the signal");
      assert.ok(await eventually(() => noSuchProcess(-pgid), 5000), "the child's group outlived pi");
    } finally {
      pi.kill("SIGKILL");
      if (pgid > 0 && !noSuchProcess(-pgid)) process.kill(-pgid, "SIGKILL");
    }
  });

  test("assembly warnings go to stderr, escaped as the binary prints them", () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": `{{IF:${HOSTILE_CONDITION}}}x{{/IF}}\n` });
    const run = printMode(cwd, { PI_RULES_BIN: requireServe() });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), FAUX_ANSWER);
    assert.doesNotMatch(run.stderr, RAW_UNSAFE);
    const expected = cliWarningLines(cwd);
    assert.equal(expected.length, 1);
    assert.deepEqual(
      run.stderr.split("\n").filter((line) => line.startsWith("rule assembly: ")),
      expected,
    );
  });
});

describe("the child's lifetime", () => {
  test("no pi-rules child outlives a disposed session", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    const bin = requireServe();
    await withEnv({ PI_RULES_BIN: bin }, async () => {
      const h = await startSession(cwd);
      assert.deepEqual(childrenNamed("pi-rules"), [], "started before it was needed");
      await h.prompt("one");
      await h.prompt("two");
      assert.equal(childrenNamed("pi-rules").length, 1, "one child per session");
      h.dispose();
      assert.ok(await eventually(() => childrenNamed("pi-rules").length === 0), "a pi-rules child outlived the session");
      assert.deepEqual(h.errors, []);
    });
  });

  test("a binary that answers but ignores EOF and SIGTERM is gone after dispose", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    // serve answers; once it has exited on EOF, the script stays, ignoring SIGTERM, as do its sleeps.
    const stubborn = writeScript(`trap '' TERM\n'${requireServe()}' "$@"\nwhile :; do sleep 1; done`);
    await withEnv({ PI_RULES_BIN: stubborn }, async () => {
      const h = await startSession(cwd);
      let pgid: number | undefined;
      try {
        await h.prompt("one");
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))), "the stubborn binary did not answer");
        [pgid] = childrenNamed("pi-rules");
        assert.ok(pgid !== undefined);
        assert.ok(groupMembers(pgid).length >= 2, "the script and its serve share the child's group");
      } finally {
        h.dispose();
      }
      const group = pgid;
      // EOF, a second's grace, SIGTERM (ignored), another second, SIGKILL.
      // Orphaned grandchildren are reaped by init, which may take a moment after they die.
      assert.ok(await eventually(() => noSuchProcess(-group) && noSuchProcess(group), 8000), "the stubborn binary outlived dispose");
      assert.deepEqual(groupMembers(group), []);
      assert.deepEqual(h.errors, []);
    });
  });

  test("a binary that itself ignores EOF and SIGTERM, answering every turn, is killed after the grace periods", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    const program = join(cwd, "deaf.mjs");
    writeFile(
      program,
      `process.on("SIGTERM", () => {});
      setInterval(() => {}, 1000);
      let buffered = "";
      process.stdin.setEncoding("utf8").on("data", (text) => {
        buffered += text;
        for (let lf = buffered.indexOf("\\n"); lf !== -1; lf = buffered.indexOf("\\n")) {
          const { id } = JSON.parse(buffered.slice(0, lf));
          buffered = buffered.slice(lf + 1);
          process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result: { block: "\\n\\nDEAF BLOCK\\n", warnings: [] } }) + "\\n");
        }
      });`,
    );
    // Node in the script's place (exec), so it shows as `node`: the script says its pid first.
    const started = join(cwd, "pid");
    const deaf = writeScript(`echo $$ >'${started}'\nexec '${process.execPath}' '${program}'`);
    await withEnv({ PI_RULES_BIN: deaf }, async () => {
      const h = await startSession(cwd);
      let pid: number | undefined;
      try {
        await h.prompt("one");
        await h.prompt("two");
        assert.deepEqual(
          h.systemPrompts.map((prompt) => prompt.includes(asSection(SECTION, "\n\nDEAF BLOCK\n"))),
          [true, true],
        );
        pid = Number(readFileSync(started, "utf8"));
        assert.ok(pid > 0 && !noSuchProcess(pid));
      } finally {
        h.dispose();
      }
      const deafPid = pid as number;
      // Neither EOF nor SIGTERM ends it: still there after the first grace period and into the second.
      await sleep(CLOSE_GRACE_MS * 1.5);
      assert.ok(!noSuchProcess(deafPid), "the binary ended before SIGKILL: the test shows nothing");
      assert.ok(await eventually(() => noSuchProcess(deafPid), 5000), "the deaf binary outlived dispose");
      assert.deepEqual(h.notes, []);
      assert.deepEqual(h.errors, []);
    });
  });

  test("a wrapper's own children are ended with it on dispose", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    // A shim that leaves a helper running (not holding the pipes) and runs serve without exec.
    const wrapper = writeScript(`sleep 1000 </dev/null >/dev/null 2>&1 &\n'${requireServe()}' "$@"`);
    await withEnv({ PI_RULES_BIN: wrapper }, async () => {
      const h = await startSession(cwd);
      let pgid: number | undefined;
      let members: number[] = [];
      try {
        await h.prompt("one");
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
        [pgid] = childrenNamed("pi-rules");
        assert.ok(pgid !== undefined);
        members = groupMembers(pgid);
        assert.equal(members.length, 3, "the shim, its helper and serve");
      } finally {
        h.dispose();
      }
      const group = pgid;
      assert.ok(await eventually(() => noSuchProcess(-group) && members.every(noSuchProcess), 5000), "a wrapper's child outlived dispose");
    });
  });

  test("a wrapper whose child hangs: the turn ends on time, and the whole group is killed", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    const hanging = writeScript("sleep 1000");
    await withEnv({ PI_RULES_BIN: hanging, PI_RULES_TIMEOUT_MS: "500" }, async () => {
      const h = await startSession(cwd);
      try {
        const turn = h.prompt("one");
        let members: number[] = [];
        let pgid: number | undefined;
        assert.ok(
          await eventually(() => {
            [pgid] = childrenNamed("pi-rules");
            members = pgid === undefined ? [] : groupMembers(pgid);
            return members.length === 2;
          }),
          "the wrapper and its sleep never ran",
        );
        await turn;
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, FALLBACK_BLOCK)));
        assert.equal(h.notes.length, 1);
        assert.match(h.notes[0].message, /did not answer `assemble` within 500 ms/);
        // Before dispose: the timeout alone ended the group.
        const group = pgid as number;
        assert.ok(await eventually(() => noSuchProcess(-group) && members.every(noSuchProcess), 5000), "the hung wrapper's child runs on");
      } finally {
        h.dispose();
      }
    });
  });

  test("a stubborn child neither holds nor outlives a host process that exits normally", async () => {
    const stubborn = writeScript(`trap '' TERM\n'${requireServe()}' "$@"\nwhile :; do sleep 1; done`);
    const clientUrl = new URL("../client.ts", import.meta.url).href;
    // The host asks once, prints the child's pid, closes nothing, and has nothing left to do.
    const host = `
      import { ServeClient } from ${JSON.stringify(clientUrl)};
      const client = new ServeClient({ resolveBinary: () => ${JSON.stringify(stubborn)} });
      await client.request("version");
      console.log(client.pid);
    `;
    const started = Date.now();
    const run = await new Promise<{ status: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", host], { stdio: ["ignore", "pipe", "inherit"] });
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.on("close", (status) => {
        clearTimeout(timer);
        resolve({ status, stdout });
      });
    });
    assert.equal(run.status, 0, "the host did not exit on its own");
    assert.ok(Date.now() - started < 8000, "the child held the host");
    const pgid = Number(run.stdout.trim());
    assert.ok(Number.isInteger(pgid) && pgid > 0, run.stdout);
    assert.ok(await eventually(() => noSuchProcess(-pgid), 5000), "the child's group outlived its host");
  });

  // A host process that asks once, prints the child's pid, and waits; `handler` is what it does on SIGINT.
  function hostAsking(binary: string, handler?: string): ReturnType<typeof spawn> {
    const clientUrl = new URL("../client.ts", import.meta.url).href;
    const host = `
      import { ServeClient } from ${JSON.stringify(clientUrl)};
      const client = new ServeClient({ resolveBinary: () => ${JSON.stringify(binary)} });
      ${handler === undefined ? "" : `process.on("SIGINT", async () => { ${handler} });`}
      await client.request("version");
      console.log(client.pid);
      setInterval(() => {}, 1000);
    `;
    return spawn(process.execPath, ["--input-type=module", "-e", host], { stdio: ["ignore", "pipe", "inherit"] });
  }

  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    test(`a host ended by ${signal}, which it leaves to its default, takes the child's group with it`, async () => {
      // serve answers; the shim keeps a helper and ignores SIGTERM: nothing here ends on its own.
      const stubborn = writeScript(`trap '' TERM\nsleep 1000 </dev/null >/dev/null 2>&1 &\n'${requireServe()}' "$@"\nwhile :; do sleep 1; done`);
      const host = hostAsking(stubborn);
      const ended = new Promise<NodeJS.Signals | number | null>((resolve) => host.on("close", (status, sig) => resolve(sig ?? status)));
      let stdout = "";
      host.stdout?.setEncoding("utf8").on("data", (text: string) => (stdout += text));
      let pgid = 0;
      try {
        assert.ok(await eventually(() => (pgid = Number(stdout.trim())) > 0, 10_000), "the host never got an answer");
        assert.ok(groupMembers(pgid).length >= 3, "the shim, its helper and serve");
        host.kill(signal);
        assert.equal(await ended, signal, "the host did not end by the signal");
        assert.ok(await eventually(() => noSuchProcess(-pgid), 5000), "the child's group outlived its host");
      } finally {
        host.kill("SIGKILL");
        if (pgid > 0 && !noSuchProcess(-pgid)) process.kill(-pgid, "SIGKILL");
      }
    });
  }

  test("a host that handles SIGINT itself lives on, and its client still answers", async () => {
    const host = hostAsking(requireServe(), `console.log(JSON.stringify(await client.request("version"))); await client.close(); process.exit(0);`);
    const ended = new Promise<number | null>((resolve) => host.on("close", (status) => resolve(status)));
    let stdout = "";
    host.stdout?.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    try {
      assert.ok(await eventually(() => /^[0-9]+\n/.test(stdout), 10_000), "the host never got an answer");
      host.kill("SIGINT");
      assert.equal(await ended, 0, stdout);
      assert.equal(JSON.parse(stdout.split("\n")[1]).name, "pi-rules");
    } finally {
      host.kill("SIGKILL");
    }
  });

  test("session_shutdown (a reload) ends the child", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withSession(cwd, async (h) => {
      await h.prompt("one");
      const [pid] = childrenNamed("pi-rules");
      assert.ok(pid !== undefined);
      await h.session.reload();
      assert.ok(!childrenNamed("pi-rules").includes(pid), "the child outlived session_shutdown");
      await h.prompt("two");
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
    });
  });
});

describe("a session that ends with a request in flight", () => {
  test("/reload during a slow /rules: no error for the cut request, and /rules works in the new session", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    // Slow to start: the first /rules is still waiting when the reload ends its child.
    const slow = writeScript(`sleep 1\nexec '${requireServe()}' "$@"`);
    await withEnv({ PI_RULES_BIN: slow }, async () => {
      const h = await startSession(cwd);
      try {
        const cut = h.prompt("/rules");
        assert.ok(await eventually(() => childrenNamed("pi-rules").length === 1), "the first /rules started no child");
        await h.session.reload();
        await cut;
        assert.deepEqual([...h.notes], [], "the request the reload cut short was reported");
        await h.prompt("/rules");
        assert.equal(h.notes.length, 1);
        assert.equal(h.notes[0].type, "info");
        assert.equal(h.notes[0].message.trimEnd(), expectedExplain(cwd, false));
        assert.deepEqual(h.errors, []);
      } finally {
        h.dispose();
      }
      assert.ok(await eventually(() => childrenNamed("pi-rules").length === 0, 5000), "a pi-rules child outlived the session");
    });
  });

  test("dispose during a turn whose binary hangs: the turn ends at once, quietly, and nothing is left", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    const hanging = writeScript("sleep 1000");
    await withEnv({ PI_RULES_BIN: hanging, PI_RULES_TIMEOUT_MS: "60000" }, async () => {
      const h = await startSession(cwd);
      let members: number[] = [];
      const turn = h.prompt("one");
      try {
        assert.ok(
          await eventually(() => {
            const [pgid] = childrenNamed("pi-rules");
            members = pgid === undefined ? [] : groupMembers(pgid);
            return members.length === 2;
          }),
          "the wrapper and its sleep never ran",
        );
      } finally {
        h.dispose();
      }
      const started = Date.now();
      await turn;
      assert.ok(Date.now() - started < 2000, `the turn took ${Date.now() - started} ms to end after dispose`);
      assert.deepEqual(h.notes, []);
      assert.deepEqual(h.errors, []);
      // EOF and SIGTERM go unheard by a shell in `sleep`: SIGKILL after the two grace periods.
      assert.ok(await eventually(() => members.every(noSuchProcess), 5000), "the hung wrapper outlived dispose");
    });
  });
});

describe("options", () => {
  const COMS_RULE = "---\nrequires: coms_active\n---\n# Coms\n\nAnswer your peers.\n";

  test("coms_active follows the event bus and setComsActive", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE, ".pi/rules/91-coms.md": COMS_RULE });
    const eventBus = createEventBus();
    try {
      await withSession(
        cwd,
        async (h) => {
          await h.prompt("off by default");
          assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
          assert.ok(!h.lastSystemPrompt().includes("Answer your peers."));

          eventBus.emit(COMS_EVENT, true);
          await h.prompt("on from the bus");
          assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd, ["--coms-active"]))));
          assert.ok(h.lastSystemPrompt().includes("Answer your peers."));

          // This module instance is not the one pi loaded; the switch reaches it all the same.
          setComsActive(false);
          await h.prompt("off from the export");
          assert.ok(!h.lastSystemPrompt().includes("Answer your peers."));

          eventBus.emit(COMS_EVENT, { active: true });
          await h.prompt("on again");
          assert.ok(h.lastSystemPrompt().includes("Answer your peers."));
        },
        { eventBus },
      );
    } finally {
      setComsActive(false);
    }
  });

  test("requests are confined by default, and PI_RULES_CONFINE=0 sends them unconfined", async () => {
    const outside = makeProject({ "secret.md": "SECRET FROM OUTSIDE THE PROJECT\n" });
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    symlinkSync(join(outside, "secret.md"), join(cwd, ".pi/rules/95-outside.md"));
    await withSession(cwd, async (h) => {
      await h.prompt("confined");
      assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd, ["--confine"]))));
    });
    await withEnv({ PI_RULES_CONFINE: "0" }, () =>
      withSession(cwd, async (h) => {
        await h.prompt("not confined");
        assert.ok(h.lastSystemPrompt().includes(asSection(SECTION, cliBlock(cwd))));
        assert.ok(h.lastSystemPrompt().includes("SECRET FROM OUTSIDE"));
      }),
    );
  });

  test("a project rule that links outside the project never reaches the model", async () => {
    const outside = makeProject({ "secret.md": "SECRET FROM OUTSIDE THE PROJECT\n" });
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    symlinkSync(join(outside, "secret.md"), join(cwd, ".pi/rules/95-outside.md"));
    await withSession(cwd, async (h) => {
      await h.prompt("confined");
      assert.ok(h.lastSystemPrompt().includes("Keep the changelog current."));
      assert.ok(!h.lastSystemPrompt().includes("SECRET FROM OUTSIDE"));
    });
  });
});

describe("renderSettings", () => {
  test("fills {{SETTINGS}} as pi-rules render does, and leaves no child behind", async () => {
    const bin = requireServe();
    const cwd = makeProject({ ".pi/pi-config-settings.json": '{"dco": true}\n' });
    const prompt = "All: {{SETTINGS}}\nSome: {{SETTINGS:dco, commit_trailer}}\n";
    const text = await withEnv({ PI_RULES_BIN: bin }, () => renderSettings(prompt, cwd));
    assert.equal(text, cli(["render", "--cwd", cwd], prompt));
    assert.ok(text.includes('"dco":true'));
    assert.deepEqual(childrenNamed("pi-rules"), []);
  });

  test("rejects with the reason when there is no binary", async () => {
    const cwd = makeProject();
    await withEnv({ PI_RULES_BIN: join(cwd, "no-such-pi-rules") }, async () => {
      await assert.rejects(renderSettings("{{SETTINGS}}", cwd), /no-such-pi-rules/);
    });
  });
});
