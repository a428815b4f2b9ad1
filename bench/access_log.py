#!/usr/bin/env python3
"""What the access log costs: Echo at 4 × 32 with the default settings (the access log on) against
the same server with --access-log off, in the same run.

Both release servers run pinned to core 0 with one event loop (`--threads 1`), rpc-probe bench on
core 1, as bench/echo.py does; they alternate run by run. The logging server's standard error goes
to a file in the run's scratch directory, as a service's log does (journald or a file); its size
and the server's `moderation_access_log_dropped_total` are reported with each run. A third server
logs one call in 16 (`--access-log-sample 16`).

Usage: bench/access_log.py --build-dir .build/release [--runs 5] [--seconds 5]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo  # noqa: E402  (the Echo load and the server's CPU, shared with bench/echo.py)


def start(build: str, work: str, name: str, extra: list) -> dict:
    port, metrics = echo.free_port(), echo.free_port()
    log_path = os.path.join(work, name + ".log")
    log = open(log_path, "wb")
    server = subprocess.Popen(
        ["taskset", "-c", "0", os.path.join(build, "moderation-server"), "--listen", "127.0.0.1:%d" % port,
         "--grpc-listen", "off", "--metrics-listen", "127.0.0.1:%d" % metrics,
         "--data-dir", os.path.join(work, name), "--api-key", echo.API_KEY, "--threads", "1"] + extra,
        stdout=subprocess.DEVNULL, stderr=log)
    echo.wait_listening(server, port)
    return {"name": name, "process": server, "port": port, "metrics": metrics, "log": log, "log_path": log_path}


def dropped(server: dict) -> int:
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % server["metrics"], timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith("moderation_access_log_dropped_total "):
            return int(float(line.split()[1]))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=".build/release")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    if shutil.which("taskset") is None:
        sys.exit("bench/access_log.py: taskset (util-linux) is missing")
    work = tempfile.mkdtemp(prefix="moderation-access-log-bench-")
    servers = []
    try:
        servers = [start(args.build_dir, work, "off", ["--access-log", "off"]),
                   start(args.build_dir, work, "default", []),
                   start(args.build_dir, work, "sample16", ["--access-log-sample", "16"])]
        rows = {server["name"]: [] for server in servers}
        for server in servers:  # warm-up, not reported
            echo.bench(args.build_dir, server["port"], server["process"].pid, 4, 32, 1)
        for _ in range(args.runs):
            for server in servers:
                size_before = os.path.getsize(server["log_path"])
                row = echo.bench(args.build_dir, server["port"], server["process"].pid, 4, 32, args.seconds)
                row["log_bytes_per_call"] = (os.path.getsize(server["log_path"]) - size_before) / (
                    row["calls_per_s"] * args.seconds)
                rows[server["name"]].append(row)
        drops = {server["name"]: dropped(server) for server in servers}
    finally:
        for server in servers:
            server["process"].terminate()
            server["process"].wait()
            server["log"].close()
        shutil.rmtree(work, ignore_errors=True)

    print("Echo at 4 × 32, 16-byte payload; server on core 0 (one loop), rpc-probe bench on core 1; "
          "median (min–max) of %d runs of %g s, servers alternated" % (args.runs, args.seconds))
    labels = {"off": "--access-log off", "default": "default settings (access log on, to a file)",
              "sample16": "--access-log-sample 16"}
    for name, label in labels.items():
        print("  %s: calls/s %s; server CPU %s µs/call; log %s bytes/call; lines dropped in all: %d" % (
            label, echo.summary(rows[name], "calls_per_s"), echo.summary(rows[name], "server_us_per_call"),
            echo.summary(rows[name], "log_bytes_per_call"), drops[name]))
    for name in ("default", "sample16"):
        ratios = [row["calls_per_s"] / off["calls_per_s"] for row, off in zip(rows[name], rows["off"])]
        print("  %s / off, run by run: %.2f (%.2f–%.2f)" % (
            labels[name], statistics.median(ratios), min(ratios), max(ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
