#!/usr/bin/env python3
"""Standard gRPC on our main port against nghttpd and the gRPC C++ server, all driven by h2load
in the same run.

Echo with a 16-byte payload over standard gRPC (HTTP/2, h2c), each server pinned to core 0 and
h2load (Debian's nghttp2-client) pinned to core 1, at 4 connections × 32 streams and at 1 × 1.
The same pre-encoded request body (a 5-byte gRPC prefix and an EchoRequest whose `payload` is 16
bytes; both Echo messages encode alike) goes to `/mrpc.diagnostics.v1.Diagnostics/Echo` on the
main port of a release `moderation-server --threads 1 --access-log off` (the port that also
serves our framed protocol), to the same path on nghttpd (Debian's nghttp2-server: the same
libnghttp2 doing HTTP/2 alone, serving a file of the same response bytes with the trailer
`grpc-status: 0`, one thread), and to `/benchgrpc.v1.Echo/Echo` on bench/grpc's gRPC C++ async
server (one completion queue, one polling thread). The servers alternate run by run, so a slow
minute of the shared machine hits all; the report gives medians and the spread of --runs runs.

Each h2load run is --seconds long after a second of warm-up; calls/s is h2load's `req/s`, the
1 × 1 latency percentiles come from its per-request log (`--log-file`), server CPU per call from
/proc/PID/stat around the run, and h2load's own CPU (getrusage of the child) beside it: a
load generator that used less than its core was not the bottleneck, and server CPU per call
compares the servers whatever the load. h2load counts HTTP statuses, not gRPC's (which travel in
trailers), so a first call to each server is checked by hand for `grpc-status: 0`.

The framed protocol's Echo (bench/echo.py) is run once more at the end with --grpc-listen on
and off, to show that a second address serving both protocols costs the first nothing.

Usage: bench/grpc_listener.py [--runs 5] [--seconds 5] [--build-dir .build/release]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpc as grpc_bench  # bench/grpc.py: building and starting the gRPC C++ server  # noqa: E402
from benchkit import API_KEY, ModerationServer, cpu_seconds, free_port, spread, stop_process  # noqa: E402
from echo import bench as framed_bench  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAYLOAD = bytes(range(16))


def say(message: str) -> None:
    print("bench/grpc_listener.py: %s" % message, file=sys.stderr)


def request_body() -> bytes:
    message = b"\x0a\x10" + PAYLOAD  # field 1 (bytes), 16 bytes
    return b"\x00" + len(message).to_bytes(4, "big") + message


def check_call(port: int, path: str, auth: bool) -> None:
    """One call with nghttp (nghttp2-client), which shows trailers: the reply must end with
    grpc-status 0 (h2load does not look)."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as body:
        body.write(request_body())
        body.flush()
        command = ["nghttp", "-nv", "-d", body.name, "-H", "content-type: application/grpc", "-H", "te: trailers",
                   "http://127.0.0.1:%d%s" % (port, path)]
        if auth:
            command[2:2] = ["-H", "authorization: Bearer " + API_KEY]
        out = subprocess.run(command, capture_output=True, text=True).stdout
    if "grpc-status: 0" not in out:
        sys.exit("bench/grpc_listener.py: a first call to %s did not succeed:\n%s" % (path, out))


