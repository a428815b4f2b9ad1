#!/usr/bin/env python3
"""The fan-out benchmark against Redis, NATS and a bare C floor.

One C client (bench/fanout/fanout-client.c, pinned to core 1) subscribes N subscribers to each
peer (pinned to core 0), sends one trigger at a time on a connection of its own and times the
first and the last subscriber's receipt, then sends triggers for a sustained phase and counts
every receipt. The peers:

  mrpc   our release moderation-server: a fresh data directory, default durability (fsync on),
         default threads (one event loop under `taskset -c 0`: the default follows the
         affinity mask), --access-log off; N members u0…u(N-1) of group `fan`, each Subscribe
         stream on behalf of one member; the trigger is an UpdateGroup of `fan` by its owner,
         a durable commit before the fan-out.
  redis  Debian's redis-server 7 (--save '' --appendonly no): SUBSCRIBE / PUBLISH.
  nats   Debian's nats-server: SUB / PUB.
  floor  bench/fanout/floor-server.c: one write per subscriber per trigger, nothing else.

Shapes: one socket per subscriber (every peer), and the gateway shape — N subscriptions over
--connections connections (ours: 625 Subscribe calls a connection for 10 000 over 16; NATS: SUBs
on the same subject). Redis keeps one subscription per channel and connection, and the floor
has no subscriptions to multiplex, so neither has a gateway shape.

The peers' messages carry a payload as large as our event frame (measured in the warm-up), so
every peer delivers at least as many bytes per receipt as ours.

Each (peer, shape) first gets a warm-up run (not reported) that also tries --inflight values for
the sustained phase and keeps the best; then --runs runs, the peers alternating run by run, each
with --rounds timed rounds after two warm-up rounds and a --seconds sustained phase. The report:
per peer and shape the median (min–max) of send → last receipt and first → last over all rounds,
of the sustained deliveries/s and of the time until every subscription is live; then each of the
targets (docs/BENCHMARKS.md) with the measured ratio. The server's CPU time (all its threads, from
/proc/PID/task/*/schedstat) per action and per sustained delivery is reported beside the times:
on a machine shared with other work the times measure the scheduler too, the CPU much less.

Usage: bench/fanout.py --build-dir .build/release [--runs 3] [--rounds 7] [--seconds 5]
       [--subscribers 10000] [--connections 16] [--inflight 8,16,32] [--peers mrpc,redis,nats,floor]
"""

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import NoReturn

from benchkit import API_KEY, free_port, spread, stop_process

PEER_PACKAGES = {"redis": ("redis-server", "redis-server"), "nats": ("nats-server", "nats-server")}


def fail(message: str) -> NoReturn:
    sys.exit("bench/fanout.py: " + message)


def open_files(pid: int) -> int:
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0


class Server:
    """A peer's process pinned to core 0, stopped by stop() (SIGTERM, then SIGKILL)."""

    def __init__(self, name: str, argv: list, port: int, log_path: str, cwd: str = None):
        self.name, self.port, self.log_path = name, port, log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(["taskset", "-c", "0"] + argv, stdout=self.log, stderr=subprocess.STDOUT,
                                        cwd=cwd)
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                fail("%s exited with %s at start:\n%s" % (name, self.process.returncode, self.log_tail()))
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    fail("%s did not listen on port %d within 30 s:\n%s" % (name, port, self.log_tail()))
                time.sleep(0.1)
        time.sleep(0.2)
        self.idle_files = open_files(self.process.pid)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self) -> str:
        self.log.flush()
        with open(self.log_path, "rb") as fh:
            return fh.read()[-2000:].decode(errors="replace")

    def settle(self) -> None:
        """Waits until the server has closed the last run's connections (its open files are back near idle)."""
        deadline = time.monotonic() + 30
        while open_files(self.pid) > self.idle_files + 64 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.3)

    def threads(self) -> list:
        names = []
        for task in sorted(os.listdir("/proc/%d/task" % self.pid)):
            with open("/proc/%d/task/%s/comm" % (self.pid, task)) as fh:
                names.append(fh.read().strip())
        return names

    def stop(self) -> None:
        stop_process(self.process)
        self.log.close()


