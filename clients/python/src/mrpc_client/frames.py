"""MRPC framing: the preface, the 12-byte frame header, and the CALL / REPLY payload layouts.

Pure functions over bytes (no sockets), so every rule of docs/PROTOCOL.md §1–§3 is testable alone.
"""

from __future__ import annotations

import enum
import socket
import struct
from typing import NamedTuple, Optional, Tuple

from .gen.mrpc.v1 import envelope_pb2

#: The 8 bytes a client sends first: ASCII "MRPC", version u16 = 1, u16 = 0.
PREFACE = b"MRPC\x00\x01\x00\x00"

HEADER = struct.Struct(">IBBHI")
HEADER_SIZE = HEADER.size  # 12
U32 = struct.Struct(">I")

#: Flag bit 0: the frame's body is raw-deflate compressed.
FLAG_COMPRESSED = 0x01


class FrameType(enum.IntEnum):
    """The frame types of protocol version 1; 0x80–0xFF are extensions a receiver ignores."""

    HELLO = 1
    HELLO_ACK = 2
    CALL = 3
    REPLY = 4
    MESSAGE = 5
    TRAILERS = 6
    CANCEL = 7
    PING = 8
    PONG = 9
    GOAWAY = 10


def is_extension(frame_type: int) -> bool:
    """True for 0x80–0xFF: frames a receiver skips."""
    return frame_type >= 0x80


def type_name(frame_type: int) -> str:
    """``"REPLY"`` for 4, ``"0x2a"`` for a type this version does not know."""
    try:
        return FrameType(frame_type).name
    except ValueError:
        return "0x%02x" % frame_type


class FrameHeader(NamedTuple):
    """A decoded frame header (the reserved field is checked, not kept)."""

    length: int
    type: int
    flags: int
    stream_id: int

    @property
    def compressed(self) -> bool:
        return bool(self.flags & FLAG_COMPRESSED)


class ProtocolViolation(Exception):
    """The peer sent bytes that break docs/PROTOCOL.md; the message says which rule."""


def encode_frame(frame_type: int, stream_id: int, payload: bytes = b"", flags: int = 0) -> bytes:
    """Header and payload of one frame."""
    return HEADER.pack(len(payload), frame_type, flags, 0, stream_id) + payload


def decode_header(data: bytes) -> FrameHeader:
    """Reads the 12-byte header at the start of ``data``; refuses reserved bits and unknown flags."""
    length, frame_type, flags, reserved, stream_id = HEADER.unpack_from(data)
    if reserved != 0:
        raise ProtocolViolation("frame %s on stream %d has non-zero reserved bytes" % (type_name(frame_type), stream_id))
    if flags & ~FLAG_COMPRESSED:
        raise ProtocolViolation("frame %s on stream %d has unknown flags 0x%02x" % (type_name(frame_type), stream_id, flags))
    return FrameHeader(length, frame_type, flags, stream_id)


def call_payload(header: envelope_pb2.CallHeader, body: bytes) -> bytes:
    """CALL payload: u32 header length, the CallHeader, then the request body."""
    encoded = header.SerializeToString()
    return U32.pack(len(encoded)) + encoded + body


def split_reply(payload: bytes) -> Tuple[envelope_pb2.Status, bytes]:
    """REPLY payload → (Status, body). An OK status is zero bytes, so OK replies start 00 00 00 00."""
    if len(payload) < 4:
        raise ProtocolViolation("REPLY payload of %d bytes is shorter than its status length" % len(payload))
    (status_length,) = U32.unpack_from(payload)
    if status_length > len(payload) - 4:
        raise ProtocolViolation("REPLY declares a status of %d bytes but carries %d" % (status_length, len(payload) - 4))
    status = envelope_pb2.Status()
    if status_length:
        try:
            status.ParseFromString(payload[4:4 + status_length])
        except Exception as error:  # protobuf's DecodeError, or a RuntimeWarning-turned-error
            raise ProtocolViolation("REPLY status is not a valid mrpc.v1.Status: %s" % error) from None
    return status, payload[4 + status_length:]


def parse_status(payload: bytes, what: str) -> envelope_pb2.Status:
    """A whole-payload ``Status`` (TRAILERS)."""
    status = envelope_pb2.Status()
    try:
        status.ParseFromString(payload)
    except Exception as error:
        raise ProtocolViolation("%s payload is not a valid mrpc.v1.Status: %s" % (what, error)) from None
    return status


class FrameReader:
    """Reads whole frames from a blocking socket, one ``recv`` of up to 256 KiB at a time.

    ``max_payload`` bounds what one frame may claim, so a corrupt or hostile length is refused
    from the header alone instead of being buffered.
    """

    def __init__(self, sock: socket.socket, max_payload: int) -> None:
        self._sock = sock
        self._buffer = bytearray()
        self.max_payload = max_payload
        #: Bytes received so far (headers and payloads).
        self.bytes_received = 0

    def read(self) -> Optional[Tuple[FrameHeader, bytes]]:
        """The next frame, or None at a clean end of stream between frames."""
        if not self._fill(HEADER_SIZE):
            if self._buffer:
                raise ProtocolViolation("the connection closed in the middle of a frame header")
            return None
        header = decode_header(bytes(self._buffer[:HEADER_SIZE]))
        if header.length > self.max_payload:
            raise ProtocolViolation("frame %s on stream %d claims %d bytes, over the limit of %d"
                                    % (type_name(header.type), header.stream_id, header.length, self.max_payload))
        total = HEADER_SIZE + header.length
        if not self._fill(total):
            raise ProtocolViolation("the connection closed in the middle of a %s frame" % type_name(header.type))
        payload = bytes(self._buffer[HEADER_SIZE:total])
        del self._buffer[:total]
        return header, payload

    def _fill(self, size: int) -> bool:
        while len(self._buffer) < size:
            chunk = self._sock.recv(max(262144, size - len(self._buffer)))
            if not chunk:
                return False
            self.bytes_received += len(chunk)
            self._buffer += chunk
        return True
