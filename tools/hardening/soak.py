#!/usr/bin/env python3
"""Soak: a bounded-time mixed load against one real moderation-server process, its memory
sampled every second. See docs/HARDENING.md ("Soak") for the workload and the criterion.

    soak.py --server BINARY [--minutes N] [--out DIR] [--max-slope KIB_PER_MIN] [--user-pool N]
            [--server-arg ARG]...

Exits 0 when the run passed: no unexpected error (only the provoked ones and the domain refusals
that random moderation calls meet), every misbehaving peer handled (GOAWAY or close), the server
alive to the end and exiting 0 on SIGTERM, anonymous RSS and the malloc heap in use flat after
warm-up (measured at rest: the load pauses every --rest-every seconds for --rest-seconds; the
least-squares slope of those samples after the first third of the run must stay under
--max-slope KiB/min), and no socket, thread, connection or subscription left once the load
stopped. The data set is steady by default (--user-pool), so memory must be too.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
import traceback
from typing import Callable, Dict, List, Optional

import rawwire
import serverproc
from serverproc import API_KEY, ObservedServer, least_squares_slope

import mrpc_client
from mrpc_client import Compression, RpcError
from mrpc_client import moderation_v1 as m
from mrpc_client import mrpc_diagnostics_v1 as diagnostics
from mrpc_client import mrpc_health_v1 as health

#: Refusals that random moderation calls on a shared roster legitimately meet: the rules said no.
DOMAIN_REFUSALS = {
    "ERR_NOT_A_MEMBER", "ERR_ALREADY_JOINED", "ERR_ALREADY_BANNED", "ERR_USER_NOT_BANNED",
    "ERR_BANNED_GROUPMEMBER", "ERR_CANNOT_KICK_OWNER", "ERR_CANNOT_BAN_OWNER", "ERR_CANNOT_CHANGE_OWNER_SCOPE",
    "ERR_OWNER_CANNOT_LEAVE", "ERR_SAME_SCOPE", "ERR_GROUP_NOT_JOINED", "ERR_PERMISSION_DENIED",
    "ERR_GROUP_NO_SELF_ACTION", "ERR_GROUP_NOT_FOUND",
    "ERR_UID_ALREADY_EXISTS",  # only with --user-pool, once a caller's pool of new uids is used up
}
USERS = 80
GROUPS = 10
CALL_TIMEOUT = 15.0
DEFLATE, PLAIN = Compression.Deflate, Compression.NoCompression


class Stubs:
    """One channel and the stubs a load thread calls through."""

    def __init__(self, address: str, client_name: str) -> None:
        self.channel = mrpc_client.insecure_channel(address, api_key=API_KEY, client_name=client_name)
        self.moderation = m.ModerationStub(self.channel)
        self.diagnostics = diagnostics.DiagnosticsStub(self.channel)
        self.health = health.HealthStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Stubs":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Stats:
    """Counters shared by the load threads; `unexpected` fails the run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Dict[str, int] = collections.Counter()
        self.unexpected: List[str] = []

    def count(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[key] += n

    def fail(self, what: str) -> None:
        with self.lock:
            self.counts["unexpected"] += 1
            if len(self.unexpected) < 50:
                self.unexpected.append(what)


class Soak:
    def __init__(self, address: str, seconds: float, stats: Stats, seed: int) -> None:
        self.address = address
        self.stop_at = time.monotonic() + seconds
        self.stats = stats
        self.seed = seed
        self.users = ["soak-u%03d" % i for i in range(USERS)]
        self.groups = ["soak-g%02d" % i for i in range(GROUPS)]
        self.owners = {guid: self.users[i] for i, guid in enumerate(self.groups)}
        self.stop = threading.Event()
        #: New uids per caller (0: unbounded, every CreateUser makes a new user).
        self.user_pool = 0
        #: Cleared for a rest: every load thread finishes what it is doing and waits, so the
        #: server's transient buffers go and what it still holds can be measured.
        self.resume = threading.Event()
        self.resume.set()
        #: Subscribers' clients, closed when the load stops: a subscriber waiting for an event
        #: that no longer comes is woken by its call failing CANCELLED.
        self.subscriber_clients: List[Stubs] = []
        self.clients_lock = threading.Lock()
        #: Load threads waiting out a rest (subscribers excepted: their streams stay open).
        self.parked = 0

    def running(self) -> bool:
        """True while the load goes on; during a rest, parks the thread until it is over."""
        if not self.resume.is_set() and not self.stop.is_set():
            with self.clients_lock:
                self.parked += 1
            while not self.resume.is_set() and not self.stop.is_set():
                self.resume.wait(0.2)
            with self.clients_lock:
                self.parked -= 1
        return not self.stop.is_set() and time.monotonic() < self.stop_at

    def parked_threads(self) -> int:
        with self.clients_lock:
            return self.parked

    def resting(self) -> bool:
        return not self.resume.is_set()

    # MARK: setup

    def setup(self) -> None:
        with Stubs(self.address, client_name="soak-setup") as client:
            for uid in self.users:
                client.moderation.CreateUser(m.CreateUserRequest(uid=uid, name=uid.upper()), timeout=CALL_TIMEOUT)
            for guid, owner in self.owners.items():
                client.moderation.CreateGroup(m.CreateGroupRequest(
                    guid=guid, name="Soak " + guid, type=m.GROUP_TYPE_PUBLIC, owner=owner,
                    members=[m.MemberToAdd(uid=u) for u in self.users[GROUPS:GROUPS + 20]]), timeout=CALL_TIMEOUT)

    # MARK: mixed callers

    def caller(self, index: int) -> None:
        rng = random.Random(self.seed * 100 + index)
        client = Stubs(self.address, client_name="soak-caller-%d" % index)
        temp_groups: List[str] = []
        serial = 0
        try:
            while self.running():
                serial += 1
                op = rng.choice(self.operations)
                name = op.__name__
                try:
                    op(self, client, rng, index, serial, temp_groups)
                    self.stats.count("ok " + name)
                except RpcError as error:
                    if not error.local and error.error_code in DOMAIN_REFUSALS:
                        self.stats.count("refused " + error.error_code)
                    else:
                        self.stats.fail("%s: %s" % (name, error))
        finally:
            client.close()

    def member(self, rng) -> dict:
        """A user and a group of the soak's, drawn at random (the group first), as the calls on one
        member take them."""
        return {"guid": rng.choice(self.groups), "uid": rng.choice(self.users)}

    def op_create_user(self, client, rng, index, serial, temps):
        # With --user-pool N each caller creates at most N users: the data set stops growing
        # (the API deletes no users), so memory at rest can be judged without the caches filling.
        number = serial % self.user_pool if self.user_pool else serial
        client.moderation.CreateUser(m.CreateUserRequest(uid="soak-n%d-%d-%d" % (self.seed, index, number),
                                                         name="new", metadata={"k": "v"}), timeout=CALL_TIMEOUT)

    def op_get_user(self, client, rng, index, serial, temps):
        client.moderation.GetUser(m.GetUserRequest(uid=rng.choice(self.users)), timeout=CALL_TIMEOUT)

    def op_update_user(self, client, rng, index, serial, temps):
        client.moderation.UpdateUser(m.UpdateUserRequest(uid=rng.choice(self.users), name="name %d" % serial,
                                                         update_mask=["name"]), timeout=CALL_TIMEOUT)

    def op_temp_group(self, client, rng, index, serial, temps):
        if len(temps) >= 3 or (temps and rng.random() < 0.5):
            guid = temps.pop(0)
            client.moderation.DeleteGroup(m.DeleteGroupRequest(guid=guid), timeout=CALL_TIMEOUT)
        else:
            guid = "soak-t%d-%d-%d" % (self.seed, index, serial)
            client.moderation.CreateGroup(m.CreateGroupRequest(
                guid=guid, name="temp", type=m.GROUP_TYPE_PUBLIC, owner=rng.choice(self.users),
                tags=["soak"]), timeout=CALL_TIMEOUT)
            temps.append(guid)

    def op_get_group(self, client, rng, index, serial, temps):
        client.moderation.GetGroup(m.GetGroupRequest(guid=rng.choice(self.groups)), on_behalf_of=rng.choice(self.users),
                                   timeout=CALL_TIMEOUT)

    def op_update_group(self, client, rng, index, serial, temps):
        client.moderation.UpdateGroup(m.UpdateGroupRequest(guid=rng.choice(self.groups), description="d%d" % serial,
                                                           update_mask=["description"]), timeout=CALL_TIMEOUT)

    def op_list_groups(self, client, rng, index, serial, temps):
        client.moderation.ListGroups(m.ListGroupsRequest(limit=20, search=rng.choice(["", "soak", "g0"])),
                                     on_behalf_of=rng.choice(self.users), timeout=CALL_TIMEOUT)

    def op_join(self, client, rng, index, serial, temps):
        client.moderation.JoinGroup(m.JoinGroupRequest(guid=rng.choice(self.groups)), on_behalf_of=rng.choice(self.users),
                                    timeout=CALL_TIMEOUT)

    def op_leave(self, client, rng, index, serial, temps):
        client.moderation.LeaveGroup(m.LeaveGroupRequest(guid=rng.choice(self.groups)), on_behalf_of=rng.choice(self.users),
                                     timeout=CALL_TIMEOUT)

    def op_list_members(self, client, rng, index, serial, temps):
        client.moderation.ListMembers(m.ListMembersRequest(guid=rng.choice(self.groups), limit=50), timeout=CALL_TIMEOUT)

    def op_add_members(self, client, rng, index, serial, temps):
        uids = rng.sample(self.users, 3)
        client.moderation.AddMembers(m.AddMembersRequest(guid=rng.choice(self.groups),
                                                         members=[m.MemberToAdd(uid=u) for u in uids]), timeout=CALL_TIMEOUT)

    def op_kick(self, client, rng, index, serial, temps):
        client.moderation.KickMember(m.KickMemberRequest(**self.member(rng)),
                                     timeout=CALL_TIMEOUT)

    def op_ban(self, client, rng, index, serial, temps):
        client.moderation.BanMember(m.BanMemberRequest(**self.member(rng),
                                                       reason="soak", duration_ms=rng.choice([0, 2000, 60000])),
                                    timeout=CALL_TIMEOUT)

    def op_unban(self, client, rng, index, serial, temps):
        client.moderation.UnbanMember(m.UnbanMemberRequest(**self.member(rng)),
                                      timeout=CALL_TIMEOUT)

    def op_list_banned(self, client, rng, index, serial, temps):
        client.moderation.ListBannedMembers(m.ListBannedMembersRequest(guid=rng.choice(self.groups), limit=50),
                                            timeout=CALL_TIMEOUT)

    def op_scope(self, client, rng, index, serial, temps):
        client.moderation.ChangeMemberScope(m.ChangeMemberScopeRequest(
            **self.member(rng),
            scope=rng.choice([m.SCOPE_PARTICIPANT, m.SCOPE_MODERATOR])), timeout=CALL_TIMEOUT)

    def op_bulk(self, client, rng, index, serial, temps):
        guid, uids = rng.choice(self.groups), rng.sample(self.users[GROUPS:], 4)
        kind = rng.randrange(3)
        if kind == 0:
            client.moderation.BulkKickMembers(m.BulkKickMembersRequest(guid=guid, uids=uids), timeout=CALL_TIMEOUT)
        elif kind == 1:
            client.moderation.BulkBanMembers(m.BulkBanMembersRequest(guid=guid, uids=uids), timeout=CALL_TIMEOUT)
        else:
            client.moderation.BulkUnbanMembers(m.BulkUnbanMembersRequest(guid=guid, uids=uids), timeout=CALL_TIMEOUT)

    def op_member_state(self, client, rng, index, serial, temps):
        client.moderation.GetMemberState(m.GetMemberStateRequest(**self.member(rng)),
                                         timeout=CALL_TIMEOUT)

    def op_actions(self, client, rng, index, serial, temps):
        client.moderation.ListGroupActions(m.ListGroupActionsRequest(guid=rng.choice(self.groups), limit=50),
                                           timeout=CALL_TIMEOUT)

    def op_echo(self, client, rng, index, serial, temps):
        payload = os.urandom(rng.choice([0, 16, 2048])) + b"x" * rng.choice([0, 4096])
        reply = client.diagnostics.Echo(diagnostics.EchoRequest(payload=payload), compression=DEFLATE if rng.random() < 0.5 else PLAIN,
                                        timeout=CALL_TIMEOUT)
        if reply.payload != payload:
            raise AssertionError("echo returned other bytes")

    def op_health(self, client, rng, index, serial, temps):
        client.health.Check(health.HealthCheckRequest(), timeout=CALL_TIMEOUT)

    operations = [op_create_user, op_get_user, op_update_user, op_temp_group, op_get_group, op_update_group,
                  op_list_groups, op_join, op_join, op_leave, op_list_members, op_add_members, op_kick, op_ban,
                  op_unban, op_list_banned, op_scope, op_bulk, op_member_state, op_actions, op_echo, op_health]

    # MARK: subscribers

    def subscriber(self, index: int) -> None:
        """Subscribes (whole app or one user, compressed or not) for a few seconds, closes, then
        resumes after the last seq it saw; seqs must increase within each subscription."""
        rng = random.Random(self.seed * 1000 + index)
        client = Stubs(self.address, client_name="soak-subscriber-%d" % index)
        with self.clients_lock:
            self.subscriber_clients.append(client)
        last_seq: Optional[int] = None
        try:
            while self.running():
                compress = index % 2 == 0
                if index % 3 == 2:
                    uid = rng.choice(self.users)
                    request = m.SubscribeRequest(user_uid=uid)
                    behalf = uid
                    last_seq = None
                else:
                    request = m.SubscribeRequest(whole_app=True)
                    behalf = ""
                    if last_seq is not None:
                        request.after_seq = last_seq
                until = time.monotonic() + rng.uniform(2, 8)
                previous = last_seq or 0
                try:
                    with client.moderation.Subscribe(request, on_behalf_of=behalf,
                                                     compression=DEFLATE if compress else PLAIN) as events:
                        self.stats.count("subscriptions")
                        for event in events:
                            seq = event.action.seq
                            if seq <= previous:
                                self.stats.fail("subscriber %d: seq %d after %d" % (index, seq, previous))
                            previous = seq
                            self.stats.count("events")
                            if time.monotonic() > until or not self.running():
                                break
                    last_seq = previous if previous > 0 else last_seq
                except RpcError as error:
                    if not self.running():
                        break  # closed by stop_subscribers
                    self.stats.fail("subscriber %d: %s" % (index, error))
                    time.sleep(0.5)
        finally:
            client.close()

    def stop_subscribers(self) -> None:
        with self.clients_lock:
            for client in self.subscriber_clients:
                client.close()

    # MARK: reconnects and bad keys

    def reconnector(self, index: int) -> None:
        rng = random.Random(self.seed * 10000 + index)
        while self.running():
            try:
                with Stubs(self.address, client_name="soak-reconnect") as client:
                    client.diagnostics.Echo(diagnostics.EchoRequest(payload=b"hi"), timeout=CALL_TIMEOUT)
                    if rng.random() < 0.3:
                        # A subscription still open when the connection goes away.
                        client.moderation.Subscribe(m.SubscribeRequest(whole_app=True), compression=DEFLATE)
                self.stats.count("reconnects")
            except RpcError as error:
                self.stats.fail("reconnect: %s" % error)
            try:
                with mrpc_client.insecure_channel(self.address, api_key="hardening:not-the-right-key-000",
                                                  client_name="soak-bad-key") as channel:
                    channel.hello_ack
                self.stats.fail("a wrong API key was accepted")
            except RpcError as error:
                if error.error_code == "ERR_UNAUTHENTICATED":
                    self.stats.count("bad keys refused")
                else:
                    self.stats.fail("bad key: %s" % error)
            time.sleep(rng.uniform(0.05, 0.2))

    # MARK: misbehaving peers

    def slow_reader(self, index: int) -> None:
        """Subscribes to the whole app (half compressed) and reads 512 bytes a second: the server
        must bound what it queues (it ends the stream as a slow consumer, or stops reading)."""
        while self.running():
            try:
                sock = rawwire.connect(self.address)
                compressed = index % 2 == 0
                body = m.SubscribeRequest(whole_app=True, after_seq=0).SerializeToString()
                sock.sendall(rawwire.PREFACE + rawwire.hello(API_KEY, compressed)
                             + rawwire.call(1, "/moderation.v1.Moderation/Subscribe", body, accept_deflate=compressed))
                until = time.monotonic() + 15
                while time.monotonic() < until and not self.resting() and self.running():
                    sock.settimeout(5)
                    if not sock.recv(512):
                        break
                    time.sleep(1)
                sock.close()
                self.stats.count("slow readers")
            except OSError as error:
                self.stats.fail("slow reader: %r" % error)
                time.sleep(1)

    def non_reader(self) -> None:
        """Pipelines 64 KiB echoes and never reads: the server must stop reading it (backpressure)
        instead of queueing replies without bound; then it goes away."""
        payload = os.urandom(64 * 1024)
        while self.running():
            try:
                sock = rawwire.connect(self.address)
                sock.sendall(rawwire.PREFACE + rawwire.hello(API_KEY))
                sock.settimeout(0.5)
                sent = 0
                for stream_id in range(1, 2 * 400, 2):
                    try:
                        sock.sendall(rawwire.echo(stream_id, payload))
                        sent += 1
                    except socket.timeout:
                        break  # the server stopped reading: backpressure works
                time.sleep(3)
                sock.close()
                self.stats.count("non-readers")
                self.stats.count("non-reader echoes sent", sent)
            except OSError as error:
                self.stats.fail("non-reader: %r" % error)
                time.sleep(1)

    def bad_frames(self) -> None:
        """Peers that break the protocol: each must get GOAWAY (or at least a close) within 5 s."""
        opening = rawwire.PREFACE + rawwire.hello(API_KEY)
        cases: List[tuple] = [
            ("bad preface", b"HTTP/1.1 GET /\r\n\r\n" + bytes(20)),
            ("call before hello", rawwire.PREFACE + rawwire.echo(1, b"x")),
            ("garbage hello", rawwire.PREFACE + rawwire.raw_frame(1, 0, b"\x0a\x10\x41")),
            ("bad key", rawwire.PREFACE + rawwire.hello("hardening:wrong-key-wrong-key")),
            ("unknown frame type", opening + rawwire.raw_frame(42, 1, b"")),
            ("reserved bits", opening + rawwire.raw_frame(8, 0, bytes(8), reserved=1)),
            ("frame too large", opening + rawwire.raw_frame(3, 1, b"", length=512 * 1024 * 1024)),
            ("call on stream 0", opening + rawwire.echo(0, b"x")),
            ("stream ids going back", opening + rawwire.echo(5, b"a") + rawwire.echo(3, b"b")),
            ("short ping", opening + rawwire.raw_frame(8, 0, b"1234")),
            ("compressed ping", opening + rawwire.raw_frame(8, 0, bytes(8), flags=1)),
            ("header length past the frame", opening + rawwire.raw_frame(3, 1, struct.pack(">I", 1000) + b"xx")),
        ]
        rng = random.Random(self.seed)
        while self.running():
            name, data = rng.choice(cases)
            if rng.random() < 0.2:
                name, data = "random bytes after hello", opening + os.urandom(rng.randrange(1, 300))
            try:
                sock = rawwire.connect(self.address)
                sock.sendall(data)
                rawwire.read_until_goaway_or_close(sock, time.monotonic() + 5)
                sock.close()
                self.stats.count("bad frames answered")
            except TimeoutError:
                if name.startswith("random"):
                    self.stats.count("random bytes that form a valid incomplete frame")
                else:
                    self.stats.fail("bad frames (%s): no GOAWAY or close within 5 s" % name)
            except OSError as error:
                self.stats.fail("bad frames (%s): %r" % (name, error))
            # A compressed CALL whose body is not deflate data: refused per call, connection kept.
            try:
                sock = rawwire.connect(self.address)
                sock.sendall(opening + rawwire.call(1, "/mrpc.diagnostics.v1.Diagnostics/Echo", b"\xff\xfe\xfd",
                                                    compressed=True) + rawwire.echo(3, b"after"))
                replies = 0
                deadline = time.monotonic() + 5
                while replies < 2:
                    sock.settimeout(max(deadline - time.monotonic(), 0.01))
                    frame_type, _, _ = rawwire.read_frame(sock)
                    replies += frame_type == 4
                sock.close()
                self.stats.count("corrupt bodies refused")
            except (OSError, EOFError) as error:
                self.stats.fail("corrupt compressed body: %r" % error)
            time.sleep(0.05)


def sample(server: ObservedServer, data_dir: str, t: float) -> Dict[str, float]:
    """One second's figures: memory (KiB), descriptors, threads, and the store's size on disk."""
    row: Dict[str, float] = {"seconds": round(t, 1)}
    row.update(server.memory_kib())
    row["open_files"] = server.open_files()
    row["open_sockets"] = server.open_sockets()
    row["threads"] = server.threads()
    row["store_kib"] = sum(os.path.getsize(os.path.join(data_dir, name)) for name in os.listdir(data_dir)) // 1024
    # The malloc heap in use (what a leak grows) and held from the system, from /metrics.
    try:
        gauges = server.metrics()
        row["heap_in_use_kib"] = int(gauges.get("process_heap_in_use_bytes", 0)) // 1024
        row["heap_system_kib"] = int(gauges.get("process_heap_system_bytes", 0)) // 1024
    except Exception:  # a scrape that fails under load leaves the columns empty for that second
        row["heap_in_use_kib"] = row["heap_system_kib"] = ""
    return row


def run(args: argparse.Namespace) -> int:
    out = args.out or tempfile.mkdtemp(prefix="moderation-soak-")
    os.makedirs(out, exist_ok=True)
    data_dir = tempfile.mkdtemp(prefix="moderation-soak-data-")
    server = ObservedServer(args.server, data_dir, os.path.join(out, "server.log"),
                           ["--access-log", "off", "--metrics-listen", "127.0.0.1:0"] + args.server_arg)
    print("soak: server pid %d on %s; %s minutes; output in %s" % (server.pid, server.address, args.minutes, out))
    seconds = args.minutes * 60
    stats = Stats()
    soak = Soak(server.address, seconds, stats, args.seed)
    soak.user_pool = args.user_pool
    samples: List[Dict[str, float]] = []  # samples[0]: before the load; the last: after it stopped
    files_before: List[str] = []
    after_load: Dict[str, object] = {}
    try:
        soak.setup()
        time.sleep(1)
        samples.append(dict(sample(server, data_dir, 0.0), rest=1))
        files_before = server.describe_files()
        started = time.monotonic()
        soak.stop_at = started + seconds

        def guarded(target: Callable[..., None], *target_args: object) -> None:
            try:
                target(*target_args)
            except BaseException:  # a driver bug or an unexpected exception: fail loudly
                stats.fail("thread %s died: %s" % (threading.current_thread().name, traceback.format_exc()))

        def spawn(name: str, target: Callable[..., None], *target_args: object) -> threading.Thread:
            thread = threading.Thread(target=guarded, args=(target,) + target_args, name=name, daemon=True)
            thread.start()
            return thread

        threads = [spawn("caller-%d" % i, soak.caller, i) for i in range(args.callers)]
        threads += [spawn("subscriber-%d" % i, soak.subscriber, i) for i in range(3)]
        threads += [spawn("reconnector", soak.reconnector, 0), spawn("slow-reader-0", soak.slow_reader, 0),
                    spawn("slow-reader-1", soak.slow_reader, 1), spawn("non-reader", soak.non_reader),
                    spawn("bad-frames", soak.bad_frames)]
        load_threads = len(threads) - 3  # all but the subscribers park during a rest
        next_rest = started + args.rest_every
        while time.monotonic() - started < seconds:
            if not server.alive():
                stats.fail("the server died (exit code %s)" % server.process.poll())
                break
            now = time.monotonic()
            if now >= next_rest and now - started + args.rest_seconds + 20 < seconds:
                # A rest: every load thread but the subscribers finishes what it does and parks
                # (their connections closed, subscriptions open but idle); once all are parked
                # and the server has had two seconds to notice the closes, the lowest of the
                # next samples is the RSS at rest.
                soak.resume.clear()
                wait_until = time.monotonic() + 20
                while soak.parked_threads() < load_threads and time.monotonic() < wait_until:
                    samples.append(dict(sample(server, data_dir, time.monotonic() - started), rest=0))
                    time.sleep(1)
                time.sleep(2)
                rest_rows = []
                for _ in range(args.rest_seconds):
                    rest_rows.append(dict(sample(server, data_dir, time.monotonic() - started), rest=0))
                    time.sleep(1)
                min(rest_rows, key=lambda row: row["RssAnon"])["rest"] = 1
                samples.extend(rest_rows)
                soak.resume.set()
                next_rest = time.monotonic() + args.rest_every
                continue
            row = sample(server, data_dir, now - started)
            row["rest"] = 0
            samples.append(row)
            time.sleep(1)
        soak.stop.set()
        soak.stop_subscribers()
        for thread in threads:
            thread.join(30)
            if thread.is_alive():
                stats.fail("thread %s did not stop" % thread.name)
        time.sleep(3)
        if server.alive():
            samples.append(dict(sample(server, data_dir, time.monotonic() - started), rest=1))
            gauges = server.metrics()
            after_load.update({name: gauges.get(name) for name in ("mrpc_connections_open", "moderation_subscriptions_open")})
            with open(os.path.join(out, "files.txt"), "w") as fh:
                fh.write("before the load:\n  " + "\n  ".join(files_before) + "\nafter it:\n  "
                         + "\n  ".join(server.describe_files()) + "\n")
                fh.write("the store's files after the load:\n" + "".join(
                    "  %s %d bytes\n" % (name, os.path.getsize(os.path.join(data_dir, name)))
                    for name in sorted(os.listdir(data_dir))))
    finally:
        code = server.terminate() if server.alive() else server.process.poll()
        shutil.rmtree(data_dir, ignore_errors=True)

    columns = list(samples[0].keys()) if samples else []
    with open(os.path.join(out, "samples.csv"), "w") as fh:
        fh.write(",".join(columns) + "\n")
        for row in samples:
            fh.write(",".join(str(row.get(column, "")) for column in columns) + "\n")
    return report(args, out, stats, samples, code, after_load)


def slope_per_minute(rows: List[Dict[str, float]], key: str) -> float:
    return least_squares_slope([(row["seconds"] / 60.0, row[key]) for row in rows])


def report(args, out, stats: Stats, samples: List[Dict[str, float]], code, after_load: Dict[str, object]) -> int:
    problems = list(stats.unexpected)
    for name, value in after_load.items():
        if value != 0:
            problems.append("%s is %s after the load stopped (expected 0)" % (name, value))
    if code != 0:
        problems.append("the server exited with %s on SIGTERM" % code)
    load = [row for row in samples[1:] if row["seconds"] <= args.minutes * 60]
    third = len(load) // 3
    last = load[-third:] if third >= 2 else load
    before, after = (samples[0], samples[-1]) if samples else ({}, {})

    def figures(key: str) -> Dict[str, float]:
        values = [row[key] for row in load] or [0]
        return {"before_load": before.get(key, 0), "end_of_warmup": load[third][key] if third else 0,
                "max": max(values), "end_of_load": values[-1], "after_load": after.get(key, 0),
                "last_third_slope_per_min": round(slope_per_minute(last, key), 1) if last else 0}

    # RSS at rest: the lowest sample of each pause of the load, after warm-up (the first third).
    rests = [row for row in load if row.get("rest") and row["seconds"] >= args.minutes * 60 / 3]
    anon_slope = slope_per_minute(rests, "RssAnon") if len(rests) >= 2 else 0.0
    rss_slope = slope_per_minute(rests, "VmRSS") if len(rests) >= 2 else 0.0
    heap_rests = [row for row in rests if row.get("heap_in_use_kib") != ""]
    heap_slope = slope_per_minute(heap_rests, "heap_in_use_kib") if len(heap_rests) >= 2 else 0.0
    summary = {
        "minutes": args.minutes,
        "rss_kib": figures("VmRSS"),
        "rss_anon_kib": figures("RssAnon"),
        "rss_file_kib": figures("RssFile"),
        "store_on_disk_kib": figures("store_kib"),
        "open_files": figures("open_files"),
        "open_sockets": figures("open_sockets"),
        "threads": figures("threads"),
        "counts": dict(sorted(stats.counts.items())),
        "server_exit_code": code,
        "gauges_after_load": after_load,
        "at_rest_after_warmup": {
            "seconds": [row["seconds"] for row in rests],
            "rss_kib": [row["VmRSS"] for row in rests],
            "rss_anon_kib": [row["RssAnon"] for row in rests],
            "heap_in_use_kib": [row.get("heap_in_use_kib") for row in rests],
            "store_on_disk_kib": [row["store_kib"] for row in rests],
            "rss_slope_kib_per_min": round(rss_slope, 1),
            "rss_anon_slope_kib_per_min": round(anon_slope, 1),
            "heap_in_use_slope_kib_per_min": round(heap_slope, 1),
        },
    }
    # The criterion is on anonymous memory at rest (heap and stacks, what a leak grows, without
    # the transient buffers of calls and misbehaving peers in flight, which swing RSS by tens of
    # MiB from one second to the next under load). RssFile is the binary and the store's database
    # mapped by SQLite, which grows with the data.
    if len(rests) < 3:
        problems.append("only %d rests after warm-up: run longer (--minutes) or rest more often (--rest-every)" % len(rests))
    else:
        if anon_slope > args.max_slope:
            problems.append("anonymous RSS at rest grew %.0f KiB/min after warm-up (limit %d)" % (anon_slope, args.max_slope))
        if len(heap_rests) < 3:
            problems.append("only %d rests after warm-up with the heap in use read from /metrics" % len(heap_rests))
        elif heap_slope > args.max_slope:
            problems.append("heap in use at rest grew %.0f KiB/min after warm-up (limit %d)" % (heap_slope, args.max_slope))
    # Sockets must all be gone (only the listener stays); SQLite keeps its pooled reader
    # connections' files open, so plain files may be more after the load than before it.
    if after.get("open_sockets", 0) > before.get("open_sockets", 0):
        problems.append("open sockets: %d before the load, %d after it stopped" % (before["open_sockets"], after["open_sockets"]))
    if after.get("threads", 0) > before.get("threads", 0):
        problems.append("threads: %d before the load, %d after it stopped" % (before["threads"], after["threads"]))
    log_path = os.path.join(out, "server.log")
    errors = [line for line in open(log_path, errors="replace") if " ERROR " in line or " WARNING " in line]
    if errors:
        problems.append("%d ERROR/WARNING lines in the server's log, e.g. %s" % (len(errors), errors[0].strip()))
    summary["problems"] = problems
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    print(json.dumps(summary, indent=2))
    if problems:
        print("soak: FAILED")
        for problem in problems:
            print("  - " + problem)
        return 1
    print("soak: passed (at rest after warm-up, slopes of anonymous RSS %.0f and of heap in use %.0f KiB/min, limit %d)"
          % (anon_slope, heap_slope, args.max_slope))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="moderation-server binary (release build)")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--callers", type=int, default=4, help="threads of mixed moderation calls")
    parser.add_argument("--out", help="directory for samples.csv, summary.json and server.log")
    parser.add_argument("--max-slope", type=int, default=512,
                        help="limit of the slopes of anonymous RSS and of heap in use at rest after warm-up, KiB/min")
    parser.add_argument("--rest-every", type=float, default=50, help="seconds of load between rests")
    parser.add_argument("--rest-seconds", type=int, default=4, help="samples taken at each rest (the lowest counts)")
    parser.add_argument("--user-pool", type=int, default=500,
                        help="new uids per caller (default 500: the data set stops growing, so memory must stop "
                             "too); 0 creates a new user with every CreateUser, so the data and the caches grow")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for the server (repeat it), e.g. --server-arg=--sqlite-cache-mib=2")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