class Bench:
    def __init__(self, args):
        self.args = args
        self.client = os.path.join(args.build_dir, "fanout-client")
        self.servers = {}

    def run_client(self, mode: str, port: int, extra: list, timeout: float = 900) -> dict:
        argv = ["taskset", "-c", "1", self.client, mode, "--port", str(port)] + extra
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": "the client did not finish within %d s: %s" % (timeout, " ".join(argv))}
        if done.returncode != 0:
            return {"error": (done.stderr.strip() or "exit status %d" % done.returncode)}
        return json.loads(done.stdout)

    def measure(self, peer: str, shape: str, inflight: str, seconds: float, rounds: int, payload: int,
                probe: bool) -> dict:
        server = self.servers[peer]
        server.settle()
        extra = ["--subscribers", str(self.args.subscribers), "--rounds", str(rounds), "--warmup", "2",
                 "--seconds", "%g" % seconds, "--inflight", inflight, "--server-pid", str(server.pid),
                 "--max-lag", str(self.args.max_lag)]
        if probe:
            extra += ["--probe-seconds", "%g" % self.args.probe_seconds]
        if shape == "gateway":
            extra += ["--connections", str(self.args.connections)]
        if peer == "mrpc":
            extra += ["--api-key", API_KEY]
        else:
            extra += ["--payload-bytes", str(payload)]
        result = self.run_client(peer, server.port, extra)
        if "error" in result and not server.alive():
            result["error"] += "\n%s exited with %s; its log ends:\n%s" % (
                peer, server.process.returncode, server.log_tail())
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=".build/release")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per peer and shape (default 3)")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per run (default 7)")
    parser.add_argument("--seconds", type=float, default=5, help="sustained phase per run (default 5)")
    parser.add_argument("--subscribers", type=int, default=10000)
    parser.add_argument("--connections", type=int, default=16, help="connections of the gateway shape")
    parser.add_argument("--inflight", default="8,16,32",
                        help="triggers in flight tried in the warm-up; the best is kept (default 8,16,32)")
    parser.add_argument("--probe-seconds", type=float, default=2)
    parser.add_argument("--max-lag", type=int, default=64,
                        help="triggers the average subscriber may be behind in the sustained phase (default 64)")
    parser.add_argument("--peers", default="mrpc,redis,nats,floor")
    parser.add_argument("--shapes", default="one-socket-each,gateway",
                        help="shapes to run (default one-socket-each,gateway)")
    args = parser.parse_args()
    peers = args.peers.split(",")
    unknown = set(args.shapes.split(",")) - {"one-socket-each", "gateway"}
    if unknown:
        fail("--shapes: unknown shape(s) %s (one-socket-each, gateway)" % ", ".join(sorted(unknown)))
    for peer in peers:
        if peer not in ("mrpc", "redis", "nats", "floor"):
            fail("unknown peer '%s' (mrpc, redis, nats, floor)" % peer)
    if args.subscribers % args.connections:
        fail("--subscribers must be a multiple of --connections")

    for tool, package in [("taskset", "util-linux"), ("gcc", "gcc")] + [
            PEER_PACKAGES[p] for p in peers if p in PEER_PACKAGES]:
        if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None:
            fail("%s is missing: install the Debian package %s (tools/setup does)" % (tool, package))
    server_binary = os.path.join(args.build_dir, "moderation-server")
    if "mrpc" in peers and not os.access(server_binary, os.X_OK):
        fail("%s is missing: swift build -c release --product moderation-server" % server_binary)

    # Every subscriber is a socket in the client, and one in the server: each needs N + slack.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * args.subscribers + 1024
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, max(hard, wanted)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if limit < args.subscribers + 512:
        fail("the open-file limit is %d; %d subscribers need %d (raise the hard limit: ulimit -Hn)" % (
            limit, args.subscribers, args.subscribers + 512))

    os.makedirs(args.build_dir, exist_ok=True)
    for name in ("fanout-client", "floor-server"):
        subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", os.path.join(args.build_dir, name),
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "fanout", name + ".c")], check=True)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    versions = {}
    if "redis" in peers:
        versions["redis"] = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()[2]
    if "nats" in peers:
        versions["nats"] = subprocess.run([shutil.which("nats-server", path="/usr/sbin:/usr/bin:/sbin"), "--version"],
                                          capture_output=True, text=True).stdout.strip()
    print("fan-out against Redis, NATS and the floor: %d subscribers; servers on core 0, client on core 1; "
          "%d runs × %d rounds (+2 warm-up rounds), %g s sustained; commit %s; %s" % (
              args.subscribers, args.runs, args.rounds, args.seconds, commit,
              ", ".join("%s %s" % kv for kv in versions.items())))
    print("load average at the start: %s (%d cores); open-file limit %d" % (
        " ".join(open("/proc/loadavg").read().split()[:3]), os.cpu_count(), limit))
    sys.stdout.flush()

    bench = Bench(args)
    work = tempfile.mkdtemp(prefix="moderation-fanout-bench-")
    configs = [(peer, shape) for peer in peers for shape in ("one-socket-each", "gateway")
               if shape in args.shapes.split(",") and (shape == "one-socket-each" or peer in ("mrpc", "nats"))]
    results = {config: [] for config in configs}
    failures = {config: [] for config in configs}
    try:
        payload = 142
        if "mrpc" in peers:
            port = free_port()
            data = os.path.join(work, "mrpc")
            server = Server("moderation-server", [
                server_binary, "--listen", "127.0.0.1:%d" % port, "--grpc-listen", "127.0.0.1:0",
                "--data-dir", data, "--api-key", API_KEY, "--access-log", "off", "--log-level", "warning",
                "--max-connections-per-app", str(4 * args.subscribers + 1000),
                "--max-subscriptions-per-app", str(4 * args.subscribers + 1000)], port, os.path.join(work, "mrpc.log"))
            bench.servers["mrpc"] = server
            loops = [name for name in server.threads() if name.startswith("loop-")]
            print("moderation-server: %d event loop(s) under taskset -c 0 (threads: %s)" % (
                len(loops), ", ".join(sorted(set(server.threads())))))
            setup = bench.run_client("setup", port, ["--api-key", API_KEY, "--subscribers", str(args.subscribers)])
            if "error" in setup:
                fail("setting up our server failed: %s" % setup["error"])
            print("setup: %d users and group 'fan' with %d members in %.1f s" % (
                setup["setup"]["users"], args.subscribers, setup["setup"]["seconds"]))
        if "redis" in peers:
            port = free_port()
            os.makedirs(os.path.join(work, "redis"))
            bench.servers["redis"] = Server("redis-server", [
                "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", os.path.join(work, "redis"), "--maxclients", str(min(limit - 64, 2 * args.subscribers)),
                "--tcp-backlog", "4096", "--daemonize", "no", "--loglevel", "warning"], port,
                os.path.join(work, "redis.log"))
        if "nats" in peers:
            port = free_port()
            bench.servers["nats"] = Server("nats-server", [
                shutil.which("nats-server", path="/usr/sbin:/usr/bin:/sbin"), "-p", str(port), "-a", "127.0.0.1"],
                port, os.path.join(work, "nats.log"))

        # Warm-up: one run each (not reported) that also picks the sustained phase's in-flight
        # triggers; ours first, for the size of our event frame.
        best_inflight = {}
        for config in configs:
            peer, shape = config
            if peer == "floor" and "floor" not in bench.servers:
                port = free_port()
                bench.servers["floor"] = Server("floor-server", [
                    os.path.join(args.build_dir, "floor-server"), str(port), str(payload)], port,
                    os.path.join(work, "floor.log"))
            result = bench.measure(peer, shape, args.inflight, min(args.seconds, 2), 3, payload, probe=True)
            if "error" in result:
                print("warm-up %s, %s: FAILED: %s" % (peer, shape, result["error"]))
                failures[config].append("warm-up: " + result["error"])
                best_inflight[config] = args.inflight.split(",")[0]
                continue
            sustained = result.get("sustained", {})
            best_inflight[config] = str(sustained.get("inflight", args.inflight.split(",")[0]))
            probes = ", ".join("%d: %.0f/s" % (p["inflight"], p["deliveries_per_s"])
                               for p in result.get("inflight_probe", []))
            print("warm-up %s, %s: %.1f bytes per receipt; in flight %s → %s kept" % (
                peer, shape, result["receipt_bytes"], probes, best_inflight[config]))
            if config == ("mrpc", "one-socket-each"):
                payload = round(result["receipt_bytes"])
                print("  the peers' payload: %d bytes, our event frame's size" % payload)
            sys.stdout.flush()

        for run in range(args.runs):
            order = configs[run % len(configs):] + configs[:run % len(configs)]
            for config in order:
                peer, shape = config
                if not bench.servers[peer].alive():
                    failures[config].append("run %d: the server is not running" % (run + 1))
                    continue
                result = bench.measure(peer, shape, best_inflight[config], args.seconds, args.rounds, payload,
                                       probe=False)
                if "error" in result:
                    print("run %d %s, %s: FAILED: %s" % (run + 1, peer, shape, result["error"]))
                    failures[config].append("run %d: %s" % (run + 1, result["error"]))
                    continue
                result["run"] = run + 1
                results[config].append(result)
                print("run %d %s" % (run + 1, json.dumps(result)))
                sys.stdout.flush()
    finally:
        for server in bench.servers.values():
            server.stop()
        shutil.rmtree(work, ignore_errors=True)

    print("load average at the end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    report(args, configs, results, failures)
    return 1 if any(failures.values()) else 0


def report(args, configs, results, failures) -> None:
    def rounds_of(config, key):
        return [r[key] for result in results[config] for r in result["rounds"]]

    def per_run(config, path):
        values = []
        for result in results[config]:
            value = result
            for key in path:
                value = value.get(key, {}) if isinstance(value, dict) else {}
            if isinstance(value, (int, float)):
                values.append(value)
        return values

    print()
    print("%d subscribers; median (min–max): latencies over every timed round of every run, the rest over runs"
          % args.subscribers)
    print("| peer, shape | send → last receipt (ms) | first → last (ms) | server CPU per action (ms) | "
          "sustained deliveries/s | server CPU per delivery (µs) | server's share of core 0 | in flight | "
          "live after (ms) | bytes per receipt |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for config in configs:
        peer, shape = config
        label = "%s, %s" % (peer, "one socket each" if shape == "one-socket-each" else
                            "%d connections" % args.connections)
        if not results[config]:
            print("| %s | failed: %s |" % (label, "; ".join(failures[config])[:300]))
            continue
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f |" % (
            label, spread(rounds_of(config, "send_to_last_ms")), spread(rounds_of(config, "first_to_last_ms")),
            spread(rounds_of(config, "server_cpu_ms")),
            spread(per_run(config, ["sustained", "deliveries_per_s"]), 0, grouped=True),
            spread(per_run(config, ["sustained", "server_us_per_delivery"]), 2),
            spread(per_run(config, ["sustained", "server_cpu_percent"]), 0, unit="%"),
            results[config][0].get("sustained", {}).get("inflight", "—"), spread(per_run(config, ["live_ms"])),
            statistics.median(per_run(config, ["receipt_bytes"]))))

    def med(config, key, kind="rounds"):
        if config not in results or not results[config]:
            return None
        values = rounds_of(config, key) if kind == "rounds" else per_run(config, key)
        return statistics.median(values) if values else None

    def shares(a, b):
        values = [med(config, ["sustained", "server_cpu_percent"], "runs") for config in (a, b)]
        if None in values:
            return ""
        return "; share of core 0 in the sustained phase %.0f%% vs %.0f%%" % tuple(values)

    def verdict(ok):
        return "met" if ok else "**not met**"

    one, gateway = ("mrpc", "one-socket-each"), ("mrpc", "gateway")
    print()
    print("| target | measured | |")
    print("|---|---|---|")
    floor_config, nats_gateway = ("floor", "one-socket-each"), ("nats", "gateway")
    ours, floor = med(one, "send_to_last_ms"), med(floor_config, "send_to_last_ms")
    if ours is not None and floor is not None:
        print("| one action to %d subscribers, one socket each: mutation sent → last received ≤ 1.1 × the floor's "
              "| %.1f ms vs the floor's %.1f ms: **%.2f×** (server CPU per action %.1f vs %.1f ms: %.2f×%s) | %s |" % (
                  args.subscribers, ours, floor, ours / floor, med(one, "server_cpu_ms"),
                  med(floor_config, "server_cpu_ms"), med(one, "server_cpu_ms") / med(floor_config, "server_cpu_ms"),
                  shares(one, floor_config), verdict(ours <= 1.1 * floor)))
    ours, nats = med(gateway, "first_to_last_ms"), med(nats_gateway, "first_to_last_ms")
    if ours is not None and nats is not None:
        print("| gateway shape, %d streams over %d connections: first → last ≤ 2 × NATS's | %.2f ms vs NATS's "
              "%.2f ms: **%.1f×** (server CPU per action %.1f vs %.1f ms%s) | %s |" % (
                  args.subscribers, args.connections, ours, nats, ours / max(nats, 1e-3),
                  med(gateway, "server_cpu_ms"), med(nats_gateway, "server_cpu_ms"),
                  shares(gateway, nats_gateway), verdict(ours <= 2 * nats)))
    for config, goal in ((one, 1e6), (gateway, 5e6)):
        value = med(config, ["sustained", "deliveries_per_s"], "runs")
        if value is None:
            continue
        peers = [(peer, med((peer, config[1]), ["sustained", "deliveries_per_s"], "runs"))
                 for peer in ("redis", "nats", "floor")]
        context = ", ".join("%s %s/s" % (peer, "{:,.0f}".format(v).replace(",", " ")) for peer, v in peers
                            if v is not None)
        print("| sustained deliveries with %d subscribers, %s ≥ %.0f M/s | **%s/s**%s | %s |" % (
            args.subscribers, "one socket each" if config == one else "gateway shape", goal / 1e6,
            "{:,.0f}".format(value).replace(",", " "), " (%s)" % context if context else "", verdict(value >= goal)))
    for config in (one, gateway):
        value = med(config, ["live_ms"], "runs")
        if value is not None:
            print("| %d Subscribe calls sent at once (%s): all live ≤ 1 s after their CALLs | **%.0f ms** | %s |" % (
                args.subscribers, "one socket each" if config == one else "%d connections" % args.connections,
                value, verdict(value <= 1000)))
    for config, messages in failures.items():
        for message in messages:
            print("FAILED %s, %s: %s" % (config[0], config[1], message))


if __name__ == "__main__":
    sys.exit(main())
