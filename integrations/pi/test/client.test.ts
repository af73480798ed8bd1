// The client on its own: framing, finding the binary, and the child's life against the real
// `pi-rules serve`.

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { describe, test } from "node:test";
import { join } from "node:path";
import { CLOSE_GRACE_MS, findBinary, LineDecoder, ServeClient, ServeError } from "../client.ts";
import {
  childrenNamed,
  childrenOf,
  cliBlock,
  eventually,
  groupMembers,
  makeProject,
  noSuchProcess,
  requireServe,
  writeScript,
} from "./harness.ts";

/** The lines `decoder` gives for `chunk`, decoded as the client decodes them. */
function pushed(decoder: LineDecoder, chunk: Buffer): string[] {
  return decoder.push(chunk).map((line) => line.toString("utf8"));
}

describe("LineDecoder", () => {
  test("splits on LF only: U+2028, U+2029 and CR stay inside the line", () => {
    const decoder = new LineDecoder();
    const text = '{"a":"x\u2028y\u2029z\r"}\n{"b":1}\n';
    assert.deepEqual(pushed(decoder, Buffer.from(text, "utf8")), ['{"a":"x\u2028y\u2029z\r"}', '{"b":1}']);
  });

  test("a line cut anywhere, even inside a multi-byte character, comes out whole", () => {
    const line = "é€😀\u2028 end";
    const bytes = Buffer.from(`${line}\n`, "utf8");
    for (let cut = 1; cut < bytes.length; cut++) {
      const decoder = new LineDecoder();
      const first = pushed(decoder, bytes.subarray(0, cut));
      const second = pushed(decoder, bytes.subarray(cut));
      assert.deepEqual([...first, ...second], [line], `cut at byte ${cut}`);
    }
  });

  test("a line fed one byte at a time, across many chunks", () => {
    const decoder = new LineDecoder();
    const lines: string[] = [];
    for (const byte of Buffer.from("ab\ncd\n\nef", "utf8")) lines.push(...pushed(decoder, Buffer.from([byte])));
    assert.deepEqual(lines, ["ab", "cd", ""]);
    assert.deepEqual(pushed(decoder, Buffer.from("\n")), ["ef"]);
  });

  test("a line over the limit is refused and forgotten", () => {
    const decoder = new LineDecoder(8);
    assert.deepEqual(pushed(decoder, Buffer.from("12345")), []);
    assert.throws(() => pushed(decoder, Buffer.from("6789")), /longer than 8 bytes/);
    assert.deepEqual(pushed(decoder, Buffer.from("ok\n")), ["ok"]);
  });
});

describe("findBinary", () => {
  // Lookup only: these files are never run.
  const root = makeProject();
  const executable = (dir: string) => {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, "pi-rules"), "", { mode: 0o755 });
    return join(root, dir);
  };
  const first = executable("first");
  const second = executable("second");
  mkdirSync(join(root, "plain"));
  writeFileSync(join(root, "plain", "pi-rules"), "", { mode: 0o644 });
  mkdirSync(join(root, "dir", "pi-rules"), { recursive: true });

  test("PI_RULES_BIN wins over PATH, used as given", () => {
    assert.equal(findBinary({ PI_RULES_BIN: "/somewhere/pi-rules", PATH: first }), "/somewhere/pi-rules");
  });

  test("an empty PI_RULES_BIN falls through to PATH", () => {
    assert.equal(findBinary({ PI_RULES_BIN: "", PATH: first }), join(first, "pi-rules"));
  });

  test("the first executable pi-rules file on PATH, skipping plain files and directories", () => {
    const path = [join(root, "plain"), join(root, "dir"), second, first].join(":");
    assert.equal(findBinary({ PATH: path }), join(second, "pi-rules"));
  });

  test("relative and empty PATH entries are never searched", () => {
    const cwd = process.cwd();
    process.chdir(root);
    try {
      assert.equal(findBinary({ PATH: "first::second" }), undefined);
      assert.equal(findBinary({ PATH: `.:first:${second}` }), join(second, "pi-rules"));
    } finally {
      process.chdir(cwd);
    }
  });

  test("nothing found", () => {
    assert.equal(findBinary({ PATH: join(root, "plain") }), undefined);
    assert.equal(findBinary({}), undefined);
  });
});

