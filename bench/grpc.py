#!/usr/bin/env python3
"""gRPC C++ on the same machine: bench/echo.py's Echo benchmark against a gRPC C++ server.

Builds bench/grpc (make -C bench/grpc: .build/grpc/echo-server and .build/grpc/echo-client)
when needed, runs the server pinned to core 0 (`taskset -c 0`; one completion queue, one
polling thread) and the load (echo-client, gRPC C++'s async API, one completion queue) pinned
to core 1, in bench/echo.py's two scenarios with its 16-byte payload. One warm-up run of each
scenario first; then each scenario runs --runs times and the report gives the median and the
spread. Server CPU per call comes from /proc/PID/stat (utime + stime) around each client run,
divided by every call of that run (the client's own second of warm-up included); the client's
CPU per call is its getrusage over the measured window.

Needs the Debian packages libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev
protobuf-compiler (gRPC 1.51.1 on Debian 12) and g++, make, pkg-config; as root it installs the
missing ones with apt-get (like tools/setup), otherwise it says which to install and exits 1.

Usage: bench/grpc.py [--runs 5] [--seconds 5]
"""

import argparse
import json
import os
import selectors
import shutil
import subprocess
import sys
import time

from benchkit import cpu_seconds, free_port, stop_process
from echo import echo_line  # bench/echo.py: the same report for our server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, ".build", "grpc")
PACKAGES = ["libgrpc++-dev", "protobuf-compiler-grpc", "libprotobuf-dev", "protobuf-compiler", "g++", "make",
            "pkg-config"]
APT_LOG = "/tmp/moderation-apt.log"


def say(message: str) -> None:
    print("bench/grpc.py: %s" % message, file=sys.stderr)


def missing_packages() -> list:
    if shutil.which("dpkg-query") is not None:
        missing = []
        for package in PACKAGES:
            status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
            if "install ok installed" not in status.stdout:
                missing.append(package)
        return missing
    # Not Debian: look for what the build uses instead of the packages that provide it.
    needs = {"protobuf-compiler": shutil.which("protoc"), "protobuf-compiler-grpc": shutil.which("grpc_cpp_plugin"),
             "g++": shutil.which("g++"), "make": shutil.which("make"), "pkg-config": shutil.which("pkg-config")}
    missing = [package for package, found in needs.items() if found is None]
    if shutil.which("pkg-config") is not None:
        for package, module in (("libgrpc++-dev", "grpc++"), ("libprotobuf-dev", "protobuf")):
            if subprocess.run(["pkg-config", "--exists", module]).returncode != 0:
                missing.append(package)
    return missing


def ensure_packages() -> None:
    missing = missing_packages()
    if not missing:
        return
    if os.geteuid() == 0 and shutil.which("apt-get") is not None:
        say("installing Debian packages: %s" % " ".join(missing))
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        with open(APT_LOG, "a") as log:
            if subprocess.run(["apt-get", "install", "-y", "-q"] + missing, stdout=log, stderr=log, env=env).returncode:
                say("apt-get install failed; refreshing package lists and trying again")
                subprocess.run(["apt-get", "update", "-q"], stdout=log, stderr=log, env=env)
                if subprocess.run(["apt-get", "install", "-y", "-q"] + missing, stdout=log, stderr=log,
                                  env=env).returncode:
                    say("apt-get failed (log: %s)" % APT_LOG)
                    sys.exit(1)
        return
    say("missing Debian packages: %s" % " ".join(missing))
    say("install them with: sudo apt-get install %s" % " ".join(missing))
    sys.exit(1)


def grpc_version() -> str:
    out = subprocess.run(["pkg-config", "--modversion", "grpc++"], capture_output=True, text=True).stdout.strip()
    return ".".join(out.split(".")[:2]) if out else "?"


def wait_listening(process: subprocess.Popen) -> None:
    """Waits for the server's "listening" line (it prints it once the port is bound)."""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = process.stdout.readline()
                if line.strip() == "listening":
                    return
                if not line:
                    process.wait()
                    sys.exit("bench/grpc.py: the server exited with %s" % process.returncode)
    sys.exit("bench/grpc.py: the server did not say it was listening")


def bench(port: int, pid: int, conns: int, depth: int, seconds: float) -> dict:
    before = cpu_seconds(pid)
    out = subprocess.run(
        ["taskset", "-c", "1", os.path.join(BUILD, "echo-client"), str(port), str(conns), str(depth), "%g" % seconds],
        check=True, capture_output=True, text=True).stdout
    server_cpu = cpu_seconds(pid) - before
    report = json.loads(out)
    report["server_us_per_call"] = server_cpu * 1e6 / report["total_count"]
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    if shutil.which("taskset") is None:
        sys.exit("bench/grpc.py: taskset (util-linux) is missing")
    ensure_packages()
    build = subprocess.run(["make", "-s", "--no-print-directory", "-C", os.path.join(ROOT, "bench", "grpc")],
                           stdout=sys.stderr)
    if build.returncode != 0:
        sys.exit("bench/grpc.py: building bench/grpc failed")
    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", os.path.join(BUILD, "echo-server"), str(port)],
                              stdout=subprocess.PIPE, text=True)
    try:
        wait_listening(server)
        scenarios = {"4 connections × 32 in flight": (4, 32), "1 connection × 1 in flight": (1, 1)}
        results = {name: [] for name in scenarios}
        for conns, depth in scenarios.values():  # warm-up, not reported
            bench(port, server.pid, conns, depth, 1)
        for _ in range(args.runs):
            for name, (conns, depth) in scenarios.items():
                results[name].append(bench(port, server.pid, conns, depth, args.seconds))
    finally:
        stop_process(server, timeout=10)
    print("gRPC C++ %s Echo, 16-byte payload; server on core 0 (one completion queue, one polling thread), "
          "echo-client on core 1; median (min–max) of %d runs of %g s" % (grpc_version(), args.runs, args.seconds))
    for name, rows in results.items():
        print("  %s: %s" % (name, echo_line(rows)))
    if server.returncode != 0:
        say("the server exited with %s on SIGTERM" % server.returncode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
