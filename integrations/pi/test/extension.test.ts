// End to end: a real pi session in this process loads this package, and the faux model records
// the system prompt it is sent. The expected text always comes from the binary run as a separate
// process on the same project.

import assert from "node:assert/strict";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createEventBus } from "@earendil-works/pi-coding-agent";
import { COMS_EVENT, FALLBACK_BLOCK, renderSettings, SECTION, setComsActive } from "../index.ts";
import {
  asSection,
  childrenNamed,
  cli,
  cliBlock,
  cliWarnings,
  eventually,
  type Harness,
  makeProject,
  requireServe,
  startSession,
  withEnv,
  writeFile,
} from "./harness.ts";

const RULE = "# Project rule\n\nKeep the changelog current.\n";

/** Runs `body` with a session on `cwd` and the real binary, then disposes the session and sees its child gone. */
async function withSession(
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
});

describe("/rules", () => {
  test("/rules shows the explain view and does not call the model", async () => {
    const cwd = makeProject({ ".pi/rules/90-project.md": RULE });
    await withSession(cwd, async (h) => {
      await h.prompt("/rules");
      assert.equal(h.systemPrompts.length, 0, "the model was called");
      assert.equal(h.notes.length, 1);
      assert.equal(h.notes[0].type, "info");
      assert.equal(h.notes[0].message.trimEnd(), cli(["explain", "--cwd", cwd]).trimEnd());
      assert.ok(h.notes[0].message.includes("90-project.md"));
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