describe("ServeClient against pi-rules serve", () => {
  test("answers in order; the version names the protocol", async () => {
    const bin = requireServe();
    const client = new ServeClient({ resolveBinary: () => bin });
    try {
      const answers = await Promise.all([client.request("version"), client.request("version")]);
      for (const answer of answers) {
        assert.equal((answer as { name: string }).name, "pi-rules");
        assert.equal((answer as { protocol: number }).protocol, 1);
      }
    } finally {
      await client.close();
    }
  });

  test("rules with U+2028, U+2029 and multi-byte text over many pipe chunks arrive byte for byte", async () => {
    const bin = requireServe();
    const wide = "é€😀\u2028\u2029|".repeat(6000);
    const cwd = makeProject({
      ".pi/rules/90-separators.md": "line\u2028separator and paragraph\u2029separator\n",
      ".pi/rules/91-wide.md": `${wide}\n`,
    });
    const client = new ServeClient({ resolveBinary: () => bin });
    try {
      const result = (await client.request("assemble", { cwd })) as { block: string };
      assert.equal(result.block, cliBlock(cwd));
      assert.ok(result.block.includes("line\u2028separator and paragraph\u2029separator"));
      assert.ok(result.block.includes(wide));
    } finally {
      await client.close();
    }
  });

  test("a JSON-RPC error becomes a ServeError with its code", async () => {
    const bin = requireServe();
    const client = new ServeClient({ resolveBinary: () => bin });
    try {
      await assert.rejects(client.request("no_such_method"), (error: unknown) => {
        assert.ok(error instanceof ServeError);
        assert.equal(error.kind, "rpc");
        assert.equal(error.code, -32601);
        return true;
      });
      // The child is still there for the next request.
      assert.equal(((await client.request("version")) as { name: string }).name, "pi-rules");
    } finally {
      await client.close();
    }
  });

  test("a child that died is replaced at the next request", async () => {
    const bin = requireServe();
    const client = new ServeClient({ resolveBinary: () => bin });
    try {
      await client.request("version");
      const first = client.pid;
      assert.ok(first !== undefined);
      process.kill(first, "SIGKILL");
      assert.ok(await eventually(() => !childrenNamed("pi-rules").includes(first)));
      assert.equal(((await client.request("version")) as { name: string }).name, "pi-rules");
      assert.notEqual(client.pid, first);
    } finally {
      await client.close();
    }
  });

  test("a hung child times out, is ended, and a new one answers the next request", async () => {
    const bin = requireServe();
    const client = new ServeClient({ resolveBinary: () => bin, timeoutMs: 1000 });
    try {
      await client.request("version");
      const hung = client.pid;
      assert.ok(hung !== undefined);
      process.kill(hung, "SIGSTOP");
      await assert.rejects(client.request("version"), (error: unknown) => {
        assert.ok(error instanceof ServeError);
        assert.equal(error.kind, "timeout");
        assert.match(error.message, /did not answer `version` within 1000 ms/);
        return true;
      });
      assert.ok(await eventually(() => !childrenNamed("pi-rules").includes(hung)), "the hung child is still there");
      assert.equal(((await client.request("version")) as { name: string }).name, "pi-rules");
    } finally {
      await client.close();
    }
  });

  test("close() ends the child, and later requests are refused", async () => {
    const bin = requireServe();
    const client = new ServeClient({ resolveBinary: () => bin });
    await client.request("version");
    const pid = client.pid;
    assert.ok(pid !== undefined && childrenNamed("pi-rules").includes(pid));
    await client.close();
    assert.ok(!childrenNamed("pi-rules").includes(pid));
    await assert.rejects(client.request("version"), { kind: "closed" });
    await client.close();
  });
});

