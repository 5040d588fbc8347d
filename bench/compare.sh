#!/usr/bin/env bash
# Times `fsmlog report` beside `grep -c 'unexpectedly received'` on the export shapes users
# have (a real-shaped list with hardware, a lean list, a directory of per-machine files), then
# beside grep and a jq group-by of the recorded annotations on one large generated fleet, and
# prints the ratios, fsmlog's peak memory, its throughput from 10 MB to the full size, and
# text-table throughput.
#
#   bash bench/compare.sh                 # ~1 GB list-json (50,000 machines)
#   MACHINES=5000 bash bench/compare.sh   # a quicker ~100 MB run
#   SKIP_JQ=1 bash bench/compare.sh       # leave out jq (it takes minutes on 1 GB)
#   SHAPES_ONLY=1 bash bench/compare.sh   # only the export shapes: real-shaped, lean (two), text
#                                         # tables, a YAML list, many files
#   REAL_MACHINES=500 LEAN_MACHINES=500 AGES_MACHINES=500 FILES_MACHINES=100 TEXT_MACHINES=500 \
#     YAML_MACHINES=500 SHAPES_ONLY=1 RUNS=1 bash bench/compare.sh   # the shapes, small and quick
#   BASELINE=old/fsmlog bash bench/compare.sh   # the shapes against an older build too
#   HISTORY_ONLY=1 bash bench/compare.sh  # only the histories: directories of daily raw streams
#   HISTORY_MACHINES=2000 HISTORY_ONLY=1 bash bench/compare.sh   # one quicker history (10 MB, not 1 GB)
#   HISTORY_MACHINES=1000 HISTORY_EVENTS=400 HISTORY_ONLY=1 bash bench/compare.sh   # a long one
#   BASELINE=old/fsmlog HISTORY_ONLY=1 bash bench/compare.sh     # the history against an older build too
set -euo pipefail
cd "$(dirname "$0")/.."

MACHINES=${MACHINES:-50000}
RUNS=${RUNS:-5}
DIR=${BENCH_DIR:-target/bench}
mkdir -p "$DIR"

need() {
  command -v "$1" >/dev/null 2>&1 && return
  echo "installing $2 ..." >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null && apt-get install -y -qq "$2" >/dev/null
  else
    sudo apt-get update -qq >/dev/null && sudo apt-get install -y -qq "$2" >/dev/null
  fi
}
need jq jq
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --release --quiet --bin fsmlog --example gen_fleet
FSMLOG=target/release/fsmlog
GEN=target/release/examples/gen_fleet

generate() { # machines format file
  [ -s "$3" ] || "$GEN" --machines "$1" --format "$2" --seed 7 --out "$3"
}

TIMES=$(mktemp)
SINK=$(mktemp)
trap 'rm -f "$TIMES" "$SINK"' EXIT

# wall time (seconds, to the millisecond) and peak RSS (KB) of one run of a command; its
# output discarded. The clock is read around the command: /usr/bin/time rounds to 10 ms, too
# coarse for a run of 40 ms.
once() {
  local start end t
  start=$(date +%s%N)
  # Output goes to a file: GNU grep stops at the first match when it writes to /dev/null.
  /usr/bin/time -o "$TIMES" -f "%M" "$@" >"$SINK" 2>/dev/null || true
  end=$(date +%s%N)
  t=$(awk -v ns=$((end - start)) 'BEGIN{printf "%.3f", ns / 1e9}')
  echo "$t $(tail -n 1 "$TIMES")"
}

# the smaller of two "time rss" pairs (by time)
better() { awk -v a="$1" -v b="$2" 'BEGIN{ split(a, x, " "); split(b, y, " "); print (a == "" || y[1] < x[1]) ? b : a }'; }

# best-of-N wall time and peak RSS (KB) of a command
measure() {
  local best=""
  for _ in $(seq "$RUNS"); do best=$(better "$best" "$(once "$@")"); done
  echo "$best"
}

mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN{printf "%.0f", b/1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "n/a" }'; }
rate() { awk -v s="$1" -v t="$2" 'BEGIN{ if (t > 0) printf "%.0f", s/t; else print "n/a" }'; }

# The history `fsmlog collect` writes (issue 38): the raw stream, one file a UTC day, each in
# time order per machine; gen_fleet's stream (machines interleaved by time, 64 at a time) cut
# at its days, about 250 bytes an event. Two of about 1 GB each: a fleet's long history
# (10,000 machines, 400 events each, a year of days) and a large fleet's short one (200,000
# machines, 20 events each, two months). Against `grep -c` on the same files; its peak memory
# is the figure to watch beside the time: it must not grow with the history (the first half of
# the days is read too), only with the machines judged.
history_dir() { # machines events
  local dir="$DIR/history-$1"
  [ "$2" = 20 ] || dir="$dir-x$2"
  echo "$dir"
}
make_history() { # machines events
  local dir
  dir=$(history_dir "$1" "$2")
  [ -d "$dir" ] && return
  "$GEN" --machines "$1" --events "$2" --format ndjson --seed 7 --out "$dir.ndjson"
  mkdir -p "$dir.tmp"
  # gen_fleet prints its keys sorted; a collector writes machine, time, event, message.
  sed -E 's/^\{"event":"([^"]*)","machine_id":"([^"]*)","message":"(.*)","time":"([^"]*)"\}$/{"machine":"\2","time":"\4","event":"\1","message":"\3"}/' "$dir.ndjson" |
    awk -v dir="$dir.tmp" -F'"time":"' '{ day = substr($2, 1, 10); print > (dir "/" day ".ndjson") }'
  rm -f "$dir.ndjson"
  mv "$dir.tmp" "$dir"
}
history_row() { # machines events
  local f="" g="" b="" h="" size days history half
  make_history "$1" "$2"
  history=$(history_dir "$1" "$2")
  cat "$history"/* >/dev/null
  size=$(du -sb "$history" | awk '{printf "%.0f", $1 / 1e6}')
  days=$(find "$history" -type f | wc -l)
  # The first half of its days, linked.
  half="$history.half"
  rm -rf "$half" && mkdir -p "$half"
  find "$history" -type f | sort | head -n $((days / 2)) | while read -r day; do ln -s "$(realpath "$day")" "$half/"; done
  for _ in $(seq "$RUNS"); do
    f=$(better "$f" "$(once "$FSMLOG" report -o json "$history")")
    g=$(better "$g" "$(once grep -rc 'unexpectedly received' "$history")")
    h=$(better "$h" "$(once "$FSMLOG" report -o json "$half")")
    [ -n "${BASELINE:-}" ] && b=$(better "$b" "$(once "$BASELINE" report -o json "$history")")
  done
  printf '%-58s %8s %10s %6sx %9s\n' "history, $1 machines x $2 events, $days days, $size MB" \
    "${f% *}" "${g% *}" "$(ratio "${f% *}" "${g% *}")" "$((${f#* } / 1024))"
  printf '%-58s %8s %10s %7s %9s\n' "  its first $((days / 2)) days" "${h% *}" "" "" "$((${h#* } / 1024))"
  if [ -n "${BASELINE:-}" ]; then
    local same="its report differs"
    cmp -s <("$BASELINE" report -o json "$history") <("$FSMLOG" report -o json "$history") && same="the same report"
    printf '%-58s %8s %10s %6sx %9s\n' "  baseline: $same" "${b% *}" "${g% *}" "$(ratio "${b% *}" "${g% *}")" "$((${b#* } / 1024))"
  fi
  # The lines are parsed, and the machines judged, on every core: one thread must answer the
  # same.
  cmp -s <("$FSMLOG" report -o json --threads 1 "$history") <("$FSMLOG" report -o json "$history") \
    || { echo "report -o json DIFFERS with --threads 1 on $history" >&2; exit 1; }
  rm -rf "$half"
}
histories() {
  printf '%-58s %8s %10s %7s %9s\n' "input" "fsmlog s" "grep -c s" "ratio" "peak MB"
  if [ -n "${HISTORY_MACHINES:-}" ]; then
    history_row "$HISTORY_MACHINES" "${HISTORY_EVENTS:-20}"
  else
    history_row 10000 400
    history_row 200000 20
  fi
  echo "goal: at most 2x, peak memory under 100 MB for 1 GB, the same for half of it"
}
if [ -n "${HISTORY_ONLY:-}" ]; then
  echo "history, $(nproc) cores, best of $RUNS (page cache warm)"
  histories
  exit 0
fi

# The shapes users export (issue 12): each side by side with `grep -c` on the same bytes, the
# ratio being the figure to watch; BASELINE=path/to/an/older/fsmlog adds its time and checks
# that its report is the same.
REAL_MACHINES=${REAL_MACHINES:-20000}
LEAN_MACHINES=${LEAN_MACHINES:-55000}
# The shape furthest off (issue 21): a lean list of machines of all ages (gen_fleet
# --min-events 1 --events 20: 6 to 46 stored events, about 15 on average).
AGES_MACHINES=${AGES_MACHINES:-84000}
FILES_MACHINES=${FILES_MACHINES:-5000}
# The text shapes (issue 41): metalctl's tables of many machines joined by `tail -n +1`, and
# `metalctl machine list -o yaml` with what the v1 API holds besides events.
TEXT_MACHINES=${TEXT_MACHINES:-20000}
YAML_MACHINES=${YAML_MACHINES:-20000}
REAL="$DIR/real-$REAL_MACHINES.json"
LEAN="$DIR/lean-$LEAN_MACHINES.json"
AGES="$DIR/ages-$AGES_MACHINES.json"
FILES="$DIR/files-$FILES_MACHINES"
FILES_LIST="$DIR/files-$FILES_MACHINES.json"
[ -s "$REAL" ] || "$GEN" --machines "$REAL_MACHINES" --events 20 --real --format list-json --seed 7 --out "$REAL"
generate_lean() { [ -s "$2" ] || "$GEN" --machines "$1" --events 20 --format "$3" --seed 7 --out "$2"; }
generate_lean "$LEAN_MACHINES" "$LEAN" list-json
[ -s "$AGES" ] || "$GEN" --machines "$AGES_MACHINES" --min-events 1 --events 20 --format list-json --seed 7 --out "$AGES"
[ -d "$FILES" ] || generate_lean "$FILES_MACHINES" "$FILES" logs-json
TEXT="$DIR/text-$TEXT_MACHINES.txt"
YAML="$DIR/yaml-$YAML_MACHINES.yaml"
generate_lean "$TEXT_MACHINES" "$TEXT" concat-table
[ -s "$YAML" ] || "$GEN" --machines "$YAML_MACHINES" --events 20 --real --format list-yaml --seed 7 --out "$YAML"
generate_lean "$FILES_MACHINES" "$FILES_LIST" list-json
# One machine of 17,000 events, alternating Installing and Preparing after a normal boot:
# every event unexpected, each a root of the diagnosis's cascade search (report), against the
# bare replay of the same stream.
LONG="$DIR/long-17000.ndjson"
[ -s "$LONG" ] || awk 'BEGIN {
  split("PXE Booting,Preparing,Registering,Waiting,Installing,Booting New Kernel,Phoned Home", boot, ",")
  for (i = 0; i < 17000; i++) {
    e = i < 7 ? boot[i + 1] : (i % 2 ? "Installing" : "Preparing")
    printf "{\"machine\":\"m-long\",\"time\":\"%s\",\"event\":\"%s\",\"message\":\"m\"}\n", strftime("%Y-%m-%dT%H:%M:%SZ", 1756684800 + 10 * i, 1), e
  }
}' >"$LONG"
cat "$REAL" "$LEAN" "$AGES" "$FILES_LIST" "$FILES"/* "$LONG" "$TEXT" "$YAML" >/dev/null

echo "export shapes, $(nproc) cores, best of $RUNS (page cache warm)"
printf '%-58s %8s %10s %7s %9s\n' "input" "fsmlog s" "against s" "ratio" "peak MB"
shape() { # label input against-command…
  # fsmlog, what it is set against and the baseline take turns, run after run, so that a
  # noisy machine's slow minutes fall on all of them alike. Where fsmlog is set against
  # itself (AGAINST_LIST: the same machines as one list), the baseline is set against its
  # own run on that list.
  local label=$1 input=$2 f="" g="" b="" bg=""
  shift 2
  for _ in $(seq "$RUNS"); do
    f=$(better "$f" "$(once "$FSMLOG" report -o json "$input")")
    g=$(better "$g" "$(once "$@")")
    if [ -n "${BASELINE:-}" ]; then
      b=$(better "$b" "$(once "$BASELINE" report -o json "$input")")
      [ -n "${AGAINST_LIST:-}" ] && bg=$(better "$bg" "$(once "$BASELINE" report -o json "$AGAINST_LIST")")
    fi
  done
  local t_f=${f% *} rss=${f#* } t_g=${g% *}
  printf '%-58s %8s %10s %6sx %9s\n' "$label" "$t_f" "$t_g" "$(ratio "$t_f" "$t_g")" "$((rss / 1024))"
  if [ -n "${BASELINE:-}" ]; then
    local same="its report differs (fields added since?)" t_bg=${bg% *}
    [ -n "$bg" ] || t_bg=$t_g
    cmp -s <("$BASELINE" report -o json "$input") <("$FSMLOG" report -o json "$input") \
      && same="the same report"
    printf '%-58s %8s %10s %6sx %9s\n' "  baseline: $same" "${b% *}" "$t_bg" "$(ratio "${b% *}" "$t_bg")" "$((${b#* } / 1024))"
  fi
  cmp -s <("$FSMLOG" report -o json --threads 1 "$input") <("$FSMLOG" report -o json "$input") \
    || { echo "report -o json DIFFERS with --threads 1 on $input" >&2; exit 1; }
}
shape "real-shaped list, $REAL_MACHINES machines, $(mb "$REAL") MB (vs grep -c)" \
  "$REAL" grep -c 'unexpectedly received' "$REAL"
shape "lean list, $LEAN_MACHINES machines, $(mb "$LEAN") MB (vs grep -c)" \
  "$LEAN" grep -c 'unexpectedly received' "$LEAN"
shape "lean list, $AGES_MACHINES machines of all ages, $(mb "$AGES") MB (vs grep -c)" \
  "$AGES" grep -c 'unexpectedly received' "$AGES"
shape "text tables, $TEXT_MACHINES machines, $(mb "$TEXT") MB (vs grep -c)" \
  "$TEXT" grep -c 'unexpectedly received' "$TEXT"
shape "YAML list (real-shaped), $YAML_MACHINES machines, $(mb "$YAML") MB (vs grep -c)" \
  "$YAML" grep -c 'unexpectedly received' "$YAML"
AGAINST_LIST="$FILES_LIST" shape "$FILES_MACHINES logs-json files (vs fsmlog on them as one list)" \
  "$FILES" "$FSMLOG" report -o json "$FILES_LIST"
shape "one machine of 17,000 events (vs fsmlog replay on it)" \
  "$LONG" "$FSMLOG" replay -o ndjson "$LONG"
echo "goals: at most 1.5x on each JSON row, 2x on the text, YAML and last rows; peak memory under 100 MB"
echo
[ -n "${SHAPES_ONLY:-}" ] && exit 0
histories
echo

BIG="$DIR/fleet-$MACHINES.json"
generate "$MACHINES" list-json "$BIG"
cat "$BIG" >/dev/null   # warm the page cache: every tool reads from memory
SIZE=$(mb "$BIG")
echo "fleet: $MACHINES machines, $SIZE MB list-json ($BIG), $(nproc) cores, best of $RUNS"
echo

read -r T_FSM RSS_FSM < <(measure "$FSMLOG" report -o json "$BIG")
read -r T_GREP _ < <(measure grep -c 'unexpectedly received' "$BIG")
if [ -z "${SKIP_JQ:-}" ]; then
  JQ_FILTER='[.[] | .events.log[] | select(.message | startswith("[unexpectedly received in "))
    | {state: (.message | capture("^\\[unexpectedly received in (?<s>[^\\]]+)\\]").s), event: .event}]
    | group_by([.state, .event]) | map({state: .[0].state, event: .[0].event, count: length})'
  OLD_RUNS=$RUNS; RUNS=1
  read -r T_JQ RSS_JQ < <(measure jq "$JQ_FILTER" "$BIG")
  RUNS=$OLD_RUNS
else
  T_JQ=""; RSS_JQ=""
fi

printf '%-44s %9s %12s %10s\n' "command" "seconds" "peak RSS MB" "vs grep"
printf '%-44s %9s %12s %10s\n' "fsmlog report -o json" "$T_FSM" "$((RSS_FSM / 1024))" "$(ratio "$T_FSM" "$T_GREP")x"
printf '%-44s %9s %12s %10s\n' "grep -c 'unexpectedly received'" "$T_GREP" "-" "1.0x"
if [ -n "$T_JQ" ]; then
  printf '%-44s %9s %12s %10s\n' "jq group-by of the annotations" "$T_JQ" "$((RSS_JQ / 1024))" "$(ratio "$T_JQ" "$T_GREP")x"
  echo
  echo "fsmlog is $(ratio "$T_JQ" "$T_FSM")x faster than jq and takes $(ratio "$T_FSM" "$T_GREP")x the time of grep -c"
fi
echo

echo "throughput by size (list-json):"
for m in 500 5000 "$MACHINES"; do
  f="$DIR/fleet-$m.json"
  generate "$m" list-json "$f"
  cat "$f" >/dev/null
  read -r t rss < <(measure "$FSMLOG" report -o json "$f")
  printf '  %6s machines %6s MB  %6s s  %6s MB/s  peak RSS %s MB\n' "$m" "$(mb "$f")" "$t" "$(rate "$(mb "$f")" "$t")" "$((rss / 1024))"
done
echo

TABLE_MACHINES=$(( MACHINES / 5 ))
TABLE="$DIR/fleet-$TABLE_MACHINES.txt"
JSON_SAME="$DIR/fleet-$TABLE_MACHINES.json"
generate "$TABLE_MACHINES" concat-table "$TABLE"
generate "$TABLE_MACHINES" list-json "$JSON_SAME"
cat "$TABLE" "$JSON_SAME" >/dev/null
read -r T_TAB _ < <(measure "$FSMLOG" report -o json "$TABLE")
read -r T_JS _ < <(measure "$FSMLOG" report -o json "$JSON_SAME")
echo "text tables vs JSON ($TABLE_MACHINES machines, the same events):"
printf '  table %6s MB %6s s %6s MB/s %8s machines/s\n' "$(mb "$TABLE")" "$T_TAB" "$(rate "$(mb "$TABLE")" "$T_TAB")" "$(rate "$TABLE_MACHINES" "$T_TAB")"
printf '  json  %6s MB %6s s %6s MB/s %8s machines/s\n' "$(mb "$JSON_SAME")" "$T_JS" "$(rate "$(mb "$JSON_SAME")" "$T_JS")" "$(rate "$TABLE_MACHINES" "$T_JS")"
echo

if cmp -s <("$FSMLOG" report -o json --threads 1 "$JSON_SAME") <("$FSMLOG" report -o json "$JSON_SAME"); then
  echo "report -o json is identical with --threads 1 and the default"
else
  echo "report -o json DIFFERS between --threads 1 and the default" >&2
  exit 1
fi
