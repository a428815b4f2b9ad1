#!/usr/bin/env python3
"""Adversarial drivers: hostile clients against one real moderation-server each,
with the server's memory, liveness and shutdown checked while the attack runs. See
docs/HARDENING.md ("Adversarial drivers") for what each scenario does and its limits.

    adversary.py --server BINARY SCENARIO [options]

SCENARIO is one of subscription-churn, emfile, pipelined-replies, compressed-subscriptions,
partial-frames, auth-flood, or all (each in turn, one table at the end). Every scenario starts
its own server (--memory-budget 512MiB by default, the bound these attacks are measured against; pass
--no-budget-flag to a build without it) and checks, while the attack runs:

- RSS (VmRSS of /proc/PID/status) stays under the budget + --rss-slack-mib (200);
- Echo from a fresh connection (connect, HELLO, Echo: what a new client waits for), probed
  every --probe-interval s (0.2) by a separate process, answers within --echo-limit-ms (100);
  the max and p99 are recorded;
- at the end SIGTERM ends the server within its --shutdown-grace (+ --exit-slack) with exit 0;

plus the scenario's own checks. Exits 0 when every check passed, 1 when one failed, 2 when a
server could not be started.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import re
import resource
import selectors
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

import rawwire
import serverproc  # noqa: F401  (puts the client and bench/ on sys.path)
from rawwire import CALL, GOAWAY, HELLO, HELLO_ACK, MESSAGE, PING, PONG, REPLY, TRAILERS
from serverproc import API_KEY

import benchkit

import mrpc_client
from mrpc_client import RpcError
from mrpc_client import moderation_v1
from mrpc_client.frames import HEADER, PREFACE
from mrpc_client.gen.mrpc.diagnostics.v1 import diagnostics_pb2
from mrpc_client.gen.mrpc.v1 import envelope_pb2

FRAME_NAMES = {HELLO_ACK: "HELLO_ACK", REPLY: "REPLY", MESSAGE: "MESSAGE", TRAILERS: "TRAILERS", PING: "PING",
               PONG: "PONG", GOAWAY: "GOAWAY"}
ECHO = "/mrpc.diagnostics.v1.Diagnostics/Echo"
SUBSCRIBE = "/moderation.v1.Moderation/Subscribe"
DESCRIPTOR_SET = "/mrpc.reflection.v1.Reflection/GetFileDescriptorSet"
KIB, MIB = 1 << 10, 1 << 20
#: The server's default --max-message-bytes: the largest body a frame may carry.
MAX_MESSAGE = 4 * MIB


# MARK: wire


def hello(api_key: str, accept_deflate: bool = False) -> bytes:
    return rawwire.hello(api_key, accept_deflate, client_name="adversary")


def status_of(frame_type: int, payload: bytes) -> Optional[envelope_pb2.Status]:
    """The Status a REPLY, TRAILERS or GOAWAY carries (None for other frames or a bad payload)."""
    try:
        if frame_type == REPLY and len(payload) >= 4:
            (length,) = struct.unpack_from(">I", payload)
            return envelope_pb2.Status.FromString(payload[4:4 + length])
        if frame_type == TRAILERS:
            return envelope_pb2.Status.FromString(payload)
        if frame_type == GOAWAY:
            return envelope_pb2.Goaway.FromString(payload).status
    except Exception:  # a truncated or undecodable status: counted as having none
        return None
    return None


class Refused(Exception):
    """The server answered the handshake with GOAWAY, closed, or did not answer in time."""


def open_session(address: str, api_key: str = API_KEY, accept_deflate: bool = False,
                 timeout: float = 10.0) -> socket.socket:
    """A connection that has completed the handshake (blocking, with `timeout`)."""
    sock = rawwire.connect(address, timeout=timeout)
    try:
        sock.settimeout(timeout)
        sock.sendall(PREFACE + hello(api_key, accept_deflate))
        frame_type, _, payload = rawwire.read_frame(sock)
    except (OSError, EOFError) as error:
        sock.close()
        raise Refused("handshake: %r" % error) from None
    if frame_type != HELLO_ACK:
        sock.close()
        status = status_of(frame_type, payload)
        raise Refused("handshake: %s %s" % (FRAME_NAMES.get(frame_type, frame_type),
                                            status.error_code if status else ""))
    return sock


def echo_on(sock: socket.socket, stream_id: int, payload: bytes, timeout: float) -> None:
    """One Echo on a handshaken connection; raises unless its REPLY is OK with the payload back."""
    sock.settimeout(timeout)
    sock.sendall(rawwire.echo(stream_id, payload))
    while True:
        frame_type, frame_stream, body = rawwire.read_frame(sock)
        if frame_type == GOAWAY:
            status = status_of(frame_type, body)
            raise Refused("GOAWAY %s" % (status.error_code if status else ""))
        if frame_type == REPLY and frame_stream == stream_id:
            (length,) = struct.unpack_from(">I", body)
            if length:
                raise Refused("Echo: %s" % envelope_pb2.Status.FromString(body[4:4 + length]).error_code)
            if diagnostics_pb2.EchoResponse.FromString(body[4:]).payload != payload:
                raise Refused("Echo returned other bytes")
            return


# MARK: the server under attack


def parse_bytes(text: str) -> int:
    """'512MiB', '1GiB', '300M', '4096' → bytes."""
    match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(i?B)?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError("%r is not a size (e.g. 512MiB)" % text)
    return int(match.group(1)) << (10 * " KMGT".index((match.group(2) or " ").upper()))


class LogTap:
    """The server's standard error, read from a pipe as fast as it comes: lines and bytes counted
    (a log flood is measured, not stored), the first and last 256 KiB kept for the report."""

    KEEP = 256 * KIB

    def __init__(self, pipe) -> None:
        self.pipe = pipe
        self.lines = 0
        self.bytes = 0
        self.head = bytearray()
        self.tail = bytearray()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="log-tap", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        fd = self.pipe.fileno()
        while True:
            chunk = os.read(fd, MIB)
            if not chunk:
                return
            with self.lock:
                self.lines += chunk.count(b"\n")
                self.bytes += len(chunk)
                if len(self.head) < self.KEEP:
                    self.head += chunk[:self.KEEP - len(self.head)]
                self.tail += chunk
                if len(self.tail) > self.KEEP:
                    del self.tail[:len(self.tail) - self.KEEP]

    def snapshot(self) -> Tuple[int, int]:
        """(lines, bytes) so far."""
        with self.lock:
            return self.lines, self.bytes

    def text_head(self) -> str:
        with self.lock:
            return self.head.decode(errors="replace")

    def save(self, path: str) -> None:
        self.thread.join(5)
        with self.lock, open(path, "wb") as fh:
            fh.write(bytes(self.head))
            rest = self.bytes - len(self.head)  # bytes after the head, of which `tail` has the last
            if rest > len(self.tail):
                fh.write(b"\n[... %d bytes not kept (%d lines in all) ...]\n" % (rest - len(self.tail), self.lines))
                fh.write(bytes(self.tail))
            elif rest > 0:
                fh.write(bytes(self.tail[len(self.tail) - rest:]))


class AttackedServer(benchkit.ModerationServer):
    """moderation-server on an ephemeral loopback port with its own data directory, its log piped
    through a `LogTap`, optionally under a lower file-descriptor limit (soft and hard: the server
    raises its soft limit to the hard one at start)."""

    def __init__(self, binary: str, directory: str, arguments: List[str], nofile: Optional[int] = None) -> None:
        self.directory = directory

        def limit_files() -> None:
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        super().__init__(binary, os.path.join(directory, "data"), API_KEY,
                         ["--metrics-listen", "127.0.0.1:0"] + arguments, log=subprocess.PIPE, preexec_fn=limit_files)
        self.metrics_url = self._metrics_url()

    def started(self) -> None:
        self.log = LogTap(self.process.stderr)

    def log_excerpt(self) -> str:
        self.log.thread.join(2)
        said = " / ".join(self.log.text_head().strip().splitlines()[-3:])
        if "--memory-budget" in said:
            said += " (a build without --memory-budget: run with --no-budget-flag)"
        return said

    def _metrics_url(self) -> Optional[str]:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            match = re.search(r"metrics served.*?listen=(\S+)", self.log.text_head())
            if match:
                return match.group(1).strip('"')
            time.sleep(0.05)
        return None

    def metric(self, name: str, timeout: float = 2.0) -> Optional[float]:
        """An unlabelled sample of /metrics; None when it cannot be read in time."""
        if not self.metrics_url:
            return None
        try:
            return benchkit.read_metrics(self.metrics_url, timeout).get(name)
        except Exception:  # slow, refused or closed: the gauge is unknown
            return None

    def rss_kib(self) -> Optional[int]:
        try:
            return benchkit.memory_kib(self.pid).get("VmRSS")
        except OSError:
            return None

    def terminate(self, wait: float) -> Tuple[Optional[int], float]:
        """SIGTERM and wait up to `wait` s: (exit code or None when it had to be SIGKILLed, seconds)."""
        start = time.monotonic()
        return self.stop(wait), time.monotonic() - start


# MARK: liveness probe (a process of its own, so the attack's threads never delay a probe)


def probe_main(address: str, interval: float, timeout: float) -> int:
    """The prober: an Echo on a fresh connection every `interval` s (or, in `kept` mode, on the
    connection opened at start), one JSON line per probe on stdout. Commands on stdin, one a line:
    `fresh`, `kept`, `interval SECONDS`, `stop`."""
    state = {"mode": "fresh", "interval": interval, "stop": False}
    payload = b"adversary-probe"

    def commands() -> None:
        for line in sys.stdin:
            words = line.split()
            if not words or words[0] == "stop":
                break
            if words[0] in ("fresh", "kept"):
                state["mode"] = words[0]
            elif words[0] == "interval":
                state["interval"] = float(words[1])
        state["stop"] = True

    threading.Thread(target=commands, daemon=True).start()
    kept: Optional[socket.socket] = None
    try:
        kept = open_session(address)
    except (Refused, OSError):
        kept = None
    kept_stream = 1
    while not state["stop"]:
        started = time.monotonic()
        mode = state["mode"]
        error = ""
        try:
            if mode == "kept":
                if kept is None:
                    raise Refused("no connection kept from the start")
                echo_on(kept, kept_stream, payload, timeout)
                kept_stream += 2
            else:
                sock = open_session(address, timeout=timeout)
                try:
                    echo_on(sock, 1, payload, max(timeout - (time.monotonic() - started), 0.01))
                finally:
                    sock.close()
        except (Refused, OSError, EOFError) as failure:
            error = repr(failure)[:200]
            if mode == "kept" and kept is not None:
                kept.close()
                kept = None
        elapsed = time.monotonic() - started
        sys.stdout.write(json.dumps({"t": started, "mode": mode, "ms": round(elapsed * 1000, 2),
                                     "error": error}) + "\n")
        sys.stdout.flush()
        time.sleep(max(state["interval"] - elapsed, 0))
    return 0


class Prober:
    """The probe process seen from the driver: its samples, and commands to it."""

    def __init__(self, address: str, args) -> None:
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--probe", address, "--probe-interval",
             str(args.probe_interval), "--probe-timeout", str(args.probe_timeout)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.samples: List[dict] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.lock:
                self.samples.append(json.loads(line))

    def send(self, command: str) -> None:
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def stop(self) -> None:
        self.send("stop")
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.thread.join(5)

    def window(self, mode: str, start: float = 0.0, end: float = float("inf")) -> List[dict]:
        with self.lock:
            return [s for s in self.samples if s["mode"] == mode and start <= s["t"] < end]


class RssSampler:
    """VmRSS every 100 ms; kills the server past the safety ceiling (--kill-rss-mib) so a
    reproduction cannot take the machine down."""

    def __init__(self, server: AttackedServer, kill_kib: int) -> None:
        self.server = server
        self.kill_kib = kill_kib
        self.max_kib = 0
        self.at_max = 0.0
        #: The largest sample before `mark_end_of_attack()` (the rest is the shutdown's).
        self.attack_max_kib: Optional[int] = None
        self.killed_at: Optional[float] = None
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop_event.is_set():
            rss = self.server.rss_kib()
            if rss is None:
                return
            if rss > self.max_kib:
                self.max_kib, self.at_max = rss, time.monotonic()
            if rss > self.kill_kib and self.killed_at is None:
                self.killed_at = time.monotonic()
                say("RSS %d MiB passed the safety ceiling of %d MiB: SIGKILL" % (rss // KIB, self.kill_kib // KIB))
                self.server.kill()
                return
            self.stop_event.wait(0.1)

    @property
    def killed(self) -> bool:
        return self.killed_at is not None

    def mark_end_of_attack(self) -> None:
        self.attack_max_kib = self.max_kib

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(5)


# MARK: many connections at once


class Swarm:
    """The attacker's connections: opened (with or without the handshake), fed from shared
    buffers without blocking, read by one thread that counts what comes back, then dropped."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sockets: List[socket.socket] = []
        self.counts: Dict[str, int] = collections.Counter()
        self.lock = threading.Lock()
        self.closed_by_server: Dict[socket.socket, float] = {}
        self.reader: Optional[threading.Thread] = None
        self.reading = threading.Event()

    def count(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[key] += n

    def open(self, count: int, handshake: bool = True, accept_deflate: bool = False,
             timeout: float = 10.0) -> int:
        """Opens `count` connections; returns how many are usable (refusals are counted)."""
        opened = 0
        for _ in range(count):
            try:
                if handshake:
                    sock = open_session(self.address, accept_deflate=accept_deflate, timeout=timeout)
                else:
                    sock = rawwire.connect(self.address, timeout=timeout)
            except (Refused, OSError) as error:
                self.count("not opened: %s" % str(error)[:80])
                continue
            sock.setblocking(False)
            self.sockets.append(sock)
            opened += 1
        return opened

    def pump(self, outgoing: Dict[socket.socket, List[memoryview]], deadline: float) -> Tuple[int, int]:
        """Sends every socket its queue of buffers, never blocking on one, until all is sent or the
        deadline passes: (bytes sent, sockets with bytes left)."""
        selector = selectors.DefaultSelector()
        for sock, queue in outgoing.items():
            if queue:
                selector.register(sock, selectors.EVENT_WRITE)
        sent = 0
        while selector.get_map() and time.monotonic() < deadline:
            for key, _ in selector.select(min(0.2, max(deadline - time.monotonic(), 0))):
                sock = key.fileobj
                queue = outgoing[sock]
                try:
                    n = sock.send(queue[0])
                except BlockingIOError:
                    continue
                except OSError as error:
                    self.count("send failed: %s" % error.__class__.__name__)
                    selector.unregister(sock)
                    queue.clear()
                    continue
                sent += n
                if n < len(queue[0]):
                    queue[0] = queue[0][n:]
                else:
                    queue.pop(0)
                if not queue:
                    selector.unregister(sock)
        left = len(selector.get_map())
        selector.close()
        return sent, left

    def start_reader(self) -> None:
        """Reads every connection in one thread, counting frames by type and statuses by error code."""
        self.reading.set()
        self.reader = threading.Thread(target=self._read, name="swarm-reader", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        selector = selectors.DefaultSelector()
        buffers: Dict[socket.socket, bytearray] = {}
        for sock in self.sockets:
            selector.register(sock, selectors.EVENT_READ)
            buffers[sock] = bytearray()
        while self.reading.is_set() and selector.get_map():
            for key, _ in selector.select(0.2):
                sock = key.fileobj
                try:
                    chunk = sock.recv(256 * KIB)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    selector.unregister(sock)
                    with self.lock:
                        self.closed_by_server[sock] = time.monotonic()
                    continue
                buffer = buffers[sock]
                buffer += chunk
                self._frames(buffer)
        selector.close()

    def _frames(self, buffer: bytearray) -> None:
        while len(buffer) >= HEADER.size:
            length, frame_type, _, _, _ = HEADER.unpack_from(buffer)
            if len(buffer) < HEADER.size + length:
                return
            with_status = frame_type in (REPLY, TRAILERS, GOAWAY)
            payload = bytes(buffer[HEADER.size:HEADER.size + length]) if with_status else b""
            del buffer[:HEADER.size + length]
            name = FRAME_NAMES.get(frame_type, str(frame_type))
            status = status_of(frame_type, payload)
            with self.lock:
                self.counts[name] += 1
                if status is not None and status.code != 0:
                    self.counts["%s %s" % (name, status.error_code or status.code)] += 1

    def stop_reader(self) -> None:
        self.reading.clear()
        if self.reader:
            self.reader.join(5)

    def close_all(self) -> None:
        self.stop_reader()
        for sock in self.sockets:
            try:
                sock.close()
            except OSError:
                pass
        self.sockets = []

    def error_counts(self) -> Dict[str, int]:
        with self.lock:
            return {key: value for key, value in self.counts.items() if " " in key}


# MARK: results


class Check:
    def __init__(self, name: str, ok: bool, measured: str, limit: str) -> None:
        self.name, self.ok, self.measured, self.limit = name, ok, measured, limit

    def as_dict(self) -> dict:
        return {"check": self.name, "ok": self.ok, "measured": self.measured, "limit": self.limit}


def percentile(values: List[float], fraction: float) -> float:
    """The nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def say(text: str) -> None:
    print("adversary: " + text, flush=True)


def wait_for(condition: Callable[[], bool], timeout: float, poll: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(poll)
    return condition()


# MARK: scenarios


class Scenario:
    """One attack: starts its server, runs, and checks. Subclasses set `name`, `weakness` (what
    the attack exploited in builds before the fix) and implement `attack`, adding checks and
    figures of their own."""

    name = ""
    weakness = ""

    def __init__(self, args, root_out: str) -> None:
        self.args = args
        self.out = os.path.join(root_out, self.name)
        os.makedirs(self.out, exist_ok=True)
        self.checks: List[Check] = []
        self.figures: Dict[str, object] = {}
        self.swarm: Optional[Swarm] = None
        self.server: Optional[AttackedServer] = None
        self.prober: Optional[Prober] = None
        #: (start, end) of the windows in which a fresh connection cannot be served by design
        #: (the emfile hold); the fresh-Echo check leaves them out.
        self.exempt: List[Tuple[float, float]] = []

    def nofile(self) -> Optional[int]:
        return None

    def hold(self, default: float) -> float:
        return self.args.hold if self.args.hold is not None else default

    def connections(self, default: int) -> int:
        return self.args.connections if self.args.connections is not None else default

    def server_arguments(self) -> List[str]:
        arguments = ["--shutdown-grace", str(self.args.grace), "--access-log", "off"]
        if not self.args.no_budget_flag:
            arguments += ["--memory-budget", self.args.memory_budget]
        return arguments + self.args.server_arg

    def check(self, name: str, ok: bool, measured: str, limit: str) -> None:
        self.checks.append(Check(name, ok, measured, limit))

    def attack(self) -> None:
        raise NotImplementedError

    def run(self) -> bool:
        args = self.args
        say("%s (%s): starting the server" % (self.name, self.weakness))
        try:
            self.server = AttackedServer(args.server, self.out, self.server_arguments(), self.nofile())
        except RuntimeError as error:
            self.check("server started", False, str(error), "")
            with open(os.path.join(self.out, "result.json"), "w") as fh:
                json.dump(self.result(), fh, indent=2)
            return False
        server = self.server
        rss = RssSampler(server, int(args.kill_rss_mib * KIB))
        self.prober = Prober(server.address, args)
        time.sleep(1.0)
        self.swarm = Swarm(server.address)
        attack_start = time.monotonic()
        try:
            self.attack()
        except Exception as error:  # the attack broke (e.g. the server died): a failure, reported
            self.check("attack ran to its end", False, repr(error)[:120], "no exception")
        attack_end = time.monotonic()
        rss.mark_end_of_attack()
        self.prober.stop()

        grace = float(args.grace)
        code, seconds = server.terminate(grace + args.exit_slack + 60)
        rss.stop()
        self.swarm.close_all()
        server.log.save(os.path.join(self.out, "server.log"))
        lines, size = server.log.snapshot()
        self.figures["server log"] = "%d lines, %d KiB" % (lines, size // KIB)
        self.figures["attack seconds"] = round(attack_end - attack_start, 1)

        if rss.max_kib:
            self.figures["RSS at its max"] = "%d MiB, %.1f s into the attack (which lasted %.1f s)" % (
                rss.max_kib // KIB, rss.at_max - attack_start, attack_end - attack_start)
        budget = parse_bytes(args.memory_budget)
        limit_kib = budget // KIB + int(args.rss_slack_mib * KIB)
        # The attack's and the shutdown's maxima: a drain that buffers is as bad as an attack that does.
        attack_max = rss.attack_max_kib if rss.attack_max_kib is not None else rss.max_kib
        measured = "max %d MiB during the attack, %d MiB with the shutdown" % (attack_max // KIB, rss.max_kib // KIB)
        if rss.killed:
            measured += " (SIGKILLed past the %d MiB safety ceiling %.1f s into the attack)" % (
                args.kill_rss_mib, rss.killed_at - attack_start)
        self.check("RSS", rss.max_kib <= limit_kib and not rss.killed, measured,
                   "%d MiB (budget + %d)" % (limit_kib // KIB, args.rss_slack_mib))

        # Probes after the driver's SIGKILL say nothing about the server's liveness.
        probes_end = min(attack_end, rss.killed_at or attack_end)
        fresh = [s for s in self.prober.window("fresh", attack_start, probes_end)
                 if not any(start <= s["t"] < end for start, end in self.exempt)]
        failures = [s for s in fresh if s["error"]]
        latencies = [s["ms"] for s in fresh]
        slow = [ms for ms in latencies if ms > args.echo_limit_ms]
        if fresh:
            measured = "max %.1f ms, p99 %.1f ms, %d probes, %d over, %d failed" % (
                max(latencies), percentile(latencies, 0.99), len(fresh), len(slow), len(failures))
            if failures:
                measured += " (%s)" % failures[0]["error"][:60]
        else:
            measured = "no probe completed"
        self.check("fresh Echo", bool(fresh) and not slow and not failures, measured,
                   "every probe <= %g ms" % args.echo_limit_ms)

        if rss.killed and rss.killed_at < attack_end:
            self.check("SIGTERM", False, "not sent: the driver SIGKILLed the server during the attack",
                       "exit 0 within %g s" % (grace + args.exit_slack))
        elif rss.killed:
            self.check("SIGTERM", False, "SIGKILLed by the driver %.1f s into the drain (RSS)"
                       % (rss.killed_at - attack_end), "exit 0 within %g s" % (grace + args.exit_slack))
        elif code is None:
            self.check("SIGTERM", False, "still running %.0f s after SIGTERM (SIGKILLed)" % seconds,
                       "exit 0 within %g s" % (grace + args.exit_slack))
        else:
            self.check("SIGTERM", code == 0 and seconds <= grace + args.exit_slack,
                       "exit %d after %.1f s" % (code, seconds), "exit 0 within %g s" % (grace + args.exit_slack))
        if not args.keep:
            shutil.rmtree(os.path.join(self.out, "data"), ignore_errors=True)
        with open(os.path.join(self.out, "result.json"), "w") as fh:
            json.dump(self.result(), fh, indent=2)
        return all(check.ok for check in self.checks)

    def result(self) -> dict:
        return {"scenario": self.name, "weakness": self.weakness, "checks": [c.as_dict() for c in self.checks],
                "figures": self.figures, "server": self.server.command if self.server else None}

    # Shared by the two subscription scenarios.

    def subscribe_swarm(self, connections: int, subscriptions: int, compressed: bool) -> None:
        swarm, server = self.swarm, self.server
        opened = swarm.open(connections, accept_deflate=compressed)
        request = moderation_v1.SubscribeRequest(whole_app=True).SerializeToString()
        calls = b"".join(rawwire.call(2 * i + 1, SUBSCRIBE, request, accept_deflate=compressed)
                         for i in range(subscriptions))
        swarm.start_reader()
        started = time.monotonic()
        sent, left = swarm.pump({sock: [memoryview(calls)] for sock in swarm.sockets},
                                started + self.args.settle)
        say("%s: %d connections × %d Subscribe sent in %.1f s (%d with bytes left)"
            % (self.name, opened, subscriptions, time.monotonic() - started, left))
        expected = opened * subscriptions
        seen = {"open": 0.0, "changed": time.monotonic()}

        def settled() -> bool:
            # Done when every Subscribe is open or refused, or the gauge (when /metrics answers at
            # all) has not moved for 3 s.
            if not server.alive():
                return True
            gauge = server.metric("moderation_subscriptions_open")
            if gauge is None:
                return False
            refused = sum(v for k, v in swarm.error_counts().items() if k.startswith(("REPLY", "TRAILERS")))
            if gauge != seen["open"]:
                seen["open"], seen["changed"] = gauge, time.monotonic()
            return gauge + refused >= expected or time.monotonic() - seen["changed"] > 3

        wait_for(settled, max(started + self.args.settle - time.monotonic(), 0), poll=0.5)
        self.figures["subscriptions open at peak"] = int(seen["open"])
        self.figures["subscriptions asked"] = expected
        self.figures["subscribe seconds"] = round(time.monotonic() - started, 1)
        self.figures["refusals"] = swarm.error_counts()


class SubscriptionChurn(Scenario):
    name = "subscription-churn"
    weakness = "subscribing and unsubscribing cost O(N) in the app's open subscriptions"

    def attack(self) -> None:
        self.subscribe_swarm(self.connections(60), self.args.subscriptions, compressed=False)
        time.sleep(2)
        dropped = time.monotonic()
        self.swarm.close_all()
        say("%s: connections dropped; watching for %g s" % (self.name, self.hold(20)))
        gone = wait_for(lambda: self.server.metric("moderation_subscriptions_open") == 0, self.hold(20), poll=0.5)
        self.figures["seconds until 0 subscriptions"] = (round(time.monotonic() - dropped, 1) if gone
                                                         else "not within the hold")
        time.sleep(max(dropped + self.hold(20) - time.monotonic(), 0))


class Emfile(Scenario):
    name = "emfile"
    weakness = "out of file descriptors, the server spun on accept and logged every failure"

    def nofile(self) -> Optional[int]:
        return self.args.nofile

    def attack(self) -> None:
        args, swarm, server = self.args, self.swarm, self.server
        # A fresh connection cannot be served while the server has no descriptor left: liveness
        # is probed on a connection opened before, and the fresh probes resume after the release.
        self.prober.send("kept")
        time.sleep(0.3)
        exhausted_at = time.monotonic()
        self.exempt.append((exhausted_at, float("inf")))
        accepted = refused = streak = 0
        while streak < 8 and accepted + refused < 2 * args.nofile + 64:
            try:
                sock = rawwire.connect(server.address, timeout=1.0)
            except OSError:
                refused += 1
                streak += 1
                continue
            swarm.sockets.append(sock)
            try:
                sock.settimeout(0.5)
                sock.sendall(PREFACE + hello(API_KEY))
                frame_type, _, _ = rawwire.read_frame(sock)
                ok = frame_type == HELLO_ACK
            except (OSError, EOFError):
                ok = False
            if ok:
                accepted, streak = accepted + 1, 0
            else:
                refused, streak = refused + 1, streak + 1
        say("%s: %d connections accepted, then %d not (fd limit %d); holding %g s"
            % (self.name, accepted, refused, args.nofile, self.hold(10)))
        self.figures["connections accepted"] = accepted
        self.figures["connections not served"] = refused
        cpu0, (lines0, bytes0), start = server.cpu_seconds(), server.log.snapshot(), time.monotonic()
        time.sleep(self.hold(10))
        held = time.monotonic() - start
        cpu = (server.cpu_seconds() - cpu0) / held
        lines1, bytes1 = server.log.snapshot()
        self.check("CPU while out of descriptors", cpu <= args.max_cpu,
                   "%.2f cores (utime+stime over %.0f s)" % (cpu, held), "<= %g cores" % args.max_cpu)
        allowed = 1 + args.max_log_rate * held
        self.check("log while out of descriptors", lines1 - lines0 <= allowed,
                   "%d lines, %d KiB in %.0f s" % (lines1 - lines0, (bytes1 - bytes0) // KIB, held),
                   "<= %d lines" % allowed)
        kept = self.prober.window("kept", exhausted_at)
        latencies = [s["ms"] for s in kept]
        failed = [s for s in kept if s["error"]]
        self.check("Echo on an open connection while out of descriptors",
                   bool(kept) and not failed and max(latencies) <= args.echo_limit_ms,
                   "max %.1f ms, %d probes, %d failed" % (max(latencies or [0]), len(kept), len(failed)),
                   "every probe <= %g ms" % args.echo_limit_ms)
        swarm.close_all()
        released = time.monotonic()
        self.exempt[-1] = (exhausted_at, released)
        self.prober.send("fresh")

        def recovered() -> bool:
            return any(not s["error"] for s in self.prober.window("fresh", released))

        back = wait_for(recovered, 10)
        first = min((s["t"] + s["ms"] / 1000 for s in self.prober.window("fresh", released) if not s["error"]),
                    default=None)
        self.check("fresh Echo after the release", back,
                   "%.2f s after" % (first - released) if first else "none in 10 s", "within 10 s")
        time.sleep(3)


class PipelinedReplies(Scenario):
    name = "pipelined-replies"
    weakness = "a client that never reads made the server queue its replies without bound"

    def attack(self) -> None:
        args, swarm = self.args, self.swarm
        opened = swarm.open(self.connections(40))
        body = diagnostics_pb2.EchoRequest(payload=bytes(MAX_MESSAGE - 64)).SerializeToString()
        compressed = rawwire.deflate(body)
        # The Echo calls spread evenly among the descriptor-set calls.
        total = args.descriptor_calls + args.echo_calls
        every = max(total // max(args.echo_calls, 1), 1)
        frames = []
        echoes = 0
        for i in range(total):
            if i % every == 0 and echoes < args.echo_calls:
                frames.append(rawwire.call(2 * i + 1, ECHO, compressed, compressed=True))
                echoes += 1
            else:
                frames.append(rawwire.call(2 * i + 1, DESCRIPTOR_SET, b""))
        blob = b"".join(frames)
        say("%s: %d connections each pipelining %d GetFileDescriptorSet and %d compressed Echo "
            "(%d B inflating to %d KiB), never reading; %g s"
            % (self.name, opened, args.descriptor_calls, args.echo_calls, len(compressed), len(body) // KIB,
               self.hold(20)))
        start = time.monotonic()
        sent, left = swarm.pump({sock: [memoryview(blob)] for sock in swarm.sockets}, start + self.hold(20))
        self.figures["request bytes sent"] = sent
        self.figures["connections the server stopped reading"] = left
        time.sleep(max(start + self.hold(20) - time.monotonic(), 0))


class CompressedSubscriptions(Scenario):
    name = "compressed-subscriptions"
    weakness = "every compressed subscription made its deflate context at once, outside any limit"

    def attack(self) -> None:
        self.subscribe_swarm(self.connections(100), self.args.subscriptions, compressed=True)
        # A few events, so that every compressed stream has something to deflate.
        start = time.monotonic()
        try:
            with mrpc_client.insecure_channel(self.server.address, api_key=API_KEY,
                                              client_name="adversary-events") as channel:
                stub = moderation_v1.ModerationStub(channel)
                for i in range(self.args.events):
                    stub.CreateUser(moderation_v1.CreateUserRequest(uid="adv-%d-%d" % (os.getpid(), i), name="adversary"),
                                    timeout=10)
            self.figures["events"] = self.args.events
        except RpcError as error:
            self.figures["events"] = "failed: %s" % error
        say("%s: %s events sent; holding %g s" % (self.name, self.figures["events"], self.hold(10)))
        time.sleep(max(start + self.hold(10) - time.monotonic(), 0))
        self.figures["frames and refusals"] = dict(self.swarm.counts)


class PartialFrames(Scenario):
    name = "partial-frames"
    weakness = "unfinished frames were buffered with no bound on their size or time"

    def attack(self) -> None:
        args, swarm = self.args, self.swarm
        size = int(args.partial_mib * MIB)
        filler = memoryview(bytes(size))
        count = self.connections(300)
        before = swarm.open(count, handshake=False)
        after = swarm.open(count)
        outgoing = {}
        for index, sock in enumerate(swarm.sockets):
            if index < before:
                head = PREFACE + HEADER.pack(size, HELLO, 0, 0, 0)
            else:
                head = HEADER.pack(size, CALL, 0, 0, 1)
            outgoing[sock] = [memoryview(head), filler[:size - 1]]
        swarm.start_reader()
        say("%s: %d connections before HELLO and %d after, each sending all but the last byte of a %g MiB "
            "frame, then stalling; %g s" % (self.name, before, after, args.partial_mib, self.hold(40)))
        start = time.monotonic()
        sent, left = swarm.pump(outgoing, start + self.hold(40) / 2)
        self.figures["bytes sent"] = "%d MiB" % (sent // MIB)
        self.figures["sockets with bytes left at the end of sending"] = left
        time.sleep(max(start + self.hold(40) - time.monotonic(), 0))
        with swarm.lock:
            closed = dict(swarm.closed_by_server)
        first = swarm.sockets[:before]
        self.figures["closed by the server before HELLO"] = sum(1 for s in first if s in closed)
        self.figures["closed by the server after HELLO"] = sum(1 for s in swarm.sockets[before:] if s in closed)
        self.figures["frames received, send errors"] = dict(swarm.counts)


class AuthFlood(Scenario):
    name = "auth-flood"
    weakness = "a log line for every failed handshake"

    def attack(self) -> None:
        args, server = self.args, self.server
        tickets = iter(range(args.wrong_keys))
        tickets_lock = threading.Lock()
        outcomes: Dict[str, int] = collections.Counter()

        def flooder() -> None:
            while True:
                with tickets_lock:
                    ticket = next(tickets, None)
                if ticket is None:
                    return
                outcome = "timeout"
                try:
                    sock = rawwire.connect(server.address, timeout=5)
                    try:
                        sock.settimeout(5)
                        sock.sendall(PREFACE + hello("hardening:wrong-key-%06d" % ticket))
                        frame_type, _, payload = rawwire.read_frame(sock)
                        status = status_of(frame_type, payload)
                        outcome = "%s %s" % (FRAME_NAMES.get(frame_type, frame_type),
                                             status.error_code if status else "")
                    finally:
                        sock.close()
                except EOFError:
                    outcome = "closed"
                except socket.timeout:
                    outcome = "timeout"
                except OSError as error:
                    outcome = error.__class__.__name__
                with tickets_lock:
                    outcomes[outcome] += 1

        self.prober.send("interval 0.02")
        time.sleep(0.3)
        lines0, _ = server.log.snapshot()
        start = time.monotonic()
        threads = [threading.Thread(target=flooder) for _ in range(args.flood_threads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        end = time.monotonic()
        time.sleep(1)
        lines1, _ = server.log.snapshot()
        self.prober.send("interval %g" % args.probe_interval)
        say("%s: %d wrong keys in %.2f s from %d threads: %s"
            % (self.name, args.wrong_keys, end - start, args.flood_threads, dict(outcomes)))
        self.figures["flood seconds"] = round(end - start, 2)
        self.figures["outcomes"] = dict(outcomes)
        self.check("log lines during the flood", lines1 - lines0 <= args.max_auth_log_lines,
                   "%d lines for %d wrong keys" % (lines1 - lines0, args.wrong_keys),
                   "<= %d" % args.max_auth_log_lines)
        during = self.prober.window("fresh", start, end)
        latencies = [s["ms"] for s in during]
        failed = [s for s in during if s["error"]]
        self.check("correct key during the flood", bool(during) and not failed and max(latencies) <= args.echo_limit_ms,
                   "max %.1f ms, p99 %.1f ms, %d connections, %d failed"
                   % (max(latencies or [0]), percentile(latencies, 0.99), len(during), len(failed)),
                   "connect + HELLO + Echo <= %g ms" % args.echo_limit_ms)
        time.sleep(max(start + self.hold(8) - time.monotonic(), 0))


SCENARIOS = [SubscriptionChurn, Emfile, PipelinedReplies, CompressedSubscriptions, PartialFrames, AuthFlood]


def table(results: List[dict]) -> str:
    rows = [("scenario", "check", "result", "measured", "limit")]
    for result in results:
        for check in result["checks"]:
            rows.append((result["scenario"], check["check"], "pass" if check["ok"] else "FAIL", check["measured"],
                         check["limit"]))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(row[i].ljust(widths[i]) for i in range(4)) + "  " + row[4])
        if index == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 5)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", nargs="?", choices=[s.name for s in SCENARIOS] + ["all"])
    parser.add_argument("--server", help="moderation-server binary (release build)")
    parser.add_argument("--out", help="keep each scenario's server.log and result.json, and summary.json, here")
    parser.add_argument("--keep", action="store_true", help="keep the servers' data directories too")
    server = parser.add_argument_group("the server")
    server.add_argument("--memory-budget", default="512MiB",
                        help="passed as --memory-budget and the base of the RSS limit (default 512MiB)")
    server.add_argument("--no-budget-flag", action="store_true",
                        help="do not pass --memory-budget (a build before the flag); the RSS limit still uses it")
    server.add_argument("--grace", type=int, default=10, help="the server's --shutdown-grace, seconds (default 10)")
    server.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for every server (repeat it)")
    limits = parser.add_argument_group("checks")
    limits.add_argument("--rss-slack-mib", type=float, default=200, help="RSS limit = budget + this (default 200)")
    limits.add_argument("--kill-rss-mib", type=float, default=2048,
                        help="SIGKILL the server past this RSS, to protect the machine (default 2048)")
    limits.add_argument("--echo-limit-ms", type=float, default=100, help="fresh Echo limit (default 100)")
    limits.add_argument("--probe-interval", type=float, default=0.2, help="seconds between probes (default 0.2)")
    limits.add_argument("--probe-timeout", type=float, default=5, help="a probe gives up after this (default 5 s)")
    limits.add_argument("--exit-slack", type=float, default=1.0,
                        help="seconds past the grace a SIGTERM may take to exit (default 1)")
    attack = parser.add_argument_group("the attacks")
    attack.add_argument("--hold", type=float,
                        help="the main phase's length in seconds, for longer runs (defaults: churn 20 after the "
                             "drop, emfile 10, pipelined 20, compressed 10, partial 40, auth-flood 8)")
    attack.add_argument("--connections", type=int,
                        help="attacking connections (defaults: churn 60, pipelined 40, compressed 100, partial "
                             "300 before HELLO + 300 after)")
    attack.add_argument("--subscriptions", type=int, default=1024, help="Subscribe calls per connection (1024)")
    attack.add_argument("--settle", type=float, default=20,
                        help="seconds to wait for the subscriptions to be in place (default 20)")
    attack.add_argument("--events", type=int, default=3, help="events sent to the compressed subscriptions (3)")
    attack.add_argument("--nofile", type=int, default=256, help="the emfile server's descriptor limit (256)")
    attack.add_argument("--max-cpu", type=float, default=0.2, help="emfile: CPU limit while held, cores (0.2)")
    attack.add_argument("--max-log-rate", type=float, default=1.0,
                        help="emfile: log lines per second allowed while held, plus one (1)")
    attack.add_argument("--descriptor-calls", type=int, default=512,
                        help="pipelined: GetFileDescriptorSet calls per connection (512)")
    attack.add_argument("--echo-calls", type=int, default=32,
                        help="pipelined: compressed 4 MiB Echo calls per connection (32)")
    attack.add_argument("--partial-mib", type=float, default=4, help="partial-frames: the frame's size (4 MiB)")
    attack.add_argument("--wrong-keys", type=int, default=3000, help="auth-flood: wrong keys sent (3000)")
    attack.add_argument("--flood-threads", type=int, default=16, help="auth-flood: connecting threads (16)")
    attack.add_argument("--max-auth-log-lines", type=int, default=50,
                        help="auth-flood: log lines allowed during the flood (50)")
    parser.add_argument("--probe", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        return probe_main(args.probe, args.probe_interval, args.probe_timeout)
    if not args.scenario or not args.server:
        parser.error("a scenario and --server are required")
    parse_bytes(args.memory_budget)

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    out = args.out or tempfile.mkdtemp(prefix="adversary-")
    os.makedirs(out, exist_ok=True)
    chosen = SCENARIOS if args.scenario == "all" else [s for s in SCENARIOS if s.name == args.scenario]
    results = []
    started = []
    for scenario_type in chosen:
        scenario = scenario_type(args, out)
        scenario.run()
        started.append(scenario.server is not None)
        results.append(scenario.result())
        for check in scenario.checks:
            say("%s: %s %s: %s (limit %s)" % (scenario.name, "pass" if check.ok else "FAIL", check.name,
                                               check.measured, check.limit))
        for name, value in scenario.figures.items():
            say("%s: %s: %s" % (scenario.name, name, value))
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(results, fh, indent=2)
    print()
    print(table(results))
    print()
    failed = [r["scenario"] for r in results if not all(c["ok"] for c in r["checks"])]
    say("output in %s" % out)
    if not all(started):
        return 2
    if failed:
        say("FAILED: %s" % ", ".join(failed))
        return 1
    say("passed: %s" % ", ".join(r["scenario"] for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
