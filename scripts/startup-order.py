#!/usr/bin/env python3
"""Writes startup-order.txt: the functions of the binary that start-up runs, in the
order they are first run, for the linker to lay out together (see build.rs).

    cargo build --release -p pi-rules
    python3 scripts/startup-order.py [--bin target/release/pi-rules]

Runs `pi-rules --version` and `pi-rules assemble` on an empty project under callgrind (valgrind is
needed only here) and keeps the mangled names that are the binary's own symbols. A name that a
later change renames is skipped by the linker, so a stale list costs speed, never correctness.
"""

import argparse
import os
import re
import subprocess
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="target/release/pi-rules")
    parser.add_argument("--out", default="startup-order.txt")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    symbols = set(subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                                 check=True).stdout.split())
    names, seen = [], set()
    with tempfile.TemporaryDirectory() as work:
        empty = os.path.join(work, "project")
        os.makedirs(os.path.join(empty, ".pi", "rules"))
        for i, argv in enumerate([["--version"], ["assemble", "--cwd", empty]]):
            trace = os.path.join(work, f"callgrind.{i}")
            # A stdout opened for writing: pi-rules refuses one that is closed.
            with open(os.devnull, "w", encoding="utf-8") as null:
                subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no",
                                f"--callgrind-out-file={trace}", binary, *argv],
                               stdout=null, stderr=null, check=True)
            with open(trace, encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = re.match(r"^c?fn=\(\d+\) (\S+)", line)
                    if m and m.group(1) in symbols and m.group(1) not in seen:
                        seen.add(m.group(1))
                        names.append(m.group(1))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("".join(name + "\n" for name in names))
    print(f"{args.out}: {len(names)} functions")


if __name__ == "__main__":
    main()
