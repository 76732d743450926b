#!/usr/bin/env bash
# The suite's client command: `probe-client.sh <profile> <url>` (the suite appends the URL). The client ran when
# onetap printed its one-element JSON array with a verdict (exit 0 live, 1 not live); anything else (a usage
# error, a crash, no verdict) is a failure the suite must see.
set -u
out=$(node "$(dirname "$0")/../bin/onetap" probe --json --timeout 20000 --profile "$1" "$2")
code=$?
if (( code > 1 )); then exit "$code"; fi
printf '%s' "$out" | node -e 'const a = JSON.parse(require("fs").readFileSync(0, "utf8")); process.exit(Array.isArray(a) && a.length === 1 && typeof a[0].verdict === "string" ? 0 : 3)'
