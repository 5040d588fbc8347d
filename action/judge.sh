#!/usr/bin/env bash
# The fsmlog action's one working step (action.yml runs it with every input in FSMLOG_*).
# Exit codes are fsmlog's: 0 passed, 1 the gate failed, 2 input or usage error. The summary
# and the outputs are written whatever the outcome, then the script exits with it.
#
# Every value here comes from a workflow or a branch name: it is quoted everywhere, handed to
# fsmlog as --option=value and after `--` so that nothing can pass for an option, and quoted
# with %q when the log shows it.
set -euo pipefail

mode=${FSMLOG_MODE:-}
working_directory=${FSMLOG_WORKING_DIRECTORY:-.}
output_dir=${FSMLOG_OUTPUT_DIR:-}

# Outputs written so far, flushed by finish.
outputs=()
# The files this run writes, output name then path.
files=()
# What the repeated runs say on stderr, shown only when it differs from the first run.
scratch=$(mktemp -d)
trap 'rm -rf -- "$scratch"' EXIT

q() {
  printf '%q' "$1"
}

# An annotation's text is a workflow command's data: %, CR and LF have to be escaped.
annotate() {
  local text=$1
  text=${text//'%'/'%25'}
  text=${text//$'\r'/'%0D'}
  text=${text//$'\n'/'%0A'}
  printf '::error title=fsmlog::%s\n' "$text"
}

summary() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat >>"$GITHUB_STEP_SUMMARY"
  else
    cat >/dev/null
  fi
}

output() {
  outputs+=("$1=$2")
}

# A file this run writes: removed first, so that one left in output-dir by an earlier run
# never passes for this run's, and named in an output only if fsmlog wrote something into it
# (an empty SARIF file would only fail the upload after it).
produces() {
  rm -f -- "$2"
  files+=("$1" "$2")
}

finish() {
  local code=$1 line i
  for ((i = 0; i < ${#files[@]}; i += 2)); do
    [ ! -s "${files[i + 1]}" ] || output "${files[i]}" "${files[i + 1]}"
  done
  output exit-code "$code"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    for line in "${outputs[@]}"; do
      printf '%s\n' "$line" >>"$GITHUB_OUTPUT"
    done
  fi
  exit "$code"
}

# A problem with the inputs: exit 2 with the reason in the log, as an annotation, and in the
# summary (HTML-escaped, so that a value cannot turn into markup).
die() {
  local message=$1 shown
  echo "fsmlog action: $message" >&2
  annotate "$message"
  # Quoted replacements: bash 5.2 reads a bare & in one as the matched text.
  shown=${message//'&'/'&amp;'}
  shown=${shown//'<'/'&lt;'}
  shown=${shown//'>'/'&gt;'}
  printf '## fsmlog\n\n<pre>%s</pre>\n\n' "$shown" | summary
  finish 2
}

# fsmlog's codes as the action reports them; anything else (a crash, a missing binary) is
# not a verdict, so it counts as an input or usage error.
verdict() {
  case $1 in
    0 | 1 | 2) echo "$1" ;;
    *) echo 2 ;;
  esac
}

worst() {
  local worst=0 code
  for code in "$@"; do
    code=$(verdict "$code")
    [ "$code" -gt "$worst" ] && worst=$code
  done
  echo "$worst"
}

# The report for the summary; fsmlog writes none when it stops before judging (a baseline
# that does not parse, an unknown rule set), and the summary still has to say something.
report() {
  local file=$1 command=$2 code=$3
  if [ -s "$file" ]; then
    cat "$file"
  else
    printf '## fsmlog %s\n\nfsmlog wrote no report (exit %s); the step'"'"'s log says why.\n' "$command" "$code"
  fi
  echo
}

# Shows a Markdown file in the log with workflow commands off: its text quotes the fleet.
show() {
  local token
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  echo "::stop-commands::$token"
  cat "$1"
  echo "::$token::"
}

[ -n "$mode" ] || die "the mode input is required (rules or fleet)"
case $mode in
  rules | fleet) ;;
  *) die "mode: $(q "$mode") is neither rules nor fleet" ;;
esac
command -v fsmlog >/dev/null || die "fsmlog is not on PATH"
cd -- "$working_directory" 2>/dev/null || die "working-directory: no directory $(q "$working_directory")"

output_dir=${output_dir:-${RUNNER_TEMP:-}/fsmlog}
[ "$output_dir" != /fsmlog ] || die "output-dir: empty, and RUNNER_TEMP is not set"
case $output_dir in
  *$'\n'* | *$'\r'*) die "output-dir: a line break in $(q "$output_dir")" ;;
esac
mkdir -p -- "$output_dir" 2>/dev/null || die "output-dir: cannot create $(q "$output_dir")"
output_dir=$(cd -- "$output_dir" && pwd)
output output-dir "$output_dir"

fleet=()
while IFS= read -r line || [ -n "$line" ]; do
  line=${line#"${line%%[![:space:]]*}"}
  line=${line%"${line##*[![:space:]]}"}
  [ -n "$line" ] || continue
  # One read of standard input cannot feed the several runs below, and a step has none.
  [ "$line" != - ] || die "fleet: - (standard input) cannot be read by an action; name files or directories"
  fleet+=("$line")
done <<<"${FSMLOG_FLEET:-}"
[ ${#fleet[@]} -gt 0 ] || die "fleet: no path given (one file or directory a line)"

rules_mode() {
  local events_go=${FSMLOG_EVENTS_GO:-cmd/metal-api/internal/fsm/events.go}
  local base_ref=${FSMLOG_BASE_REF:-} base_file=${FSMLOG_BASE_FILE:-}
  local like=${FSMLOG_LIKE:-metal-api} fail_on=${FSMLOG_FAIL_ON:-newly-unexpected}
  local base_go=$output_dir/base-events.go
  local base_json=$output_dir/base.json proposed_json=$output_dir/proposed.json
  local markdown=$output_dir/diff.md json=$output_dir/diff.json
  local code lint=0 md_code=0 json_code=0

  produces markdown "$markdown"
  produces json "$json"
  produces base-rules "$base_json"
  produces proposed-rules "$proposed_json"
  rm -f -- "$base_go"
  [ -f "$events_go" ] || die "events-go: no file $(q "$events_go")"
  if [ -n "$base_file" ]; then
    [ -f "$base_file" ] || die "base-file: no file $(q "$base_file")"
    cp -- "$base_file" "$base_go"
  else
    [ -n "$base_ref" ] || die "base-ref: empty (it is the pull request's base branch; elsewhere give base-ref or base-file)"
    git check-ref-format "refs/heads/$base_ref" || die "base-ref: $(q "$base_ref") is not a branch name"
    case $events_go in
      /*) die "events-go: $(q "$events_go") must be relative to the checkout to be read from git" ;;
    esac
    local remote=refs/remotes/origin/$base_ref
    # A default checkout (fetch-depth 1) has no base branch; one shallow commit is enough.
    if ! git rev-parse --verify --quiet "$remote^{commit}" >/dev/null; then
      git fetch --no-tags --depth=1 origin "+refs/heads/$base_ref:$remote" \
        || die "base-ref: cannot fetch $(q "origin/$base_ref") (check out with fetch-depth: 0, or give base-file)"
    fi
    # ./ reads the path relative to working-directory, as the proposed file is read.
    git show "$remote:./$events_go" >"$base_go" \
      || die "base-ref: $(q "origin/$base_ref") has no $(q "$events_go")"
  fi
  code=0
  fsmlog rules import-go --color=never --like="$like" --name=base --out="$base_json" -- "$base_go" || code=$?
  if [ "$code" -eq 0 ]; then
    fsmlog rules import-go --color=never --like="$like" --name=proposed --out="$proposed_json" -- "$events_go" || code=$?
  fi
  if [ "$code" -ne 0 ]; then
    code=$(verdict "$code")
    printf '## fsmlog diff\n\nThe events.go files could not be imported as rule files (exit %s); the step'"'"'s log names the line.\n\n' "$code" \
      | tee "$markdown" | summary
    finish "$code"
  fi
  fsmlog rules lint --color=never -- "$proposed_json" || lint=$?

  local diff=(fsmlog diff -q --color=never --old="$base_json" --new="$proposed_json" --fail-on="$fail_on")
  "${diff[@]}" -o markdown -- "${fleet[@]}" >"$markdown" || md_code=$?
  # The same run again: its problems were said by the first.
  "${diff[@]}" -o json -- "${fleet[@]}" >"$json" 2>"$scratch/diff-json.stderr" || json_code=$?
  [ "$json_code" -eq "$md_code" ] || cat "$scratch/diff-json.stderr" >&2

  code=$(worst "$lint" "$md_code" "$json_code")
  {
    if [ "$lint" -ne 0 ]; then
      printf '## fsmlog rules lint\n\nThe proposed rules have mistakes (exit %s); the step'"'"'s log names each line.\n\n' "$(verdict "$lint")"
    fi
    report "$markdown" diff "$code"
  } | summary
  show "$markdown"
  finish "$code"
}

fleet_mode() {
  local rules=${FSMLOG_RULES:-metal-api} baseline=${FSMLOG_BASELINE:-}
  local sarif=$output_dir/fsmlog.sarif junit=$output_dir/fsmlog-junit.xml markdown=$output_dir/fsmlog.md
  local md_code=0 sarif_code=0 junit_code=0 code
  local check=(fsmlog check -q --color=never --rules="$rules")
  produces markdown "$markdown"
  produces sarif "$sarif"
  produces junit "$junit"
  if [ -n "$baseline" ]; then
    [ -f "$baseline" ] || die "baseline: no file $(q "$baseline")"
    check+=(--baseline="$baseline")
  fi
  # Only the first run annotates (GITHUB_ACTIONS=true): three runs would say each violation
  # three times, and GitHub shows no more than ten annotations a step.
  "${check[@]}" -o markdown -- "${fleet[@]}" >"$markdown" || md_code=$?
  GITHUB_ACTIONS=false "${check[@]}" -o sarif -- "${fleet[@]}" >"$sarif" 2>"$scratch/sarif.stderr" || sarif_code=$?
  GITHUB_ACTIONS=false "${check[@]}" -o junit -- "${fleet[@]}" >"$junit" 2>"$scratch/junit.stderr" || junit_code=$?
  [ "$sarif_code" -eq "$md_code" ] || cat "$scratch/sarif.stderr" >&2
  [ "$junit_code" -eq "$md_code" ] || cat "$scratch/junit.stderr" >&2

  code=$(worst "$md_code" "$sarif_code" "$junit_code")
  report "$markdown" check "$code" | summary
  show "$markdown"
  finish "$code"
}

case $mode in
  rules) rules_mode ;;
  fleet) fleet_mode ;;
esac
