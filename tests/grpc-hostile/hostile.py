#!/usr/bin/env python3
"""Bad input on the gRPC listener: hand-built HTTP/2 over raw sockets against a running server.

    hostile.py HOST:PORT SERVER_PID APP_ID:KEY

Run by tests/grpc-hostile/run, which starts the server. Python's standard library only: frames
are built by hand, request headers are HPACK literals without indexing (no Huffman), and the
server's header blocks are decoded by libnghttp2's public HPACK inflater through ctypes (the
library the server links; Debian libnghttp2-14) — the server's encoder uses Huffman codes and
its dynamic table.

Each case asserts a clear outcome and then that the server is alive: a fresh connection's Echo
answers grpc-status 0 with its payload. The floods also watch the server's VmRSS
(/proc/PID/status, sampled every 20 ms from before the case until its end) and fail when it grows
more than 64 MiB. Prints one line per check and "N passed, M failed"; exits 1 on any failure.
"""

from __future__ import annotations

import ctypes
import gzip
import os
import select
import socket
import struct
import sys
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
FRAME_NAMES = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
               "WINDOW_UPDATE", "CONTINUATION"]
ERROR_NAMES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 3: "FLOW_CONTROL_ERROR",
               4: "SETTINGS_TIMEOUT", 5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR", 7: "REFUSED_STREAM",
               8: "CANCEL", 9: "COMPRESSION_ERROR", 10: "CONNECT_ERROR", 11: "ENHANCE_YOUR_CALM",
               12: "INADEQUATE_SECURITY", 13: "HTTP_1_1_REQUIRED"}
ECHO = "/mrpc.diagnostics.v1.Diagnostics/Echo"
MAX_MESSAGE = 4 * 1024 * 1024
RSS_LIMIT_KIB = 64 * 1024

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


def header_block(headers: list[tuple[str, str]]) -> bytes:
    return b"".join(hpack_literal(n, v) for n, v in headers)


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


class Response:
    def __init__(self) -> None:
        self.headers: list[tuple[str, str]] = []
        self.trailers: list[tuple[str, str]] = []
        self.data = b""
        self.ended = False
        self.reset: int | None = None

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


