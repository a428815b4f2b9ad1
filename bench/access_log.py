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
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo  # noqa: E402  (the Echo load, shared with bench/echo.py)
from benchkit import API_KEY, ModerationServer, column, free_port, read_metrics, spread  # noqa: E402


class LoggingServer(ModerationServer):
    """A server of this run: its log in a file of the run's scratch directory, its metrics on a
    known port (finding the port in a log of millions of lines would take a while)."""

    def __init__(self, build: str, work: str, name: str, extra: list) -> None:
        self.name = name
        self.metrics = free_port()
        try:
            super().__init__(os.path.join(build, "moderation-server"), os.path.join(work, name), API_KEY,
                             ["--metrics-listen", "127.0.0.1:%d" % self.metrics, "--threads", "1"] + extra,
                             grpc_listen="off", core=0, log=os.path.join(work, name + ".log"))
        except RuntimeError as error:
            sys.exit("bench/access_log.py: the %s server: %s" % (name, error))

    def dropped(self) -> int:
        url = "http://127.0.0.1:%d/metrics" % self.metrics
        return int(read_metrics(url, timeout=5).get("moderation_access_log_dropped_total", 0))


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
        for name, extra in (("off", ["--access-log", "off"]), ("default", []),
                            ("sample16", ["--access-log-sample", "16"])):
            servers.append(LoggingServer(args.build_dir, work, name, extra))
        rows = {server.name: [] for server in servers}
        for server in servers:  # warm-up, not reported
            echo.bench(args.build_dir, server.port, server.pid, 4, 32, 1)
        for _ in range(args.runs):
            for server in servers:
                size_before = os.path.getsize(server.log_path)
                row = echo.bench(args.build_dir, server.port, server.pid, 4, 32, args.seconds)
                row["log_bytes_per_call"] = (os.path.getsize(server.log_path) - size_before) / (
                    row["calls_per_s"] * args.seconds)
                rows[server.name].append(row)
        drops = {server.name: server.dropped() for server in servers}
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)

    print("Echo at 4 × 32, 16-byte payload; server on core 0 (one loop), rpc-probe bench on core 1; "
          "median (min–max) of %d runs of %g s, servers alternated" % (args.runs, args.seconds))
    labels = {"off": "--access-log off", "default": "default settings (access log on, to a file)",
              "sample16": "--access-log-sample 16"}
    for name, label in labels.items():
        print("  %s: calls/s %s; server CPU %s µs/call; log %s bytes/call; lines dropped in all: %d" % (
            label, spread(column(rows[name], "calls_per_s")), spread(column(rows[name], "server_us_per_call")),
            spread(column(rows[name], "log_bytes_per_call")), drops[name]))
    for name in ("default", "sample16"):
        ratios = [row["calls_per_s"] / off["calls_per_s"] for row, off in zip(rows[name], rows["off"])]
        print("  %s / off, run by run: %s" % (labels[name], spread(ratios, 2)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
