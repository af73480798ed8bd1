#!/usr/bin/env bash
# The pi-rules GitHub Action's one step (action.yml runs it; ./run-tests runs it too, with GitHub's
# variables pointed at temporary files: tests/action/test.sh).
#
# 1. Installs pi-rules from npm into $RUNNER_TEMP (no build): the version PI_RULES_ACTION_VERSION
#    names, else the action's own, the workspace version in $GITHUB_ACTION_PATH/Cargo.toml, so a
#    tag v0.2.0 of the action installs pi-rules 0.2.0. PI_RULES_ACTION_NPM_SPEC replaces the
#    package spec (npm specs split on white space, such as the two tarballs `scripts/npm-pack`
#    writes; with npm_config_offline=true nothing comes from a registry).
# 2. From $GITHUB_WORKSPACE, runs `pi-rules check --cwd DIR --format github ARGS`: each finding is
#    a workflow command, an annotation on its lines, its path relative to the repository root.
# 3. With PI_RULES_ACTION_SARIF=true, writes the same findings as SARIF to
#    $RUNNER_TEMP/pi-rules.sarif and names it in the step output `sarif-file` (action.yml uploads
#    it, after a failure too).
# 4. With PI_RULES_ACTION_EXPORT_CHECK=true, runs `pi-rules export --check --cwd DIR` (a diff per
#    stale file).
# It writes the outputs `version` and `sarif-file` to $GITHUB_OUTPUT and a summary to
# $GITHUB_STEP_SUMMARY, and exits 1 on an error finding (or a warning with `--strict`) or a stale
# export, and with pi-rules' own status when it fails otherwise (2 usage, 3 input, 4 output).
set -euo pipefail

# An error annotation, and exit 1. The message may quote an input: `%` and line breaks are
# encoded as the runner decodes them, so that it cannot start a workflow command of its own.
fail() {
    local message="$*"
    message="${message//%/%25}"
    message="${message//$'\r'/%0D}"
    message="${message//$'\n'/%0A}"
    echo "::error title=pi-rules action::$message"
    exit 1
}
for var in GITHUB_WORKSPACE RUNNER_TEMP GITHUB_OUTPUT GITHUB_ACTION_PATH; do
    [ -n "${!var:-}" ] || fail "$var is not set: run this script as a step of the action (action.yml)"
done
directory="${PI_RULES_ACTION_DIRECTORY:-.}"
sarif="${PI_RULES_ACTION_SARIF:-false}"
export_check="${PI_RULES_ACTION_EXPORT_CHECK:-false}"
for flag in sarif export_check; do
    case "${!flag}" in
    true | false) ;;
    *) fail "input ${flag//_/-} is \`${!flag}\`; it is true or false" ;;
    esac
done
read -r -a args <<<"${PI_RULES_ACTION_ARGS:-}"

# 1. Install.
version="${PI_RULES_ACTION_VERSION:-}"
if [ -z "$version" ]; then
    version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$GITHUB_ACTION_PATH/Cargo.toml" | head -1)"
    [ -n "$version" ] || fail "no version in $GITHUB_ACTION_PATH/Cargo.toml; set the input \`version\`"
fi
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] ||
    fail "input version is \`$version\`; it is a version such as 0.1.0"
read -r -a spec <<<"${PI_RULES_ACTION_NPM_SPEC:-pi-rules@$version}"
prefix="$RUNNER_TEMP/pi-rules-action"
mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"private": true}' >"$prefix/package.json"
echo "Installing ${spec[*]} from npm into $prefix"
(cd "$prefix" && npm install --no-audit --no-fund --loglevel=error "${spec[@]}") ||
    fail "npm could not install ${spec[*]}"
bin="$prefix/node_modules/.bin/pi-rules"
installed="$("$bin" --version)" || fail "the installed pi-rules does not run: $bin --version failed"
echo "$installed"
installed="${installed#pi-rules }"
installed="${installed%% *}"
echo "version=$installed" >>"$GITHUB_OUTPUT"

cd "$GITHUB_WORKSPACE"
status=0
summary=()

# 2. check, as annotations.
findings="$RUNNER_TEMP/pi-rules-check.txt"
check=0
"$bin" check --cwd "$directory" --format github ${args[@]+"${args[@]}"} >"$findings" || check=$?
cat "$findings"
count() { grep -c "^::$1 " "$findings" || true; }
case "$check" in
0 | 1)
    summary+=("- \`pi-rules check\`: $([ "$check" = 0 ] && echo passed || echo failed) (errors: $(count error), warnings: $(count warning), notices: $(count notice))")
    [ "$check" = 0 ] || status=1
    ;;
*)
    echo "::error title=pi-rules check::pi-rules check exited $check (see the log)"
    summary+=("- \`pi-rules check\` could not run: exit $check")
    status=$check
    ;;
esac

# 3. SARIF.
if [ "$sarif" = true ]; then
    report="$RUNNER_TEMP/pi-rules.sarif"
    rc=0
    "$bin" check --cwd "$directory" --format sarif ${args[@]+"${args[@]}"} >"$report" || rc=$?
    if [ "$rc" -le 1 ]; then
        echo "sarif-file=$report" >>"$GITHUB_OUTPUT"
        summary+=("- SARIF written for code scanning")
    else
        echo "::error title=pi-rules check::pi-rules check --format sarif exited $rc"
        [ "$status" != 0 ] || status=$rc
    fi
fi

# 4. export --check.
if [ "$export_check" = true ]; then
    rc=0
    "$bin" export --check --cwd "$directory" || rc=$?
    case "$rc" in
    0) summary+=("- \`pi-rules export --check\`: the exported files are fresh") ;;
    1)
        echo "::error title=pi-rules export --check::files are not what \`pi-rules export\` writes: run \`pi-rules export\` and commit the result (the diff is in the log)"
        summary+=("- \`pi-rules export --check\`: stale files (run \`pi-rules export\` and commit the result)")
        [ "$status" != 0 ] || status=1
        ;;
    *)
        echo "::error title=pi-rules export --check::pi-rules export --check exited $rc (see the log)"
        summary+=("- \`pi-rules export --check\` could not run: exit $rc")
        [ "$status" != 0 ] || status=$rc
        ;;
    esac
fi

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    { echo "### pi-rules $installed"; printf '%s\n' "${summary[@]}"; } >>"$GITHUB_STEP_SUMMARY"
fi
exit "$status"
