#!/usr/bin/env python3
"""The RPC runtime's benchmark: Echo with a 16-byte payload against a release moderation-server.

The server runs pinned to core 0 (`taskset -c 0`, one event loop), the load (`rpc-probe bench`,
itself pinned to core 1) on the other core, so that the two never share a core. Each scenario
runs --runs times; the report gives the median and the spread. Server CPU per call comes from
/proc/PID/stat (utime + stime) around each run; the client's CPU per call is rpc-probe's own.
A raw TCP ping-pong (bench/tcp-pingpong.c) on the same two cores gives the floor under the
one-call-in-flight latency.

TLS: a second server, the same but with --tls-cert (an EC P-256 certificate made for the run
with the openssl command line), gets the same scenarios over TLS in the same runs, interleaved
with the plaintext ones; and `openssl s_time -new` (full handshakes, no resumption) on core 1
gives the server's CPU per TLS handshake. --no-tls skips both.

Usage: bench/echo.py --build-dir .build/release [--runs 5] [--seconds 5] [--no-tls]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from benchkit import API_KEY, ModerationServer, column, cpu_seconds, free_port, spread

PAYLOAD = "MDEyMzQ1Njc4OWFiY2RlZg=="  # 16 bytes, base64


def make_certificate(directory: str) -> dict:
    """A CA and a server certificate for 127.0.0.1, EC P-256, valid for a day."""
    def openssl(*arguments: str) -> None:
        subprocess.run(["openssl", *arguments], cwd=directory, check=True, capture_output=True)
    with open(os.path.join(directory, "ca.cnf"), "w") as config:
        config.write("[req]\ndistinguished_name = dn\nx509_extensions = ca\nprompt = no\n[dn]\nCN = bench CA\n"
                     "[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign\n")
    with open(os.path.join(directory, "server.cnf"), "w") as config:
        config.write("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = localhost\n")
    with open(os.path.join(directory, "server.ext"), "w") as ext:
        ext.write("subjectAltName = DNS:localhost, IP:127.0.0.1\nextendedKeyUsage = serverAuth\n")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-config", "ca.cnf", "-keyout", "ca.key", "-out", "ca.pem")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-config", "server.cnf",
            "-keyout", "server.key", "-out", "server.csr")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "1", "-days", "1",
            "-extfile", "server.ext", "-out", "server.pem")
    return {name: os.path.join(directory, name + ".pem") for name in ("ca", "server")} | {
        "key": os.path.join(directory, "server.key")}


def start_server(build: str, data: str, extra: list) -> ModerationServer:
    try:
        return ModerationServer(os.path.join(build, "moderation-server"), data, API_KEY,
                                ["--threads", "1", "--access-log", "off", "--log-level", "warning"] + extra, core=0)
    except RuntimeError as error:
        sys.exit("bench/echo.py: %s" % error)


def handshakes(port: int, pid: int, ca: str, seconds: float) -> dict:
    """Full TLS handshakes by `openssl s_time -new` on core 1: the rate and the server's CPU each."""
    before = cpu_seconds(pid)
    out = subprocess.run(["taskset", "-c", "1", "openssl", "s_time", "-connect", "127.0.0.1:%d" % port, "-new",
                          "-time", "%d" % max(1, round(seconds)), "-CAfile", ca],
                         check=True, capture_output=True, text=True).stdout
    server_cpu = cpu_seconds(pid) - before
    line = next(line for line in out.splitlines() if "connections in" in line and "real seconds" in line)
    count, real = int(line.split()[0]), float(line.split(" in ")[1].split()[0])
    return {"per_s": count / real, "server_us_per_handshake": server_cpu * 1e6 / count}


