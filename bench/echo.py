#!/usr/bin/env python3
"""The RPC runtime's benchmark: Echo with a 16-byte payload against a release moderation-server.

The server runs pinned to core 0 (`taskset -c 0`, one event loop), the load (`rpc-probe bench`,
itself pinned to core 1) on the other core, as the RPC runtime issue prescribes. Each scenario
runs --runs times; the report gives the median and the spread. Server CPU per call comes from
/proc/PID/stat (utime + stime) around each run; the client's CPU per call is rpc-probe's own.
A raw TCP ping-pong (bench/tcp-pingpong.c) on the same two cores gives the floor under the
one-call-in-flight latency.

Usage: bench/echo.py --build-dir .build/release [--runs 5] [--seconds 5]
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

API_KEY = "bench:benchkey0123456789"
PAYLOAD = "MDEyMzQ1Njc4OWFiY2RlZg=="  # 16 bytes, base64
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    with open("/proc/%d/stat" % pid) as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def wait_listening(process: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit("bench/echo.py: the server exited with %s" % process.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("bench/echo.py: the server did not listen on port %d" % port)


def bench(build: str, port: int, pid: int, conns: int, depth: int, seconds: float) -> dict:
    before = cpu_seconds(pid)
    out = subprocess.run(
        ["taskset", "-c", "1", os.path.join(build, "rpc-probe"), "--api-key", API_KEY, "127.0.0.1:%d" % port,
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


def summary(rows: list, key: str) -> str:
    values = [row[key] for row in rows]
    return "%.1f (%.1f–%.1f)" % (statistics.median(values), min(values), max(values))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=".build/release")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    if shutil.which("taskset") is None:
        sys.exit("bench/echo.py: taskset (util-linux) is missing")
    pingpong = os.path.join(args.build_dir, "tcp-pingpong")
    data = tempfile.mkdtemp(prefix="moderation-echo-bench-")
    port = free_port()
    server = subprocess.Popen(
        ["taskset", "-c", "0", os.path.join(args.build_dir, "moderation-server"), "--listen", "127.0.0.1:%d" % port,
         "--data-dir", data, "--api-key", API_KEY, "--threads", "1", "--access-log", "off", "--log-level", "warning"],
        stdout=subprocess.DEVNULL)
    try:
        wait_listening(server, port)
        scenarios = {"4 connections × 32 in flight": (4, 32), "1 connection × 1 in flight": (1, 1)}
        results = {name: [] for name in scenarios}
        floors = []
        for conns, depth in scenarios.values():  # warm-up, not reported
            bench(args.build_dir, port, server.pid, conns, depth, 1)
        for _ in range(args.runs):
            for name, (conns, depth) in scenarios.items():
                results[name].append(bench(args.build_dir, port, server.pid, conns, depth, args.seconds))
            floors.append(tcp_floor(pingpong))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(data, ignore_errors=True)
    print("Echo, 16-byte payload; server on core 0 (one loop), rpc-probe bench on core 1; median (min–max) of %d runs of %g s"
          % (args.runs, args.seconds))
    for name, rows in results.items():
        print("  %s: calls/s %s; p50 %s µs; p99 %s µs; server CPU %s µs/call; client CPU %s µs/call" % (
            name, summary(rows, "calls_per_s"), summary(rows, "p50_us"), summary(rows, "p99_us"),
            summary(rows, "server_us_per_call"), summary(rows, "client_us_per_call")))
    print("  raw TCP ping-pong, 32 bytes (the floor): p50 %s µs; p99 %s µs" % (summary(floors, "p50_us"), summary(floors, "p99_us")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