class Connection:
    """A raw HTTP/2 client connection: send what you like, read frames as they come."""

    def __init__(self, address: tuple[str, int], preface: bool = True) -> None:
        self.sock = socket.create_connection(address, timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.inflater = Inflater()
        self.goaway: tuple[int, int, bytes] | None = None  # last stream id, error code, debug data
        self.closed = False  # EOF or reset seen
        self.close_reason = ""
        self.frames_seen: dict[str, int] = {}
        self.responses: dict[int, Response] = {}
        self._block: tuple[int, int, bytes] | None = None  # a header block awaiting CONTINUATION
        if preface:
            self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))

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
        self.send(out)

    def _recv(self, timeout: float) -> bool:
        """Reads what arrives within `timeout`; False once the connection is over."""
        if self.closed:
            return False
        ready, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        if not ready:
            return True
        try:
            chunk = self.sock.recv(1 << 20)
        except ConnectionResetError:
            self.closed, self.close_reason = True, "connection reset"
            return False
        except OSError as error:
            self.closed, self.close_reason = True, "recv failed: %s" % error
            return False
        if not chunk:
            self.closed, self.close_reason = True, "EOF"
            return False
        self.buffer += chunk
        self._parse()
        return True

    def _parse(self) -> None:
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[0:3], "big")
            if len(self.buffer) < 9 + length:
                return
            kind, flags = self.buffer[3], self.buffer[4]
            stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
            payload = self.buffer[9:9 + length]
            self.buffer = self.buffer[9 + length:]
            name = FRAME_NAMES[kind] if kind < len(FRAME_NAMES) else "type-%d" % kind
            self.frames_seen[name] = self.frames_seen.get(name, 0) + 1
            self._handle(kind, flags, stream, payload)

    def _handle(self, kind: int, flags: int, stream: int, payload: bytes) -> None:
        if kind == SETTINGS and not flags & ACK:
            try:
                self.sock.sendall(frame(SETTINGS, ACK, 0))
            except OSError:
                pass
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
                    response.ended = True
        elif kind == DATA:
            response = self.responses.setdefault(stream, Response())
            response.data += payload
            if flags & END_STREAM:
                response.ended = True
            if payload:  # keep the windows open
                try:
                    self.sock.sendall(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", len(payload)))
                                      + frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", len(payload))))
                except OSError:
                    pass
        elif kind == RST_STREAM:
            response = self.responses.setdefault(stream, Response())
            response.reset = struct.unpack(">I", payload[:4])[0]
            response.ended = True

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


# --- the cases ---------------------------------------------------------------------------------


class Suite:
    def __init__(self, address: tuple[str, int], pid: int, key: str) -> None:
        self.address, self.pid, self.key = address, pid, key
        self.passed = self.failed = 0
        self.figures: list[str] = []

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
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return -1

    def alive(self, after: str) -> None:
        """A fresh connection's Echo answers grpc-status 0 with its payload."""
        payload = b"alive-after-0016"
        detail = ""
        ok = False
        try:
            conn = Connection(self.address)
            conn.request(1, request_headers(self.key), grpc_message(echo_request(payload)))
            response = conn.response(1, timeout=10)
            conn.close()
            ok = response.field("grpc-status") == "0" and response.data == grpc_message(echo_request(payload))
            detail = response.describe()
        except OSError as error:
            detail = "cannot connect: %s" % error
        self.check(ok, "  the server answers a fresh Echo after %s" % after, detail)

    def refused(self, what: str, headers: list[tuple[str, str]], body: bytes | None, status: str,
                reason: str | None, end: bool = True) -> Response:
        conn = Connection(self.address)
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
        conn = Connection(self.address)
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
        samples: list[int] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                samples.append(self.rss_kib())
                time.sleep(0.02)

        before = self.rss_kib()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()
        conn = Connection(self.address)
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
        conn.sock.setblocking(True)
        over = conn.until_over(15)
        elapsed = time.monotonic() - started
        time.sleep(0.2)
        stop.set()
        sampler.join()
        conn.close()
        peak = max([s for s in samples if s >= 0] + [before])
        growth = peak - before
        if conn.goaway:
            how = "GOAWAY %s (last stream %d%s)" % (ERROR_NAMES.get(conn.goaway[1], conn.goaway[1]), conn.goaway[0],
                                                    ", " + conn.goaway[2].decode("latin-1") if conn.goaway[2] else "")
        elif conn.closed:
            how = "closed without GOAWAY (%s)" % conn.close_reason
        else:
            how = "still open after 15 s"
        figures = ("%s: %d of %d bytes sent%s in %.2f s, %s; frames received %s; VmRSS %d → peak %d KiB (+%d KiB)"
                   % (what, sent, len(data), " (send: %s)" % send_error if send_error else "", elapsed, how,
                      conn.frames_seen, before, peak, growth))
        self.figures.append(figures)
        self.check(over, "%s: the server ends the connection (GOAWAY or close)" % what, figures)
        if expect_goaway:
            # RFC 9113 5.4.1: a connection error is signalled with GOAWAY before the close.
            self.check(conn.goaway is not None, "  %s: the end is a GOAWAY frame" % what, figures)
        self.check(0 <= growth <= RSS_LIMIT_KIB, "  %s: VmRSS grew %d KiB (limit %d KiB)" % (what, growth, RSS_LIMIT_KIB),
                   figures)
        self.alive(what)

    def floods(self) -> None:
        pings = b"".join(frame(PING, 0, 0, struct.pack(">Q", i)) for i in range(100_000))
        self.flood("100 000 PINGs, not read", pings, expect_goaway=True)
        settings = frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 65535)) * 100_000
        self.flood("100 000 SETTINGS, not read", settings, expect_goaway=True)
        resets = b""
        block = header_block(request_headers(self.key))
        for i in range(5000):
            stream = 3 + 2 * i
            resets += frame(HEADERS, END_HEADERS, stream, block) + frame(RST_STREAM, 0, stream, struct.pack(">I", 8))
        self.flood("rapid reset: 5000 streams opened and reset (CANCEL)", resets, expect_goaway=True, read=True,
                   valid_request=True)


def main() -> int:
    if len(sys.argv) != 4:
        print("usage: hostile.py HOST:PORT SERVER_PID APP_ID:KEY", file=sys.stderr)
        return 2
    host, port = sys.argv[1].rsplit(":", 1)
    suite = Suite((host, int(port)), int(sys.argv[2]), sys.argv[3])
    suite.alive("nothing (the baseline)")
    for case in (suite.http1, suite.bad_preface, suite.wrong_content_type, suite.keys, suite.oversized,
                 suite.gzip_bomb, suite.floods):
        try:
            case()
        except Exception as error:  # a case that blows up is a failure, and the others still run
            suite.check(False, "%s raised" % case.__name__, "%s: %s" % (type(error).__name__, error))
    suite.check(os.path.exists("/proc/%d" % suite.pid), "the server process is still running")
    print("figures:")
    for line in suite.figures:
        print("  " + line)
    print("%d passed, %d failed" % (suite.passed, suite.failed))
    return 0 if suite.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
