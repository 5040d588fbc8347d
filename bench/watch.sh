#!/usr/bin/env bash
# What a poll costs `fsmlog watch` beside what its history costs: a history of MACHINES machines
# with EVENTS events each (gen_fleet's raw stream cut into day files, as a collector keeps
# them) is watched against a stand-in on 127.0.0.1 that shows every machine with one new event
# a poll; the watch's own gauges say how long reading the history at start took and how long
# judging each poll's lines took, /proc how much memory it holds. With SCALES="1 10" the same
# fleet with ten times the events is watched too: the poll's judging and the memory must not
# follow the history.
#
#   bash bench/watch.sh                          # 10,000 machines, 20 and 200 events each
#   MACHINES=2000 SCALES="1 10" bash bench/watch.sh
#   FSMLOG=/tmp/fsmlog-before bash bench/watch.sh  # another build, not rebuilt
set -euo pipefail
cd "$(dirname "$0")/.."

MACHINES=${MACHINES:-10000}
EVENTS=${EVENTS:-20}
SCALES=${SCALES:-1 10}
POLLS=${POLLS:-4}
DIR=${BENCH_DIR:-target/bench}
mkdir -p "$DIR"
command -v python3 >/dev/null || { echo "needs python3 (the stand-in)" >&2; exit 2; }
command -v curl >/dev/null || { echo "needs curl (the scrape)" >&2; exit 2; }

if [ -n "${FSMLOG:-}" ]; then
  cargo build --release --quiet --example gen_fleet
else
  cargo build --release --quiet --bin fsmlog --example gen_fleet
  FSMLOG=target/release/fsmlog
fi
GEN=target/release/examples/gen_fleet

# A history of day files, each machine's lines in time order (gen_fleet prints its keys
# sorted; a collector writes machine, time, event, message).
make_history() { # events → directory
  local events=$1 out="$DIR/watch-history-$MACHINES-$1"
  if [ ! -d "$out/events" ]; then
    rm -rf "$out" && mkdir -p "$out/events"
    "$GEN" --machines "$MACHINES" --events "$events" --format ndjson --seed 7 --out "$out.ndjson"
    sed -E 's/^\{"event":"([^"]*)","machine_id":"([^"]*)","message":"(.*)","time":"([^"]*)"\}$/{"machine":"\2","time":"\4","event":"\1","message":"\3"}/' "$out.ndjson" |
      awk -v dir="$out/events" -F'"time":"' '{ day = substr($2, 1, 10); print > (dir "/" day ".ndjson") }'
    grep -o '"machine_id":"[^"]*"' "$out.ndjson" | sort -u | cut -d'"' -f4 >"$out.ids"
    rm -f "$out.ndjson"
  fi
  echo "$out"
}

metric() { # scrape name labels → value
  curl -sf "$1" | awk -v n="$2" -v l="$3" '$1 == n l { print $2 }'
}

watch_row() { # events
  local history work port_file server pid listen url polls seen now best start poll collect rss hwm size lines
  history=$(make_history "$1")
  work=$(mktemp -d)
  cp -r "$history" "$work/h"
  size=$(du -sm "$work/h/events" | cut -f1)
  lines=$(cat "$work/h/events"/*.ndjson | wc -l)
  port_file=$(mktemp)
  python3 - "$history.ids" "$port_file" <<'PY' &
import datetime, http.server, json, sys
ids = open(sys.argv[1]).read().split()
class Answer(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        body = json.dumps([{"id": i, "events": {"log": [
            {"event": "Phoned Home", "time": now, "message": "phoned home"}],
            "last_event_time": now}} for i in ids]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Answer)
open(sys.argv[2], "w").write(str(server.server_port))
server.serve_forever()
PY
  server=$!
  while [ ! -s "$port_file" ]; do sleep 0.1; done
  listen=127.0.0.1:$((20000 + RANDOM % 20000))
  url="http://$listen/metrics"
  METALCTL_API_URL="http://127.0.0.1:$(cat "$port_file")" METALCTL_API_TOKEN=bench \
    "$FSMLOG" watch --into "$work/h" --interval 3s --listen "$listen" 2>"$work/log" &
  pid=$!
  polls=0
  best=""
  # The first poll learns every machine's newest events from the day files (no tail file
  # yet); the polls after it are the watch's steady state: the best of them is shown (other
  # work on the machine only ever adds time).
  while [ "${polls%.*}" -lt $((POLLS + 1)) ]; do
    sleep 1
    kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
    seen=$(metric "$url" fsmlog_polls_total '{result="ok"}' 2>/dev/null || echo 0)
    seen=${seen:-0}
    if [ "${seen%.*}" -gt "${polls%.*}" ] && [ "${seen%.*}" -ge 2 ]; then
      now=$(metric "$url" fsmlog_judge_duration_seconds '{stage="poll"}')
      best=$(awk -v a="$best" -v b="$now" 'BEGIN { print (a == "" || b < a) ? b : a }')
    fi
    polls=$seen
  done
  start=$(metric "$url" fsmlog_judge_duration_seconds '{stage="start"}')
  poll=$best
  collect=$(metric "$url" fsmlog_poll_duration_seconds '')
  rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
  kill "$pid" "$server"
  wait "$pid" 2>/dev/null || true
  grep -c reread "$work/log" >/dev/null && { echo "the history was read again:" >&2; grep reread "$work/log" >&2; }
  printf '%-44s %8.3f %8.3f %9.3f %8.0f %8.0f\n' "$MACHINES machines, $lines lines, $size MB" \
    "$start" "$poll" "$collect" "$((rss / 1024))" "$((hwm / 1024))"
  rm -rf "$work" "$port_file"
}

printf '%-44s %8s %8s %9s %8s %8s\n' "history" "start s" "judge s" "collect s" "RSS MB" "peak MB"
for scale in $SCALES; do
  watch_row $((EVENTS * scale))
done
