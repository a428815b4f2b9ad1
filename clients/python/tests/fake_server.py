"""A scripted MRPC server for tests that need a peer to misbehave on cue (never answer, send
GOAWAY mid-call, drop the connection, stream compressed events).

Its framing is written here with ``struct`` and ``zlib`` from docs/PROTOCOL.md, not taken from
``mrpc_client``, so a mistake in the client's framing is not mirrored by the peer it is tested
against. Only the generated envelope messages are shared (they are the ``.proto`` contract).
"""

from __future__ import annotations

import socket
import struct
import threading
import zlib
from typing import Any, Callable, Dict, List, Optional

from mrpc_client.gen.mrpc.v1 import envelope_pb2

HEADER = struct.Struct(">IBBHI")
HELLO, HELLO_ACK, CALL, REPLY, MESSAGE, TRAILERS, CANCEL, PING, PONG, GOAWAY = range(1, 11)
PREFACE = bytes([0x4D, 0x52, 0x50, 0x43, 0x00, 0x01, 0x00, 0x00])


class Frame:
    def __init__(self, frame_type: int, flags: int, stream_id: int, payload: bytes) -> None:
        self.type = frame_type
        self.flags = flags
        self.stream_id = stream_id
        self.payload = payload

    def __repr__(self) -> str:
        return "Frame(type=%d, flags=%d, stream=%d, %d bytes)" % (self.type, self.flags, self.stream_id, len(self.payload))


class Call:
    """A CALL as received: stream id, header, body (inflated when it was compressed)."""

    def __init__(self, frame: Frame) -> None:
        (length,) = struct.unpack_from(">I", frame.payload)
        self.stream_id = frame.stream_id
        self.header = envelope_pb2.CallHeader.FromString(frame.payload[4:4 + length])
        body = frame.payload[4 + length:]
        self.compressed = bool(frame.flags & 1)
        self.body = zlib.decompress(body, -15) if self.compressed else body


