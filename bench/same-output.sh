#!/usr/bin/env bash
# Writes what every command prints for every input of testdata/ and ../shared/samples/ into a
# folder, so that two builds can be compared byte for byte:
#
#   bash bench/same-output.sh OLD_BINARY /tmp/old
#   bash bench/same-output.sh target/release/fsmlog /tmp/new
#   diff -r /tmp/old /tmp/new && echo identical
#
# Each output file holds stdout, then stderr after a `--- stderr` line, then the exit code.
set -uo pipefail
bin=$(realpath "$1")
out=$2
cd "$(dirname "$0")/.."
mkdir -p "$out"
samples=../shared/samples

inputs=(testdata/seed-machine.txt)
for fleet in testdata/fleet-v0.19.0 testdata/fleet-v0.42.2 $samples/fleet-v0.19.0 $samples/fleet-v0.42.2; do
  [ -d "$fleet" ] || continue
  for d in "$fleet"/*/; do inputs+=("${d%/}"); done
done
for d in testdata/pasted testdata/yaml testdata/damaged testdata/odd-exports testdata/no-events testdata/merging testdata/gate testdata/rule-files testdata/hostile-names testdata/terminal testdata/html testdata/audit; do
  [ -d "$d" ] && inputs+=("$d")
done
[ -f $samples/seed-machine.txt ] && inputs+=($samples/seed-machine.txt)

run() {
  local name=$1
  shift
  {
    "$bin" "$@" 2>"$out/.stderr"
    local rc=$?
    echo "--- stderr"
    cat "$out/.stderr"
    echo "--- exit $rc"
  } >"$out/$name" 2>&1
}

for input in "${inputs[@]}"; do
  key=$(echo "$input" | tr '/.' '__')
  rules=metal-api-v0.42.2
  case "$input" in *v0.19.0*) rules=metal-api-v0.19.0 ;; esac
  for threads in 1 default; do
    t=()
    [ "$threads" = 1 ] && t=(--threads 1)
    for o in table json csv markdown html; do
      run "$key.report.$o.$threads" report --rules $rules -o $o --now 2030-01-01T00:00:00Z "${t[@]}" "$input"
    done
    run "$key.report.byday.$threads" report --rules $rules --by day "${t[@]}" "$input"
    for o in table json csv ndjson; do
      run "$key.replay.$o.$threads" replay --rules $rules -o $o "${t[@]}" "$input"
    done
    for o in table json markdown; do
      run "$key.explain.$o.$threads" explain --rules $rules -o $o "${t[@]}" "$input"
    done
    for o in table json markdown csv; do
      run "$key.issues.$o.$threads" issues --rules $rules -o $o --now 2030-01-01T00:00:00Z --all "${t[@]}" "$input"
    done
    for o in svg dot mermaid; do
      run "$key.graph.$o.$threads" graph --rules $rules -o $o "${t[@]}" "$input"
    done
    run "$key.report.openmetrics.$threads" report --rules $rules -o openmetrics "${t[@]}" "$input"
    run "$key.issues.openmetrics.$threads" issues --rules $rules -o openmetrics --now 2030-01-01T00:00:00Z "${t[@]}" "$input"
    run "$key.issues.fail.$threads" issues --rules $rules --fail-on minor --now 2030-01-01T00:00:00Z "${t[@]}" "$input"
    for o in sarif json junit markdown table openmetrics; do
      run "$key.check.$o.$threads" check --rules $rules -o $o "${t[@]}" "$input"
    done
    for o in json table markdown; do
      run "$key.diff.$o.$threads" diff --old metal-api-v0.19.0 --new metal-api-v0.42.2 -o $o "${t[@]}" "$input"
    done
    for o in json table; do
      run "$key.propose.$o.$threads" rules propose --rules $rules -o $o "${t[@]}" "$input"
    done
  done
done
for g in svg dot mermaid; do
  run "rules-graph.$g" graph -o $g
done
for r in metal-api-v0.19.0 metal-api-v0.19.3 metal-api-v0.42.2; do
  run "rules-show.$r" rules show $r
  run "rules-export.$r" rules export $r
done
run "rules-list" rules list
run "rules-lint-bad" rules lint testdata/rule-files/rules-beyond-i64.json
run "rules-lint-good" rules lint src/rules/builtin/metal-api-v0.42.2.json
run "propose-go-missing" rules propose -o go testdata/fleet-v0.42.2/list-json
run "empty-check" check testdata/does-not-exist
run "empty-metrics" report -o openmetrics testdata/does-not-exist
run "graph-nothing" graph testdata/does-not-exist
for command in "" report replay diff check graph issues explain rules "rules propose" "rules import-go" completions man; do
  # shellcheck disable=SC2086
  run "help-${command// /-}" $command --help
done
run "man" man
run "completions-bash" completions bash
rm -f "$out/.stderr"
echo "$(ls "$out" | wc -l) outputs in $out"
