#!/usr/bin/env python3
"""Hostile clients against a running moderation-server: hand-built HTTP/2 and framed-protocol
bytes over raw sockets.

    hostile.py [--cases LIST] [--second HOST:PORT] [--log FILE] [--budget-mib N]
               [--tls-dir DIR] [--mtls] HOST:PORT SERVER_PID APP_ID:KEY

Run by tests/grpc-hostile/run, which starts the servers (one per group of cases) and passes the
listener to attack (HOST:PORT; every listener serves gRPC and the framed protocol), the server's
pid, its API key and, where a case needs them, the other listener (--second), the server's log
(--log), its --memory-budget in MiB (--budget-mib) and the throwaway CA of a TLS server
(--tls-dir: ca.pem, client.pem, client.key, other-client.*; --mtls: the server asks for client
certificates, so every served connection presents client.pem).

Python's standard library only: frames are built by hand, request headers are HPACK literals (no
Huffman), and the server's header blocks are decoded by libnghttp2's public HPACK inflater
through ctypes (the library the server links; Debian libnghttp2-14) — the server's encoder uses
Huffman codes and its dynamic table.

Each case asserts a clear outcome and then that the server is alive: a fresh connection's Echo
answers grpc-status 0 with its payload. Prints one line per check ("ok - ..." or "FAIL - ..."),
the figures measured, and "N passed, M failed"; exits 1 on any failure.

The cases (--cases, comma-separated; default basic):

basic                 An HTTP/1.1 request, a bad preface, a wrong content-type, missing and wrong
                      keys, a message announced over 4 MiB, a gzip bomb, and a rapid-reset flood,
                      which watches VmRSS (/proc/PID/status every 20 ms) and fails when it grows
                      more than 64 MiB.
control-floods        100 000 PINGs, then 100 000 SETTINGS, on a connection that never reads and
                      sends no request: each must end with GOAWAY (at the latest when the handshake
                      timeout, 10 s, ends the request-less connection), VmRSS watched as above.
request-timeout       One connection opens streams with a key and never ends them, and is left
                      alone while the other cases run (the run waits for it if they take less
                      than 30 s): each stream must end with DEADLINE_EXCEEDED once the request
                      timeout (30 s) has passed.
never-ended-streams   200 connections with a key, each putting a 3.6 KB header into the HPACK table
                      once and then opening 1 023 streams that reference it (16 bytes each) and
                      never end. Streams past a connection's head budget (2 MiB) must be refused,
                      the heads held stay within the memory budget (connections past it are cut
                      or no longer read), VmRSS within the budget.
never-ended-keyless   The same without a key (the health check), 60 connections: past a key-less
                      connection's 4 calls (16 KiB of heads) streams must be refused, and the held
                      ones end (or their connection) within the handshake timeout (10 s).
log-flood             For 3 s, connections without a key sending HTTP/2 garbage after the preface,
                      gRPC requests with a wrong key, framed HELLOs with a wrong key and framed
                      garbage, first from one source address, then from 250: the server's log
                      must grow by fewer than 100 lines each time, and once a summary round
                      (10 s) has passed it says how many failures it did not log one by one.
gzip-flood            Two connections sending 4 KB gzip requests that inflate past 4 MiB, with a
                      key (Echo) and without one (the health check): each refused, VmRSS bounded.
backpressure          One connection with its flow-control windows wide open asks for the
                      descriptor set (100 KB answers) 100 000 times and never reads: the server
                      must stop reading it, its VmRSS grow by at most 32 MiB (the answers would
                      take 9 GiB); read again, the connection gets its answers.
tls-handshakes        Thousands of TCP connections to a TLS listener that send half a ClientHello,
                      or nothing, and stay: past the memory budget (48 KiB a handshake) new ones
                      must be refused, VmRSS stay within the budget.
descriptors           The server's descriptor limit is lowered to 256 and filled with idle gRPC
                      connections: a new framed connection must get GOAWAY ERR_TOO_MANY_CONNECTIONS
                      and a new gRPC one a GOAWAY or a close, each within 1 s; once the idle ones
                      close, new clients are served.
mtls                  A server that asks for client certificates: cleartext HTTP/2 and a cleartext
                      HELLO on both listeners, and TLS without a certificate or with one from
                      another CA, are never served.

The attacks on the event loop (never-ended-streams, never-ended-keyless, gzip-flood,
backpressure, tls-handshakes; run's servers have --threads 1, so every connection shares one loop)
each have a bystander: a separate process whose connection is opened before the attack and calls
Echo every 10 ms while it runs; its slowest call must take under 100 ms (a debug build's limit is
$HOSTILE_BYSTANDER_LIMIT_MS, which run sets), and every call must succeed. Their figures say how long the server's loop thread ran and waited for a CPU meanwhile:
a slow bystander is the server's doing when its loop ran all along, the machine's when it
waited. VmRSS bounds are stated against the server's VmRSS at the start of the run (its
baseline): at most baseline + --memory-budget + RSS_BUDGET_SLACK_KIB.
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import math
import os
import resource
import select
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SETTINGS_INITIAL_WINDOW_SIZE = 4
FRAME_NAMES = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
               "WINDOW_UPDATE", "CONTINUATION"]
ERROR_NAMES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 3: "FLOW_CONTROL_ERROR",
               4: "SETTINGS_TIMEOUT", 5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR", 7: "REFUSED_STREAM",
               8: "CANCEL", 9: "COMPRESSION_ERROR", 10: "CONNECT_ERROR", 11: "ENHANCE_YOUR_CALM",
               12: "INADEQUATE_SECURITY", 13: "HTTP_1_1_REQUIRED"}
ECHO = "/mrpc.diagnostics.v1.Diagnostics/Echo"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
DESCRIPTOR_SET = "/mrpc.reflection.v1.Reflection/GetFileDescriptorSet"
MAX_MESSAGE = 4 * 1024 * 1024
RSS_LIMIT_KIB = 64 * 1024

# What the server lets one connection hold (docs/GRPC.md, docs/OPERATIONS.md): the heads of its
# calls in flight, and the tighter limits of a connection without a key (health checks only).
MAX_CONCURRENT_STREAMS = 1024
MAX_HELD_HEAD_BYTES = 2 * 1024 * 1024
KEYLESS_MAX_CALLS = 4
KEYLESS_MAX_HEAD_BYTES = 16 * 1024
REQUEST_TIMEOUT_S = 30
HANDSHAKE_TIMEOUT_S = 10
TLS_HANDSHAKE_BYTES = 48 * 1024  # what a TLS handshake under way counts in the memory budget

# VmRSS may exceed the server's baseline by its --memory-budget plus this. The baseline (VmRSS
# after start and one Echo) is measured at the start of each run: 26–28 MiB for the debug build.
# On top of what the budget counts come costs it does not count (docs/OPERATIONS.md, "The memory
# budget"): the budget may be passed by one reply and a 64 KiB holding per event loop (4.1 MiB
# with one loop), the large-request pool holds up to three times the message limit while it
# inflates (12 MiB), every connection and held call has state of its own (socket, HTTP/2 stream,
# call: about 1 KiB a held call, uncounted), and malloc keeps arenas and fragments once hundreds
# of MiB have come and gone. 64 MiB is a quarter of the 256 MiB budget run gives the server;
# measured with the debug build, 58 000 held calls (never-ended-streams) peak at baseline +
# 293 MiB, 5 461 pending TLS handshakes at baseline + 154 MiB.
RSS_BUDGET_SLACK_KIB = 64 * 1024

# The bystander: a connection opened before an attack, calling Echo every BYSTANDER_PAUSE_S. Its
# slowest call must take under 100 ms against a release build; a debug build (its Swift several
# times slower, and tests/grpc-hostile/run says which it runs) gets HOSTILE_BYSTANDER_LIMIT_MS.
BYSTANDER_LIMIT_MS = int(os.environ.get("HOSTILE_BYSTANDER_LIMIT_MS", "100"))
BYSTANDER_PAUSE_S = 0.01

# Sizes of the attacks, scaled to finish in a few seconds each on a 2-core machine.
STREAM_CONNECTIONS = 200        # never-ended-streams: connections with a key (2 MiB of heads each)
# never-ended-keyless: connections without a key. The debug server refuses about 12 000 key-less
# streams a second (85 ms for a connection's 1 019 past the 4 it holds): 60 connections are
# refused well within the 10 s a key-less connection may live, when what each holds is read.
KEYLESS_STREAM_CONNECTIONS = 60
STREAMS_PER_CONNECTION = MAX_CONCURRENT_STREAMS - 1  # the most a connection may have open, less one
PAD_BYTES = 3600                # the header value put in the HPACK table once
LOG_FLOOD_SECONDS = 1.5         # each of the two phases (one address, then many)
LOG_FLOOD_ADDRESSES = 250       # 127.0.0.2 and up
LOG_LINES_LIMIT = 100
GZIP_FLOOD_SECONDS = 3.0
BACKPRESSURE_SECONDS = 3.0
BACKPRESSURE_REQUESTS = 100_000
# A connection that does not read may make the server hold 8 MiB of answers (its output limit);
# with the answer being built, the socket layer's buffers and the allocator's slack, 32 MiB.
BACKPRESSURE_RSS_LIMIT_KIB = 32 * 1024
TLS_CONNECTIONS = 8000
DESCRIPTOR_LIMIT = 256
REFUSAL_LIMIT_S = 1.0

# --- HPACK -----------------------------------------------------------------------------------


def hpack_int(value: int, prefix_bits: int, first: int = 0) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def hpack_literal(name: str, value: str) -> bytes:
    """A literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    n, v = name.encode(), value.encode()
    return b"\x00" + hpack_int(len(n), 7) + n + hpack_int(len(v), 7) + v


def hpack_literal_indexed(name: str, value: str) -> bytes:
    """A literal header field with incremental indexing, new name (RFC 7541 6.2.1): the decoder
    adds it to its dynamic table."""
    n, v = name.encode(), value.encode()
    return b"\x40" + hpack_int(len(n), 7) + n + hpack_int(len(v), 7) + v


def header_block(headers: list[tuple[str, str]]) -> bytes:
    return b"".join(hpack_literal(n, v) for n, v in headers)


