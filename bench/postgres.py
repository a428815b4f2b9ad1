#!/usr/bin/env python3
"""The PostgreSQL store's benchmark: the service on PostgreSQL against pgbench -N, in one run.

Everything runs on one throwaway PostgreSQL cluster (tools/pg-cluster, fsync on,
synchronous_commit=on: every figure is durable), started for the run and stopped at its end, even
on failure. Each round runs, one after the other (interleaved, so that a slow minute of the
machine hits every figure alike):

  1. pgbench -N (the built-in simple-update script: one UPDATE of pgbench_accounts, a SELECT, an
     INSERT into pgbench_history, each transaction committed alone), 16 clients, 2 threads,
     --seconds long, on its own database (scale 1: everything in memory, pgbench's best case);
  2. durable mutations through one moderation-server (--store postgres, a release build),
     `moderation-bench wire --only mutations`: 16 connections x 8 in flight, each slot cycling its
     own (group, user) through JoinGroup, KickMember, JoinGroup, BanMember, UnbanMember (one app,
     32 groups);
  3. the same load spread round-robin over 3 instances on the same database (--instances 3);
     then the same 3 instances with every connection on the first (`--route-by-app` with one
     app): the best a forwarding of an app's writes to one instance could do, its hop for free;
  4. the same as 2 with the connections spread over 8 apps (--apps 8): one app's writes all take
     the app's lock, whichever instance or writer runs them (gapless seqs); different apps' writes
     commit side by side;
  5. 8 apps over 3 instances, every instance serving every app;
  6. 8 apps over 3 instances, each app's connections all on one instance (--route-by-app), as a
     load balancer routing by API key would do;
  7. pgbench -S (the built-in select-only script: one primary-key SELECT per transaction),
     16 clients, --read-seconds long: what PostgreSQL alone serves of the simplest read here;
  8. reads (GetGroup and ListMembers(30) at once, 16 x 8 in flight) on SQLite;
  9. the same reads on PostgreSQL.

Each service run gets a fresh schema (`bench_<pid>_w`), so every round starts from the same data.
Around each measured window (`--snapshot-command`), this script records PostgreSQL's CPU time
(the postmaster, its live children, and the children it reaped: /proc/PID/stat utime, stime,
cutime, cstime) and its WAL counters (pg_stat_wal, with track_wal_io_timing on; pg_stat_database's
commits; backends publish those counters at most once a second, so over a 10 s window they are
within about 10 %), so the report says where the time goes. The report gives every round's raw output, then
medians with the spread (min–max) and the ratios docs/BENCHMARKS.md sets targets for.

Usage: bench/postgres.py --build-dir .build/release [--runs 5] [--seconds 10] [--read-seconds 5]
                         [--instances 3] [--apps 8]
"""

import argparse
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from benchkit import TICKS, proc_stat, spread

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAL_QUERY = (
    "SELECT wal_records, wal_fpi, wal_bytes, wal_write, wal_sync, wal_write_time, wal_sync_time,"
    " (SELECT sum(xact_commit) FROM pg_stat_database) FROM pg_stat_wal"
)
WAL_FIELDS = ["wal_records", "wal_fpi", "wal_bytes", "wal_write", "wal_sync", "wal_write_ms", "wal_sync_ms", "commits"]


def pg_bindir() -> str:
    try:
        bindir = subprocess.check_output(["pg_config", "--bindir"], text=True, stderr=subprocess.DEVNULL).strip()
        if os.access(os.path.join(bindir, "pgbench"), os.X_OK):
            return bindir
    except (OSError, subprocess.CalledProcessError):
        pass
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    for bindir in reversed(candidates):
        if os.access(os.path.join(bindir, "pgbench"), os.X_OK):
            return bindir
    sys.exit("bench/postgres.py: pgbench not found: install Debian's postgresql (tools/setup does)")


def psql(bindir: str, url: str, sql: str) -> str:
    return subprocess.check_output([os.path.join(bindir, "psql"), "-X", "-q", "-tA", "-F", " ", "-d", url, "-c", sql], text=True).strip()


