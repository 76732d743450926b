#!/usr/bin/env bash
# Makes release v<version of package.json> from a clean checkout of main:
#
#   - release/onetap-<version>.tgz, the package (npm pack builds it): attach it to the GitHub release, and list
#     repositories install it with `npm i -D <its URL>`;
#   - the annotated tag v<version> on a commit whose tree is HEAD's plus the built dist/src/*.js, so the Action
#     used at that tag installs runtime dependencies only (action/install.sh). The branch is not moved.
#
# Then: git push origin v<version>, and create the GitHub release from the tag with the tarball.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(node -p "require('./package.json').version")
tag="v$version"
[[ -z $(git status --porcelain --untracked-files=no) ]] || { echo "release: the work tree has changes; commit them first" >&2; exit 1; }
! git rev-parse -q --verify "refs/tags/$tag" >/dev/null || { echo "release: $tag exists" >&2; exit 1; }
mkdir -p release
npm pack --pack-destination release >/dev/null
# The release commit is made in a temporary index: HEAD's tree plus the built JavaScript, force-added past .gitignore.
index=$(mktemp)
trap 'rm -f "$index"' EXIT
GIT_INDEX_FILE=$index git read-tree HEAD
GIT_INDEX_FILE=$index git add -f -- ':(glob)dist/src/**/*.js'
tree=$(GIT_INDEX_FILE=$index git write-tree)
commit=$(git commit-tree "$tree" -p HEAD -m "onetap $tag: the built dist/src/ for the Action")
git tag -a "$tag" -m "onetap $tag" "$commit"
echo "release/onetap-$version.tgz"
echo "$tag $commit"