def indexed_requests(headers: list[tuple[str, str]]) -> tuple[bytes, bytes]:
    """Two header blocks for a request whose first two fields are :method POST and :scheme http
    (static table entries 3 and 6): the first puts the other fields into the decoder's dynamic
    table, the second (for every later request on the connection) names them by index, one byte
    each."""
    assert headers[:2] == [(":method", "POST"), (":scheme", "http")]
    rest = headers[2:]
    table = sum(len(n.encode()) + len(v.encode()) + 32 for n, v in rest)
    assert table <= 4096, "the fields do not fit the default HPACK table (%d bytes)" % table
    assert len(rest) <= 60
    first = b"\x83\x86" + b"".join(hpack_literal_indexed(n, v) for n, v in rest)
    # The newest entry is 62, so the first field added is 62 + len(rest) - 1.
    again = b"\x83\x86" + bytes(0x80 | (62 + len(rest) - 1 - i) for i in range(len(rest)))
    return first, again


class _NV(ctypes.Structure):
    _fields_ = [("name", ctypes.POINTER(ctypes.c_uint8)), ("value", ctypes.POINTER(ctypes.c_uint8)),
                ("namelen", ctypes.c_size_t), ("valuelen", ctypes.c_size_t), ("flags", ctypes.c_uint8)]


_lib = ctypes.CDLL("libnghttp2.so.14")
_lib.nghttp2_hd_inflate_new.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
_lib.nghttp2_hd_inflate_hd2.restype = ctypes.c_ssize_t
_lib.nghttp2_hd_inflate_hd2.argtypes = [ctypes.c_void_p, ctypes.POINTER(_NV), ctypes.POINTER(ctypes.c_int),
                                        ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
_lib.nghttp2_hd_inflate_end_headers.argtypes = [ctypes.c_void_p]
_lib.nghttp2_hd_inflate_del.argtypes = [ctypes.c_void_p]


class Inflater:
    """One connection's HPACK decoder (its dynamic table lives as long as the connection)."""

    def __init__(self) -> None:
        self.ptr = ctypes.c_void_p()
        if _lib.nghttp2_hd_inflate_new(ctypes.byref(self.ptr)) != 0:
            raise MemoryError("nghttp2_hd_inflate_new")

    def __del__(self) -> None:
        if self.ptr:
            _lib.nghttp2_hd_inflate_del(self.ptr)

    def decode(self, block: bytes) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        buf = ctypes.create_string_buffer(block, len(block))
        base = ctypes.addressof(buf)
        offset = 0
        while True:
            nv = _NV()
            flags = ctypes.c_int(0)
            n = _lib.nghttp2_hd_inflate_hd2(self.ptr, ctypes.byref(nv), ctypes.byref(flags),
                                            ctypes.c_char_p(base + offset), len(block) - offset, 1)
            if n < 0:
                raise ValueError("HPACK decoding failed (%d)" % n)
            offset += n
            if flags.value & 0x02:  # NGHTTP2_HD_INFLATE_EMIT
                out.append((ctypes.string_at(nv.name, nv.namelen).decode("latin-1"),
                            ctypes.string_at(nv.value, nv.valuelen).decode("latin-1")))
            if flags.value & 0x01:  # NGHTTP2_HD_INFLATE_FINAL
                _lib.nghttp2_hd_inflate_end_headers(self.ptr)
                return out
            if n == 0 and not flags.value & 0x02:
                raise ValueError("HPACK block incomplete")


# --- frames and a minimal connection ----------------------------------------------------------


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def grpc_message(body: bytes, compressed: bool = False) -> bytes:
    return bytes([1 if compressed else 0]) + struct.pack(">I", len(body)) + body


def echo_request(payload: bytes) -> bytes:
    return b"\x0a" + bytes([len(payload)]) + payload  # EchoRequest{payload} (payload < 128 bytes)


def request_headers(key: str | None, path: str = ECHO, content_type: str = "application/grpc",
                    extra: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    headers = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
               ("content-type", content_type), ("te", "trailers")]
    if key is not None:
        headers.append(("authorization", "Bearer " + key))
    return headers + (extra or [])


def wait_readable(sock: socket.socket, timeout: float) -> bool:
    """poll(2) rather than select(2): the floods hold descriptors past FD_SETSIZE."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(max(0, math.ceil(timeout * 1000))))


def tls_context(tls_dir: str, alpn: str | None, certificate: str | None = None) -> ssl.SSLContext:
    """A client context trusting the run's throwaway CA, offering `alpn`, presenting
    `certificate` (a name in tls_dir: client, other-client) when given."""
    context = ssl.create_default_context(cafile=os.path.join(tls_dir, "ca.pem"))
    if alpn:
        context.set_alpn_protocols([alpn])
    if certificate:
        context.load_cert_chain(os.path.join(tls_dir, certificate + ".pem"), os.path.join(tls_dir, certificate + ".key"))
    return context


class Response:
    def __init__(self) -> None:
        self.headers: list[tuple[str, str]] = []
        self.trailers: list[tuple[str, str]] = []
        self.data = b""
        self.ended = False
        self.reset: int | None = None
        self.at = 0.0  # when it ended (time.monotonic())

    def field(self, name: str) -> str | None:
        for n, v in self.trailers + self.headers:
            if n == name:
                return v
        return None

    def describe(self) -> str:
        parts = ["headers %s" % dict(self.headers)]
        if self.trailers:
            parts.append("trailers %s" % dict(self.trailers))
        if self.data:
            parts.append("%d bytes of DATA" % len(self.data))
        if self.reset is not None:
            parts.append("RST_STREAM %s" % ERROR_NAMES.get(self.reset, self.reset))
        return ", ".join(parts)

    def outcome(self) -> str:
        """What ended the stream, in a word or two: 'grpc-status 8 ERR_OVERLOADED', 'RST_STREAM
        REFUSED_STREAM', 'HTTP 415'."""
        if self.reset is not None:
            return "RST_STREAM %s" % ERROR_NAMES.get(self.reset, self.reset)
        status = self.field("grpc-status")
        if status is None:
            return "HTTP %s" % self.field(":status")
        if status == "0":
            return "grpc-status 0"
        return "grpc-status %s %s" % (status, error_info_reason(self.field("grpc-status-details-bin")))


class Connection:
    """A raw HTTP/2 client connection: send what you like, read frames as they come."""

    def __init__(self, address: tuple[str, int], preface: bool = True, tls: ssl.SSLContext | None = None,
                 settings: bytes = b"", timeout: float = 10, source: str | None = None) -> None:
        raw = socket.create_connection(address, timeout=timeout, source_address=(source, 0) if source else None)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.tls = tls is not None
        if tls is not None:
            try:
                self.sock = tls.wrap_socket(raw, server_hostname="localhost")
            except BaseException:
                raw.close()
                raise
        else:
            self.sock = raw
        self.buffer = b""
        self.inflater = Inflater()
        self.goaway: tuple[int, int, bytes] | None = None  # last stream id, error code, debug data
        self.closed = False  # EOF or reset seen
        self.close_reason = ""
        self.closed_at = 0.0
        self.frames_seen: dict[str, int] = {}
        self.responses: dict[int, Response] = {}
        self.peer_settings: dict[int, int] = {}
        self.send_window = 65535  # the connection's flow-control window for what we send
        self.grant = True  # WINDOW_UPDATE for every DATA received (keeps the server's windows open)
        self._block: tuple[int, int, bytes] | None = None  # a header block awaiting CONTINUATION
        if preface:
            self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, settings))

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, stream: int, headers: list[tuple[str, str]], body: bytes | None, end: bool = True) -> None:
        flags = END_HEADERS | (END_STREAM if body is None and end else 0)
        out = frame(HEADERS, flags, stream, header_block(headers))
        if body is not None:
            chunks = [body[i:i + 16384] for i in range(0, len(body), 16384)] or [b""]
            for i, chunk in enumerate(chunks):
                last = i == len(chunks) - 1
                out += frame(DATA, END_STREAM if last and end else 0, stream, chunk)
            self.send_window -= len(body)
        self.send(out)

    def _ended(self, reason: str) -> bool:
        self.closed, self.close_reason, self.closed_at = True, reason, time.monotonic()
        return False

    def _recv(self, timeout: float) -> bool:
        """Reads what arrives within `timeout`; False once the connection is over."""
        if self.closed:
            return False
        pending = self.tls and self.sock.pending() > 0  # type: ignore[attr-defined]
        if not pending and not wait_readable(self.sock, timeout):
            return True
        try:
            chunk = self.sock.recv(1 << 20)
        except ssl.SSLWantReadError:
            return True
        except ssl.SSLError as error:
            return self._ended("TLS: %s" % (error.reason or error))
        except ConnectionResetError:
            return self._ended("connection reset")
        except socket.timeout:
            return True
        except OSError as error:
            return self._ended("recv failed: %s" % error)
        if not chunk:
            return self._ended("EOF")
        self.buffer += chunk
        self._parse()
        return True

    def _parse(self) -> None:
        buffer, at = self.buffer, 0  # the buffer is cut once, not once per frame
        while len(buffer) - at >= 9:
            length = int.from_bytes(buffer[at:at + 3], "big")
            if len(buffer) - at < 9 + length:
                break
            kind, flags = buffer[at + 3], buffer[at + 4]
            stream = int.from_bytes(buffer[at + 5:at + 9], "big") & 0x7FFFFFFF
            payload = buffer[at + 9:at + 9 + length]
            at += 9 + length
            name = FRAME_NAMES[kind] if kind < len(FRAME_NAMES) else "type-%d" % kind
            self.frames_seen[name] = self.frames_seen.get(name, 0) + 1
            self._handle(kind, flags, stream, payload)
        self.buffer = buffer[at:]

    def _send_quietly(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def _handle(self, kind: int, flags: int, stream: int, payload: bytes) -> None:
        if kind == SETTINGS and not flags & ACK:
            for i in range(0, len(payload) - 5, 6):
                ident, value = struct.unpack(">HI", payload[i:i + 6])
                self.peer_settings[ident] = value
            self._send_quietly(frame(SETTINGS, ACK, 0))
        elif kind == PING and not flags & ACK:
            self._send_quietly(frame(PING, ACK, 0, payload))
        elif kind == WINDOW_UPDATE and stream == 0:
            self.send_window += struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF
        elif kind == GOAWAY:
            last, code = struct.unpack(">II", payload[:8])
            self.goaway = (last & 0x7FFFFFFF, code, payload[8:])
        elif kind in (HEADERS, CONTINUATION):
            if kind == HEADERS:
                block = payload
                if flags & 0x8:  # PADDED
                    block = block[1:len(block) - block[0]]
                if flags & 0x20:  # PRIORITY
                    block = block[5:]
                self._block = (stream, flags, block)
            else:
                assert self._block is not None
                self._block = (self._block[0], self._block[1], self._block[2] + payload)
            if flags & END_HEADERS and self._block is not None:
                stream, first_flags, block = self._block
                self._block = None
                fields = self.inflater.decode(block)
                response = self.responses.setdefault(stream, Response())
                if response.headers:
                    response.trailers = fields
                else:
                    response.headers = fields
                if first_flags & END_STREAM:
                    response.ended, response.at = True, time.monotonic()
        elif kind == DATA:
            response = self.responses.setdefault(stream, Response())
            response.data += payload
            if flags & END_STREAM:
                response.ended, response.at = True, time.monotonic()
            if payload and self.grant:  # keep the windows open
                self._send_quietly(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", len(payload)))
                                   + frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", len(payload))))
        elif kind == RST_STREAM:
            response = self.responses.setdefault(stream, Response())
            response.reset = struct.unpack(">I", payload[:4])[0]
            response.ended, response.at = True, time.monotonic()

    def response(self, stream: int, timeout: float = 10) -> Response:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            response = self.responses.get(stream)
            if response and response.ended:
                return response
            if not self._recv(deadline - time.monotonic()):
                break
        return self.responses.get(stream, Response())

    def until_over(self, timeout: float) -> bool:
        """Reads until GOAWAY or the end of the connection; True when either came in time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.goaway is None:
            if not self._recv(deadline - time.monotonic()):
                return True
        return self.goaway is not None or self.closed

    def how_over(self) -> str:
        if self.goaway:
            return "GOAWAY %s" % ERROR_NAMES.get(self.goaway[1], self.goaway[1])
        if self.closed:
            return "closed without GOAWAY (%s)" % self.close_reason
        return "open"


def pump(connections: list[Connection], timeout: float) -> int:
    """Reads what arrives on any of `connections` within `timeout` (one poll); returns how many
    had something."""
    live = {c.sock.fileno(): c for c in connections if not c.closed}
    if not live:
        return 0
    poller = select.poll()
    for fd in live:
        poller.register(fd, select.POLLIN)
    ready = poller.poll(max(0, math.ceil(timeout * 1000)))
    for fd, _ in ready:
        live[fd]._recv(0)
    return len(ready)


def pump_until_quiet(connections: list[Connection], quiet: float, limit: float) -> None:
    """Reads until nothing arrived for `quiet` seconds, or `limit` seconds passed."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if pump(connections, min(quiet, max(0.0, deadline - time.monotonic()))) == 0:
            return


def tally(counts: dict[str, int]) -> str:
    return ", ".join("%s: %d" % (k, v) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])) or "none"