class Peer:
    """The server side of one accepted connection, after the handshake."""

    def __init__(self, sock: socket.socket, index: int) -> None:
        self.sock = sock
        self.index = index
        self.hello: Optional[envelope_pb2.Hello] = None
        self._buffer = b""
        self._send_lock = threading.Lock()
        self._deflaters: Dict[int, Any] = {}  # stream id -> zlib compress object

    # Reading

    def _read_exact(self, n: int, timeout: float) -> bytes:
        self.sock.settimeout(timeout)
        while len(self._buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the client closed the connection")
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def read_frame(self, timeout: float = 5.0) -> Frame:
        length, frame_type, flags, reserved, stream_id = HEADER.unpack(self._read_exact(12, timeout))
        assert reserved == 0, "client sent non-zero reserved bytes"
        return Frame(frame_type, flags, stream_id, self._read_exact(length, timeout))

    def read_call(self, timeout: float = 5.0) -> Call:
        frame = self.read_frame(timeout)
        assert frame.type == CALL, "expected CALL, got %r" % frame
        return Call(frame)

    def handshake(self) -> None:
        preface = self._read_exact(8, 5.0)
        assert preface == PREFACE, "bad preface %r" % preface
        frame = self.read_frame()
        assert frame.type == HELLO and frame.stream_id == 0, "expected HELLO, got %r" % frame
        self.hello = envelope_pb2.Hello.FromString(frame.payload)

    # Writing

    def send(self, frame_type: int, stream_id: int, payload: bytes = b"", flags: int = 0) -> None:
        with self._send_lock:
            self.sock.sendall(HEADER.pack(len(payload), frame_type, flags, 0, stream_id) + payload)

    def send_hello_ack(self, **fields: object) -> None:
        ack = envelope_pb2.HelloAck(server_name="fake", server_version="0", protocol_version=1,
                                    max_message_bytes=4 << 20, max_call_header_bytes=8192,
                                    max_concurrent_calls=1024, app_id="fake", idle_timeout_ms=300000)
        if self.hello is not None and "deflate" in self.hello.accept_encodings:
            ack.accept_encodings.append("deflate")
        for key, value in fields.items():
            setattr(ack, key, value)
        self.send(HELLO_ACK, 0, ack.SerializeToString())

    def reply(self, stream_id: int, message: Optional[object] = None,
              status: Optional[envelope_pb2.Status] = None, compress: bool = False) -> None:
        status_bytes = status.SerializeToString() if status is not None else b""
        body = message.SerializeToString() if message is not None else b""  # type: ignore[attr-defined]
        flags = 0
        if compress:
            deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
            body = deflater.compress(body) + deflater.flush(zlib.Z_FINISH)
            flags = 1
        self.send(REPLY, stream_id, struct.pack(">I", len(status_bytes)) + status_bytes + body, flags)

    def stream_message(self, stream_id: int, message: object, compress: bool) -> None:
        """One MESSAGE; compressed with the stream's own context (window 2^12, memory level 4,
        sync flush, 00 00 FF FF removed) unless under 32 bytes, as the real server does."""
        raw = message.SerializeToString()  # type: ignore[attr-defined]
        if not compress or len(raw) < 32:
            self.send(MESSAGE, stream_id, raw)
            return
        deflater = self._deflaters.get(stream_id)
        if deflater is None:
            deflater = self._deflaters[stream_id] = zlib.compressobj(6, zlib.DEFLATED, -12, 4)
        data = deflater.compress(raw) + deflater.flush(zlib.Z_SYNC_FLUSH)
        assert data.endswith(b"\x00\x00\xff\xff")
        self.send(MESSAGE, stream_id, data[:-4], flags=1)

    def trailers(self, stream_id: int, status: Optional[envelope_pb2.Status] = None) -> None:
        self.send(TRAILERS, stream_id, status.SerializeToString() if status is not None else b"")

    def goaway(self, last_stream_id: int, status: envelope_pb2.Status) -> None:
        self.send(GOAWAY, 0, envelope_pb2.Goaway(last_stream_id=last_stream_id, status=status).SerializeToString())

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


Script = Callable[[Peer], None]


class FakeServer:
    """Listens on 127.0.0.1; runs ``script(peer)`` on a thread for each accepted connection
    (after reading the preface and HELLO). Exceptions in scripts are kept and re-raised by
    ``check()`` so that a wrong frame from the client fails the test."""

    def __init__(self, script: Script, *, handshake: bool = True) -> None:
        self._script = script
        self._handshake = handshake
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self.address = "127.0.0.1:%d" % self.port
        self.peers: List[Peer] = []
        self.errors: List[BaseException] = []
        self._threads: List[threading.Thread] = []
        self._closed = False
        self._accept_thread = threading.Thread(target=self._accept, daemon=True)
        self._accept_thread.start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            peer = Peer(sock, len(self.peers))
            self.peers.append(peer)
            thread = threading.Thread(target=self._run, args=(peer,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _run(self, peer: Peer) -> None:
        try:
            if self._handshake:
                peer.handshake()
            self._script(peer)
        except BaseException as error:  # recorded for check()
            if not self._closed:
                self.errors.append(error)

    def join(self, timeout: float = 5.0) -> None:
        """Waits for every script started so far to finish."""
        for thread in list(self._threads):
            thread.join(timeout)
            assert not thread.is_alive(), "a fake-server script did not finish within %.1f s" % timeout

    def check(self) -> None:
        if self.errors:
            raise self.errors[0]

    def close(self) -> None:
        self._closed = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the accept thread
        except OSError:
            pass
        self._listener.close()
        self._accept_thread.join(5)
        for peer in self.peers:
            peer.close()

    def __enter__(self) -> "FakeServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def status(code: int, error_code: str = "", message: str = "", **details: str) -> envelope_pb2.Status:
    return envelope_pb2.Status(code=code, error_code=error_code, message=message, details=details)


def idle(peer: Peer) -> None:
    """Accepts the handshake, then reads (and ignores) whatever the client sends."""
    peer.send_hello_ack()
    drain_until_closed(peer)


def drain_until_closed(peer: Peer, timeout: float = 5.0) -> List[Frame]:
    """Every frame the client sends until it closes the connection."""
    frames = []
    while True:
        try:
            frames.append(peer.read_frame(timeout))
        except (EOFError, ConnectionError, OSError):
            return frames
