"""Framing, compression, options and the generated method table, without a server."""

from __future__ import annotations

import pickle
import time
import zlib

import pytest

from mrpc_client import RpcError, StatusCode, parse_address
from mrpc_client.compression import InflateError, StreamInflater, deflate_body, inflate_body
from mrpc_client.frames import (PREFACE, FrameType, ProtocolViolation, call_payload, decode_header, encode_frame,
                                split_reply)
from mrpc_client.gen import services
from mrpc_client.gen.moderation.v1 import moderation_pb2
from mrpc_client.gen.mrpc.v1 import envelope_pb2
from mrpc_client.options import CallSettings


def test_preface_is_mrpc_version_1() -> None:
    assert PREFACE == bytes([0x4D, 0x52, 0x50, 0x43, 0x00, 0x01, 0x00, 0x00])


def test_frame_header_is_12_bytes_big_endian() -> None:
    frame = encode_frame(FrameType.CALL, 0x01020304, b"abc", flags=1)
    assert frame == bytes([0, 0, 0, 3, 3, 1, 0, 0, 1, 2, 3, 4]) + b"abc"
    header = decode_header(frame)
    assert (header.length, header.type, header.compressed, header.stream_id) == (3, 3, True, 0x01020304)


@pytest.mark.parametrize("raw", [bytes([0, 0, 0, 0, 4, 0, 0, 1, 0, 0, 0, 1]),   # reserved bits
                                 bytes([0, 0, 0, 0, 4, 2, 0, 0, 0, 0, 0, 1])])  # unknown flag
def test_header_with_reserved_bits_or_unknown_flags_is_refused(raw: bytes) -> None:
    with pytest.raises(ProtocolViolation):
        decode_header(raw)


def test_call_payload_layout() -> None:
    header = envelope_pb2.CallHeader(method="/a.B/C", timeout_ms=5)
    payload = call_payload(header, b"BODY")
    encoded = header.SerializeToString()
    assert payload == len(encoded).to_bytes(4, "big") + encoded + b"BODY"


def test_ok_reply_starts_with_four_zero_bytes() -> None:
    status, body = split_reply(b"\x00\x00\x00\x00" + b"response")
    assert status.code == 0 and body == b"response"


def test_error_reply_carries_status_and_no_body() -> None:
    encoded = envelope_pb2.Status(code=7, error_code="ERR_PERMISSION_DENIED", message="no").SerializeToString()
    status, body = split_reply(len(encoded).to_bytes(4, "big") + encoded)
    assert (status.code, status.error_code, body) == (7, "ERR_PERMISSION_DENIED", b"")
    with pytest.raises(ProtocolViolation):
        split_reply(b"\x00\x00")
    with pytest.raises(ProtocolViolation):
        split_reply(b"\x00\x00\x00\x09abc")


def test_stream_inflater_keeps_the_context_across_messages() -> None:
    deflater = zlib.compressobj(6, zlib.DEFLATED, -12, 4)  # the server's window and memory level
    inflater = StreamInflater(limit=1 << 20)
    messages = [b"event %d: user-%d joined group-%d " % (i, i, i % 3) * 4 for i in range(50)]
    sizes = []
    for message in messages:
        data = deflater.compress(message) + deflater.flush(zlib.Z_SYNC_FLUSH)
        assert data.endswith(b"\x00\x00\xff\xff")
        sizes.append(len(data) - 4)
        assert inflater.inflate(data[:-4]) == message
    assert sum(sizes[25:]) < sum(len(m) for m in messages[25:]) / 3, "context takeover should compress well"


def test_inflate_is_capped_while_inflating() -> None:
    bomb = deflate_body(b"\x00" * (64 << 20))
    assert len(bomb) < 100_000
    started = time.monotonic()
    with pytest.raises(InflateError) as caught:
        inflate_body(bomb, limit=4 << 20)
    assert caught.value.too_large
    assert time.monotonic() - started < 2
    with pytest.raises(InflateError) as corrupt:
        inflate_body(b"\xff\xff\xff\xff", limit=1024)
    assert not corrupt.value.too_large