def postgres_cpu(cluster: str) -> float:
    """CPU seconds of the whole PostgreSQL cluster: the postmaster, its live children, and the
    children it has reaped (backends of closed connections)."""
    with open(os.path.join(cluster, "data", "postmaster.pid")) as fh:
        postmaster = int(fh.readline())
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = proc_stat(int(entry))
        except OSError:
            continue
        pid, parent = int(entry), int(fields[1])
        if pid == postmaster:
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        elif parent == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


def snapshot(cluster: str, url: str) -> dict:
    values = psql(pg_bindir(), url, WAL_QUERY).split()
    record = {name: float(value) for name, value in zip(WAL_FIELDS, values)}
    record["cpu"] = postgres_cpu(cluster)
    record["time"] = time.monotonic()
    return record


def snapshot_command(argv: list) -> None:
    """`postgres.py snapshot FILE CLUSTER URL MOMENT PHASE`: the hook moderation-bench runs."""
    path, cluster, url, moment, phase = argv
    record = snapshot(cluster, url)
    record["moment"], record["phase"] = moment, phase
    with open(path, "a") as fh:
        fh.write(json.dumps(record) + "\n")


def delta(before: dict, after: dict) -> dict:
    return {key: after[key] - before[key] for key in before if isinstance(before[key], float)}


def parse_mutations(output: str) -> dict:
    rate = re.search(r"(\d+) mutations/s over ([\d.]+) s; server CPU ([\d.]+)% of one core, ([\d.]+) µs per mutation", output)
    commits = re.search(
        r"(\d+) commits, ([\d.]+) writes per commit; COMMIT ([\d.]+) ms each on average.*?(\d+) writes deferred, (\d+) batches retried",
        output,
    )
    lock = re.search(
        r"app lock waited ([\d.]+) ms a commit, (\d+) writes joined while waiting; read ahead ([\d.]+) ms a commit", output
    )
    if not rate or not commits or not lock:
        raise RuntimeError("unexpected output of moderation-bench wire:\n" + output)
    if "failures (first" in output:
        raise RuntimeError("mutations failed:\n" + output)
    return {
        "rate": float(rate.group(1)),
        "elapsed": float(rate.group(2)),
        "server_cpu_us": float(rate.group(4)),
        "server_cores": float(rate.group(3)) / 100,
        "commits": float(commits.group(1)),
        "writes_per_commit": float(commits.group(2)),
        "commit_ms": float(commits.group(3)),
        "deferred": float(commits.group(4)),
        "retried": float(commits.group(5)),
        "lock_wait_ms": float(lock.group(1)),
        "joined": float(lock.group(2)),
        "read_ahead_ms": float(lock.group(3)),
    }


def parse_reads(output: str) -> dict:
    found = re.search(r"together (\d+) reads/s; server CPU ([\d.]+)% of one core, ([\d.]+) µs per read", output)
    if not found or "failures" in output:
        raise RuntimeError("unexpected output of moderation-bench wire:\n" + output)
    return {"rate": float(found.group(1)), "server_cores": float(found.group(2)) / 100, "server_cpu_us": float(found.group(3))}


def window(path: str, phase: str) -> dict:
    """PostgreSQL's CPU and WAL counters over a phase, from the hook's records."""
    with open(path) as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    before = [r for r in records if r["phase"] == phase and r["moment"] == "before"]
    after = [r for r in records if r["phase"] == phase and r["moment"] == "after"]
    if not before or not after:
        raise RuntimeError("no snapshots of phase %s" % phase)
    return delta(before[-1], after[-1])


def per_op(stats: dict, operations: float) -> dict:
    seconds = stats["time"]
    return {
        "pg_cpu_us": stats["cpu"] / operations * 1e6,
        "pg_cores": stats["cpu"] / seconds,
        "wal_bytes": stats["wal_bytes"] / operations,
        "wal_syncs_per_s": stats["wal_sync"] / seconds,
        "ops_per_sync": operations / max(stats["wal_sync"], 1),
        "sync_ms": stats["wal_sync_ms"] / max(stats["wal_sync"], 1),
        "pg_commits_per_s": stats["commits"] / seconds,
    }


