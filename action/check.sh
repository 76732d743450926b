#!/usr/bin/env bash
# The pull-request check of the onetap action (mode: check), runnable outside GitHub with the same environment
# as run.sh plus INPUT_BASE_REF: lint the whole catalog, then attest the rows the pull request adds or changes
# (compared with the catalog on the base branch). Exit 0 clean, 1 lint problems or a changed row not live, 2 bad input.
#
# The catalog is the pull request's (perhaps a fork's): everything printed from it, or from what its servers
# answered, reaches the log through action/log-safe.mjs (one line each, never a workflow command).
set -euo pipefail

# Workflow commands end at a newline and read % as an escape.
annotation() { local s=${1//'%'/'%25'}; s=${s//$'\r'/'%0D'}; s=${s//$'\n'/'%0A'}; printf '%s' "$s"; }
fail() { echo "::error title=onetap::$(annotation "$1")"; exit "${2:-1}"; }
HERE=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
LOG_SAFE=(node "$HERE/log-safe.mjs")
: "${GITHUB_WORKSPACE:?}" "${GITHUB_ACTION_PATH:?}"
CATALOG=${INPUT_CATALOG:-catalog/servers.json}
ALLOW_HTTP=${INPUT_ALLOW_HTTP:-false}
case "$ALLOW_HTTP" in true|false) ;; *) fail "input allow-http must be true or false, got \"$ALLOW_HTTP\"" 2 ;; esac
BASE=${INPUT_BASE_REF:-}
[[ -n $BASE ]] || fail "mode check needs input base-ref (github.base_ref in a pull_request workflow)" 2
git check-ref-format --branch "$BASE" > /dev/null || fail "input base-ref is not a branch name: $BASE" 2
cd "$GITHUB_WORKSPACE"
TMP=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/onetap.XXXXXX")

LINT=(lint --catalog "$CATALOG")
if [[ $ALLOW_HTTP == true ]]; then LINT+=(--allow-http); fi
status=0
node "$GITHUB_ACTION_PATH/bin/onetap" "${LINT[@]}" 2>&1 | "${LOG_SAFE[@]}" || status=1

git fetch --quiet --no-tags origin "+refs/heads/$BASE:refs/remotes/origin/$BASE" || fail "cannot fetch the base branch $BASE"
PATH_IN_GIT=$(realpath -m --relative-to="$(git rev-parse --show-toplevel)" "$GITHUB_WORKSPACE/$CATALOG")
git cat-file blob "refs/remotes/origin/$BASE:$PATH_IN_GIT" > "$TMP/base.json" 2> /dev/null || : > "$TMP/base.json"
# Its stdout carries the action's own annotations (each quoted text already made safe there); its stderr is
# only ever an unexpected error, which may quote anything: through the filter.
node "$HERE/check-pr.mjs" "$CATALOG" "$TMP/base.json" 2> "$TMP/check-pr.err" || status=1
"${LOG_SAFE[@]}" < "$TMP/check-pr.err" >&2
exit $status