def h2load(port: int, path: str, pid: int, clients: int, streams: int, seconds: float, auth: bool,
           log: str = "") -> dict:
    with tempfile.NamedTemporaryFile(suffix=".bin") as body:
        body.write(request_body())
        body.flush()
        command = ["taskset", "-c", "1", "h2load", "-t", "1", "-c", str(clients), "-m", str(streams),
                   "-D", "%g" % seconds, "--warm-up-time", "1", "-d", body.name,
                   "-H", "content-type: application/grpc", "-H", "te: trailers"]
        if auth:
            command += ["-H", "authorization: Bearer " + API_KEY]
        if log:
            command += ["--log-file", log]
        command.append("http://127.0.0.1:%d%s" % (port, path))
        before = cpu_seconds(pid)
        started = time.monotonic()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.monotonic() - started
        server_cpu = cpu_seconds(pid) - before
        client_cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    done = succeeded = 0
    rate = 0.0
    for line in out.splitlines():
        if line.startswith("finished in"):
            rate = float(line.split(",")[1].split()[0])
        if line.startswith("requests:"):
            fields = line.replace(",", "").split()
            done = int(fields[fields.index("done") - 1])
            succeeded = int(fields[fields.index("succeeded") - 1])
    if done == 0 or succeeded != done:
        sys.exit("bench/grpc_listener.py: h2load against %s: %d of %d succeeded\n%s" % (path, succeeded, done, out))
    # CPU over the whole run (its second of warm-up too) per call measured: both sides alike.
    report = {"calls_per_second": rate, "requests": done, "server_us_per_call": server_cpu * 1e6 / done,
              "h2load_us_per_call": client_cpu * 1e6 / done, "h2load_core_share": client_cpu / wall}
    if log:
        durations = []
        with open(log) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3 and parts[1] == "200":
                    durations.append(int(parts[2]))
        durations.sort()
        if durations:
            report["p50_us"] = durations[len(durations) // 2]
            report["p99_us"] = durations[min(len(durations) - 1, len(durations) * 99 // 100)]
    return report


def start_nghttpd(directory: str) -> tuple:
    """nghttpd serving the Echo response's bytes at Echo's path, with gRPC's OK trailer."""
    root = os.path.join(directory, "docroot")
    os.makedirs(os.path.join(root, "mrpc.diagnostics.v1.Diagnostics"), exist_ok=True)
    with open(os.path.join(root, "mrpc.diagnostics.v1.Diagnostics", "Echo"), "wb") as fh:
        fh.write(request_body())  # an EchoResponse of the same payload encodes as the request does
    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", "nghttpd", "--no-tls", "-d", root, "--trailer",
                               "grpc-status: 0", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "http://127.0.0.1:%d/" % port],
                          capture_output=True).returncode == 0:
            return server, port
        time.sleep(0.1)
    sys.exit("bench/grpc_listener.py: nghttpd did not listen within 10 s")


def start_ours(build: str, data: str, grpc: bool) -> ModerationServer:
    """Our server, its main port serving both protocols; with a second address for gRPC or none."""
    try:
        return ModerationServer(os.path.join(build, "moderation-server"), data, API_KEY,
                                ["--threads", "1", "--access-log", "off", "--log-level", "warning"],
                                grpc_listen="127.0.0.1:0" if grpc else "off", core=0)
    except RuntimeError as error:
        sys.exit("bench/grpc_listener.py: moderation-server: %s" % error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, ".build", "release"))
    args = parser.parse_args()
    for tool in ("taskset", "h2load", "nghttp", "nghttpd", "curl"):
        if shutil.which(tool) is None:
            sys.exit("bench/grpc_listener.py: %s is missing (tools/setup installs nghttp2-client, nghttp2-server "
                     "and curl)" % tool)
    grpc_bench.ensure_packages()
    if subprocess.run(["make", "-s", "--no-print-directory", "-C", os.path.join(ROOT, "bench", "grpc")],
                      stdout=sys.stderr).returncode != 0:
        sys.exit("bench/grpc_listener.py: building bench/grpc failed")
    data = tempfile.mkdtemp(prefix="grpc-listener-bench-")
    ours = start_ours(args.build_dir, data, grpc=False)
    nghttpd, nghttpd_port = start_nghttpd(data)
    cpp_port = free_port()
    cpp = subprocess.Popen(["taskset", "-c", "0", os.path.join(grpc_bench.BUILD, "echo-server"), str(cpp_port)],
                           stdout=subprocess.PIPE, text=True)
    cpp_name = "grpc++ %s" % grpc_bench.grpc_version()
    servers = {
        "ours": (ours.port, "/mrpc.diagnostics.v1.Diagnostics/Echo", ours.pid, True),
        "nghttpd": (nghttpd_port, "/mrpc.diagnostics.v1.Diagnostics/Echo", nghttpd.pid, False),
        cpp_name: (cpp_port, "/benchgrpc.v1.Echo/Echo", cpp.pid, False),
    }
    scenarios = {"4 connections × 32 streams": (4, 32), "1 connection × 1 stream": (1, 1)}

    def streams_of(scenario: str) -> int:
        return scenarios[scenario][1]
    results = {(server, scenario): [] for server in servers for scenario in scenarios}
    try:
        grpc_bench.wait_listening(cpp)
        for port, path, _, auth in servers.values():
            check_call(port, path, auth)
        log = os.path.join(data, "h2load.log")
        for run in range(args.runs):
            for scenario, (clients, streams) in scenarios.items():
                for server, (port, path, pid, auth) in servers.items():
                    results[(server, scenario)].append(
                        h2load(port, path, pid, clients, streams, args.seconds, auth, log if streams == 1 else ""))
            say("run %d of %d done" % (run + 1, args.runs))
    finally:
        ours.stop()
        stop_process(nghttpd)
        stop_process(cpp)
    print("gRPC Echo (16-byte payload) driven by h2load on core 1, servers on core 0; median (min–max) of %d runs"
          % args.runs)

    def median(server: str, scenario: str, key: str) -> float:
        return statistics.median(r[key] for r in results[(server, scenario)])

    for scenario in scenarios:
        print("  %s" % scenario)
        for server in servers:
            runs = results[(server, scenario)]
            line = "    %-14s calls/s %s   server CPU/call %s µs   h2load CPU/call %s µs (%.0f%% of its core)" % (
                server, spread([r["calls_per_second"] for r in runs], 0),
                spread([r["server_us_per_call"] for r in runs], 2),
                spread([r["h2load_us_per_call"] for r in runs], 2),
                100 * statistics.median(r["h2load_core_share"] for r in runs))
            if "p50_us" in runs[0]:
                line += "   p50 %s µs   p99 %s µs" % (spread([r["p50_us"] for r in runs], 0),
                                                     spread([r["p99_us"] for r in runs], 0))
            print(line)
        ours_rate = median("ours", scenario, "calls_per_second")
        print("    ours: %.2f× the calls/s of nghttpd (%.2f× by server CPU per call), %.2f× those of gRPC C++" % (
            ours_rate / median("nghttpd", scenario, "calls_per_second"),
            median("nghttpd", scenario, "server_us_per_call") / median("ours", scenario, "server_us_per_call"),
            ours_rate / median(cpp_name, scenario, "calls_per_second")))
        # The pairwise ratio of each run (the servers ran back to back), whose spread the medians hide.
        pairs = [o["calls_per_second"] / n["calls_per_second"]
                 for o, n in zip(results[("ours", scenario)], results[("nghttpd", scenario)])]
        print("    ours / nghttpd run by run: %s" % ", ".join("%.2f" % p for p in pairs))
        if streams_of(scenario) == 1:
            print("    1 × 1 p50: ours %.0f µs, gRPC C++ %.0f µs" % (
                median("ours", scenario, "p50_us"), median(cpp_name, scenario, "p50_us")))
    print(json.dumps({"%s / %s" % key: value for key, value in results.items()}))

    # The framed protocol with --grpc-listen on and off (bench/echo.py's 4 × 32).
    print("framed Echo (rpc-probe bench, 4 × 32) with --grpc-listen on and off, alternating:")
    rates = {"on": [], "off": []}
    for run in range(args.runs):
        for mode in ("on", "off"):
            server = start_ours(args.build_dir, tempfile.mkdtemp(prefix="grpc-listener-bench-"), mode == "on")
            try:
                time.sleep(0.3)
                rates[mode].append(framed_bench(args.build_dir, server.port, server.pid, 4, 32, args.seconds)["calls_per_s"])
            finally:
                server.stop()
    for mode in ("on", "off"):
        print("  --grpc-listen %-3s calls/s %s" % (mode, spread(rates[mode], 0)))
    print("  ratio on/off: %.2f" % (statistics.median(rates["on"]) / statistics.median(rates["off"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