def test_unary_bodies_inflate_whether_finished_or_sync_flushed() -> None:
    body = b"hello unary body " * 200
    assert inflate_body(deflate_body(body), 1 << 20) == body
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    flushed = deflater.compress(body) + deflater.flush(zlib.Z_SYNC_FLUSH)
    assert inflate_body(flushed[:-4], 1 << 20) == body


def test_call_options_are_checked_by_name_and_value() -> None:
    with pytest.raises(TypeError, match="unknown call option timeuot"):
        CallSettings.from_options({"timeuot": 1}, streaming=False, method="/x.Y/Z")
    with pytest.raises(TypeError, match="resume"):
        CallSettings.from_options({"resume": False}, streaming=False, method="/x.Y/Z")
    with pytest.raises(ValueError, match="timeout"):
        CallSettings.from_options({"timeout": -1}, streaming=False, method="/x.Y/Z")
    with pytest.raises(TypeError, match="metadata"):
        CallSettings.from_options({"metadata": {"a": 1}}, streaming=False, method="/x.Y/Z")
    settings = CallSettings.from_options({"timeout": 0.0101, "on_behalf_of": "u1", "metadata": {"k": "v"},
                                          "idempotency_key": "idem", "request_id": "r1"},
                                         streaming=False, method="/x.Y/Z")
    header = settings.call_header("/x.Y/Z", settings.timeout, accept_deflate=True)
    assert header.timeout_ms == 11  # rounded up, never shorter than asked
    assert (header.on_behalf_of, dict(header.metadata), header.idempotency_key, header.request_id) == (
        "u1", {"k": "v"}, "idem", "r1")
    assert list(header.accept_encodings) == ["deflate"]


def test_parse_address() -> None:
    assert parse_address("127.0.0.1:7600") == ("127.0.0.1", 7600)
    assert parse_address("[::1]:80") == ("::1", 80)
    for bad in ("localhost", "host:0", "host:x", ":80", "[::1]80"):
        with pytest.raises(ValueError):
            parse_address(bad)


def test_rpc_error_names_and_pickles() -> None:
    error = RpcError(7, "ERR_PERMISSION_DENIED", "u2 may not kick u1", {"guid": "g1"})
    assert error.code_name == "PERMISSION_DENIED" and error.status_code is StatusCode.PERMISSION_DENIED
    assert str(error) == "PERMISSION_DENIED ERR_PERMISSION_DENIED: u2 may not kick u1 [guid=g1]"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.error_code, copy.message, copy.details) == (7, "ERR_PERMISSION_DENIED",
                                                                        "u2 may not kick u1", {"guid": "g1"})
    assert RpcError(99).code_name == "CODE_99"


def test_method_table_covers_every_rpc_of_every_service_in_the_descriptors() -> None:
    from mrpc_client.gen.mrpc.diagnostics.v1 import diagnostics_pb2
    from mrpc_client.gen.mrpc.health.v1 import health_pb2
    from mrpc_client.gen.mrpc.reflection.v1 import reflection_pb2

    expected = {}
    for module in (moderation_pb2, diagnostics_pb2, health_pb2, reflection_pb2):
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                expected["/%s/%s" % (service.full_name, method.name)] = (
                    method.input_type.full_name, method.output_type.full_name, method.server_streaming)
    table = {path: (spec.request_type.DESCRIPTOR.full_name, spec.response_type.DESCRIPTOR.full_name,
                    spec.server_streaming) for path, spec in services.METHODS_BY_PATH.items()}
    assert table == expected
    assert len([p for p in table if p.startswith("/moderation.v1.Moderation/")]) == 32
    subscribe = services.METHODS_BY_PATH["/moderation.v1.Moderation/Subscribe"]
    assert subscribe.server_streaming and subscribe.python_name == "subscribe"
    kick = services.ModerationStub.SPEC.method("KickMember")
    assert kick.python_name == "kick_member" and kick.request_type is moderation_pb2.KickMemberRequest


def test_generated_classes_live_in_the_package() -> None:
    assert moderation_pb2.KickMemberRequest.__module__ == "mrpc_client.gen.moderation.v1.moderation_pb2"
    request = moderation_pb2.KickMemberRequest(guid="g", uid="u")
    assert pickle.loads(pickle.dumps(request)) == request
    # The descriptors keep the .proto file names the server's reflection uses.
    assert moderation_pb2.DESCRIPTOR.name == "moderation/v1/moderation.proto"