# --- google.rpc.Status, just enough to read ErrorInfo's reason --------------------------------


def _fields(data: bytes) -> list[tuple[int, object]]:
    out, i = [], 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            n, i = _varint(data, i)
            value, i = data[i:i + n], i + n
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        else:
            raise ValueError("wire type %d" % wire)
        out.append((number, value))
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def error_info_reason(details_bin: str | None) -> str:
    """ErrorInfo.reason from grpc-status-details-bin (unpadded base64 of google.rpc.Status)."""
    import base64

    if not details_bin:
        return "(no grpc-status-details-bin)"
    status = _fields(base64.b64decode(details_bin + "=" * (-len(details_bin) % 4)))
    for number, value in status:
        if number == 3:  # details: Any
            any_fields = dict(_fields(value))  # type: ignore[arg-type]
            if any_fields.get(1) == b"type.googleapis.com/google.rpc.ErrorInfo":
                info = dict(_fields(any_fields.get(2, b"")))  # type: ignore[arg-type]
                return info.get(1, b"").decode()  # type: ignore[union-attr]
    return "(no ErrorInfo)"


# --- the framed protocol (docs/PROTOCOL.md) ----------------------------------------------------

MRPC_PREFACE = b"MRPC\x00\x01\x00\x00"
F_HELLO, F_HELLO_ACK, F_CALL, F_REPLY, F_GOAWAY = 1, 2, 3, 4, 10


def pb_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def pb_bytes(number: int, value: bytes) -> bytes:
    return pb_varint(number << 3 | 2) + pb_varint(len(value)) + value


def mrpc_frame(kind: int, payload: bytes, stream: int = 0, flags: int = 0) -> bytes:
    return struct.pack(">IBBHI", len(payload), kind, flags, 0, stream) + payload


def mrpc_hello(key: str) -> bytes:
    return MRPC_PREFACE + mrpc_frame(F_HELLO, pb_bytes(1, key.encode()) + pb_bytes(2, b"hostile.py"))


def mrpc_status(data: bytes) -> tuple[int, str, str]:
    """A Status: its code, error_code and message."""
    fields = dict(_fields(data))
    return (int(fields.get(1, 0)), bytes(fields.get(2, b"")).decode(), bytes(fields.get(3, b"")).decode())  # type: ignore


class Framed:
    """A raw framed-protocol client connection: the preface and a HELLO with `key` on connect."""

    def __init__(self, address: tuple[str, int], key: str, timeout: float = 10,
                 tls: ssl.SSLContext | None = None) -> None:
        raw = socket.create_connection(address, timeout=timeout)
        self.sock = tls.wrap_socket(raw, server_hostname="localhost") if tls else raw
        self.buffer = b""
        self.closed = ""
        self.sock.sendall(mrpc_hello(key))

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def read_frame(self, timeout: float) -> tuple[int, int, bytes] | None:
        """The next frame (type, stream, payload), or None when the connection ended
        (self.closed says how) or nothing came in time."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buffer) >= 12:
                length, kind, _, _, stream = struct.unpack(">IBBHI", self.buffer[:12])
                if len(self.buffer) >= 12 + length:
                    payload = self.buffer[12:12 + length]
                    self.buffer = self.buffer[12 + length:]
                    return kind, stream, payload
            if self.closed or time.monotonic() >= deadline:
                return None
            if not wait_readable(self.sock, deadline - time.monotonic()):
                continue
            try:
                chunk = self.sock.recv(65536)
            except (ssl.SSLError, OSError) as error:
                self.closed = "%s" % (getattr(error, "reason", None) or error)
                continue
            if not chunk:
                self.closed = "EOF"
            self.buffer += chunk

    def echo(self, stream: int, payload: bytes, timeout: float = 10) -> tuple[int, str, bytes] | None:
        """An Echo call: (status code, error code, response body), or None without a REPLY."""
        header = pb_bytes(1, ECHO.encode())
        self.sock.sendall(mrpc_frame(F_CALL, struct.pack(">I", len(header)) + header + pb_bytes(1, payload), stream))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.read_frame(deadline - time.monotonic())
            if got is None:
                return None
            kind, got_stream, body = got
            if kind == F_REPLY and got_stream == stream:
                size = struct.unpack(">I", body[:4])[0]
                code, error_code, _ = mrpc_status(body[4:4 + size])
                return code, error_code, body[4 + size:]
        return None


def describe_goaway(payload: bytes) -> tuple[str, str]:
    """A framed GOAWAY's error code and message."""
    fields = dict(_fields(payload))
    _, error_code, message = mrpc_status(bytes(fields.get(2, b"")))  # type: ignore[arg-type]
    return error_code, message


# --- watching the server -----------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def loop_schedstat(pid: int) -> tuple[int, int]:
    """Nanoseconds the server's first event loop thread ("loop-0") has run, and waited for a CPU
    while runnable (/proc/PID/task/TID/schedstat); (-1, -1) when not found."""
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() != "loop-0":
                    continue
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                run, wait = f.read().split()[:2]
                return int(run), int(wait)
    except (OSError, ValueError):
        pass
    return -1, -1


class RSSWatch:
    """Samples the server's VmRSS every 20 ms while in use: `before`, `peak`, `after`; and how long
    its event loop ran and waited for a CPU meanwhile (a stalled bystander is the server's doing
    when its loop ran all along, the machine's when the loop waited)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.before = self.peak = self.after = rss_kib(pid)
        self.sched_before = self.sched_after = loop_schedstat(pid)
        self.longest_wait_ns = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        last = self.sched_before
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_kib(self.pid))
            sched = loop_schedstat(self.pid)
            if sched[1] >= 0 and last[1] >= 0:
                self.longest_wait_ns = max(self.longest_wait_ns, sched[1] - last[1])
            last = sched
            time.sleep(0.02)

    def __enter__(self) -> "RSSWatch":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.after = rss_kib(self.pid)
        self.peak = max(self.peak, self.after)
        self.sched_after = loop_schedstat(self.pid)

    def describe(self) -> str:
        text = "VmRSS %d → peak %d KiB (+%d KiB), %d KiB at the end" % (self.before, self.peak,
                                                                       self.peak - self.before, self.after)
        if self.sched_before[0] >= 0 and self.sched_after[0] >= 0:
            text += "; loop-0 ran %.0f ms and waited %.0f ms for a CPU (at most %.0f ms in a 20 ms sample)" % (
                (self.sched_after[0] - self.sched_before[0]) / 1e6, (self.sched_after[1] - self.sched_before[1]) / 1e6,
                self.longest_wait_ns / 1e6)
        return text


class Bystander:
    """Another client of the server, in a process of its own (so the attacker's Python does not
    slow it down): its connection is opened before the attack; it then calls Echo every 10 ms
    until stopped, and reports its calls' latencies."""

    def __init__(self, address: tuple[str, int], key: str, tls_dir: str | None, mtls: bool) -> None:
        args = [sys.executable, os.path.abspath(__file__), "--bystander", "%s:%d" % address, key]
        if tls_dir:
            args += ["--tls-dir", tls_dir] + (["--mtls"] if mtls else [])
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.ready = self.proc.stdout.readline().strip()

    def stop(self) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.close()
            out = self.proc.stdout.read()
            self.proc.wait(timeout=20)
            return json.loads(out)
        except (ValueError, subprocess.TimeoutExpired, OSError) as error:
            self.proc.kill()
            return {"calls": 0, "failed": 1, "max_ms": -1, "first_failure": "no report: %s" % error}


