#!/usr/bin/env bash
# tests/action/test.sh DIST BIN: the GitHub Action's script (action/run.sh), run as the runner runs
# it, with GitHub's variables (GITHUB_WORKSPACE, RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY,
# GITHUB_ACTION_PATH: this checkout) pointed at temporary files. It installs pi-rules from the
# npm tarballs `scripts/npm-pack` left in DIST (PI_RULES_ACTION_NPM_SPEC, offline: nothing comes
# from a registry) into each run's RUNNER_TEMP. BIN (a pi-rules of this checkout) writes the
# exported files of the export case. Cases: a broken project in a subdirectory with SARIF on
# (fails, with `::error file=sub/...` on stdout, the outputs and a valid SARIF file); a clean
# project (passes); `export --check` on fresh files (passes) and on stale ones (fails); an
# unknown argument (exit 2); the version it installs without a spec (the action's own, or the
# input), and a version input that is not one. And the copy-paste workflow's inputs, checked by
# actionlint against action.yml. Prints `N passed, N failed`; exits 1 when one failed.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: tests/action/test.sh DIST BIN" >&2; exit 2; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
dist="$(cd "$1" && pwd)"
bin="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)"
spec="$(echo "$dist/pi-rules-$version.tgz" "$dist"/pi-rules-cli-*-"$version.tgz")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# run NAME STATUS [VAR=VALUE...]: the script in a fresh runner (its workspace is $work/NAME/ws,
# filled before), want exit STATUS; its stdout, outputs and summary are left in $work/NAME.
run() {
    local name="$1" want="$2" status=0
    shift 2
    local dir="$work/$name"
    mkdir -p "$dir/temp" "$dir/home" "$dir/ws"
    : >"$dir/output"
    : >"$dir/summary"
    env -u PI_RULES_BIN -u CI HOME="$dir/home" \
        GITHUB_WORKSPACE="$dir/ws" RUNNER_TEMP="$dir/temp" GITHUB_OUTPUT="$dir/output" \
        GITHUB_STEP_SUMMARY="$dir/summary" GITHUB_ACTION_PATH="$root" \
        PI_RULES_ACTION_NPM_SPEC="$spec" npm_config_offline=true "$@" \
        "$root/action/run.sh" >"$dir/stdout" 2>"$dir/stderr" || status=$?
    if [ "$status" != "$want" ]; then
        fail "$name" "exit $status, want $want"
        return 1
    fi
}
fail() {
    echo "FAIL $1: $2" >&2
    echo "--- stdout:" >&2
    cat "$work/$1/stdout" >&2
    echo "--- stderr:" >&2
    cat "$work/$1/stderr" >&2
    failed=$((failed + 1))
}
# has NAME FILE TEXT: FILE of case NAME holds TEXT.
has() {
    grep -qF -- "$3" "$work/$1/$2" || { fail "$1" "$2 has no line with '$3'"; return 1; }
}
pass() {
    echo "ok $1"
    passed=$((passed + 1))
}

# A broken rule in a project below the repository root, with SARIF on.
mkdir -p "$work/broken/ws/sub/.pi/rules"
printf 'Be brief.{{IF:dcoo}} Sign off.{{/IF}}\n' >"$work/broken/ws/sub/.pi/rules/90-team.md"
if run broken 1 PI_RULES_ACTION_DIRECTORY=sub PI_RULES_ACTION_SARIF=true &&
    has broken stdout "::error file=sub/.pi/rules/90-team.md,line=1,col=15,endLine=1,endColumn=19,title=PR101::" &&
    has broken output "version=$version" &&
    has broken output "sarif-file=$work/broken/temp/pi-rules.sarif" &&
    has broken summary "### pi-rules $version" &&
    python3 -c 'import json, sys
log = json.load(open(sys.argv[1]))
results = log["runs"][0]["results"]
assert [r["ruleId"] for r in results] == ["PR101"], results
uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
assert uri == "sub/.pi/rules/90-team.md", uri' "$work/broken/temp/pi-rules.sarif"; then
    pass "broken project: fails, an annotation on the line, SARIF written"
fi

