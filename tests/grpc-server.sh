# Sourced by the standard-gRPC test runners (tests/grpc-cpp/run-tests, tests/grpc-h2load/run,
# tests/grpc-hostile/run): starts moderation-server with a temporary data directory, a known API
# key and both listeners on ephemeral ports, and stops it (and removes its data) on exit.
#
# Needs $root (the repository). The server binary is $MODERATION_SERVER (default
# .build/debug/moderation-server, built by `swift build --product moderation-server`).
#
#   start_server [MORE SERVER FLAGS...]   e.g. start_server --tls-cert "$tls/server.pem" --tls-key "$tls/server.key"
#   make_test_ca DIR                      a throwaway CA and certificates, for TLS and mTLS runs
#
# After start_server: $server_pid, $main_address (HOST:PORT of --listen, the main port, from the
# "listening on" line), $grpc_address (HOST:PORT of --grpc-listen, from the "server started" log
# line; both ports serve gRPC and the framed protocol), $api_key (APP_ID:KEY), $work (a temporary
# directory, removed on exit) and $server_log. A second start_server stops the first server.

grpc_test_name=${grpc_test_name:-$(basename "$(dirname "$0")")}
server=${MODERATION_SERVER:-.build/debug/moderation-server}
case $server in /*) ;; *) server="$root/$server" ;; esac
api_key="grpc-tests:grpc-test-key-0123456789"
work=$(mktemp -d /tmp/moderation-grpc-test.XXXXXX)
server_log="$work/server.log"
server_pid=""
grpc_address=""
main_address=""

stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT

start_server() {
  if [ ! -x "$server" ]; then
    echo "$grpc_test_name: no server binary at $server; build it with: swift build --product moderation-server" >&2
    echo "$grpc_test_name: (or set MODERATION_SERVER to its path)" >&2
    exit 1
  fi
  stop_server
  rm -rf "$work/data" "$work/stdout" "$server_log"
  grpc_address=""
  main_address=""
  "$server" --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --data-dir "$work/data" --api-key "$api_key" \
    --shutdown-grace 2 "$@" >"$work/stdout" 2>"$server_log" &
  server_pid=$!
  for _ in $(seq 100); do
    if grep -qs '^listening on ' "$work/stdout"; then
      main_address=$(sed -n 's/^listening on //p' "$work/stdout" | head -1)
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
  echo "$grpc_test_name: moderation-server pid $server_pid, main port $main_address, --grpc-listen $grpc_address"
}

# A throwaway CA in DIR (ca.pem), a server certificate for 127.0.0.1 and localhost (server.pem,
# server.key) and a client certificate (client.pem, client.key), all signed by it; and a second
# CA (other-ca.pem) with a client certificate of its own (other-client.pem, other-client.key).
make_test_ca() {
  local dir=$1
  mkdir -p "$dir"
  (
    cd "$dir"
    for ca in ca other-ca; do
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=moderation test $ca" \
        -keyout "$ca.key" -out "$ca.pem" 2>/dev/null
    done
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
      -keyout server.key -out server.csr 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext \
      -out server.pem 2>/dev/null
    for pair in "client ca" "other-client other-ca"; do
      set -- $pair
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" -keyout "$1.key" -out "$1.csr" \
        2>/dev/null
      openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 -out "$1.pem" 2>/dev/null
    done
  )
}

# The last lines of the server's log, after a failure.
show_server_log() {
  echo "$grpc_test_name: the last lines of the server's log:" >&2
  tail -n 30 "$server_log" >&2
}