def describe_bystander(stats: dict) -> str:
    text = "bystander: %d Echo calls, %d failed, latency p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (
        stats.get("calls", 0), stats.get("failed", 0), stats.get("p50_ms", -1), stats.get("p99_ms", -1),
        stats.get("max_ms", -1))
    if stats.get("slow"):
        slowest = stats["slow"][0]
        text += ", over %d ms: %d (s into the attack → ms: %s; the slowest was stream %d sent at %s UTC)" % (
            BYSTANDER_LIMIT_MS, stats.get("over_limit", 0),
            ", ".join("%.2f→%.0f" % tuple(s[:2]) for s in stats["slow"][:8]), slowest[2],
            time.strftime("%H:%M:%S", time.gmtime(slowest[3])) + (".%03d" % (slowest[3] % 1 * 1000)))
    if stats.get("first_failure"):
        text += ", first failure: %s" % stats["first_failure"]
    return text


def bystander_main(argv: list[str]) -> int:
    """The bystander process: prints "ready" once its first Echo answered, then calls Echo every
    BYSTANDER_PAUSE_S until its standard input ends, then prints its figures as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("address")
    parser.add_argument("key")
    parser.add_argument("--tls-dir")
    parser.add_argument("--mtls", action="store_true")
    args = parser.parse_args(argv)
    host, port = args.address.rsplit(":", 1)
    tls = tls_context(args.tls_dir, "h2", "client" if args.mtls else None) if args.tls_dir else None
    latencies: list[float] = []
    slow: list[tuple[float, float, int, float]] = []  # since the first call, ms, stream id, wall clock
    failed, first_failure = 0, ""
    try:
        conn = Connection((host, int(port)), tls=tls)
    except (OSError, ssl.SSLError) as error:
        print("cannot connect: %s" % error, flush=True)
        print(json.dumps({"calls": 0, "failed": 1, "max_ms": -1, "first_failure": "cannot connect: %s" % error}))
        return 0
    stream = 1
    started = 0.0
    while True:
        payload = b"bystander-%08d" % stream
        begun = time.monotonic()
        try:
            conn.request(stream, request_headers(args.key), grpc_message(echo_request(payload)))
            response = conn.response(stream, timeout=5)
        except OSError as error:
            response = Response()
            conn.closed, conn.close_reason = True, "send failed: %s" % error
        elapsed = (time.monotonic() - begun) * 1000
        ok = response.field("grpc-status") == "0" and response.data == grpc_message(echo_request(payload))
        if stream == 1:
            started = time.monotonic()
            print("ready" if ok else "first Echo failed: %s" % response.describe(), flush=True)
        else:
            latencies.append(elapsed)
            if elapsed > BYSTANDER_LIMIT_MS:
                slow.append((begun - started, elapsed, stream, time.time() - elapsed / 1000))
            if not ok:
                failed += 1
                if not first_failure:
                    first_failure = "%s after %.0f ms (%s)" % (
                        response.outcome() if response.ended else "no answer", elapsed,
                        conn.how_over() if conn.closed or conn.goaway else "connection open")
        if conn.closed:
            break
        stream += 2
        ready, _, _ = select.select([sys.stdin], [], [], BYSTANDER_PAUSE_S)
        if ready:
            break
    if conn.closed:  # wait for the end all the same
        sys.stdin.read()
    conn.close()
    ordered = sorted(latencies) or [-1.0]
    print(json.dumps({
        "calls": len(latencies), "failed": failed, "first_failure": first_failure,
        "p50_ms": ordered[len(ordered) // 2], "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
        "max_ms": ordered[-1], "over_limit": len(slow), "slow": sorted(slow, key=lambda s: -s[1])[:8],
    }))
    return 0


class RequestTimeoutWatch:
    """One connection with a key opens streams it never ends, then is left alone (a thread reads
    it): each stream must end with DEADLINE_EXCEEDED once the request timeout has passed."""

    STREAMS = 8

    def __init__(self, address: tuple[str, int], key: str, tls: ssl.SSLContext | None) -> None:
        self.conn = Connection(address, tls=tls)
        for i in range(self.STREAMS):
            self.conn.request(1 + 2 * i, request_headers(key), None, end=False)
        self.opened = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set() and not self.conn.closed:
            if len([r for r in self.conn.responses.values() if r.ended]) >= self.STREAMS:
                return
            self.conn._recv(0.2)

    def finish(self, limit: float) -> None:
        """Waits (at most until `limit` seconds after the streams opened) for every stream's end."""
        deadline = self.opened + limit
        while self._thread.is_alive() and time.monotonic() < deadline:
            self._thread.join(timeout=0.2)
        self._stop.set()
        self._thread.join()
        self.conn.close()


# --- the cases ---------------------------------------------------------------------------------


