#!/usr/bin/env bash
# The install step of the onetap action (action.yml), run in GITHUB_ACTION_PATH (a checkout of onetap).
#
# A release tag (made by scripts/release.sh) carries the built dist/src/: only the runtime dependencies are
# installed, and nothing is compiled. Any other ref (a branch, a commit of main) has no build: everything is
# installed and onetap is built. No dependency's lifecycle script runs either way (the checkout's token may
# already be in .git/config, and the pull request token comes later); no runtime dependency needs one (msgpackr's
# optional native speedup, msgpackr-extract, stays unbuilt: msgpackr then encodes in JavaScript).
set -euo pipefail
if [[ -f dist/src/cli/main.js ]]; then
  npm ci --omit=dev --no-audit --no-fund --ignore-scripts
else
  npm ci --no-audit --no-fund --ignore-scripts
  npm run build --ignore-scripts
fi
