#!/usr/bin/env bash
# What a list repository pays to install onetap: packs this checkout (the build must be current: npm run build or
# npm test first), installs the tarball into an empty directory with install scripts off and an empty npm cache
# (every package downloaded), and prints the wall time, the package's size and what landed in node_modules.
#   bash bench/install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/list"
pack=$(npm pack --ignore-scripts --pack-destination "$tmp" --json)
node -e 'const p = JSON.parse(process.argv[1])[0]; console.log(`package: ${p.filename}, ${(p.size / 1000).toFixed(1)} kB packed, ${(p.unpackedSize / 1e6).toFixed(2)} MB unpacked, ${p.entryCount} files`)' "$pack"
echo '{"name":"list","private":true}' > "$tmp/list/package.json"
start=$(date +%s.%N)
(cd "$tmp/list" && npm install --ignore-scripts --cache "$tmp/cache" --no-audit --no-fund --silent -D "$tmp"/onetap-*.tgz)
end=$(date +%s.%N)
count=$(find "$tmp/list/node_modules" -name package.json -path '*/node_modules/*/package.json' -not -path '*/node_modules/*/node_modules/*/*' | wc -l)
echo "install: $(node -e "console.log((process.argv[1] - process.argv[2]).toFixed(1))" "$end" "$start") s with a cold npm cache; node_modules $(du -sh "$tmp/list/node_modules" | cut -f1), $count package.json files at the top two levels"
"$tmp/list/node_modules/.bin/onetap" --version > /dev/null && echo "npx onetap runs: $("$tmp/list/node_modules/.bin/onetap" --version)"
