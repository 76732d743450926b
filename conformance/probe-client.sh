#!/usr/bin/env bash
# The suite's client command: `probe-client.sh <profile> <url>` (the suite appends the URL). A verdict of any kind
# (exit 0 or 1) means the client ran; anything else (a usage error, a crash) is the suite's failure to see.
set -u
code=0
node "$(dirname "$0")/../bin/onetap" probe --json --timeout 20000 --profile "$1" "$2" > /dev/null || code=$?
if (( code > 1 )); then exit "$code"; fi
exit 0
