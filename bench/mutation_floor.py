#!/usr/bin/env python3
"""Server CPU per durable mutation against what SQLite alone must spend on the same writes.

Each round runs the wire bench's mutations (`moderation-bench wire --only mutations --pin`: a
release server pinned to core 0, 16 connections on core 1, fsync on) and then bench/sqlite-floor.c
on core 0: the same Join/Kick/Join/Ban/Unban cycle over the same 32 groups and slots, with the
server's own SQL statements on a database the server created (its schema, indexes and foreign
keys) and through the server's VFS (Sources/CSQLiteWAL), one transaction per batch and one
fdatasync of the WAL per commit — and nothing else: no sockets, no threads, no validation, no
reply, no event. The floor runs at the batch size the server reached in that round (its writes
per commit); then once more through SQLite's default VFS (two writes per WAL frame), which shows
what the server's VFS saves.

Two loads: 8 calls in flight per connection (the wire bench's 16 × 8, what the target
names) and 64 (16 × 64: larger batches, so a smaller share of each commit's fixed cost per
mutation). The rounds alternate ours and the floor, so each round's ratio compares the two on the
same minute of the machine. Reports the median (min–max) of each over the rounds.

Usage: bench/mutation_floor.py --build-dir .build/release [--rounds 5] [--seconds 5] [--depths 8,64]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from benchkit import ModerationServer, spread

HERE = os.path.dirname(os.path.abspath(__file__))
CONNECTIONS = 16  # moderation-bench wire's default


def fail(message: str):
    sys.exit("bench/mutation_floor.py: " + message)


def fresh_database(build: str, work: str) -> str:
    """A database the server created and closed: the schema of the release under test. Each floor
    run starts from a copy of it."""
    data = os.path.join(work, "template")
    try:
        server = ModerationServer(os.path.join(build, "moderation-server"), data, grpc_listen="off",
                                  log=subprocess.DEVNULL)
    except RuntimeError as error:
        fail(str(error))
    if server.stop(timeout=30) != 0:
        fail("the server did not shut down cleanly")
    database = os.path.join(data, "moderation.sqlite3")
    if not os.path.exists(database) or os.path.exists(database + "-wal"):
        fail("no database at %s, or its WAL left behind" % database)
    return database


def ours(build: str, seconds: float, depth: int) -> dict:
    output = subprocess.run(
        [os.path.join(build, "moderation-bench"), "wire", "--only", "mutations", "--pin", "--seconds", str(seconds),
         "--depth", str(depth), "--server", os.path.join(build, "moderation-server")],
        check=True, capture_output=True, text=True).stdout
    rate = re.search(r"(\d+) mutations/s over [\d.]+ s; server CPU [\d.]+% of one core, ([\d.]+) µs per mutation", output)
    batch = re.search(r"([\d.]+) writes per commit", output)
    if not rate or not batch:
        fail("unexpected output of moderation-bench wire:\n" + output)
    return {"per_second": int(rate.group(1)), "cpu_us": float(rate.group(2)), "batch": float(batch.group(1))}


def floor(program: str, template: str, work: str, seconds: float, batch: int, slots: int, vfs: tuple = ()) -> dict:
    """One run of the floor on a fresh copy of the server's empty database."""
    scratch = os.path.join(work, "floor")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    database = shutil.copy(template, os.path.join(scratch, "floor.sqlite3"))
    output = subprocess.run(
        ["taskset", "-c", "0", program, database, "--seconds", str(seconds), "--batch", str(batch),
         "--slots", str(slots)] + list(vfs),
        check=True, capture_output=True, text=True).stdout
    shutil.rmtree(scratch)
    result = json.loads(output)
    return {"per_second": result["mutations_per_second"], "cpu_us": result["cpu_us_per_mutation"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=".build/release")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--depths", default="8,64", help="calls in flight per connection, one load each")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    for tool in ("taskset", "gcc"):
        if shutil.which(tool) is None:
            fail("%s is missing (run tools/setup)" % tool)
    program = os.path.join(args.build_dir, "sqlite-floor")
    wal = os.path.join(os.path.dirname(HERE), "Sources", "CSQLiteWAL")
    subprocess.run(["gcc", "-O2", "-Wall", "-I", os.path.join(wal, "include"), "-o", program,
                    os.path.join(HERE, "sqlite-floor.c"), os.path.join(wal, "wal.c"), "-lsqlite3", "-lpthread"],
                   check=True)
    work = tempfile.mkdtemp(prefix="moderation-mutation-floor-")
    rows = {depth: [] for depth in depths}
    try:
        template = fresh_database(args.build_dir, work)
        for number in range(1, args.rounds + 1):
            for depth in depths:
                slots = CONNECTIONS * depth
                server = ours(args.build_dir, args.seconds, depth)
                batch = max(1, round(server["batch"]))
                at_batch = floor(program, template, work, args.seconds, batch, slots)
                plain = floor(program, template, work, args.seconds, batch, slots, ("--vfs", "default"))
                rows[depth].append((server, at_batch, plain))
                print("round %d, %d × %d: ours %.1f µs per mutation (%d/s, %.1f writes per commit); SQLite floor"
                      " at %d a commit %.1f µs (%d/s), through SQLite's default VFS %.1f µs (%d/s); ours / floor"
                      " %.2f×" % (
                          number, CONNECTIONS, depth, server["cpu_us"], server["per_second"], server["batch"], batch,
                          at_batch["cpu_us"], at_batch["per_second"], plain["cpu_us"], plain["per_second"],
                          server["cpu_us"] / at_batch["cpu_us"]), flush=True)
                time.sleep(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for depth in depths:
        table = rows[depth]
        print()
        print("%d × %d in flight: server CPU per durable mutation, median (min–max) of %d rounds:" % (
            CONNECTIONS, depth, len(table)))
        print("  ours:                           %s µs (%s writes per commit)" % (
            spread([r[0]["cpu_us"] for r in table]), spread([r[0]["batch"] for r in table])))
        print("  SQLite floor, ours' batch:      %s µs" % spread([r[1]["cpu_us"] for r in table]))
        print("  the same, SQLite's default VFS: %s µs" % spread([r[2]["cpu_us"] for r in table]))
        print("  ours − floor at ours' batch:    %s µs" % spread([r[0]["cpu_us"] - r[1]["cpu_us"] for r in table]))
        print("  ours / floor at ours' batch:    %s×" % spread([r[0]["cpu_us"] / r[1]["cpu_us"] for r in table]))
    print()
    print("target (at 16 × 8): ≤ 15 µs per mutation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
