"""Raw MRPC bytes for the soak's misbehaving peers: slow readers, non-readers, bad frames."""

from __future__ import annotations

import socket
import struct
import time
import zlib
from typing import Optional, Tuple

import serverproc  # noqa: F401  (puts the client on sys.path)
from mrpc_client.frames import PREFACE, encode_frame
from mrpc_client.gen.mrpc.diagnostics.v1 import diagnostics_pb2
from mrpc_client.gen.mrpc.v1 import envelope_pb2

HELLO, HELLO_ACK, CALL, REPLY, MESSAGE, TRAILERS, CANCEL, PING, PONG, GOAWAY = range(1, 11)


def hello(api_key: str, accept_deflate: bool = False, client_name: str = "soak-raw") -> bytes:
    message = envelope_pb2.Hello(api_key=api_key, client_name=client_name)
    if accept_deflate:
        message.accept_encodings.append("deflate")
    return encode_frame(HELLO, 0, message.SerializeToString())


def call(stream_id: int, method: str, body: bytes, accept_deflate: bool = False, compressed: bool = False) -> bytes:
    header = envelope_pb2.CallHeader(method=method)
    if accept_deflate:
        header.accept_encodings.append("deflate")
    header_bytes = header.SerializeToString()
    return encode_frame(CALL, stream_id, struct.pack(">I", len(header_bytes)) + header_bytes + body,
                        flags=1 if compressed else 0)


def echo(stream_id: int, payload: bytes) -> bytes:
    return call(stream_id, "/mrpc.diagnostics.v1.Diagnostics/Echo",
                diagnostics_pb2.EchoRequest(payload=payload).SerializeToString())


def raw_frame(frame_type: int, stream_id: int, payload: bytes, flags: int = 0, reserved: int = 0,
              length: Optional[int] = None) -> bytes:
    return struct.pack(">IBBHI", len(payload) if length is None else length, frame_type, flags, reserved,
                       stream_id) + payload


def deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def connect(address: str, timeout: float = 10.0) -> socket.socket:
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_frame(sock: socket.socket) -> Tuple[int, int, bytes]:
    """(type, stream id, payload) of the next frame; raises EOFError at end of stream."""
    header = read_exactly(sock, 12)
    length, frame_type, _, _, stream_id = struct.unpack(">IBBHI", header)
    return frame_type, stream_id, read_exactly(sock, length)


def read_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes" % (len(data), count))
        data += chunk
    return data


def read_until_goaway_or_close(sock: socket.socket, deadline: float) -> Optional[envelope_pb2.Goaway]:
    """Reads frames until GOAWAY (returned) or the server closes (None); TimeoutError past deadline."""
    goaway = None
    while True:
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            frame_type, _, payload = read_frame(sock)
        except EOFError:
            return goaway
        except socket.timeout:
            raise TimeoutError("the server neither sent GOAWAY nor closed")
        except ConnectionResetError:
            return goaway
        if frame_type == GOAWAY:
            goaway = envelope_pb2.Goaway.FromString(payload)
