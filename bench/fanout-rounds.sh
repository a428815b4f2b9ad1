#!/bin/bash
# One action to N subscribers, one socket each, many times: our server alone, no sustained phase,
# for A/B runs of a change to the fan-out and for profiling just that.
#
#   bench/fanout-rounds.sh [BUILD_DIR]          # default .build/release; builds the C client if needed
#   ROUNDS=120 SUBSCRIBERS=10000 PROFILE=6 bench/fanout-rounds.sh
#
# Starts a release moderation-server on core 0 (a fresh data directory, access log off), sets up
# the group with bench/fanout/fanout-client on core 1, then runs ROUNDS single actions (after 2
# warm-up rounds) and prints the median of the server's CPU per action and of send → last
# receipt. With PROFILE=S (and Linux perf installed), records the server's threads with call
# graphs for S seconds once the subscriptions have had WAIT seconds (default 4) to go live, into
# fanout-rounds.perf.data (read it with `perf report -i fanout-rounds.perf.data --sort comm,sym`).
set -euo pipefail
build=${1:-.build/release}
rounds=${ROUNDS:-120}
subscribers=${SUBSCRIBERS:-10000}
key="bench:benchkey0123456789"
[ -x "$build/moderation-server" ] || { echo "no $build/moderation-server: swift build -c release" >&2; exit 2; }
if [ ! -x "$build/fanout-client" ]; then
  gcc -O2 -Wall -Wextra -o "$build/fanout-client" "$(dirname "$0")/fanout/fanout-client.c"
fi
ulimit -n $((2 * subscribers + 1000)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d)
port=$(python3 "$(dirname "$0")/benchkit.py" free-port)
taskset -c 0 "$build/moderation-server" --listen "127.0.0.1:$port" --grpc-listen 127.0.0.1:0 \
  --data-dir "$work/data" --api-key "$key" --access-log off --log-level warning \
  --max-connections-per-app $((4 * subscribers + 1000)) --max-subscriptions-per-app $((4 * subscribers + 1000)) \
  > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
taskset -c 1 "$build/fanout-client" setup --port "$port" --api-key "$key" --subscribers "$subscribers" > /dev/null
taskset -c 1 "$build/fanout-client" mrpc --port "$port" --api-key "$key" --subscribers "$subscribers" \
  --rounds "$rounds" --warmup 2 --seconds 0 --server-pid "$server" > "$work/result.json" &
client=$!
if [ -n "${PROFILE:-}" ]; then
  sleep "${WAIT:-4}"
  perf record -p "$server" -g -o fanout-rounds.perf.data -- sleep "$PROFILE" 2>&1 | tail -1
fi
wait $client
python3 - "$work/result.json" "$(dirname "$0")" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2])
from benchkit import spread
result = json.load(open(sys.argv[1]))
rounds = result["rounds"]
print("%d subscribers, one socket each, %d rounds: server CPU per action %s, median (min–max); "
      "send → last receipt %.1f ms, median; live after %.0f ms" % (
          result["subscribers"], len(rounds), spread([r["server_cpu_ms"] for r in rounds], unit=" ms"),
          result["median_send_to_last_ms"], result["live_ms"]))
PY
