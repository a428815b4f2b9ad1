#!/usr/bin/env python3
"""Server CPU per durable mutation against what SQLite alone must spend on the same writes.

Each round runs the wire bench's mutations (`moderation-bench wire --only mutations --pin`: a
release server pinned to core 0, 16 connections × 8 in flight on core 1, fsync on) and then
bench/sqlite-floor.c on core 0: the same Join/Kick/Join/Ban/Unban cycle over the same 32 groups
and 128 slots, with the server's own SQL statements on a database the server created (its
schema, indexes and foreign keys), one transaction per batch and one fdatasync of the WAL per
commit — and nothing else: no sockets, no threads, no validation, no reply, no event. The floor
runs at the batch size the server reached in that round (its writes per commit), and at 128,
every mutation in flight in one commit, the largest batch 128 in flight allows.

The rounds alternate ours and the floor, so the ratio of each round compares the two on the same
minute of the machine. Reports the median (min–max) of each over the rounds.

Usage: bench/mutation_floor.py --build-dir .build/release [--rounds 5] [--seconds 5]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(message: str):
    sys.exit("bench/mutation_floor.py: " + message)


def fresh_database(build: str, work: str, name: str) -> str:
    """A database the server created and closed: the schema of the release under test."""
    data = os.path.join(work, name)
    server = subprocess.Popen(
        [os.path.join(build, "moderation-server"), "--listen", "127.0.0.1:0", "--grpc-listen", "off",
         "--data-dir", data], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if "server started" in line:
            break
    else:
        fail("the server exited before it started: %s" % server.wait())
    server.terminate()
    server.stderr.read()
    if server.wait(timeout=30) != 0:
        fail("the server did not shut down cleanly")
    database = os.path.join(data, "moderation.sqlite3")
    if not os.path.exists(database):
        fail("no database at %s" % database)
    return database


def ours(build: str, seconds: float) -> dict:
    output = subprocess.run(
        [os.path.join(build, "moderation-bench"), "wire", "--only", "mutations", "--pin", "--seconds", str(seconds),
         "--server", os.path.join(build, "moderation-server")],
        check=True, capture_output=True, text=True).stdout
    rate = re.search(r"(\d+) mutations/s over [\d.]+ s; server CPU [\d.]+% of one core, ([\d.]+) µs per mutation", output)
    batch = re.search(r"([\d.]+) writes per commit", output)
    if not rate or not batch:
        fail("unexpected output of moderation-bench wire:\n" + output)
    return {"per_second": int(rate.group(1)), "cpu_us": float(rate.group(2)), "batch": float(batch.group(1))}


def floor(program: str, database: str, seconds: float, batch: int) -> dict:
    output = subprocess.run(
        ["taskset", "-c", "0", program, database, "--seconds", str(seconds), "--batch", str(batch)],
        check=True, capture_output=True, text=True).stdout
    result = json.loads(output)
    return {"per_second": result["mutations_per_second"], "cpu_us": result["cpu_us_per_mutation"]}


def spread(values: list) -> str:
    return "%.1f (%.1f–%.1f)" % (statistics.median(values), min(values), max(values))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=".build/release")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    for tool in ("taskset", "gcc"):
        if shutil.which(tool) is None:
            fail("%s is missing (run tools/setup)" % tool)
    program = os.path.join(args.build_dir, "sqlite-floor")
    subprocess.run(["gcc", "-O2", "-Wall", "-o", program, os.path.join(HERE, "sqlite-floor.c"), "-lsqlite3"], check=True)
    work = tempfile.mkdtemp(prefix="moderation-mutation-floor-")
    rows = []
    try:
        for number in range(1, args.rounds + 1):
            server = ours(args.build_dir, args.seconds)
            batch = max(1, round(server["batch"]))
            at_batch = floor(program, fresh_database(args.build_dir, work, "r%d-a" % number), args.seconds, batch)
            at_all = floor(program, fresh_database(args.build_dir, work, "r%d-b" % number), args.seconds, 128)
            rows.append((server, batch, at_batch, at_all))
            print("round %d: ours %.1f µs per mutation (%d/s, %.1f writes per commit); SQLite floor %.1f µs at %d a"
                  " commit (%d/s), %.1f µs at 128 (%d/s); ours / floor %.2f×" % (
                      number, server["cpu_us"], server["per_second"], server["batch"], at_batch["cpu_us"], batch,
                      at_batch["per_second"], at_all["cpu_us"], at_all["per_second"],
                      server["cpu_us"] / at_batch["cpu_us"]), flush=True)
            time.sleep(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print("server CPU per durable mutation, median (min–max) of %d rounds:" % len(rows))
    print("  ours:                          %s µs" % spread([r[0]["cpu_us"] for r in rows]))
    print("  SQLite floor, ours' batch:     %s µs" % spread([r[2]["cpu_us"] for r in rows]))
    print("  SQLite floor, 128 a commit:    %s µs" % spread([r[3]["cpu_us"] for r in rows]))
    print("  ours / floor at ours' batch:   %s×" % spread([r[0]["cpu_us"] / r[2]["cpu_us"] for r in rows]))
    print("  target (issue 16 §4):          ≤ 15 µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