describe("ServeClient against a binary that will not end", () => {
  test("close() escalates to SIGKILL on the whole group, and resolves once the child is gone", async () => {
    const stubborn = writeScript(`trap '' TERM\n'${requireServe()}' "$@"\nwhile :; do sleep 1; done`);
    const client = new ServeClient({ resolveBinary: () => stubborn });
    assert.equal(((await client.request("version")) as { name: string }).name, "pi-rules");
    const pgid = client.pid;
    assert.ok(pgid !== undefined);
    assert.ok(childrenOf(pgid).length >= 1, "the script's serve");
    assert.deepEqual(groupMembers(pgid).sort(), [pgid, ...childrenOf(pgid)].sort(), "the child leads a group of its own");
    const started = Date.now();
    await client.close();
    const took = Date.now() - started;
    // EOF and SIGTERM were each given their grace, and neither ended it.
    assert.ok(took >= 2 * CLOSE_GRACE_MS - 50, `closed after ${took} ms`);
    assert.ok(noSuchProcess(pgid), "close() resolved with the child still there");
    assert.ok(await eventually(() => noSuchProcess(-pgid), 5000), "a process of the group is left");
  });

  test("a child whose pipes a process out of its group holds is replaced soon after it exits", async () => {
    // The shim leaves a process in a session of its own, holding the pipes. Nothing can signal it
    // with the group: it outlives the child, and only the test ends it.
    const dir = makeProject();
    const escaped = join(dir, "escaped");
    const shim = writeScript(`setsid sleep 1000 &\necho $! >'${escaped}'\nexec '${requireServe()}' "$@"`);
    const client = new ServeClient({ resolveBinary: () => shim, timeoutMs: 10_000 });
    const outside: number[] = [];
    try {
      await client.request("version");
      const first = client.pid as number;
      outside.push(Number(readFileSync(escaped, "utf8")));
      process.kill(first, "SIGKILL");
      assert.ok(await eventually(() => noSuchProcess(first)));
      const started = Date.now();
      assert.equal(((await client.request("version")) as { name: string }).name, "pi-rules");
      assert.ok(Date.now() - started < 5000, `the next request waited ${Date.now() - started} ms`);
      assert.notEqual(client.pid, first);
      outside.push(Number(readFileSync(escaped, "utf8")));
    } finally {
      await client.close();
      for (const pid of outside) if (pid > 0 && !noSuchProcess(pid)) process.kill(pid, "SIGKILL");
    }
  });

  test("a timeout kills the whole group of a wrapper whose child hangs", async () => {
    const hanging = writeScript("sleep 1000");
    const client = new ServeClient({ resolveBinary: () => hanging, timeoutMs: 300 });
    const request = client.request("version");
    let members: number[] = [];
    assert.ok(await eventually(() => (members = client.pid === undefined ? [] : groupMembers(client.pid)).length === 2));
    await assert.rejects(request, { kind: "timeout" });
    assert.ok(await eventually(() => members.every(noSuchProcess), 5000), "the wrapper's sleep runs on");
    await client.close();
  });
});

/**
 * A binary (Node, in a script named `pi-rules`) that answers every request with `result`, the
 * JSON text given, whatever was asked.
 */
function answering(result: string): string {
  const dir = makeProject();
  const program = join(dir, "answer.mjs");
  writeFileSync(
    program,
    `import { readFileSync } from "node:fs";
    const result = readFileSync(process.argv[2], "utf8");
    let buffered = "";
    process.stdin.setEncoding("utf8").on("data", (text) => {
      buffered += text;
      for (let lf = buffered.indexOf("\\n"); lf !== -1; lf = buffered.indexOf("\\n")) {
        const { id } = JSON.parse(buffered.slice(0, lf));
        buffered = buffered.slice(lf + 1);
        process.stdout.write(\`{"jsonrpc":"2.0","id":\${id},"result":\${result}}\\n\`);
      }
    });`,
  );
  writeFileSync(join(dir, "answer.json"), result);
  return writeScript(`exec '${process.execPath}' '${program}' '${join(dir, "answer.json")}'`);
}