class Suite:
    def __init__(self, address: tuple[str, int], pid: int, key: str, second: tuple[str, int] | None = None,
                 log: str | None = None, budget_mib: int = 0, tls_dir: str | None = None,
                 mtls: bool = False) -> None:
        self.address, self.pid, self.key = address, pid, key
        self.second, self.log, self.tls_dir, self.mtls = second, log, tls_dir, mtls
        self.budget_kib = budget_mib * 1024
        self.tls = tls_context(tls_dir, "h2", "client" if mtls else None) if tls_dir else None
        self.passed = self.failed = 0
        self.figures: list[str] = []
        self.baseline_kib = rss_kib(pid)

    def check(self, ok: bool, what: str, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            print("ok - %s" % what)
        else:
            self.failed += 1
            print("FAIL - %s%s" % (what, (": " + detail) if detail else ""))
        sys.stdout.flush()
        return ok

    def rss_kib(self) -> int:
        return rss_kib(self.pid)

    def connect(self, **kwargs: object) -> Connection:
        return Connection(self.address, tls=self.tls, **kwargs)  # type: ignore[arg-type]

    def alive(self, after: str, address: tuple[str, int] | None = None) -> None:
        """A fresh connection's Echo answers grpc-status 0 with its payload."""
        payload = b"alive-after-0016"
        detail = ""
        ok = False
        try:
            conn = Connection(address or self.address, tls=self.tls)
            conn.request(1, request_headers(self.key), grpc_message(echo_request(payload)))
            response = conn.response(1, timeout=10)
            conn.close()
            ok = response.field("grpc-status") == "0" and response.data == grpc_message(echo_request(payload))
            detail = response.describe()
        except (OSError, ssl.SSLError) as error:
            detail = "cannot connect: %s" % error
        self.check(ok, "  the server answers a fresh Echo after %s" % after, detail)

    def bystander(self) -> Bystander:
        bystander = Bystander(self.address, self.key, self.tls_dir, self.mtls)
        if bystander.ready != "ready":
            self.check(False, "  the bystander connects and its first Echo answers", bystander.ready)
        return bystander

    def check_bystander(self, what: str, stats: dict) -> None:
        self.check(stats.get("failed", 1) == 0 and stats.get("calls", 0) > 0,
                   "  %s: every call of the bystander succeeds" % what, describe_bystander(stats))
        self.check(0 <= stats.get("max_ms", -1) < BYSTANDER_LIMIT_MS,
                   "  %s: the bystander's slowest Echo took %.1f ms (limit %d ms)"
                   % (what, stats.get("max_ms", -1), BYSTANDER_LIMIT_MS), describe_bystander(stats))

    def rss_bound_kib(self) -> int:
        return self.baseline_kib + self.budget_kib + RSS_BUDGET_SLACK_KIB

    def check_rss_within_budget(self, what: str, watch: RSSWatch) -> None:
        self.check(0 <= watch.peak <= self.rss_bound_kib(),
                   "  %s: peak VmRSS %d KiB within baseline %d + budget %d + slack %d KiB = %d KiB"
                   % (what, watch.peak, self.baseline_kib, self.budget_kib, RSS_BUDGET_SLACK_KIB,
                      self.rss_bound_kib()), watch.describe())

    def refused(self, what: str, headers: list[tuple[str, str]], body: bytes | None, status: str,
                reason: str | None, end: bool = True) -> Response:
        conn = self.connect()
        conn.request(1, headers, body, end=end)
        response = conn.response(1, timeout=10)
        conn.close()
        got_reason = error_info_reason(response.field("grpc-status-details-bin"))
        ok = response.field(":status") == "200" and response.field("grpc-status") == status
        if reason is not None:
            ok = ok and got_reason == reason
        self.check(ok, "%s: grpc-status %s%s" % (what, status, ", reason " + reason if reason else ""),
                   "%s; reason %s" % (response.describe(), got_reason))
        return response

    # --- basic: one bad request or flood at a time

    def basic(self) -> None:
        for case in (self.http1, self.bad_preface, self.wrong_content_type, self.keys, self.oversized,
                     self.gzip_bomb, self.rapid_reset):
            self.run(case)

    def http1(self) -> None:
        sock = socket.create_connection(self.address, timeout=10)
        sock.sendall(b"POST /mrpc.diagnostics.v1.Diagnostics/Echo HTTP/1.1\r\nHost: localhost\r\n"
                     b"Content-Type: application/grpc\r\nContent-Length: 0\r\n\r\n")
        answer, closed = b"", False
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except OSError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            answer += chunk
        sock.close()
        text = answer.decode("latin-1")
        self.check(text.startswith("HTTP/1.1 505 ") and "HTTP/2" in text and closed,
                   "HTTP/1.1 request: an HTTP/1.1 505 answer naming HTTP/2, then the connection closes",
                   "%r (closed: %s)" % (text[:200], closed))
        self.alive("an HTTP/1.1 request")

    def bad_preface(self) -> None:
        conn = Connection(self.address, preface=False)
        conn.send(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + frame(SETTINGS, 0, 0))
        over = conn.until_over(10)
        unexpected = {k: v for k, v in conn.frames_seen.items() if k not in ("SETTINGS", "GOAWAY")}
        conn.close()
        how = ("GOAWAY %s" % ERROR_NAMES.get(conn.goaway[1], conn.goaway[1])) if conn.goaway else conn.close_reason
        self.check(over and not unexpected, "bad preface (PRI * HTTP/2.0 with XX for SM): GOAWAY or close",
                   "over: %s (%s), frames %s" % (over, how, conn.frames_seen))
        self.figures.append("bad preface: %s" % how)
        self.alive("a bad preface")

    def wrong_content_type(self) -> None:
        conn = self.connect()
        conn.request(1, request_headers(self.key, content_type="text/plain"), grpc_message(echo_request(b"x")))
        response = conn.response(1)
        conn.close()
        self.check(response.field(":status") == "415" and response.ended,
                   "content-type text/plain: HTTP 415", response.describe())
        self.alive("a wrong content-type")

    def keys(self) -> None:
        body = grpc_message(echo_request(b"no-key"))
        self.refused("no API key", request_headers(None), body, "16", "ERR_UNAUTHENTICATED")
        self.refused("wrong API key", request_headers(self.key.split(":")[0] + ":not-the-key-0000"), body, "16",
                     "ERR_UNAUTHENTICATED")
        self.alive("missing and wrong keys")

    def oversized(self) -> None:
        # The prefix announces 4 MiB + 1; only 1000 bytes follow and the stream stays open: the
        # server must refuse from the prefix alone.
        body = b"\x00" + struct.pack(">I", MAX_MESSAGE + 1) + b"\x00" * 1000
        self.refused("a message announced at 4 MiB + 1 byte (1000 bytes sent, stream left open)",
                     request_headers(self.key), body, "8", "ERR_MESSAGE_TOO_LARGE", end=False)
        self.alive("an oversized message")

    def gzip_bomb(self) -> None:
        bomb = gzip.compress(b"\x0a\x80\x80\x80\x08" + b"\x00" * (16 * 1024 * 1024), 9)  # EchoRequest, 16 MiB payload
        body = grpc_message(bomb, compressed=True)
        self.refused("gzip bomb (%d bytes, grpc-encoding gzip, inflates to 16 MiB)" % len(body),
                     request_headers(self.key, extra=[("grpc-encoding", "gzip")]), body, "8",
                     "ERR_MESSAGE_TOO_LARGE")
        self.figures.append("gzip bomb: %d bytes on the wire" % len(body))
        self.alive("a gzip bomb")

    def flood(self, what: str, data: bytes, expect_goaway: bool, read: bool = False,
              valid_request: bool = False) -> None:
        """Sends `data` (without reading unless `read`), then reads until the connection is over."""
        started = time.monotonic()
        with RSSWatch(self.pid) as watch:
            conn = self.connect()
            if valid_request:
                conn.request(1, request_headers(self.key), grpc_message(echo_request(b"x")))
            sent, send_error = 0, ""
            conn.sock.setblocking(False)
            deadline = time.monotonic() + 20
            while sent < len(data) and time.monotonic() < deadline:
                try:
                    _, writable, _ = select.select([conn.sock] if read else [], [conn.sock], [], 0.5)
                    if read and not conn._recv(0):
                        break
                    if writable:
                        sent += conn.sock.send(data[sent:sent + 262144])
                except BlockingIOError:
                    continue
                except OSError as error:
                    send_error = str(error)
                    break
            conn.sock.settimeout(10)
            over = conn.until_over(15)
            elapsed = time.monotonic() - started
            time.sleep(0.2)
        conn.close()
        growth = watch.peak - watch.before
        if conn.goaway:
            how = "GOAWAY %s (last stream %d%s)" % (ERROR_NAMES.get(conn.goaway[1], conn.goaway[1]), conn.goaway[0],
                                                    ", " + conn.goaway[2].decode("latin-1") if conn.goaway[2] else "")
        elif conn.closed:
            how = "closed without GOAWAY (%s)" % conn.close_reason
        else:
            how = "still open after 15 s"
        figures = ("%s: %d of %d bytes sent%s in %.2f s, %s; frames received %s; VmRSS %d → peak %d KiB (+%d KiB)"
                   % (what, sent, len(data), " (send: %s)" % send_error if send_error else "", elapsed, how,
                      conn.frames_seen, watch.before, watch.peak, growth))
        self.figures.append(figures)
        self.check(over, "%s: the server ends the connection (GOAWAY or close)" % what, figures)
        if expect_goaway:
            # RFC 9113 5.4.1: a connection error is signalled with GOAWAY before the close.
            self.check(conn.goaway is not None, "  %s: the end is a GOAWAY frame" % what, figures)
        self.check(0 <= growth <= RSS_LIMIT_KIB, "  %s: VmRSS grew %d KiB (limit %d KiB)" % (what, growth, RSS_LIMIT_KIB),
                   figures)
        self.alive(what)

    def control_floods(self) -> None:
        """PING and SETTINGS floods that are never read. A connection without a request ends at the
        handshake timeout at the latest, so each takes up to 10 s: the run gives them a server whose
        request-timeout case waits anyway."""
        pings = b"".join(frame(PING, 0, 0, struct.pack(">Q", i)) for i in range(100_000))
        self.flood("100 000 PINGs, not read", pings, expect_goaway=True)
        settings = frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 65535)) * 100_000
        self.flood("100 000 SETTINGS, not read", settings, expect_goaway=True)

    def rapid_reset(self) -> None:
        resets = b""
        block = header_block(request_headers(self.key))
        for i in range(5000):
            stream = 3 + 2 * i
            resets += frame(HEADERS, END_HEADERS, stream, block) + frame(RST_STREAM, 0, stream, struct.pack(">I", 8))
        self.flood("rapid reset: 5000 streams opened and reset (CANCEL)", resets, expect_goaway=True, read=True,
                   valid_request=True)

    # --- never-ended streams

    def never_ended_streams(self) -> None:
        self._never_ended("never-ended streams with a key", self.key, ECHO, STREAM_CONNECTIONS)

    def never_ended_keyless(self) -> None:
        self._never_ended("never-ended streams without a key (health check)", None, HEALTH_CHECK,
                          KEYLESS_STREAM_CONNECTIONS)

    def _never_ended(self, what: str, key: str | None, path: str, connections: int) -> None:
        headers = request_headers(key, path=path, extra=[("x-pad", "p" * PAD_BYTES)])
        first, again = indexed_requests(headers)
        blob = frame(HEADERS, END_HEADERS, 1, first) + b"".join(
            frame(HEADERS, END_HEADERS, 3 + 2 * i, again) for i in range(STREAMS_PER_CONNECTION - 1))
        head_bytes = sum(len(n) + len(v) for n, v in headers)  # at most what the server counts a head
        if key is None:
            most_held = min(KEYLESS_MAX_CALLS, KEYLESS_MAX_HEAD_BYTES // head_bytes)
        else:
            most_held = MAX_HELD_HEAD_BYTES // head_bytes
        attackers: list[Connection] = []
        connect_failures: dict[str, int] = {}
        bystander = self.bystander()
        started = time.monotonic()
        with RSSWatch(self.pid) as watch:
            for _ in range(connections):
                try:
                    conn = Connection(self.address, timeout=5)
                    conn.send(blob)
                    attackers.append(conn)
                except OSError as error:
                    name = type(error).__name__
                    connect_failures[name] = connect_failures.get(name, 0) + 1
                pump(attackers, 0)
            opened = time.monotonic()
            # Until the server has answered all it will answer (without a key, before the first
            # connections reach the handshake timeout).
            settle = 20.0 if key is not None else started + HANDSHAKE_TIMEOUT_S - 1 - time.monotonic()
            pump_until_quiet(attackers, 1.0, max(0.0, settle))
            settled = time.monotonic()
            attack_s = settled - started
            unread = _server_receive_queues([c.sock for c in attackers])
        stats = bystander.stop()
        outcomes: dict[str, int] = {}
        held_per_connection: list[int] = []
        holding: list[Connection] = []  # open, read whole: what they did not get an answer for, the server holds
        states: dict[str, int] = {}
        for conn, queued in zip(attackers, unread):
            answered = 0
            for response in conn.responses.values():
                if response.ended:
                    answered += 1
                    outcome = response.outcome()
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if conn.closed or conn.goaway is not None:
                state = conn.how_over()
            elif queued == 0:
                # The server read all the streams: those it did not answer, it holds.
                state = "open, read whole"
                held_per_connection.append(STREAMS_PER_CONNECTION - answered)
                holding.append(conn)
            elif queued > 0:
                state = "open, %s by the server" % ("not read" if queued >= len(blob) else "partly read")
            else:
                state = "open, unknown"
            states[state] = states.get(state, 0) + 1
        held = sum(held_per_connection)
        figures = ("%s: %d connections × %d streams (%d bytes sent on each, heads of %d bytes) in %.2f s; "
                   "connect failures: %s; connections: %s; stream answers: %s; streams held on the open "
                   "connections read whole: %d (at most %d on one, limit %d), about %d KiB of heads; %s; %s"
                   % (what, connections, STREAMS_PER_CONNECTION, len(blob), head_bytes, attack_s,
                      tally(connect_failures), tally(states), tally(outcomes), held,
                      max(held_per_connection or [0]), most_held, held * head_bytes // 1024, watch.describe(),
                      describe_bystander(stats)))
        self.figures.append(figures)
        self.check(bool(held_per_connection) and max(held_per_connection) <= most_held,
                   "%s: no connection holds more than %d streams (%s)"
                   % (what, most_held, "4 calls, 16 KiB of heads" if key is None else "2 MiB of heads"), figures)
        refusals = {k: v for k, v in outcomes.items()
                    if not (k.startswith("grpc-status 8 ") or k.startswith("RST_STREAM"))}
        self.check(not refusals and sum(outcomes.values()) > 0,
                   "  %s: the streams past it are refused (RST_STREAM or RESOURCE_EXHAUSTED)" % what,
                   "other answers: %s" % tally(refusals))
        if self.budget_kib:
            self.check(held * head_bytes // 1024 <= self.budget_kib,
                       "  %s: the heads held fit the memory budget (%d KiB)" % (what, self.budget_kib), figures)
            self.check_rss_within_budget(what, watch)
        self.check_bystander(what, stats)
        if key is None:
            # Without a key, a request must arrive whole within the handshake timeout (and the
            # connection's idle timeout is the handshake timeout, counted from its last call's end):
            # the streams the server held end (DEADLINE_EXCEEDED), or their connection with GOAWAY.
            wait_until = opened + HANDSHAKE_TIMEOUT_S + 2
            while time.monotonic() < wait_until and any(not c.closed for c in attackers):
                pump(attackers, min(0.5, max(0.0, wait_until - time.monotonic())))
            unended = [c for c in holding if c.goaway is None and sum(
                1 for r in c.responses.values() if r.ended) < STREAMS_PER_CONNECTION]
            late = _count(r.outcome() for c in attackers for r in c.responses.values() if r.ended and r.at > settled)
            ends = [c.closed_at - started for c in attackers if c.closed]
            timeouts = ("%s, %d s after the last connection opened: connections %s; answers since the server "
                        "refused the rest: %s; connections ended %.1f–%.1f s after the first opened; of the %d that "
                        "held streams, %d got neither an answer for each nor a GOAWAY"
                        % (what, HANDSHAKE_TIMEOUT_S + 2, tally(_count(c.how_over() for c in attackers)), tally(late),
                           min(ends or [-1]), max(ends or [-1]), len(holding), len(unended)))
            self.figures.append(timeouts)
            self.check(bool(holding) and not unended,
                       "  %s: within the handshake timeout (%d s) the held streams end (DEADLINE_EXCEEDED) or their "
                       "connection gets GOAWAY" % (what, HANDSHAKE_TIMEOUT_S), timeouts)
        for conn in attackers:
            conn.close()
        self.alive(what)

    def request_timeout_start(self) -> None:
        self.timeout_watch = RequestTimeoutWatch(self.address, self.key, self.tls)

    def request_timeout_finish(self) -> None:
        watch = self.timeout_watch
        watch.finish(REQUEST_TIMEOUT_S + 15)
        outcomes = _count(r.outcome() for r in watch.conn.responses.values() if r.ended)
        times = sorted(r.at - watch.opened for r in watch.conn.responses.values() if r.ended)
        figures = ("request timeout: %d streams opened with a key and never ended: %s, %s; connection %s"
                   % (watch.STREAMS, tally(outcomes),
                      "ended %.1f–%.1f s after they opened" % (times[0], times[-1]) if times else "none ended",
                      watch.conn.how_over()))
        self.figures.append(figures)
        self.check(outcomes.get("grpc-status 4 ERR_DEADLINE_EXCEEDED", 0) == watch.STREAMS
                   and all(REQUEST_TIMEOUT_S - 1 <= t <= REQUEST_TIMEOUT_S + 5 for t in times),
                   "never-ended streams with a key end with DEADLINE_EXCEEDED after the request timeout (%d s)"
                   % REQUEST_TIMEOUT_S, figures)

    # --- log flood

    def log_flood(self) -> None:
        if not self.log:
            self.check(False, "log flood: the server's log is known (--log)")
            return
        self.run(lambda: self._log_flood("one source address", ["127.0.0.1"]))
        self.run(lambda: self._log_flood("%d source addresses" % LOG_FLOOD_ADDRESSES,
                                         ["127.0.0.%d" % (2 + i) if i < 250 else "127.0.1.%d" % (i - 248)
                                          for i in range(LOG_FLOOD_ADDRESSES)]))

    def _log_flood(self, sources_name: str, sources: list[str]) -> None:
        what = "log flood from %s" % sources_name
        self.log_flood_ended = time.monotonic() + LOG_FLOOD_SECONDS
        wrong = self.key.split(":")[0] + ":not-the-key-0000"
        kinds = ["HTTP/2 garbage after the preface", "gRPC request with a wrong key",
                 "framed HELLO with a wrong key", "framed garbage after the preface"]
        outcomes: dict[str, int] = {}
        lock = threading.Lock()
        quiet_s = _quiet(self.log)
        before = _lines(self.log)
        stop_at = time.monotonic() + LOG_FLOOD_SECONDS

        def attack(worker: int) -> None:
            n = worker
            while time.monotonic() < stop_at:
                kind = kinds[n % len(kinds)]
                source = sources[n % len(sources)]
                n += 4
                outcome = self._one_refusal(kind, source, wrong)
                with lock:
                    key = "%s: %s" % (kind, outcome)
                    outcomes[key] = outcomes.get(key, 0) + 1

        threads = [threading.Thread(target=attack, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(0.5)  # what the flood made the server log is written by now
        grown = _lines(self.log) - before
        attempts = sum(outcomes.values())
        served = {k: v for k, v in outcomes.items() if "served" in k}
        figures = "%s: %d connections in %.1f s (%s); the server's log grew %d lines (it was quiet after %.1f s)" % (
            what, attempts, LOG_FLOOD_SECONDS, tally(outcomes), grown, quiet_s)
        self.figures.append(figures)
        self.check(not served and attempts > 0, "%s: every attempt is refused" % what, figures)
        self.check(0 <= grown < LOG_LINES_LIMIT, "  %s: %d connections grew the server's log %d lines (limit %d)"
                   % (what, attempts, grown, LOG_LINES_LIMIT), figures)
        self.alive(what)

    def log_flood_summary(self) -> None:
        """Once a summary round (every 10 s) has passed since the floods, the log says how many
        failed handshakes it did not log one by one."""
        if not self.log or not hasattr(self, "log_flood_ended"):
            return
        time.sleep(max(0.0, self.log_flood_ended + 11 - time.monotonic()))
        with open(self.log, "rb") as f:
            summaries = [line for line in f.read().decode("utf-8", "replace").splitlines()
                         if "not logged one by one" in line]
        counted = sum(int(part.split("=", 1)[1]) for line in summaries for part in line.split()
                      if part.startswith("count=") and part.split("=", 1)[1].isdigit())
        figures = "log flood: %d summary lines (\"not logged one by one\") in the log, counting %d failures" % (
            len(summaries), counted)
        self.figures.append(figures)
        self.check(0 < len(summaries) < LOG_LINES_LIMIT and counted > 0,
                   "log flood: the failures not logged are summarised in a bounded number of lines", figures)

    def _one_refusal(self, kind: str, source: str, wrong: str) -> str:
        """One connection of the log flood: what the server did with it."""
        try:
            if kind.startswith("framed"):
                sock = socket.create_connection(self.address, timeout=5, source_address=(source, 0))
                if "wrong key" in kind:
                    sock.sendall(mrpc_hello(wrong))
                else:
                    sock.sendall(MRPC_PREFACE + mrpc_frame(F_CALL, b"\x00\x00\x00\x00", 1))
                answer = b""
                while True:
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
                sock.close()
                if len(answer) >= 12 and answer[4] == F_GOAWAY:
                    return "GOAWAY %s" % describe_goaway(answer[12:12 + struct.unpack(">I", answer[:4])[0]])[0]
                if len(answer) >= 12 and answer[4] == F_HELLO_ACK:
                    return "served (HELLO_ACK)"
                return "closed (%d bytes)" % len(answer)
            conn = Connection(self.address, timeout=5, source=source)
            if "garbage" in kind:
                conn.send(frame(HEADERS, END_HEADERS, 0, b"\xff" * 20) + os.urandom(64))
                conn.until_over(5)
                conn.close()
                return conn.how_over()
            conn.request(1, request_headers(wrong), grpc_message(echo_request(b"x")))
            response = conn.response(1, timeout=5)
            conn.close()
            outcome = response.outcome() if response.ended else "no answer (%s)" % conn.how_over()
            return "served" if outcome == "grpc-status 0" else outcome
        except socket.timeout:
            return "timed out"
        except OSError as error:
            return type(error).__name__

    # --- gzip flood

    def gzip_flood(self) -> None:
        # EchoRequest{payload: 4 MiB + 1 KiB of zeros}; the same bytes are a HealthCheckRequest
        # whose service name is as long.
        inflated = MAX_MESSAGE + 1024
        echo_bomb = gzip.compress(b"\x0a" + pb_varint(inflated) + b"\x00" * inflated, 9)
        self.run(lambda: self._gzip_flood("gzip flood with a key (Echo)", self.key, ECHO, echo_bomb, 12))
        self.run(lambda: self._gzip_flood("gzip flood without a key (health check)", None, HEALTH_CHECK, echo_bomb,
                                          KEYLESS_MAX_CALLS))

    def _gzip_flood(self, what: str, key: str | None, path: str, bomb: bytes, in_flight: int) -> None:
        headers = request_headers(key, path=path, extra=[("grpc-encoding", "gzip")])
        body = grpc_message(bomb, compressed=True)
        outcomes: dict[str, int] = {}
        sent = 0
        bystander = self.bystander()
        started = time.monotonic()
        with RSSWatch(self.pid) as watch:
            attackers = [Connection(self.address), Connection(self.address)]
            next_stream = {id(c): 1 for c in attackers}
            open_streams: dict[int, set[int]] = {id(c): set() for c in attackers}
            while time.monotonic() - started < GZIP_FLOOD_SECONDS:
                for conn in attackers:
                    if conn.closed:
                        continue
                    while (len(open_streams[id(conn)]) < in_flight and conn.send_window >= len(body)
                           and not conn.closed):
                        stream = next_stream[id(conn)]
                        next_stream[id(conn)] += 2
                        try:
                            conn.request(stream, headers, body)
                        except OSError:
                            break
                        open_streams[id(conn)].add(stream)
                        sent += 1
                pump(attackers, 0.05)
                for conn in attackers:
                    for stream in list(open_streams[id(conn)]):
                        response = conn.responses.get(stream)
                        if response and response.ended:
                            open_streams[id(conn)].discard(stream)
                            outcomes[response.outcome()] = outcomes.get(response.outcome(), 0) + 1
                if all(c.closed for c in attackers):
                    break
            pump_until_quiet(attackers, 0.3, 3)
            for conn in attackers:
                for stream in open_streams[id(conn)]:
                    response = conn.responses.get(stream)
                    outcome = response.outcome() if response and response.ended else "unanswered"
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
        stats = bystander.stop()
        elapsed = time.monotonic() - started
        ends = _count(c.how_over() for c in attackers)
        for conn in attackers:
            conn.close()
        figures = ("%s: 2 connections, %d requests of %d bytes (each inflating to %d bytes) in %.1f s: %s; "
                   "connections %s; %s; %s" % (what, sent, len(body), MAX_MESSAGE + 1024 + 4, elapsed,
                                               tally(outcomes), tally(ends), watch.describe(),
                                               describe_bystander(stats)))
        self.figures.append(figures)
        served = {k: v for k, v in outcomes.items() if not k.startswith("grpc-status 8 ")}
        self.check(sent > 0 and not served,
                   "%s: every request refused with RESOURCE_EXHAUSTED (too large, or too many calls)" % what, figures)
        if self.budget_kib:
            self.check_rss_within_budget(what, watch)
        self.check_bystander(what, stats)
        self.alive(what)

    # --- backpressure

    def backpressure(self) -> None:
        what = "backpressure: %d descriptor-set requests, never read" % BACKPRESSURE_REQUESTS
        first, again = indexed_requests(request_headers(self.key, path=DESCRIPTOR_SET))
        requests = [frame(HEADERS, END_HEADERS, 1, first) + frame(DATA, END_STREAM, 1, grpc_message(b""))]
        for i in range(1, BACKPRESSURE_REQUESTS):
            stream = 1 + 2 * i
            requests.append(frame(HEADERS, END_HEADERS, stream, again) + frame(DATA, END_STREAM, stream,
                                                                                 grpc_message(b"")))
        blob = b"".join(requests)
        probe = self.connect()
        probe.request(1, request_headers(self.key, path=DESCRIPTOR_SET), grpc_message(b""))
        answer = len(probe.response(1).data)
        probe.close()
        bystander = self.bystander()
        # Windows wide open: the server may send as fast as the socket takes it.
        conn = self.connect(settings=struct.pack(">HI", SETTINGS_INITIAL_WINDOW_SIZE, 0x7FFFFFFF))
        conn.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0x7FFFFFFF - 65535)))
        sent, send_error = 0, ""
        started = time.monotonic()
        with RSSWatch(self.pid) as watch:
            conn.sock.setblocking(False)
            while sent < len(blob) and time.monotonic() - started < BACKPRESSURE_SECONDS:
                try:
                    sent += conn.sock.send(blob[sent:sent + 65536])
                except BlockingIOError:
                    poller = select.poll()
                    poller.register(conn.sock, select.POLLOUT)
                    poller.poll(50)
                except OSError as error:
                    send_error = str(error)
                    break
            # Let the server work through what it read.
            time.sleep(max(0.0, BACKPRESSURE_SECONDS - (time.monotonic() - started)) + 0.5)
            # What the server did not read: still in our socket's send queue, or in its receive queue.
            server_queue = _server_receive_queues([conn.sock])[0]
            unread = server_queue + _send_queue(conn.sock) if server_queue >= 0 else -1
        stats = bystander.stop()
        growth = watch.peak - watch.before
        everything = BACKPRESSURE_REQUESTS * answer
        read = sent - unread if unread >= 0 else -1
        figures = ("%s: %d of %d request bytes given to the socket in %.1f s%s; the server read %s bytes of them "
                   "(about %d requests); answers of %d bytes, %d MiB for all; %s; %s"
                   % (what, sent, len(blob), BACKPRESSURE_SECONDS, " (%s)" % send_error if send_error else "",
                      read if read >= 0 else "an unknown number of", max(read, 0) * BACKPRESSURE_REQUESTS // len(blob),
                      answer, everything >> 20, watch.describe(), describe_bystander(stats)))
        self.figures.append(figures)
        self.check(not conn.closed and unread > 0,
                   "%s: the server stops reading the connection (its input waits in the socket)" % what, figures)
        limit = BACKPRESSURE_RSS_LIMIT_KIB
        self.check(0 <= growth <= limit,
                   "  %s: VmRSS grew %d KiB (limit %d KiB; answering everything sent would take %d MiB)"
                   % (what, growth, limit, everything >> 20), figures)
        self.check_bystander(what, stats)
        # Reading again, the connection is answered again. Its windows are open for good, and its
        # socket's send buffer is full of requests: no WINDOW_UPDATE, no blocking send. (TCP may
        # take a retransmission timeout or two to resume a connection whose receiver did not read
        # for seconds: the first answer may take a few seconds.)
        conn.grant = False
        conn.sock.settimeout(5)
        begun = time.monotonic()
        first_answer = -1.0
        while time.monotonic() - begun < 10 and not conn.closed:
            conn._recv(0.1)
            if first_answer < 0 and any(r.ended for r in conn.responses.values()):
                first_answer = time.monotonic() - begun
            if first_answer >= 0 and time.monotonic() - begun > first_answer + 1:
                break
        outcomes = _count(r.outcome() for r in conn.responses.values() if r.ended)
        again_figures = ("%s: read again: the first answer after %.1f s, then in 1 s: %s (connection %s)"
                         % (what, first_answer, tally(outcomes), conn.how_over()))
        self.figures.append(again_figures)
        self.check(outcomes.get("grpc-status 0", 0) > 0, "  %s: read again, the connection gets its answers" % what,
                   again_figures)
        conn.close()
        self.alive(what)

    # --- TLS handshakes that never finish

    def tls_handshakes(self) -> None:
        what = "TLS handshakes that never finish"
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < TLS_CONNECTIONS + 200:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, TLS_CONNECTIONS + 1000), hard))
        count = min(TLS_CONNECTIONS, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 200)
        hello = b"\x16\x03\x01\x02\x00" + b"\x01\x00\x01\xfc\x03\x03" + os.urandom(32)  # 38 of 517 bytes
        bystander = self.bystander()
        socks: list[socket.socket] = []
        closed_at: dict[int, float] = {}
        connect_failures: dict[str, int] = {}
        poller = select.poll()
        by_fd: dict[int, int] = {}

        def reap(timeout_ms: int) -> None:
            for fd, _ in poller.poll(timeout_ms):
                i = by_fd[fd]
                try:
                    chunk = socks[i].recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    closed_at[i] = time.monotonic()
                    poller.unregister(fd)

        started = time.monotonic()
        with RSSWatch(self.pid) as watch:
            for i in range(count):
                sock = socket.socket()
                sock.settimeout(2)
                try:
                    sock.connect(self.address)
                    if i % 2 == 0:
                        sock.send(hello)
                except OSError as error:
                    connect_failures[type(error).__name__] = connect_failures.get(type(error).__name__, 0) + 1
                    sock.close()
                    continue
                sock.setblocking(False)
                by_fd[sock.fileno()] = len(socks)
                poller.register(sock, select.POLLIN)
                socks.append(sock)
                if i % 256 == 0:
                    reap(0)
            opened = time.monotonic()
            hold_until = opened + 2.0
            while time.monotonic() < hold_until:
                reap(100)
            open_now = len(socks) - len(closed_at)
        stats = bystander.stop()
        opened_s = opened - started
        early = sum(1 for t in closed_at.values() if t - started < HANDSHAKE_TIMEOUT_S)
        room = self.budget_kib * 1024 // TLS_HANDSHAKE_BYTES if self.budget_kib else 0
        figures = ("%s: %d TCP connections (half with 38 bytes of a ClientHello) opened in %.2f s, connect "
                   "failures: %s; closed by the server at once: %d; still open 2 s after the last: %d "
                   "(the budget has room for %d handshakes of 48 KiB); %s; %s"
                   % (what, len(socks), opened_s, tally(connect_failures), early, open_now, room,
                      watch.describe(), describe_bystander(stats)))
        self.figures.append(figures)
        if opened_s < HANDSHAKE_TIMEOUT_S - 1:
            if room and len(socks) > room:
                self.check(early > 0 and open_now <= room + 64,
                           "%s: new handshakes are refused once the memory budget is full" % what, figures)
            else:
                self.figures.append("%s: %d connections cannot fill the budget (descriptor limit %d): its refusals "
                                    "were not tried" % (what, len(socks), resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
        else:
            self.check(False, "%s: the connections open within the handshake timeout" % what, figures)
        if self.budget_kib:
            self.check_rss_within_budget(what, watch)
        self.check_bystander(what, stats)
        for sock in socks:
            sock.close()
        self.alive(what)

    # --- descriptor starvation

    def descriptors(self) -> None:
        what = "descriptor starvation"
        old = resource.prlimit(self.pid, resource.RLIMIT_NOFILE)
        resource.prlimit(self.pid, resource.RLIMIT_NOFILE, (DESCRIPTOR_LIMIT, old[1]))
        idle: list[Connection] = []
        refused_how = ""
        try:
            for i in range(DESCRIPTOR_LIMIT + 64):
                try:
                    conn = Connection(self.address, timeout=3)
                    conn.request(1, request_headers(self.key), grpc_message(echo_request(b"idle")))
                    response = conn.response(1, timeout=3)
                except OSError as error:
                    refused_how = "connect: %s" % error
                    break
                if response.field("grpc-status") != "0":
                    refused_how = "%s, %s" % (response.outcome() if response.ended else "no answer", conn.how_over())
                    conn.close()
                    break
                idle.append(conn)
            self.figures.append("%s: descriptor limit %d: %d idle gRPC connections served, the next %s"
                                % (what, DESCRIPTOR_LIMIT, len(idle), refused_how))
            self.check(len(idle) < DESCRIPTOR_LIMIT, "%s: the idle connections fill the server's descriptors" % what,
                       "%d connections, then %s" % (len(idle), refused_how or "none refused"))
            for port_name, address in [("main port", self.address)] + ([("second port", self.second)]
                                                                        if self.second else []):
                self._refused_for_descriptors(what, port_name, address)
        finally:
            for conn in idle:
                conn.close()
            time.sleep(0.3)
            resource.prlimit(self.pid, resource.RLIMIT_NOFILE, old)
        self.alive(what + ", once the idle connections closed")
        if self.second:
            self.alive(what + ", once the idle connections closed (second port)", self.second)
        self._framed_served(what + ", once the idle connections closed", self.address)

    def _refused_for_descriptors(self, what: str, port_name: str, address: tuple[str, int]) -> None:
        begun = time.monotonic()
        framed_how, framed_s = "", -1.0
        try:
            client = Framed(address, self.key, timeout=5)
            got = client.read_frame(5)
            framed_s = time.monotonic() - begun
            if got and got[0] == F_GOAWAY:
                framed_how = "GOAWAY %s (%s)" % describe_goaway(got[2])
            elif got:
                framed_how = "frame type %d" % got[0]
            else:
                framed_how = "nothing (%s)" % (client.closed or "no frame within 5 s")
            client.close()
        except OSError as error:
            framed_how, framed_s = "connect: %s" % error, time.monotonic() - begun
        self.figures.append("%s, %s: a framed HELLO got %s after %.3f s" % (what, port_name, framed_how, framed_s))
        self.check(framed_how.startswith("GOAWAY ERR_TOO_MANY_CONNECTIONS") and framed_s < REFUSAL_LIMIT_S,
                   "  %s, %s: a new framed connection gets GOAWAY ERR_TOO_MANY_CONNECTIONS within %.0f s"
                   % (what, port_name, REFUSAL_LIMIT_S), "%s after %.3f s" % (framed_how, framed_s))
        begun = time.monotonic()
        try:
            conn = Connection(address, timeout=5)
            conn.request(1, request_headers(self.key), grpc_message(echo_request(b"x")))
            over = conn.until_over(5)
            grpc_s = time.monotonic() - begun
            response = conn.responses.get(1)
            how = conn.how_over() + (", then answered %s" % response.outcome() if response and response.ended else "")
            if conn.buffer[:8] and conn.buffer[4:5] == bytes([F_GOAWAY]) and not conn.frames_seen.get("SETTINGS"):
                how += " (after the framed protocol's GOAWAY: %s)" % describe_goaway(conn.buffer[12:])[0]
            conn.close()
        except OSError as error:
            over, grpc_s, how, response = True, time.monotonic() - begun, "connect: %s" % error, None
        self.figures.append("%s, %s: a gRPC request got %s after %.3f s" % (what, port_name, how, grpc_s))
        self.check(over and not (response and response.field("grpc-status") == "0") and grpc_s < REFUSAL_LIMIT_S,
                   "  %s, %s: a new gRPC connection gets a GOAWAY or a close within %.0f s"
                   % (what, port_name, REFUSAL_LIMIT_S), "%s after %.3f s" % (how, grpc_s))

    def _framed_served(self, what: str, address: tuple[str, int]) -> None:
        detail = ""
        ok = False
        try:
            tls = tls_context(self.tls_dir, "mrpc/1", "client" if self.mtls else None) if self.tls_dir else None
            client = Framed(address, self.key, tls=tls)
            got = client.read_frame(10)
            if got and got[0] == F_HELLO_ACK:
                reply = client.echo(1, b"framed-alive")
                ok = reply is not None and reply[0] == 0 and reply[2] == pb_bytes(1, b"framed-alive")
                detail = "REPLY %s" % (reply,)
            else:
                detail = "first frame %s (%s)" % (got[0] if got else None, client.closed)
            client.close()
        except (OSError, ssl.SSLError) as error:
            detail = "cannot connect: %s" % error
        self.check(ok, "  the server answers a framed HELLO and Echo after %s" % what, detail)

    # --- mutual TLS

    def mtls_bypass(self) -> None:
        ports = [("main port", self.address)] + ([("second port", self.second)] if self.second else [])
        assert self.tls_dir
        for port_name, address in ports:
            what = "mTLS server, %s" % port_name
            # Cleartext HTTP/2 with a valid key.
            conn = Connection(address, timeout=5)
            try:
                conn.request(1, request_headers(self.key), grpc_message(echo_request(b"cleartext")))
            except (ConnectionResetError, BrokenPipeError):
                # The server refused the preface and closed before the request was written.
                conn._ended("connection reset")
            over = conn.until_over(5)
            served = bool(conn.frames_seen.get("HEADERS") or conn.frames_seen.get("DATA"))
            raw = conn.buffer
            how = conn.how_over()
            if raw[4:5] == bytes([F_GOAWAY]):
                how += ", after the framed protocol's GOAWAY %s (%s)" % describe_goaway(raw[12:])
            conn.close()
            self.figures.append("%s: cleartext HTTP/2: %s" % (what, how))
            self.check(over and not served, "%s: cleartext HTTP/2 gets no gRPC response and is closed" % what,
                       "%s, frames %s" % (how, conn.frames_seen))
            # A cleartext framed HELLO with a valid key.
            client = Framed(address, self.key, timeout=5)
            got = client.read_frame(5)
            more = client.read_frame(5)
            how = ("GOAWAY %s (%s)" % describe_goaway(got[2])) if got and got[0] == F_GOAWAY else \
                ("frame type %d" % got[0] if got else "nothing")
            closed = more is None and bool(client.closed)
            client.close()
            self.figures.append("%s: cleartext framed HELLO: %s, then %s" % (what, how, client.closed or "open"))
            self.check((got is None or got[0] == F_GOAWAY) and closed,
                       "  %s: a cleartext framed HELLO is not served and the connection closes" % what,
                       "%s, then %s" % (how, client.closed or "still open"))
            # TLS without a client certificate, and with one from another CA.
            for certificate in (None, "other-client"):
                case = "TLS with %s" % ("no client certificate" if certificate is None
                                        else "a client certificate of another CA")
                how, served = "", False
                try:
                    conn = Connection(address, timeout=5, tls=tls_context(self.tls_dir, "h2", certificate))
                    conn.request(1, request_headers(self.key), grpc_message(echo_request(b"no-certificate")))
                    conn.until_over(5)
                    served = bool(conn.responses.get(1) and conn.responses[1].field("grpc-status") == "0")
                    how = conn.how_over()
                    conn.close()
                except ssl.SSLError as error:
                    how = "handshake failed: %s" % (error.reason or error)
                except OSError as error:
                    how = "connection failed: %s" % error
                self.figures.append("%s: %s: %s" % (what, case, how))
                self.check(not served and how != "open", "  %s: %s is refused" % (what, case), how)
            self.alive(what + " bypass attempts", address)

    # --- running

    def run(self, case) -> None:  # type: ignore[no-untyped-def]
        try:
            case()
        except Exception as error:  # a case that blows up is a failure, and the others still run
            name = getattr(case, "__name__", "a case")
            self.check(False, "%s raised" % name, "%s: %s" % (type(error).__name__, error))


def _count(items) -> dict[str, int]:  # type: ignore[no-untyped-def]
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def _running(pid: int) -> bool:
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _crash_report(log: str | None) -> str:
    """The lines of the server's log that say why it stopped (a Swift runtime failure's first
    frames)."""
    if not log or not os.path.exists(log):
        return "(no log)"
    with open(log, "rb") as f:
        lines = f.read().decode("utf-8", "replace").splitlines()
    for i, line in enumerate(lines):
        if "crashed:" in line or "Fatal error" in line:
            return " | ".join(l.strip() for l in lines[i:i + 5] if l.strip())
    return "(the log says nothing of it)"


def _quiet(path: str, still: float = 0.5, limit: float = 30) -> float:
    """Waits until `path` has not grown for `still` seconds (what earlier cases made the server
    log is written); returns how long that took."""
    begun = time.monotonic()
    size = os.path.getsize(path)
    since = begun
    while time.monotonic() - begun < limit:
        time.sleep(0.1)
        now = os.path.getsize(path)
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= still:
            break
    return time.monotonic() - begun


def _send_queue(sock: socket.socket) -> int:
    """Bytes in `sock`'s send queue (sent by the application, not yet acknowledged by the peer)."""
    import fcntl
    import termios

    out = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
    return struct.unpack("i", out)[0]


def _lines(path: str) -> int:
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def _server_receive_queues(socks: list[socket.socket]) -> list[int]:
    """For each of `socks`, the bytes waiting unread in the server's end of its connection
    (/proc/net/tcp), or -1 when not found."""

    def hexaddr(address: tuple[str, int]) -> str:
        return "%08X:%04X" % (struct.unpack("<I", socket.inet_aton(address[0]))[0], address[1])

    queues: dict[tuple[str, str], int] = {}
    try:
        with open("/proc/net/tcp") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 4 and ":" in parts[4]:
                    queues[(parts[1], parts[2])] = int(parts[4].split(":")[1], 16)
    except OSError:
        pass
    out = []
    for sock in socks:
        try:
            out.append(queues.get((hexaddr(sock.getpeername()), hexaddr(sock.getsockname())), -1))
        except OSError:
            out.append(-1)
    return out


CASES = ["basic", "control-floods", "request-timeout", "never-ended-streams", "never-ended-keyless", "log-flood", "gzip-flood",
         "backpressure", "tls-handshakes", "descriptors", "mtls"]


def main() -> int:
    if sys.argv[1:2] == ["--bystander"]:
        return bystander_main(sys.argv[2:])
    parser = argparse.ArgumentParser(description="Hostile clients against a running moderation-server.")
    parser.add_argument("address", help="HOST:PORT of the listener to attack")
    parser.add_argument("pid", type=int, help="the server's pid (for VmRSS and its descriptor limit)")
    parser.add_argument("key", help="the server's API key, APP_ID:KEY")
    parser.add_argument("--cases", default="basic", help="comma-separated, of: " + ", ".join(CASES))
    parser.add_argument("--second", help="HOST:PORT of the server's other listener")
    parser.add_argument("--log", help="the server's log (standard error)")
    parser.add_argument("--budget-mib", type=int, default=0, help="the server's --memory-budget, in MiB")
    parser.add_argument("--tls-dir", help="the throwaway CA of a TLS server (tests/grpc-server.sh make_test_ca)")
    parser.add_argument("--mtls", action="store_true", help="the server asks for client certificates")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error("unknown cases: %s" % ", ".join(unknown))

    def address(text: str) -> tuple[str, int]:
        host, port = text.rsplit(":", 1)
        return host, int(port)

    started = time.monotonic()
    suite = Suite(address(args.address), args.pid, args.key, address(args.second) if args.second else None,
                  args.log, args.budget_mib, args.tls_dir, args.mtls)
    suite.alive("nothing (the baseline)")
    suite.baseline_kib = suite.rss_kib()
    suite.figures.append("baseline: VmRSS %d KiB after one Echo" % suite.baseline_kib)
    if "request-timeout" in cases:
        suite.run(suite.request_timeout_start)
    if set(cases) & {"never-ended-streams", "never-ended-keyless", "gzip-flood", "backpressure", "tls-handshakes"}:
        # The bystander's latency with nothing else going on, for comparison.
        bystander = suite.bystander()
        time.sleep(1)
        suite.figures.append("bystander without an attack, 1 s: " + describe_bystander(bystander.stop()))
    steps = {"basic": suite.basic, "control-floods": suite.control_floods,
             "never-ended-streams": suite.never_ended_streams,
             "never-ended-keyless": suite.never_ended_keyless, "log-flood": suite.log_flood,
             "gzip-flood": suite.gzip_flood, "backpressure": suite.backpressure,
             "tls-handshakes": suite.tls_handshakes, "descriptors": suite.descriptors, "mtls": suite.mtls_bypass}
    for name in cases:
        if name in steps:
            case_started = time.monotonic()
            suite.run(steps[name])
            suite.figures.append("%s: %.1f s" % (name, time.monotonic() - case_started))
    if "log-flood" in cases:
        suite.run(suite.log_flood_summary)
    if "request-timeout" in cases and hasattr(suite, "timeout_watch"):
        suite.run(suite.request_timeout_finish)
    running = _running(suite.pid)
    suite.check(running, "the server process is still running", "" if running else _crash_report(args.log))
    print("figures:")
    for line in suite.figures:
        print("  " + line)
    print("%d passed, %d failed in %.1f s" % (suite.passed, suite.failed, time.monotonic() - started))
    return 0 if suite.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
