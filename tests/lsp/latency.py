"""A keystroke's latency as a client sees it: from writing a `didChange` to reading the
document's `publishDiagnostics`, through `pi-rules lsp` on stdio, debounce included.

Usage: python3 latency.py [PI_RULES_BIN] [FILES...]   (defaults: $PI_RULES_BIN or pi-rules; 2 16000)

For each count of rule files, a project whose layer holds that many (the open one among them,
a typical rule), an empty $HOME, and 40 keystrokes, each waited for before the next (so that the
debounce runs out each time): prints the median, the lowest and the highest, in milliseconds.
Plain JSON-RPC over pipes, no client library, so that the figure is the server's and the pipes'.
"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

TEXT = "# Review\n\nBefore a change is merged, {{IF:review_loop}}a second reviewer reads it.{{/IF}}\n"


def send(proc, message):
    body = json.dumps(message).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def read(proc):
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise EOFError("the server ended")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(proc.stdout.read(length))


def wait_for(proc, uri, version):
    while True:
        m = read(proc)
        params = m.get("params") or {}
        if m.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri:
            if version is None or params.get("version") == version:
                return


def measure(binary, files, keystrokes=40):
    root = pathlib.Path(tempfile.mkdtemp(prefix="pi-rules-latency-")).resolve()
    folder, home = root / "p", root / "home"
    rules = folder / ".pi" / "rules"
    (folder / ".git").mkdir(parents=True)
    rules.mkdir(parents=True)
    home.mkdir()
    for i in range(1, files):
        (rules / f"90-rule-{i:05}.md").write_text(f"# Rule {i}\n\nDo the thing number {i}.\n")
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.Popen(
        [binary, "lsp"], cwd=folder, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"capabilities": {}, "workspaceFolders": [{"uri": folder.as_uri(), "name": "p"}]}})
    while read(proc).get("id") != 1:
        pass
    send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    uri = (rules / "90-bench.md").as_uri()
    send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": TEXT}}})
    wait_for(proc, uri, None)
    times = []
    for version in range(2, keystrokes + 2):
        text = TEXT + ("x" * (version % 2))
        start = time.perf_counter()
        send(proc, {"jsonrpc": "2.0", "method": "textDocument/didChange",
                    "params": {"textDocument": {"uri": uri, "version": version},
                               "contentChanges": [{"text": text}]}})
        wait_for(proc, uri, version)
        times.append((time.perf_counter() - start) * 1000)
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    while read(proc).get("id") != 2:
        pass
    send(proc, {"jsonrpc": "2.0", "method": "exit"})
    proc.wait(timeout=10)
    return times


def main():
    args = sys.argv[1:]
    binary = args.pop(0) if args and not args[0].isdigit() else os.environ.get("PI_RULES_BIN", "pi-rules")
    counts = [int(a) for a in args] or [2, 16000]
    for files in counts:
        times = measure(binary, files)
        print(f"{files:>6} files: median {statistics.median(times):6.1f} ms, "
              f"min {min(times):6.1f}, max {max(times):6.1f} ({len(times)} keystrokes)")


if __name__ == "__main__":
    main()