describe("ServeClient against a binary that answers nonsense", () => {
  test("an answer in the protocol's shape is taken", async () => {
    const client = new ServeClient({ resolveBinary: () => answering('{"name":"x","list":[[1,2],{"a":[3]}]}') });
    try {
      assert.deepEqual(await client.request("version"), { name: "x", list: [[1, 2], { a: [3] }] });
    } finally {
      await client.close();
    }
  });

  test("a large answer, of many files or findings, is taken", async () => {
    const files = Array.from({ length: 60_000 }, (_, i) => ({ name: `${i}.md`, layer: "project", status: "included" }));
    const client = new ServeClient({ resolveBinary: () => answering(JSON.stringify({ files })) });
    try {
      assert.equal(((await client.request("version")) as { files: unknown[] }).files.length, 60_000);
    } finally {
      await client.close();
    }
  });

  for (const [what, result] of [
    ["nested too deep", `${"[".repeat(100_000)}${"]".repeat(100_000)}`],
    ["holding too many values", `[${"0,".repeat(1_000_001)}0]`],
  ]) {
    test(`a line ${what} is refused before it is parsed, and the child ended`, async () => {
      const client = new ServeClient({ resolveBinary: () => answering(result) });
      try {
        const request = client.request("version");
        assert.ok(await eventually(() => client.pid !== undefined));
        const pid = client.pid as number;
        await assert.rejects(request, (error: unknown) => {
          assert.ok(error instanceof ServeError);
          assert.equal(error.kind, "protocol");
          assert.match(error.message, /printed a line nested deeper than 64 levels or holding more than 1000000 values/);
          return true;
        });
        assert.ok(await eventually(() => noSuchProcess(pid)), "the child was not ended");
      } finally {
        await client.close();
      }
    });
  }

  test("brackets, commas and escaped quotes inside strings count for nothing", async () => {
    const text = `\\"${"[{,".repeat(200_000)}\\`;
    const client = new ServeClient({ resolveBinary: () => answering(JSON.stringify({ text })) });
    try {
      assert.equal(((await client.request("version")) as { text: string }).text, text);
    } finally {
      await client.close();
    }
  });
});

describe("ServeClient without a working binary", () => {
  test("no binary at all says how to provide one", async () => {
    const client = new ServeClient({ resolveBinary: () => undefined });
    await assert.rejects(client.request("version"), (error: unknown) => {
      assert.ok(error instanceof ServeError);
      assert.equal(error.kind, "missing");
      assert.match(error.message, /PI_RULES_BIN/);
      return true;
    });
  });

  test("a path that does not exist", async () => {
    const client = new ServeClient({ resolveBinary: () => "/nonexistent/pi-rules" });
    await assert.rejects(client.request("version"), { kind: "missing" });
    await client.close();
  });

  test("a binary that exits at once fails the request with its status", async () => {
    const client = new ServeClient({ resolveBinary: () => "/bin/false" });
    await assert.rejects(client.request("version"), (error: unknown) => {
      assert.ok(error instanceof ServeError);
      assert.equal(error.kind, "exited");
      assert.match(error.message, /exited with status 1/);
      return true;
    });
    await client.close();
  });
});

describe("evaluate", () => {
  test("the rule texts go once; the same request again is answered unchanged; the response is eval's", async () => {
    const client = new ServeClient({ resolveBinary: requireServe });
    try {
      const rules = ["# A\n{{IF:dco}}Sign off.{{/IF}}\n", "{{/IF}}B\n".repeat(2000)];
      const plain = async (dco: boolean) => client.request("eval", { rules, settings: { dco } });
      const first = await client.evaluate({ rules, settings: { dco: true } });
      assert.deepEqual(first, await plain(true));
      const again = await client.evaluate({ rules, settings: { dco: true } });
      assert.deepEqual(again, first);
      const other = await client.evaluate({ rules, settings: { dco: false } });
      assert.deepEqual(other, await plain(false));
      assert.deepEqual(client.evals, { unchanged: 1, whole: 2 });
    } finally {
      await client.close();
    }
  });

  test("a restarted server is sent the rule texts again", async () => {
    const client = new ServeClient({ resolveBinary: requireServe });
    try {
      const rules = ["{{IF:dco}}Sign off.{{/IF}}\n"];
      await client.evaluate({ rules, settings: { dco: true } });
      const pid = client.pid;
      assert.ok(pid !== undefined);
      process.kill(pid, "SIGKILL");
      assert.ok(await eventually(() => client.pid === undefined || client.pid !== pid));
      const after = await client.evaluate({ rules, settings: { dco: false } });
      assert.deepEqual(after, await client.request("eval", { rules, settings: { dco: false } }));
      assert.equal(after.text, "\n");
    } finally {
      await client.close();
    }
  });
});
