#!/usr/bin/env bash
# The cost of a poll: `fsmlog collect --once` on a v1 answer of MACHINES machines (20 events
# each, with what metal-api's v1 API holds besides: ~6 KB a machine), served from 127.0.0.1,
# into an empty history and again into the history it wrote (every window aligned, nothing
# new); beside `fsmlog report` on the same answer saved as a file. Prints CPU seconds (user +
# system) and peak memory.
#
#   bash bench/collect.sh                  # 10,000 machines
#   MACHINES=1000 bash bench/collect.sh
#   FSMLOG=/tmp/fsmlog-before bash bench/collect.sh   # another build, not rebuilt
#   CACHEGRIND=1 bash bench/collect.sh     # instructions counted (valgrind), for a busy machine
set -euo pipefail
cd "$(dirname "$0")/.."

MACHINES=${MACHINES:-10000}
DIR=${BENCH_DIR:-target/bench}
mkdir -p "$DIR"
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "needs python3 (the answer's server)" >&2; exit 2; }

if [ -n "${FSMLOG:-}" ]; then
  cargo build --release --quiet --example gen_fleet
else
  cargo build --release --quiet --bin fsmlog --example gen_fleet
  FSMLOG=target/release/fsmlog
fi
ANSWER="$DIR/ipmi-find-$MACHINES.json"
[ -s "$ANSWER" ] || target/release/examples/gen_fleet --machines "$MACHINES" --events 20 \
  --real --format list-json --seed 7 --out "$ANSWER"

PORT_FILE=$(mktemp)
HISTORY=$(mktemp -d)
python3 - "$ANSWER" "$PORT_FILE" <<'PY' &
import http.server, sys
body = open(sys.argv[1], "rb").read()
class Answer(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
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
SERVER=$!
trap 'kill $SERVER; rm -rf "$PORT_FILE" "$HISTORY"' EXIT
while [ ! -s "$PORT_FILE" ]; do sleep 0.1; done
URL="http://127.0.0.1:$(cat "$PORT_FILE")"

cost() { # label command…
  local label=$1
  shift
  if [ -n "${CACHEGRIND:-}" ]; then
    # The poll waits for the answer under valgrind too: a timeout long enough for it.
    local args=("$@")
    [ "$2" = collect ] && args+=(--timeout 900s)
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "${args[@]}" \
      >/dev/null 2>"$DIR/cachegrind"
    awk -v l="$label" '/I *refs/ {gsub(",", "", $4); printf "%-40s %8.0f M instructions\n", l, $4 / 1e6}' \
      "$DIR/cachegrind"
    return
  fi
  /usr/bin/time -f "%U %S %M" -o "$DIR/time" "$@" >/dev/null 2>&1
  awk -v l="$label" '{printf "%-40s %6.2f s CPU  %7.0f MB peak\n", l, $1 + $2, $3 / 1024}' "$DIR/time"
}

echo "$MACHINES machines, answer $(du -h "$ANSWER" | cut -f1)"
cost "collect --once (empty history)" "$FSMLOG" collect --once --api-url "$URL" --into "$HISTORY"
cost "collect --once (nothing new)" "$FSMLOG" collect --once --api-url "$URL" --into "$HISTORY"
cost "report on the answer as a file" "$FSMLOG" report "$ANSWER"
cost "report on the history" "$FSMLOG" report "$HISTORY"
