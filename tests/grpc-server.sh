# Sourced by the gRPC listener's test runners (tests/grpc-cpp/run-tests, tests/grpc-h2load/run,
# tests/grpc-hostile/run): starts moderation-server with a temporary data directory, a known API
# key and both listeners on ephemeral ports, and stops it (and removes its data) on exit.
#
# Needs $root (the repository). The server binary is $MODERATION_SERVER (default
# .build/debug/moderation-server, built by `swift build --product moderation-server`). After
# start_server: $server_pid, $grpc_address (HOST:PORT of the gRPC listener, read from the
# "server started" log line), $api_key (APP_ID:KEY), $work (a temporary directory, removed on
# exit) and $server_log.

grpc_test_name=${grpc_test_name:-$(basename "$(dirname "$0")")}
server=${MODERATION_SERVER:-.build/debug/moderation-server}
case $server in /*) ;; *) server="$root/$server" ;; esac
api_key="grpc-tests:grpc-test-key-0123456789"
work=$(mktemp -d /tmp/moderation-grpc-test.XXXXXX)
server_log="$work/server.log"
server_pid=""
grpc_address=""

stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
  rm -rf "$work"
}
trap stop_server EXIT

start_server() {
  if [ ! -x "$server" ]; then
    echo "$grpc_test_name: no server binary at $server; build it with: swift build --product moderation-server" >&2
    echo "$grpc_test_name: (or set MODERATION_SERVER to its path)" >&2
    exit 1
  fi
  "$server" --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --data-dir "$work/data" --api-key "$api_key" \
    --shutdown-grace 2 >"$work/stdout" 2>"$server_log" &
  server_pid=$!
  for _ in $(seq 100); do
    if grep -q '^listening on ' "$work/stdout"; then
      grpc_address=$(sed -n 's/.* server started .*grpc_listen=\([^ ]*\).*/\1/p' "$server_log" | head -1)
      break
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "$grpc_test_name: the server exited before listening; its log:" >&2
      cat "$server_log" >&2
      exit 1
    fi
    sleep 0.1
  done
  case $grpc_address in
    *:[0-9]*) ;;
    *)
      echo "$grpc_test_name: no gRPC listener address in the server's log within 10 s; its log:" >&2
      cat "$server_log" >&2
      exit 1
      ;;
  esac
  echo "$grpc_test_name: moderation-server pid $server_pid, gRPC listener on $grpc_address"
}

# The last lines of the server's log, after a failure.
show_server_log() {
  echo "$grpc_test_name: the last lines of the server's log:" >&2
  tail -n 30 "$server_log" >&2
}
