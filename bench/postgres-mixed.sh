#!/usr/bin/env bash
# Reads of one app on PostgreSQL while the same app is written: what the read cache gives when
# its entries keep going stale. On a throwaway cluster (tools/pg-cluster), a release server with
# the read cache on and one with it off, alternated round by round: ListMembers(30) as the
# groups' owner over 32 groups of 31 members (rpc-probe bench, 8 connections x 8 in flight, two
# client threads) while a second rpc-probe makes UpdateGroup calls of the same app at a fixed
# rate (each a commit, so each makes the app's cached entries stale). Prints reads/s per round
# and the medians.
#
#   bench/postgres-mixed.sh [BUILD_DIR] [ROUNDS] [WRITE_RATES…]   defaults: .build/release 3 "0 100 1000"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/.build/release}
rounds=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
rates=${*:-0 100 1000}
for tool in moderation-server rpc-probe; do
  [ -x "$build/$tool" ] || { echo "bench/postgres-mixed.sh: $build/$tool is missing (swift build -c release)" >&2; exit 1; }
done
cluster=$(mktemp -d /tmp/moderation-bench-mixed.XXXXXX)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  "$root/tools/pg-cluster" stop "$cluster" >/dev/null 2>&1 || true
  rm -rf "$cluster"
}
trap cleanup EXIT
url=$(MODERATION_PG_FSYNC=on "$root/tools/pg-cluster" start "$cluster")

# One measurement: a fresh schema, a server with read cache size $1, writes at $2/s; prints reads/s.
measure() {
  local cache=$1 rate=$2 port schema probe writer=
  port=$(python3 "$root/bench/benchkit.py" free-port)
  schema="mixed_${RANDOM}_$$"
  "$build/moderation-server" --store postgres --postgres-url "$url" --postgres-schema "$schema" \
    --listen "127.0.0.1:$port" --grpc-listen off --api-key app:mixed-bench-key --access-log off \
    --postgres-read-cache "$cache" >"$cluster/server.log" 2>&1 &
  server_pid=$!
  probe=("$build/rpc-probe" "127.0.0.1:$port" --api-key app:mixed-bench-key)
  for _ in $(seq 50); do "${probe[@]}" health >/dev/null 2>&1 && break; sleep 0.1; done
  "${probe[@]}" bench moderation.v1.Moderation/CreateUser -d '{"uid":"u{{n}}","name":"User {{n}}"}' \
    --variants 32 --total 32 >/dev/null
  local members
  members=$(seq -s, -f '{"uid":"u%g"}' 1 30)
  for g in $(seq 0 31); do
    "${probe[@]}" call moderation.v1.Moderation/CreateGroup \
      -d "{\"guid\":\"g$g\",\"name\":\"G $g\",\"type\":\"GROUP_TYPE_PUBLIC\",\"owner\":\"u0\",\"members\":[$members]}" >/dev/null
  done
  if [ "$rate" -gt 0 ]; then
    "${probe[@]}" --as u0 bench moderation.v1.Moderation/UpdateGroup -d '{"guid":"g{{n}}","description":"d{{n}}-'"$RANDOM"'"}' \
      --variants 32 --conns 2 --depth 4 --rps "$rate" --duration 8s >"$cluster/writes.txt" 2>&1 &
    writer=$!
    sleep 1
  fi
  "${probe[@]}" --as u0 bench moderation.v1.Moderation/ListMembers -d '{"guid":"g{{n}}","limit":30}' \
    --variants 32 --conns 8 --depth 8 --threads 2 --duration 5s >"$cluster/reads.txt" 2>&1
  [ -n "$writer" ] && wait "$writer"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  server_pid=
  awk '/Requests\/sec/ { printf "%d", $2 }' "$cluster/reads.txt"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "# ListMembers(30) reads/s of one app on PostgreSQL while it is written (UpdateGroup at a fixed rate)"
for rate in $rates; do
  on=() off=()
  for round in $(seq "$rounds"); do
    on+=("$(measure 200000 "$rate")")
    off+=("$(measure 0 "$rate")")
    echo "writes ${rate}/s, round $round: cache on ${on[-1]}, off ${off[-1]} reads/s"
  done
  echo "writes ${rate}/s: median cache on $(echo "${on[*]}" | median), off $(echo "${off[*]}" | median) reads/s"
done