def bench(build: str, port: int, pid: int, conns: int, depth: int, seconds: float, client_flags: list = ()) -> dict:
    before = cpu_seconds(pid)
    out = subprocess.run(
        ["taskset", "-c", "1", os.path.join(build, "rpc-probe"), "--api-key", API_KEY, "127.0.0.1:%d" % port]
        + list(client_flags) + [
         "bench", "/mrpc.diagnostics.v1.Diagnostics/Echo", "-d", json.dumps({"payload": PAYLOAD}),
         "--conns", str(conns), "--depth", str(depth), "--duration", "%gs" % seconds,
         "--format", "json"], check=True, capture_output=True, text=True).stdout
    server_cpu = cpu_seconds(pid) - before
    report = json.loads(out)
    count = report["count"]
    return {"calls_per_s": report["callsPerSecond"], "p50_us": report["latencyMs"]["p50"] * 1000,
            "p99_us": report["latencyMs"]["p99"] * 1000, "client_us_per_call": report["clientCpuMicrosPerCall"],
            "server_us_per_call": server_cpu * 1e6 / count}


def tcp_floor(pingpong: str) -> dict:
    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", pingpong, "server", str(port)])
    time.sleep(0.3)
    try:
        out = subprocess.run(["taskset", "-c", "1", pingpong, "client", str(port), "50000"],
                             check=True, capture_output=True, text=True).stdout
    finally:
        server.kill()
        server.wait()
    return json.loads(out)


def echo_line(rows: list) -> str:
    """One scenario's runs, as this report and bench/grpc.py's print them."""
    return "calls/s %s; p50 %s µs; p99 %s µs; server CPU %s µs/call; client CPU %s µs/call" % tuple(
        spread(column(rows, key)) for key in ("calls_per_s", "p50_us", "p99_us", "server_us_per_call",
                                              "client_us_per_call"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=".build/release")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--no-tls", action="store_true", help="plaintext only (no TLS server, no handshakes)")
    args = parser.parse_args()
    if shutil.which("taskset") is None:
        sys.exit("bench/echo.py: taskset (util-linux) is missing")
    if not args.no_tls and shutil.which("openssl") is None:
        sys.exit("bench/echo.py: the openssl command line is missing (or pass --no-tls)")
    pingpong = os.path.join(args.build_dir, "tcp-pingpong")
    work = tempfile.mkdtemp(prefix="moderation-echo-bench-")
    servers = []
    try:
        plain = start_server(args.build_dir, os.path.join(work, "plain"), [])
        servers.append(plain)
        # (label, port, pid, rpc-probe's flags)
        transports = [("", plain.port, plain.pid, [])]
        if not args.no_tls:
            pem = make_certificate(work)
            tls = start_server(args.build_dir, os.path.join(work, "tls"),
                               ["--tls-cert", pem["server"], "--tls-key", pem["key"]])
            servers.append(tls)
            transports.append(("TLS, ", tls.port, tls.pid, ["--cacert", pem["ca"]]))
        scenarios = {"4 connections × 32 in flight": (4, 32), "1 connection × 1 in flight": (1, 1)}
        results = {(label, name): [] for label, *_ in transports for name in scenarios}
        floors, handshake_rows = [], []
        for _, port, pid, flags in transports:  # warm-up, not reported
            for conns, depth in scenarios.values():
                bench(args.build_dir, port, pid, conns, depth, 1, flags)
        for _ in range(args.runs):
            for name, (conns, depth) in scenarios.items():
                for label, port, pid, flags in transports:
                    results[(label, name)].append(bench(args.build_dir, port, pid, conns, depth, args.seconds, flags))
            floors.append(tcp_floor(pingpong))
            if not args.no_tls:
                handshake_rows.append(handshakes(tls.port, tls.pid, pem["ca"], min(args.seconds, 3)))
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("Echo, 16-byte payload; server on core 0 (one loop), rpc-probe bench on core 1; median (min–max) of %d runs of %g s"
          % (args.runs, args.seconds))
    for (label, name), rows in results.items():
        print("  %s%s: %s" % (label, name, echo_line(rows)))
    print("  raw TCP ping-pong, 32 bytes (the floor): p50 %s µs; p99 %s µs" % (
        spread(column(floors, "p50_us")), spread(column(floors, "p99_us"))))
    if handshake_rows:
        print("  TLS handshakes (openssl s_time -new, EC P-256, TLS 1.3): %s/s; server CPU %s µs/handshake" % (
            spread(column(handshake_rows, "per_s")), spread(column(handshake_rows, "server_us_per_handshake"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
