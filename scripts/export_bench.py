#!/usr/bin/env python3
"""`export` of a large project, fresh and with its files already right (docs/performance.md,
"`export` of 1,000 rules").

    python3 scripts/export_bench.py [--bin target/release/pi-rules ...] [--rules 1000]
                                    [--work DIR] [--rounds 15] [--no-strace]

Generates a project of --rules project rules (about 1 KB each, a table and an {{IF}} block in
each) under --work, then for each binary, in turn: a fresh export to seven targets (their files
removed first) and an export whose files are already right (the same command again). CPU time
is user + system time from wait4, the medians of --rounds runs, the binaries interleaved so that
the shared machine's load falls on each alike. The peak resident set comes from separate runs
under GNU time (`/usr/bin/time -f %M`): a process spawned by Python itself reports at least
Python's own resident set as its peak (the kernel keeps the peak of the memory it was started
from across the exec), which hides anything smaller. Then, unless --no-strace, one run of each
under `strace -f -c`: the system calls, and the failed `readlink` calls among them. Uses only
the standard library (and GNU time, and strace).
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

DEVNULL = os.open(os.devnull, os.O_WRONLY)
TARGETS = ["agents-md", "claude", "gemini", "goose", "cursor", "cline", "kiro"]
TARGET_FILES = [
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    ".goosehints",
    ".cursor/rules/pi-rules.mdc",
    ".clinerules/pi-rules.md",
    ".kiro/steering/pi-rules.md",
]


def generate(project, count):
    """A project of `count` rules in `.pi/rules`, made once."""
    rules = os.path.join(project, ".pi", "rules")
    if os.path.isdir(rules) and len(os.listdir(rules)) == count:
        return
    shutil.rmtree(project, ignore_errors=True)
    os.makedirs(rules)
    for i in range(count):
        text = (
            f"# Rule {i}\n\n"
            f"Rule {i} says what a team wants of an agent, in a paragraph of ordinary prose that "
            "takes a line or two, as most rules do.\n\n"
            "| when | do |\n|---|---|\n"
            f"| case {i} | answer {i} |\n"
            "| {{IF:dco}}signed{{/IF}} | keep |\n\n"
            "- one point\n- another point, a little longer than the first\n"
        )
        text += "A closing line that pads the rule to about a kilobyte. " * 12 + "\n"
        with open(os.path.join(rules, f"{i:04d}-rule.md"), "w", encoding="utf-8") as f:
            f.write(text)


def clear(project):
    for name in TARGET_FILES:
        try:
            os.remove(os.path.join(project, name))
        except FileNotFoundError:
            pass


def run(argv, cwd):
    """Runs argv once; returns (cpu seconds, max RSS bytes as wait4 gives it, see above)."""
    actions = [(os.POSIX_SPAWN_DUP2, DEVNULL, 1), (os.POSIX_SPAWN_DUP2, DEVNULL, 2)]
    here = os.getcwd()
    os.chdir(cwd)
    try:
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    finally:
        os.chdir(here)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"export_bench: `{' '.join(argv)}` failed with {status}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def max_rss(argv, cwd):
    """The peak resident set in bytes of one run, as GNU time measures it."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", out.name, *argv],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        return int(out.read().split()[-1]) * 1024


def strace_counts(argv, cwd):
    """(all system calls, failed readlink calls) of one run under `strace -f -c`."""
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as out:
        subprocess.run(
            ["strace", "-f", "-c", "-o", out.name, *argv],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        table = out.read()
    total = readlink_errors = 0
    for line in table.splitlines():
        fields = line.split()
        if not fields or not re.match(r"^[0-9.]+$", fields[0]):
            continue
        name = fields[-1]
        calls = int(fields[3])
        errors = int(fields[4]) if len(fields) == 6 else 0
        if name == "total":
            total = calls
        elif name == "readlink":
            readlink_errors = errors
    return total, readlink_errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", action="append", help="a binary; repeat to compare")
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--work", default=None)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-strace", action="store_true")
    args = parser.parse_args()
    binaries = [os.path.abspath(b) for b in (args.bin or ["target/release/pi-rules"])]
    work = args.work or tempfile.mkdtemp(prefix="pi-rules-export-")
    project = os.path.join(work, f"export{args.rules}")
    generate(project, args.rules)
    print(f"project: {project} ({args.rules} rules), targets: {' '.join(TARGETS)}")

    fresh = {b: [] for b in binaries}
    same = {b: [] for b in binaries}
    for _ in range(args.rounds):
        for binary in binaries:
            argv = [binary, "export", *TARGETS]
            clear(project)
            fresh[binary].append(run(argv, project))
            same[binary].append(run(argv, project))
    for binary in binaries:
        argv = [binary, "export", *TARGETS]
        peaks = {"fresh": 0, "already right": 0}
        for _ in range(3):
            clear(project)
            peaks["fresh"] = max(peaks["fresh"], max_rss(argv, project))
            peaks["already right"] = max(peaks["already right"], max_rss(argv, project))
        for label in peaks:
            samples = fresh[binary] if label == "fresh" else same[binary]
            samples[:] = [(cpu, peaks[label]) for cpu, _ in samples]
    for binary in binaries:
        print(f"\n{binary}")
        for label, samples in (("fresh", fresh[binary]), ("already right", same[binary])):
            cpu = statistics.median(s[0] for s in samples) * 1000
            low = min(s[0] for s in samples) * 1000
            rss = max(s[1] for s in samples) / (1 << 20)
            print(f"  {label:14} CPU {cpu:6.1f} ms median ({low:.1f} min), max RSS {rss:5.1f} MiB")
        if args.no_strace or not shutil.which("strace"):
            continue
        argv = [binary, "export", *TARGETS]
        clear(project)
        for label in ("fresh", "already right"):
            calls, failed = strace_counts(argv, project)
            print(f"  {label:14} {calls} system calls, {failed} failed readlink")


if __name__ == "__main__":
    main()
