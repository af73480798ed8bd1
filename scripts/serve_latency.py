#!/usr/bin/env python3
"""A warm `serve` `assemble` request against the one-shot process, from a client (issue 23 §7).

    python3 scripts/serve_latency.py [--bin target/release/pi-rules] [-n 2000] [--work DIR]

Makes a typical project under --work (a git repository with a settings file and two project
rules at its root, the embedded package rules, no user layer: $HOME is an empty directory), then
starts `pi-rules serve` and alternates, N times:

- one `assemble` request to the server: the time from writing the request line to reading the
  whole response line (the round trip a host sees);
- one `pi-rules assemble --format json` process: the time from spawning it to its exit, its
  output read from a pipe (what a host that spawns the binary per turn sees);
- one `version` request, whose round trip is the floor of any request: the pipes, waking each
  side, the client's own work. It says how much of the `assemble` round trip the server spends.

The two are interleaved so that the shared machine's load falls on both alike. The first
requests warm the server (its settings cache, the page cache) and are not counted. Prints the
medians, the 10th and 90th percentiles and the ratio of the medians (target <= 0.1). Uses only
the standard library.

With --poll the client never sleeps while it waits: it reads without blocking, in a loop, both
the response and the one-shot process's output. On a virtual machine whose idle vCPUs halt (a
Firecracker guest, here), waking a client that slept costs about 0.1 ms, on both sides alike;
--poll shows the figures without that cost.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

WARM_UP = 50


def typical_project(work):
    """A repository root with `.git`, `.pi/pi-config-settings.jsonc` and two project rules."""
    root = os.path.join(work, "app")
    os.makedirs(os.path.join(root, ".pi", "rules"), exist_ok=True)
    os.makedirs(os.path.join(root, "src"), exist_ok=True)
    if not os.path.isdir(os.path.join(root, ".git")):
        subprocess.run(["git", "init", "-q", root], check=True)
    with open(os.path.join(root, ".pi", "pi-config-settings.jsonc"), "w", encoding="utf-8") as f:
        f.write('{\n  // the team\'s settings\n  "dco": true,\n  "use_worktrees": true\n}\n')
    rules = {
        "90-team.md": "# Team\n\n{{IF:dco}}Sign off every commit.{{/IF}}\n\nKeep changes small.\n",
        "95-deploy.md": "# Deploy\n\nDeploy from main only, after review.\n",
    }
    for name, text in rules.items():
        with open(os.path.join(root, ".pi", "rules", name), "w", encoding="utf-8") as f:
            f.write(text)
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    return root, home


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def read_all(fd, poll):
    """Everything `fd` gives until EOF; without blocking, in a loop, when `poll`."""
    output = bytearray()
    if poll:
        os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            continue
        if not chunk:
            return output
        output += chunk


def one_shot(argv, env, poll=False):
    """Wall time of one process, from spawn to exit, its stdout read from a pipe."""
    read_end, write_end = os.pipe()
    devnull = os.open(os.devnull, os.O_WRONLY)
    actions = [
        (os.POSIX_SPAWN_DUP2, write_end, 1),
        (os.POSIX_SPAWN_DUP2, devnull, 2),
        (os.POSIX_SPAWN_CLOSE, read_end),
    ]
    started = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    os.close(write_end)
    output = read_all(read_end, poll)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG if poll else 0)
        if done:
            break
    elapsed = time.perf_counter_ns() - started
    os.close(read_end)
    os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0 or not output.startswith(b'{"format":'):
        sys.exit(f"serve_latency: `{' '.join(argv)}` failed with {status}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="target/release/pi-rules")
    parser.add_argument("-n", type=int, default=2000, help="requests and processes each")
    parser.add_argument("--work", default=None, help="where the project is made")
    parser.add_argument("--poll", action="store_true",
                        help="wait without sleeping (no vCPU wake-up in the figures)")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    work = args.work or tempfile.mkdtemp(prefix="pi-rules-serve-latency-")
    root, home = typical_project(work)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}

    # Responses are read through a 64 KiB buffer, as Node reads a pipe: the typical response
    # (about 34 KB, most of it the block) then takes one read.
    server = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=env, bufsize=1 << 16)
    assemble = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "assemble",
                            "params": {"cwd": root}}) + "\n").encode()
    version = b'{"jsonrpc":"2.0","id":2,"method":"version"}\n'
    reader = server.stdout
    out_fd = reader.fileno()
    if args.poll:
        os.set_blocking(out_fd, False)

    def read_line():
        if not args.poll:
            return reader.readline()
        line = bytearray()
        while not line.endswith(b"\n"):
            try:
                line += os.read(out_fd, 1 << 16)
            except BlockingIOError:
                pass
        return bytes(line)

    def round_trip(request, expected):
        started = time.perf_counter_ns()
        server.stdin.write(request)
        server.stdin.flush()
        line = read_line()
        elapsed = time.perf_counter_ns() - started
        if expected not in line:
            sys.exit(f"serve_latency: unexpected response {line[:200]!r}")
        return elapsed

    argv = [binary, "assemble", "--format", "json", "--cwd", root]
    for _ in range(WARM_UP):
        round_trip(assemble, b'"result":{"format":')
        round_trip(version, b'"protocol":')
        one_shot(argv, env, args.poll)
    served, floor, spawned = [], [], []
    for _ in range(args.n):
        spawned.append(one_shot(argv, env, args.poll))
        served.append(round_trip(assemble, b'"result":{"format":'))
        floor.append(round_trip(version, b'"protocol":'))
    server.stdin.close()
    server.wait()

    def line(label, ns):
        us = [n / 1000 for n in ns]
        return (f"{label:34s} median {statistics.median(us):8.1f} us   "
                f"p10 {percentile(us, 0.1):8.1f}   p90 {percentile(us, 0.9):8.1f}")

    mode = "polling" if args.poll else "blocking"
    print(f"binary: {binary}\nproject: {root}\n{args.n} of each, interleaved, {mode} client\n")
    print(line("serve assemble (round trip)", served))
    print(line("serve version (the floor)", floor))
    print(line("pi-rules assemble (one process)", spawned))
    ratio = statistics.median(served) / statistics.median(spawned)
    print(f"\nratio of the medians: {ratio:.3f}   (target <= 0.1)")


if __name__ == "__main__":
    main()
