#!/usr/bin/env bash
# The refresh step of the onetap action (action.yml), runnable outside GitHub with the same environment:
# GITHUB_WORKSPACE (a git checkout of the list's repository), GITHUB_OUTPUT, RUNNER_TEMP, GITHUB_ACTION_PATH
# (a built onetap checkout) and the INPUT_* variables action.yml sets.
#
#   0. with input store-url (PostgreSQL): mask it, migrate the store; steps 1 and 3 are then left out;
#   1. bring the text history from the history branch into the working tree (a data branch, or the default one);
#   2. run `onetap refresh` (--write, or --record) and read its JSON plan; it gets a base environment, the store and
#      the probe keys the catalog names (action/key-names.mjs), nothing else of the job's;
#   3. commit only the history, straight to the history branch (it must outlive unmerged pull requests),
#      appending this run's lines to whatever the branch holds now, retrying when someone pushed meanwhile;
#   4. write the pull request body (`onetap report --markdown`) and, if asked, the static site;
#   5. set the outputs. The pull request itself is opened by peter-evans/create-pull-request in action.yml.
#
# Exit 0 ran (also after the outage guard: a warning annotation, not a red job), 1 error, 2 bad input.
#
# onetap's own output quotes what servers said (names, errors, tool text): it reaches the log only through
# action/log-safe.mjs (one line each, never a workflow command); the workflow commands here are the action's own.
set -euo pipefail

