#!/usr/bin/env python3
"""Runs two pi-rules binaries side by side on generated projects and reports every difference.

    python3 scripts/compare_outputs.py OLD_BIN NEW_BIN [--projects 40] [--seed 1] [--keep DIR]

For a refactoring that must not change behaviour: each generated project (package, user and
project layers, settings files, a repository or none, hostile and ordinary rule text) is run
through every command in every output format, and through `serve`, with both binaries. Standard
output, standard error and the exit code must be byte-identical. Prints one line per difference
(project, command, which stream) and a closing `N identical, M different` line; exits 1 when
anything differs. Uses only the standard library.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

KEYS = [
    "dco",
    "commit_trailer",
    "use_worktrees",
    "review_loop_enforcement",
    "review_loop_max_cycles",
    "pidash_enable",
    "log_rules",
    "acpx_agents",
    "image_model",
]
# Near misses and unknown keys: the linter's and the engine's warnings.
ODD_KEYS = ["dcoo", "use_worktree", "unknown_key", "coms_active", "external_ai_agents"]

WORDS = "review commit push branch agent rule test build deploy merge issue task".split()


def condition(rng):
    key = rng.choice(KEYS + ODD_KEYS[:2] if rng.random() < 0.85 else ODD_KEYS)
    form = rng.random()
    if form < 0.5:
        return key
    if form < 0.7:
        return f'{key} == "{rng.choice(["Assisted-by", "info", "off", "x"])}"'
    if form < 0.8:
        return f"{key} != {rng.choice(['true', 'false', '3', 'null'])}"
    if form < 0.9:
        literal = rng.choice(["true", "false", "3", '"debug"'])
        return f"{key} == {literal}"
    return f"{key} ={rng.choice(['', '=', '!'])}"  # malformed


def sentence(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 9))]
    return " ".join(words).capitalize() + "."


def body(rng, depth=0):
    parts = []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.35 and depth < 3:
            kind = rng.choice(["IF", "IFNOT"])
            inner = body(rng, depth + 1)
            close = f"{{{{/{kind}}}}}" if rng.random() < 0.93 else ""
            sep = "\n" if rng.random() < 0.6 else ""
            parts.append(f"{{{{{kind}:{condition(rng)}}}}}{sep}{inner}{sep}{close}")
        elif r < 0.45:
            parts.append("| a | b |\n|---|---|\n| " + sentence(rng) + " | x |")
        elif r < 0.5:
            parts.append("Run at most {{REVIEW_LOOP_MAX_CYCLES}} cycles.")
        elif r < 0.53:
            parts.append("<!-- " + sentence(rng) + " -->")
        elif r < 0.55:
            parts.append(sentence(rng) + "\u200b\u202e" + sentence(rng))
        elif r < 0.57:
            parts.append("{{/IF}} stray " + sentence(rng))
        else:
            parts.append(sentence(rng))
    joiner = rng.choice(["\n", "\n\n", "\n\n\n"])
    return joiner.join(parts)


def rule_text(rng):
    text = ""
    r = rng.random()
    if r < 0.3:
        lines = []
        if rng.random() < 0.6:
            lines.append(f"requires_setting: {rng.choice(KEYS + ODD_KEYS[:1])}")
        if rng.random() < 0.3:
            lines.append(f"requires: {rng.choice(['coms_active', 'external_ai_agents', 'nope'])}")
        if rng.random() < 0.2:
            lines.append(rng.choice(["globs: src/**", "alwaysApply: true", "  - item"]))
        text += "---\n" + "\n".join(lines) + "\n---\n"
    elif r < 0.35:
        text += "---\nrequires_setting: dco\n"  # unclosed frontmatter
    text += "# " + sentence(rng) + "\n\n" + body(rng)
    text += rng.choice(["", "\n", "\n", "\n\n", "  \n"])
    if rng.random() < 0.08:
        text = text.replace("\n", "\r\n")
    return text


def settings_text(rng):
    values = {
        "dco": rng.choice([True, False, "yes"]),
        "commit_trailer": rng.choice([False, "Assisted-by", "Co-authored-by"]),
        "use_worktrees": rng.choice([True, False]),
        "review_loop_max_cycles": rng.choice([2, 5, "x", -1]),
        "log_rules": rng.choice(["debug", "info", "loud"]),
        "acpx_agents": rng.choice([[], ["claude"], "x"]),
    }
    picked = {k: v for k, v in values.items() if rng.random() < 0.5}
    if rng.random() < 0.2:
        picked["dcoo"] = True
    text = json.dumps(picked, indent=2)
    if rng.random() < 0.3:
        text = "// team settings\n" + text
    if rng.random() < 0.07:
        text = text[:-1]  # broken
    return text + "\n"


def name(rng, prefixes):
    stem = "-".join(rng.sample(WORDS, rng.randint(1, 2)))
    r = rng.random()
    if r < 0.7:
        return f"{rng.choice(prefixes):02d}-{stem}.md"
    if r < 0.85:
        return f"{stem}.md"
    return rng.choice([f"{rng.randint(0, 9)}-{stem}.md", f"{stem}.MD", f"{stem}.txt"])


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        f.write(text)


PACKAGE_NAMES = sorted(os.listdir(os.path.join(os.path.dirname(__file__), "..", "rules")))


def make_project(root, rng):
    """Writes one project under root; returns (cwd, home, package_dir or None, a rule name)."""
    home = os.path.join(root, "home")
    project = os.path.join(root, "project")
    os.makedirs(os.path.join(home, ".pi"), exist_ok=True)
    os.makedirs(project, exist_ok=True)
    package_dir = None
    if rng.random() < 0.3:
        package_dir = os.path.join(root, "package")
        for _ in range(rng.randint(1, 5)):
            write(os.path.join(package_dir, name(rng, range(0, 70))), rule_text(rng))
    names = []
    for _ in range(rng.randint(0, 3)):
        n = name(rng, range(70, 90))
        names.append(n)
        write(os.path.join(home, ".pi", "agent", "rules", n), rule_text(rng))
    if rng.random() < 0.3:
        n = rng.choice(PACKAGE_NAMES)
        names.append(n)
        write(os.path.join(home, ".pi", "agent", "rules", n), rule_text(rng))
    for _ in range(rng.randint(0, 5)):
        n = name(rng, range(90, 100))
        names.append(n)
        write(os.path.join(project, ".pi", "rules", n), rule_text(rng))
    if rng.random() < 0.3:
        n = rng.choice(PACKAGE_NAMES)
        names.append(n)
        write(os.path.join(project, ".pi", "rules", n), rule_text(rng))
    if rng.random() < 0.5:
        write(os.path.join(home, ".pi", "pi-config-settings.json"), settings_text(rng))
    if rng.random() < 0.6:
        ext = rng.choice(["jsonc", "json"])
        write(os.path.join(project, ".pi", f"pi-config-settings.{ext}"), settings_text(rng))
    cwd = project
    if rng.random() < 0.4:
        os.makedirs(os.path.join(project, ".git"), exist_ok=True)
        write(os.path.join(project, ".git", "HEAD"), "ref: refs/heads/main\n")
        if rng.random() < 0.5:
            cwd = os.path.join(project, "src")
            os.makedirs(cwd, exist_ok=True)
    names.append(rng.choice(PACKAGE_NAMES))
    return cwd, home, package_dir, rng.choice(names)


def commands(cwd, package_dir, rule):
    """(label, argv, stdin) for every command and format run on a project."""
    layer = ["--cwd", cwd] + (["--package-dir", package_dir] if package_dir else [])
    prompt = "Settings: {{SETTINGS:dco,commit_trailer}} all: {{SETTINGS}}\n"
    out = []
    for fmt in ["text", "json"]:
        out.append((f"assemble {fmt}", ["assemble", *layer, "--format", fmt], None))
        out.append((f"assemble {fmt} coms", ["assemble", *layer, "--coms-active", "--format", fmt], None))
        out.append((f"assemble {fmt} confine", ["assemble", *layer, "--confine", "--format", fmt], None))
        out.append((f"explain {fmt}", ["explain", *layer, "--format", fmt], None))
        out.append((f"settings {fmt}", ["settings", "--cwd", cwd, "--format", fmt], None))
    out.append(("settings keys", ["settings", "--cwd", cwd, "dco", "log_rules"], None))
    for fmt in ["human", "short", "json", "sarif"]:
        out.append((f"check {fmt}", ["check", *layer, "--format", fmt], None))
    out.append(("check strict", ["check", *layer, "--strict", "--format", "short"], None))
    out.append(("check fix dry-run", ["check", *layer, "--fix", "--dry-run"], None))
    out.append(("render", ["render", "--cwd", cwd, "-"], prompt))
    out.append(("show", ["show", *layer, rule], None))
    out.append(("diff set", ["diff", *layer, "--set", "dco=true"], None))
    out.append(("diff coms", ["diff", *layer, "--coms-active"], None))
    requests = []
    params = {"cwd": cwd, **({"package_dir": package_dir} if package_dir else {})}
    for i, (method, extra) in enumerate(
        [
            ("assemble", {}),
            ("assemble", {"coms_active": True}),
            ("explain", {}),
            ("explain", {"format": "text"}),
            ("check", {}),
            ("check", {"format": "short", "strict": True}),
            ("settings", {}),
            ("render", {"prompt": prompt}),
            ("assemble", {"cwd": os.path.join(cwd, "missing")}),
        ]
    ):
        p = {**params, **extra}
        if method in ("settings", "render"):
            p = {k: v for k, v in p.items() if k != "package_dir"}
        requests.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": p}))
    out.append(("serve", ["serve"], "\n".join(requests) + "\n"))
    return out


# The JSON forms' timings (`stats.read_us`, `stats.assemble_us`) differ from run to run.
TIMINGS = re.compile(rb'"(read_us|assemble_us)":\s*\d+')


def run(binary, argv, stdin, env):
    proc = subprocess.run(
        [binary, "--color", "never", *argv] if argv[0] not in ("serve",) else [binary, *argv],
        input=stdin.encode() if stdin is not None else None,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=60,
    )
    stdout = TIMINGS.sub(rb'"\1":0', proc.stdout)
    return proc.returncode, stdout, proc.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--projects", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="generate the projects here and keep them")
    args = ap.parse_args()
    old, new = os.path.abspath(args.old), os.path.abspath(args.new)
    base = args.keep or tempfile.mkdtemp(prefix="pi-rules-compare-")
    rng = random.Random(args.seed)
    same = differ = 0
    try:
        for i in range(args.projects):
            root = os.path.join(base, f"p{i:03d}")
            shutil.rmtree(root, ignore_errors=True)
            cwd, home, package_dir, rule = make_project(root, rng)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LC_ALL": "C"}
            for label, argv, stdin in commands(cwd, package_dir, rule):
                a = run(old, argv, stdin, env)
                b = run(new, argv, stdin, env)
                if a == b:
                    same += 1
                    continue
                differ += 1
                what = [s for s, x, y in zip(["exit", "stdout", "stderr"], a, b) if x != y]
                print(f"p{i:03d} {label}: {', '.join(what)} differ")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{same} identical, {differ} different")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