# A clean project.
mkdir -p "$work/clean/ws/.pi/rules"
printf 'Be brief.\n' >"$work/clean/ws/.pi/rules/90-team.md"
if run clean 0 && ! grep -q '^::error' "$work/clean/stdout" &&
    has clean summary "pi-rules check\`: passed"; then
    pass "clean project: passes"
fi

# export --check: fresh files pass, and after a rule changes they are stale.
for name in fresh stale; do
    mkdir -p "$work/$name/ws/.pi/rules"
    printf 'Be brief.\n' >"$work/$name/ws/.pi/rules/90-team.md"
    (cd "$work/$name/ws" && env -u PI_RULES_BIN HOME="$work/$name/home" "$bin" export agents-md claude >/dev/null)
done
printf 'Run the linter before every commit.\n' >"$work/stale/ws/.pi/rules/91-lint.md"
if run fresh 0 PI_RULES_ACTION_EXPORT_CHECK=true && has fresh summary "exported files are fresh"; then
    pass "export --check on fresh files: passes"
fi
if run stale 1 PI_RULES_ACTION_EXPORT_CHECK=true &&
    has stale stdout "::error title=pi-rules export --check::" &&
    has stale stdout "+Run the linter before every commit."; then
    pass "export --check on stale files: fails, with the diff"
fi

# An argument check refuses: pi-rules' usage status, and said so.
mkdir -p "$work/usage/ws"
if run usage 2 PI_RULES_ACTION_ARGS="--strict --no-such-flag" &&
    has usage stdout "::error title=pi-rules check::pi-rules check exited 2"; then
    pass "an unknown argument: exit 2"
fi

# The version installed without a spec: the action's own (its Cargo.toml), or the input. With an
# empty npm cache and offline, npm cannot install it, which shows the spec it was asked for.
for name in own input; do
    mkdir -p "$work/$name/ws" "$work/$name/npm-cache"
done
if run own 1 PI_RULES_ACTION_NPM_SPEC= npm_config_cache="$work/own/npm-cache" &&
    has own stdout "Installing pi-rules@$version from npm" &&
    has own stdout "::error title=pi-rules action::npm could not install pi-rules@$version"; then
    pass "no version input: the action's own version, $version"
fi
if run input 1 PI_RULES_ACTION_NPM_SPEC= npm_config_cache="$work/input/npm-cache" \
    PI_RULES_ACTION_VERSION=0.0.9 && has input stdout "Installing pi-rules@0.0.9 from npm"; then
    pass "the version input: that version"
fi
mkdir -p "$work/bad-version/ws"
if run bad-version 1 PI_RULES_ACTION_VERSION=$'1.0 && echo\n::warning::forged' &&
    has bad-version stdout "::error title=pi-rules action::input version is \`1.0 && echo%0A::warning::forged\`" &&
    ! grep -q '^::warning' "$work/bad-version/stdout"; then
    pass "a version input that is not a version: refused, on one line"
fi

# The copy-paste workflow (docs/ci/rules-action.yml) against this action.yml: actionlint reads a
# local action's metadata (`uses: ./`) and checks the inputs the workflow gives it.
lint="$work/lint"
mkdir -p "$lint/.github/workflows"
cp "$root/action.yml" "$lint/"
sed 's|uses: OWNER/pi-rules@v1|uses: ./|' "$root/docs/ci/rules-action.yml" >"$lint/.github/workflows/pi-rules.yml"
grep -q 'uses: \./$' "$lint/.github/workflows/pi-rules.yml" || { echo "docs/ci/rules-action.yml uses no OWNER/pi-rules@v1" >&2; exit 1; }
actionlint="$("$root/tests/python/venv")/actionlint"
if (cd "$lint" && git init -q && "$actionlint" .github/workflows/pi-rules.yml); then
    pass "docs/ci/rules-action.yml gives action.yml only the inputs it has"
else
    echo "FAIL actionlint on docs/ci/rules-action.yml with uses: ./ (above)" >&2
    failed=$((failed + 1))
fi

echo "action/run.sh: $passed passed, $failed failed"
[ "$failed" = 0 ]