def describe(stats: dict) -> str:
    return (
        "  PostgreSQL: %.1f µs CPU per operation (%.2f cores); %.0f WAL bytes per operation; "
        "%.0f WAL flushes/s (%.1f operations per flush, %.2f ms each); %.0f commits/s (pg_stat_database)"
        % (stats["pg_cpu_us"], stats["pg_cores"], stats["wal_bytes"], stats["wal_syncs_per_s"], stats["ops_per_sync"], stats["sync_ms"], stats["pg_commits_per_s"])
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "snapshot":
        snapshot_command(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=".build/release")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=10, help="each pgbench and mutation run")
    parser.add_argument("--read-seconds", type=int, default=5)
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--apps", type=int, default=8)
    arguments = parser.parse_args()
    bench = os.path.join(arguments.build_dir, "moderation-bench")
    server = os.path.join(arguments.build_dir, "moderation-server")
    for path in (bench, server):
        if not os.access(path, os.X_OK):
            sys.exit("bench/postgres.py: %s is missing (swift build -c release)" % path)
    bindir = pg_bindir()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench/postgres.py: terminated"))

    cluster = tempfile.mkdtemp(prefix="moderation-bench-pg-")
    environment = dict(os.environ, MODERATION_PG_FSYNC="on")
    pg_cluster = os.path.join(ROOT, "tools", "pg-cluster")
    try:
        url = subprocess.check_output([pg_cluster, "start", cluster], text=True, env=environment).strip()
        psql(bindir, url, "ALTER SYSTEM SET track_wal_io_timing = on")
        psql(bindir, url, "SELECT pg_reload_conf()")
        psql(bindir, url, "CREATE DATABASE pgbench")
        pgbench_url = url.rsplit("/", 1)[0] + "/pgbench"
        settings = psql(
            bindir,
            url,
            "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings WHERE name IN"
            " ('fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay', 'full_page_writes',"
            " 'shared_buffers', 'wal_level', 'track_wal_io_timing', 'server_version')",
        )
        print("# PostgreSQL (tools/pg-cluster, a throwaway cluster): %s" % settings)
        subprocess.run([os.path.join(bindir, "pgbench"), "-i", "-s", "1", "-q", pgbench_url], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        hook_file = os.path.join(tempfile.gettempdir(), "moderation-bench-pg-%d.jsonl" % os.getpid())
        hook = "python3 %s snapshot %s %s %s" % (os.path.abspath(__file__), hook_file, cluster, url)
        services = [
            ("one", 1, 1, []),
            ("many", arguments.instances, 1, []),
            ("one_home", arguments.instances, 1, ["--route-by-app"]),
            ("one_apps", 1, arguments.apps, []),
            ("many_apps", arguments.instances, arguments.apps, []),
            ("routed_apps", arguments.instances, arguments.apps, ["--route-by-app"]),
        ]
        results = {key: [] for key in ["pgbench", "pgbench_select", "sqlite_reads", "pg_reads"] + [s[0] for s in services]}
        for round_number in range(1, arguments.runs + 1):
            print("\n## round %d of %d (load average %s)" % (round_number, arguments.runs, " ".join(open("/proc/loadavg").read().split()[:3])), flush=True)

            # pgbench -N
            before = snapshot(cluster, url)
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            command = [os.path.join(bindir, "pgbench"), "-N", "-n", "-c", "16", "-j", "2", "-T", str(arguments.seconds), pgbench_url]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            after = snapshot(cluster, url)
            usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
            found = re.search(r"tps = ([\d.]+) \(without initial connection time\)", output)
            transactions = re.search(r"number of transactions actually processed: (\d+)", output)
            if not found or not transactions:
                raise RuntimeError("unexpected output of pgbench:\n" + output)
            tps, count = float(found.group(1)), float(transactions.group(1))
            stats = per_op(delta(before, after), count)
            client = (usage_after.ru_utime + usage_after.ru_stime - usage.ru_utime - usage.ru_stime) / count * 1e6
            results["pgbench"].append(dict(stats, rate=tps, client_cpu_us=client))
            print("pgbench -N -c 16 -j 2 -T %d (scale 1): %.0f transactions/s; pgbench's own CPU %.1f µs per transaction" % (arguments.seconds, tps, client))
            print(describe(stats), flush=True)

            # the service: one instance, then several
            for key, instances, apps, extra in services:
                open(hook_file, "w").close()
                command = [bench, "wire", "--only", "mutations", "--seconds", str(arguments.seconds), "--server", server, "--postgres-url", url, "--snapshot-command", hook]
                command += ["--instances", str(instances), "--apps", str(apps)] + extra
                output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
                print(output.strip())
                parsed = parse_mutations(output)
                stats = per_op(window(hook_file, "mutations"), parsed["rate"] * parsed["elapsed"])
                results[key].append(dict(parsed, **stats))
                print(describe(stats), flush=True)

            # pgbench -S: PostgreSQL's own reads
            before = snapshot(cluster, url)
            command = [os.path.join(bindir, "pgbench"), "-S", "-n", "-c", "16", "-j", "2", "-T", str(arguments.read_seconds), pgbench_url]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            after = snapshot(cluster, url)
            found = re.search(r"tps = ([\d.]+) \(without initial connection time\)", output)
            transactions = re.search(r"number of transactions actually processed: (\d+)", output)
            if not found or not transactions:
                raise RuntimeError("unexpected output of pgbench:\n" + output)
            stats = per_op(delta(before, after), float(transactions.group(1)))
            results["pgbench_select"].append(dict(stats, rate=float(found.group(1))))
            print("pgbench -S -c 16 -j 2 -T %d: %.0f transactions/s" % (arguments.read_seconds, float(found.group(1))))
            print(describe(stats), flush=True)

            # reads, SQLite then PostgreSQL
            for key, extra in (("sqlite_reads", []), ("pg_reads", ["--postgres-url", url, "--snapshot-command", hook])):
                open(hook_file, "w").close()
                command = [bench, "wire", "--only", "reads", "--seconds", str(arguments.read_seconds), "--server", server] + extra
                output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
                print(("on SQLite: " if not extra else "on PostgreSQL: ") + output.strip())
                parsed = parse_reads(output)
                if extra:
                    stats = per_op(window(hook_file, "reads"), parsed["rate"] * arguments.read_seconds)
                    parsed.update(stats)
                    print(describe(stats))
                results[key].append(parsed)
                sys.stdout.flush()
        os.unlink(hook_file)
        report(results, arguments)
    finally:
        subprocess.run([pg_cluster, "stop", cluster], check=False)
        shutil.rmtree(cluster, ignore_errors=True)


def report(results: dict, arguments: argparse.Namespace) -> None:
    runs = len(results["pgbench"])

    def column(key: str, field: str) -> list:
        return [r[field] for r in results[key]]

    def spreads(key: str, *fields: tuple) -> tuple:
        """The spread of each (field, digits) over one scenario's rounds, in order: a % format's values."""
        return tuple(spread(column(key, field), digits) for field, digits in fields)

    print("\n## summary: median (min–max) of %d rounds" % runs)
    print("pgbench -N, 16 clients:                     %s transactions/s" % spread(column("pgbench", "rate"), 0))
    print("service on PostgreSQL, 1 instance, 16 x 8:  %s durable mutations/s" % spread(column("one", "rate"), 0))
    print("service on PostgreSQL, %d instances:         %s durable mutations/s (total)" % (arguments.instances, spread(column("many", "rate"), 0)))
    print("  the same, every connection on one of them: %s durable mutations/s (total)" % spread(column("one_home", "rate"), 0))
    print("  the same over %d apps, 1 instance:          %s durable mutations/s" % (arguments.apps, spread(column("one_apps", "rate"), 0)))
    print("  the same over %d apps, %d instances:        %s durable mutations/s (total)" % (arguments.apps, arguments.instances, spread(column("many_apps", "rate"), 0)))
    print("  the same, each app on one instance:        %s durable mutations/s (total)" % spread(column("routed_apps", "rate"), 0))

    def ratio(label: str, top: str, bottom: str, target: str = "") -> None:
        values = [a["rate"] / b["rate"] for a, b in zip(results[top], results[bottom])]
        print("  %-40s %s%s" % (label + ", per round:", spread(values, 2), "  (target >= %s)" % target if target else ""))

    ratio("1 instance / pgbench -N", "one", "pgbench", "2.00")
    ratio("%d apps, 1 instance / pgbench -N" % arguments.apps, "one_apps", "pgbench", "2.00")
    ratio("%d apps, %d instances / pgbench -N" % (arguments.apps, arguments.instances), "many_apps", "pgbench", "2.00")
    ratio("%d instances / 1 instance" % arguments.instances, "many", "one", "1.00")
    ratio("%d instances, one home / 1 instance" % arguments.instances, "one_home", "one")
    ratio("%d apps: %d instances / 1 instance" % (arguments.apps, arguments.instances), "many_apps", "one_apps", "1.00")
    ratio("%d apps routed by app: %d instances / 1" % (arguments.apps, arguments.instances), "routed_apps", "one_apps", "1.00")
    print("reads on SQLite:                            %s reads/s" % spread(column("sqlite_reads", "rate"), 0))
    print("reads on PostgreSQL:                        %s reads/s" % spread(column("pg_reads", "rate"), 0))
    ratio("PostgreSQL / SQLite", "pg_reads", "sqlite_reads", "0.50")
    print("pgbench -S, 16 clients:                     %s transactions/s (PostgreSQL alone, one SELECT each)" % spread(column("pgbench_select", "rate"), 0))
    print("\nwhere the time goes (medians):")
    labels = [
        ("pgbench", "pgbench -N"),
        ("one", "1 instance"),
        ("many", "%d instances" % arguments.instances),
        ("one_home", "%d instances, one home" % arguments.instances),
        ("one_apps", "%d apps, 1 instance" % arguments.apps),
        ("many_apps", "%d apps, %d instances" % (arguments.apps, arguments.instances)),
        ("routed_apps", "%d apps, routed by app" % arguments.apps),
    ]
    for key, label in labels:
        rows = results[key]
        line = "  %-22s PostgreSQL %s µs CPU/op (%s cores); WAL %s bytes/op; %s WAL flushes/s, %s ops per flush, %s ms per flush" % (
            (label,) + spreads(key, ("pg_cpu_us", 1), ("pg_cores", 2), ("wal_bytes", 0), ("wal_syncs_per_s", 0),
                               ("ops_per_sync", 1), ("sync_ms", 2)))
        if key == "pgbench":
            line += "; pgbench %s µs CPU/op" % spread(column(key, "client_cpu_us"), 1)
        else:
            line += ("; server %s µs CPU/op (%s cores); %s writes per commit, COMMIT %s ms; %s writes deferred; "
                     "app lock waited %s ms, read ahead %s ms a commit") % spreads(
                key, ("server_cpu_us", 1), ("server_cores", 2), ("writes_per_commit", 1), ("commit_ms", 2),
                ("deferred", 0), ("lock_wait_ms", 2), ("read_ahead_ms", 2))
        print(line)
    print(
        "  reads on PostgreSQL: server %s µs CPU/read, PostgreSQL %s µs CPU/read (%s cores), %s commits/s;"
        " on SQLite: server %s µs CPU/read; pgbench -S: PostgreSQL %s µs CPU/transaction (%s cores)"
        % (
            spread(column("pg_reads", "server_cpu_us"), 1),
            spread(column("pg_reads", "pg_cpu_us"), 1),
            spread(column("pg_reads", "pg_cores"), 2),
            spread(column("pg_reads", "pg_commits_per_s"), 0),
            spread(column("sqlite_reads", "server_cpu_us"), 1),
            spread(column("pgbench_select", "pg_cpu_us"), 1),
            spread(column("pgbench_select", "pg_cores"), 2),
        )
    )


if __name__ == "__main__":
    main()