fail() { echo "::error title=onetap::$(annotation "$1")"; exit "${2:-1}"; }
# Workflow commands end at a newline and read % as an escape.
annotation() { local s=${1//'%'/'%25'}; s=${s//$'\r'/'%0D'}; s=${s//$'\n'/'%0A'}; printf '%s' "$s"; }
output() { printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"; }
output_lines() { local d="onetap_$RANDOM$RANDOM"; { echo "$1<<$d"; printf '%s\n' "$2"; echo "$d"; } >> "$GITHUB_OUTPUT"; }
bool() { case "$2" in true|false) ;; *) fail "input $1 must be true or false, got \"$2\"" 2 ;; esac; }
count() { [[ -z $2 || $2 =~ ^[1-9][0-9]*$ ]] || fail "input $1 must be a positive whole number, got \"$2\"" 2; }

: "${GITHUB_WORKSPACE:?}" "${GITHUB_OUTPUT:?}" "${GITHUB_ACTION_PATH:?}"
CATALOG=${INPUT_CATALOG:-catalog/servers.json}
WRITE=${INPUT_WRITE:-true}
RECORD=${INPUT_RECORD:-false}
ALLOW_HTTP=${INPUT_ALLOW_HTTP:-false}
bool write "$WRITE"; bool record "$RECORD"; bool allow-http "$ALLOW_HTTP"
count confirm-drops "${INPUT_CONFIRM_DROPS:-}"; count concurrency "${INPUT_CONCURRENCY:-}"; count timeout "${INPUT_TIMEOUT:-}"; count next-run-days "${INPUT_NEXT_RUN_DAYS:-}"
count quorum "${INPUT_QUORUM:-}"; count deadline "${INPUT_DEADLINE:-}"
if [[ -n ${INPUT_VANTAGES:-} && ! ${INPUT_VANTAGES} =~ ^[a-z0-9][a-z0-9_-]*(,[a-z0-9][a-z0-9_-]*)*$ ]]; then fail "input vantages must be vantage names (a-z, digits, _ and -), comma-separated, got \"$INPUT_VANTAGES\"" 2; fi
if [[ -n ${INPUT_RUN_ID:-} && ! ${INPUT_RUN_ID} =~ ^[A-Za-z0-9][A-Za-z0-9._:+-]{0,199}$ ]]; then fail "input run-id must be letters, digits and . _ : + - (up to 200), got \"$INPUT_RUN_ID\"" 2; fi
MAX_FILE_BYTES=${INPUT_MAX_FILE_BYTES:-16777216}; count max-file-bytes "$MAX_FILE_BYTES"
if [[ -n ${INPUT_SITE_BASE_URL:-} && ! ${INPUT_SITE_BASE_URL} =~ ^https?://[^/]+ ]]; then fail "input site-base-url must be an absolute http(s) URL" 2; fi

ONETAP=(node "$GITHUB_ACTION_PATH/bin/onetap")
LOG_SAFE=(node "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/log-safe.mjs")   # the filter for text the action does not control
TMP=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/onetap.XXXXXX")
cd "$GITHUB_WORKSPACE"
[[ -f $CATALOG ]] || fail "no catalog at $CATALOG (input catalog, relative to the repository root)"
git rev-parse --is-inside-work-tree > /dev/null 2>&1 || fail "$GITHUB_WORKSPACE is not a git checkout: run actions/checkout first"

# 0. A PostgreSQL store: the whole URL and its password masked before anything prints; every onetap command reads it.
STORE=${INPUT_STORE_URL:-}
if [[ -n $STORE ]]; then
  echo "::add-mask::$STORE"
  while IFS= read -r secret; do [[ -n $secret ]] && echo "::add-mask::$secret"; done < <(node -e '
    const u = process.argv[1];
    for (const m of [/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^:@\/?#]*:([^\/?#]*)@/.exec(u), /[?&]password=([^&#]*)/i.exec(u)]) if (m) { console.log(m[1]); try { console.log(decodeURIComponent(m[1])); } catch {} }
  ' "$STORE")
  export ONETAP_STORE_URL=$STORE
  "${ONETAP[@]}" store migrate 2>&1 | "${LOG_SAFE[@]}" || fail "onetap store migrate failed; see the log above"
fi

RECORDED=false
if [[ $WRITE == true || $RECORD == true ]]; then RECORDED=true; fi
# With a store, the history is the store's: nothing to bring from git or commit to it.
IN_GIT=$RECORDED
if [[ -n $STORE ]]; then IN_GIT=false; fi
CATALOG_DIR=$(dirname "$CATALOG")
TOP=$(git rev-parse --show-toplevel)
HISTORY_DIR="$CATALOG_DIR/history"                                       # as the refresh writes it
HISTORY_PATH=$(realpath -m --relative-to="$TOP" "$GITHUB_WORKSPACE/$HISTORY_DIR")  # as git names it

# The history branch: the input, else the repository's default branch (as the event or the remote tells).
BRANCH=${INPUT_HISTORY_BRANCH:-${INPUT_DEFAULT_BRANCH:-}}
if [[ -z $BRANCH ]]; then
  BRANCH=$(git ls-remote --symref origin HEAD | sed -n 's|^ref: refs/heads/\(.*\)[[:space:]]HEAD$|\1|p')
  [[ -n $BRANCH ]] || fail "cannot tell the default branch of origin: set input history-branch"
fi
git check-ref-format --branch "$BRANCH" > /dev/null || fail "input history-branch is not a branch name: $BRANCH" 2

# TIP: the branch tip now, or empty when the branch does not exist yet (a new data branch).
fetch_tip() {
  TIP=
  if git fetch --quiet --no-tags origin "+refs/heads/$BRANCH:refs/remotes/origin/$BRANCH" 2> /dev/null; then
    TIP=$(git rev-parse "refs/remotes/origin/$BRANCH")
  elif git ls-remote --exit-code --heads origin "$BRANCH" > /dev/null 2>&1; then
    fail "cannot fetch the history branch $BRANCH from origin"
  fi
}

# 1. The history as the branch holds it, so the index rebuilt from it knows every recorded run.
if [[ $IN_GIT == true ]]; then
  fetch_tip
  PARENT=$TIP
  if [[ -n $PARENT ]]; then
    while IFS= read -r -d '' f; do
      mkdir -p "$TOP/$(dirname "$f")"
      git cat-file blob "$PARENT:$f" > "$TOP/$f"
    done < <(git ls-tree -r -z --name-only "$PARENT" -- "$HISTORY_PATH")
  fi
  mkdir -p "$TMP/before"
  if [[ -d $HISTORY_DIR ]]; then cp -R "$HISTORY_DIR/." "$TMP/before/"; fi
fi

# Probe-only keys: the variables the catalog's probeHeaders name and the key rule permits (action/key-names.mjs),
# masked in the log before anything runs. The refresh gets these and a base environment, nothing else of the job's
# (no GITHUB_TOKEN, no ACTIONS_* runtime token, no other secret of the workflow): a catalog row can only ever be sent
# what the catalog names.
REFRESH_ENV=()
for var in PATH HOME TMPDIR LANG LC_ALL TZ NO_COLOR TERM NODE_OPTIONS NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR ONETAP_TEST_FAULT; do
  if [[ -n ${!var+set} ]]; then REFRESH_ENV+=("$var=${!var}"); fi
done
if [[ -n $STORE ]]; then REFRESH_ENV+=("ONETAP_STORE_URL=$STORE"); fi
while IFS= read -r var; do
  [[ $var =~ ^[A-Za-z_][A-Za-z0-9_]*$ && -n ${!var+set} ]] || continue
  value=${!var}
  if [[ -n $value ]]; then while IFS= read -r line; do [[ -n $line ]] && echo "::add-mask::$line"; done <<< "$value"; fi
  REFRESH_ENV+=("$var=$value")
done < <(node "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/key-names.mjs" "$CATALOG" 2> /dev/null || true)

# 2. The refresh.
ARGS=(refresh --catalog "$CATALOG" --json)
if [[ $WRITE == true ]]; then ARGS+=(--write); elif [[ $RECORD == true ]]; then ARGS+=(--record); fi
if [[ -n ${INPUT_CONFIRM_DROPS:-} ]]; then ARGS+=(--confirm-drops "$INPUT_CONFIRM_DROPS"); fi
if [[ -n ${INPUT_CONCURRENCY:-} ]]; then ARGS+=(--concurrency "$INPUT_CONCURRENCY"); fi
if [[ -n ${INPUT_TIMEOUT:-} ]]; then ARGS+=(--timeout "$INPUT_TIMEOUT"); fi
if [[ $ALLOW_HTTP == true ]]; then ARGS+=(--allow-http); fi
if [[ -n ${INPUT_OUTPUTS+set} && $INPUT_OUTPUTS != catalog ]]; then ARGS+=(--outputs "$INPUT_OUTPUTS"); fi
if [[ -n ${INPUT_NEXT_RUN_DAYS:-} ]]; then ARGS+=(--next-run-days "$INPUT_NEXT_RUN_DAYS"); fi
# Across vantages (the input, or the catalog's policy.vantages): the workers record to the store; the run id is the
# workflow run's, so a re-run adds no job twice.
ACROSS=${INPUT_VANTAGES:-}
if [[ -z $ACROSS ]]; then ACROSS=$(node -e 'const v = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))?.policy?.vantages; if (Array.isArray(v) && v.length) process.stdout.write("policy")' "$CATALOG" 2> /dev/null || true); fi
if [[ -n ${INPUT_VANTAGES:-} ]]; then ARGS+=(--vantages "$INPUT_VANTAGES"); fi
if [[ -n ${INPUT_QUORUM:-} ]]; then ARGS+=(--quorum "$INPUT_QUORUM"); fi
if [[ -n ${INPUT_DEADLINE:-} ]]; then ARGS+=(--deadline "$INPUT_DEADLINE"); fi
if [[ -n $ACROSS ]]; then
  RUN_ID=${INPUT_RUN_ID:-${GITHUB_RUN_ID:+github-$GITHUB_RUN_ID}}
  if [[ -n $RUN_ID ]]; then ARGS+=(--run-id "$RUN_ID"); fi
fi
echo "::group::$(annotation "onetap ${ARGS[*]}")"
set +e
env -i "${REFRESH_ENV[@]}" "${ONETAP[@]}" "${ARGS[@]}" 2>&1 > "$TMP/plan.json" | "${LOG_SAFE[@]}" >&2   # the plan to a file, the rest through the filter
CODE=${PIPESTATUS[0]}
set -e
echo "::endgroup::"
if [[ $CODE != 0 && $CODE != 3 ]]; then fail "onetap refresh failed (exit $CODE); see the log above"; fi

# Summary counts and the guard's reason, from the JSON plan.
node -e '
  const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const s = p.summary;
  const out = { total: s.total, keep: s.keep, "keep-failed": s.keepFailed, review: s.review, drop: s.drop, "changed-rows": s.changed, aborted: (p.aborted ?? "").replace(/\s+/g, " ") };
  for (const [k, v] of Object.entries(out)) console.log(`${k}=${v}`);
' "$TMP/plan.json" > "$TMP/summary"
cat "$TMP/summary" >> "$GITHUB_OUTPUT"
ABORTED=$(sed -n 's/^aborted=//p' "$TMP/summary")
OUTAGE=false
if [[ $CODE == 3 ]]; then OUTAGE=true; fi

# 3. Commit the history: this run's new lines appended to each file as the branch holds it now.
commit_history() {
  local parent=$1 index="$TMP/index" f base blob
  rm -f "$index"
  if [[ -n $parent ]]; then GIT_INDEX_FILE=$index git read-tree "$parent"; else GIT_INDEX_FILE=$index git read-tree --empty; fi
  while IFS= read -r -d '' f; do
    local rel=${f#"$HISTORY_DIR/"} before="$TMP/before/${f#"$HISTORY_DIR/"}" merged="$TMP/merged"
    local path="$HISTORY_PATH/$rel"
    : > "$merged"
    if [[ -n $parent ]] && git cat-file -e "$parent:$path" 2> /dev/null; then git cat-file blob "$parent:$path" > "$merged"; fi
    if [[ -f $before ]] && cmp -s "$before" <(head -c "$(stat -c %s "$before")" "$f"); then
      tail -c +"$(( $(stat -c %s "$before") + 1 ))" "$f" >> "$merged"     # append-only: the new lines
    elif ! cmp -s "$merged" "$f"; then
      cp "$f" "$merged"                                                 # rewritten (e.g. a first import): take it
    fi
    cp "$merged" "$f"                                                   # the working tree reads what is committed
    blob=$(git hash-object -w "$merged")
    GIT_INDEX_FILE=$index git update-index --add --cacheinfo "100644,$blob,$path"
  done < <(find "$HISTORY_DIR" -type f -print0 2> /dev/null)
  GIT_INDEX_FILE=$index git write-tree
}

# Nothing over the size limit that this run wrote is pushed (onetap bounds what it writes; this guards the
# repository anyway). A file the run left as it was is not this run's to refuse.
refuse_large() {
  local f size rel
  while IFS= read -r -d '' f; do
    rel=${f#"$HISTORY_DIR/"}
    if [[ $rel != "$f" && -f $TMP/before/$rel ]] && cmp -s "$TMP/before/$rel" "$f"; then continue; fi
    size=$(stat -c %s "$f")
    if (( size > MAX_FILE_BYTES )); then fail "refusing to commit $f: $size bytes, over the limit of $MAX_FILE_BYTES (input max-file-bytes); nothing was pushed"; fi
  done < <(find "$@" -type f -print0 2> /dev/null)
}

HISTORY_COMMIT=
if [[ $IN_GIT == true && -d $HISTORY_DIR ]]; then
  refuse_large "$HISTORY_DIR"
  name=${GIT_COMMITTER_NAME:-github-actions[bot]}
  email=${GIT_COMMITTER_EMAIL:-41898282+github-actions[bot]@users.noreply.github.com}
  for attempt in 1 2 3 4 5; do
    fetch_tip
    parent=$TIP
    tree=$(commit_history "$parent")
    if [[ -n $parent && $tree == $(git rev-parse "$parent^{tree}") ]]; then break; fi  # nothing new
    message="onetap: history of the refresh at $(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).probedAt ?? "")' "$TMP/plan.json")"
    if [[ $OUTAGE == true ]]; then message="$message (aborted by the outage guard)"; fi
    commit=$(GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
      git commit-tree "$tree" ${parent:+-p "$parent"} -m "$message")
    if git push --quiet origin "$commit:refs/heads/$BRANCH"; then HISTORY_COMMIT=$commit; break; fi
    if [[ $attempt == 5 ]]; then fail "could not push the history to $BRANCH (is the branch protected? use input history-branch for a data branch)"; fi
    echo "the history branch $BRANCH moved meanwhile; appending again (attempt $((attempt + 1)))"
    sleep $((attempt * 2))
  done
  # On the history branch itself, stand on the new commit: the working tree then differs only by what the
  # pull request carries (catalog and generated files), and the pull request is based on the pushed history.
  if [[ -n $HISTORY_COMMIT && $(git symbolic-ref -q --short HEAD || true) == "$BRANCH" && $(git rev-parse HEAD) == "$(git rev-parse "$HISTORY_COMMIT^")" ]]; then
    git reset --quiet "$HISTORY_COMMIT"
  fi
  if [[ -n $HISTORY_COMMIT ]]; then echo "history committed to $BRANCH: $HISTORY_COMMIT"; fi
fi
output history-commit "$HISTORY_COMMIT"
output history-branch "$BRANCH"

# 4. The pull request's content and body, and the site.
# The catalog, tools.lock.json (acceptances on first use: a maintainer reviews them in the pull request) and the
# generated files the run wrote (the catalog's outputs say which and where); the history went in above.
PR_PATHS=("$CATALOG" "$CATALOG_DIR/tools.lock.json")
while IFS= read -r f; do PR_PATHS+=("$f"); done < <(node -e '
  const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const history = require("path").resolve(process.argv[2]) + require("path").sep;
  const listed = new Set(process.argv.slice(3).map((f) => require("path").resolve(f)));
  for (const f of p.written ?? []) if (!require("path").resolve(f).startsWith(history) && !listed.has(require("path").resolve(f))) console.log(f);
' "$TMP/plan.json" "$HISTORY_DIR" "${PR_PATHS[@]}")
DATES_ONLY=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).datesOnly === true)' "$TMP/plan.json")
CHANGED=false
if [[ $WRITE == true && $OUTAGE == false && -n $(git status --porcelain --untracked-files=all -- "${PR_PATHS[@]}") ]]; then CHANGED=true; fi
if [[ $CHANGED == true ]]; then refuse_large "${PR_PATHS[@]}"; fi
output changed "$CHANGED"
output outage "$OUTAGE"
output_lines pr-paths "$(printf '%s\n' "${PR_PATHS[@]}")"
output plan-path "$TMP/plan.json"

REPORT="$TMP/report.md"
: > "$REPORT"
if [[ $DATES_ONLY == true ]]; then
  printf '%s\n\n' "> Nothing changed this run: this pull request only refreshes the snapshot's dates, which would have gone stale before the next scheduled run." > "$REPORT"
fi
"${ONETAP[@]}" report --markdown --catalog "$CATALOG" 2>&1 >> "$REPORT" | "${LOG_SAFE[@]}" >&2 || fail "onetap report failed"
output report-path "$REPORT"
if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then cat "$REPORT" >> "$GITHUB_STEP_SUMMARY"; fi

if [[ -n ${INPUT_SITE_DIR:-} ]]; then
  SITE_ARGS=(site --out "$INPUT_SITE_DIR" --catalog "$CATALOG")
  if [[ -n ${INPUT_SITE_BASE_URL:-} ]]; then SITE_ARGS+=(--base-url "$INPUT_SITE_BASE_URL"); fi
  if [[ $ALLOW_HTTP == true ]]; then SITE_ARGS+=(--allow-http); fi
  "${ONETAP[@]}" "${SITE_ARGS[@]}" 2>&1 | "${LOG_SAFE[@]}" || fail "onetap site failed"
  output site-path "$INPUT_SITE_DIR"
fi

if [[ $OUTAGE == true ]]; then
  echo "::warning title=onetap outage guard::$(annotation "The refresh was stopped by the outage guard: $ABORTED. Nothing was dropped and no pull request was opened; the aborted run is in the history.")"
fi
exit 0
