#!/usr/bin/env bash
# Neovim (Debian's package) opens a rule file with a misspelt key, headless, with the client
# set-up of neovim.lua, and must show pi-rules' diagnostic for it. Usage: neovim-smoke.sh BIN
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/p/.git" "$work/p/.pi/rules"
file="$work/p/.pi/rules/90-signing.md"
printf '# Rule\n\n{{IF:dcoo}}\nsigned\n{{/IF}}\n' >"$file"
HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" \
    XDG_STATE_HOME="$work/home/.local/state" PI_RULES_BIN="$bin" SMOKE_FILE="$file" \
    SMOKE_OUT="$work/out" timeout 60 nvim --headless -n -i NONE -u "$here/neovim.lua"
cat "$work/out"
# Line 2 (0-based), column 5: the key after `{{IF:`.
grep -q '^2:5 PR101 unknown settings key `dcoo`' "$work/out" || {
    echo "neovim-smoke: no PR101 diagnostic on the misspelt key" >&2
    exit 1
}
echo "neovim-smoke: the diagnostic reached Neovim"
