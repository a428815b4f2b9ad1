"""Framing, compression, options and the generated method table, without a server."""

from __future__ import annotations

import pickle
import time
import zlib

import pytest
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import MethodDescriptor

import mrpc_client
from mrpc_client import Compression, RpcError, StatusCode, parse_address, rpc_status
from mrpc_client.compression import InflateError, StreamInflater, deflate_body, inflate_body
from mrpc_client.frames import (PREFACE, FrameType, ProtocolViolation, call_payload, decode_header, encode_frame,
                                split_reply)
from mrpc_client.gen import services
from mrpc_client.gen.moderation.v1 import moderation_pb2
from mrpc_client.gen.mrpc.v1 import envelope_pb2
from mrpc_client.options import CallSettings
from mrpc_client.rpc_method import RpcMethod


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


def test_call_settings_check_every_keyword() -> None:
    with pytest.raises(ValueError, match="timeout"):
        CallSettings.of_call("/x.Y/Z", timeout=-1)
    with pytest.raises(ValueError, match="timeout"):
        CallSettings.of_call("/x.Y/Z", timeout=float("inf"))
    with pytest.raises(TypeError, match="on_behalf_of must be a str"):
        CallSettings.of_call("/x.Y/Z", on_behalf_of=7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="resume_attempts"):
        CallSettings.of_call("/x.Y/Z", resume_attempts=-1)
    with pytest.raises(TypeError, match="max_buffered_messages must be an int"):
        CallSettings.of_call("/x.Y/Z", max_buffered_messages="5")
    with pytest.raises(ValueError, match="deflate only"):
        CallSettings.of_call("/x.Y/Z", compression=Compression.Gzip)
    with pytest.raises(TypeError, match="mrpc_client.Compression"):
        CallSettings.of_call("/x.Y/Z", compression="deflate")  # type: ignore[arg-type]


def test_metadata_fills_the_call_header_as_the_grpc_listener_reads_it() -> None:
    settings = CallSettings.of_call("/x.Y/Z", timeout=0.0101, metadata=[
        ("x-on-behalf-of", "u1"), ("x-idempotency-key", "idem"), ("x-request-id", "r1"), ("trace", "abc")])
    header = settings.call_header("/x.Y/Z", settings.timeout, accept_deflate=True)
    assert header.timeout_ms == 11  # rounded up, never shorter than asked
    assert (header.on_behalf_of, header.idempotency_key, header.request_id, dict(header.metadata)) == (
        "u1", "idem", "r1", {"trace": "abc"})
    assert list(header.accept_encodings) == ["deflate"]
    # The keywords mean the same; a dict is taken as well as pairs.
    by_keyword = CallSettings.of_call("/x.Y/Z", metadata={"trace": "abc"}, on_behalf_of="u1",
                                      idempotency_key="idem", request_id="r1")
    assert by_keyword.call_header("/x.Y/Z", None, False) == settings.call_header("/x.Y/Z", None, False)


@pytest.mark.parametrize("metadata, keywords, error, text", [
    ([("authorization", "Bearer a:key-1"), ("authorization", "Bearer b:key-2")], {}, ValueError,
     "'authorization' is given twice"),
    ([("authorization", "Basic a2V5")], {}, RpcError, 'must be "Bearer APP_ID:KEY"'),
    ([("authorization", "Bearer ")], {}, RpcError, 'must be "Bearer APP_ID:KEY"'),
    ([("x-on-behalf-of", "u1")], {"on_behalf_of": "u2"}, ValueError, "on_behalf_of is given twice"),
    ([("x-request-id", "a"), ("x-request-id", "b")], {}, ValueError, "request_id is given twice"),
    ([("trace", "a"), ("trace", "b")], {}, ValueError, "'trace' is given twice"),
    ([("Trace", "a")], {}, ValueError, "lower-case"),
    ([("trace-bin", b"\x00")], {}, TypeError, "values are text"),
    ([("trace",)], {}, TypeError, "pairs or a dict"),
    ("trace=a", {}, TypeError, "pairs or a dict"),
])
def test_bad_metadata_is_refused_naming_the_key(metadata: object, keywords: dict, error: type, text: str) -> None:
    with pytest.raises(error, match=text):
        CallSettings.of_call("/x.Y/Z", metadata=metadata, **keywords)  # type: ignore[arg-type]


def test_a_calls_own_key_comes_from_authorization_or_x_api_key_and_is_not_sent_as_metadata() -> None:
    settings = CallSettings.of_call("/x.Y/Z", metadata=[("authorization", "Bearer app:key-123456"), ("trace", "t")])
    assert settings.api_key == "app:key-123456"
    assert dict(settings.call_header("/x.Y/Z", None, False).metadata) == {"trace": "t"}
    # The scheme in any case, as the gRPC listener takes it; a bare key is a key too.
    assert CallSettings.of_call("/x.Y/Z", metadata={"authorization": "bearer  bare-key-1234 "}).api_key == \
        "bare-key-1234"
    assert CallSettings.of_call("/x.Y/Z", metadata=[("x-api-key", "app:key-2")]).api_key == "app:key-2"
    # Both: authorization wins, as on the gRPC listener.
    both = CallSettings.of_call("/x.Y/Z", metadata=[("x-api-key", "app:key-2"), ("authorization", "Bearer app:key-1")])
    assert both.api_key == "app:key-1" and not both.call_header("/x.Y/Z", None, False).metadata
    assert CallSettings.of_call("/x.Y/Z").api_key is None  # the channel's
    with pytest.raises(RpcError) as caught:
        CallSettings.of_call("/x.Y/Z", metadata=[("authorization", "app:key-1")])
    assert (caught.value.code(), caught.value.error_code, caught.value.local, caught.value.not_run) == (
        StatusCode.UNAUTHENTICATED, "ERR_UNAUTHENTICATED", True, True)


def test_parse_address() -> None:
    assert parse_address("127.0.0.1:7600") == ("127.0.0.1", 7600)
    assert parse_address("[::1]:80") == ("::1", 80)
    for bad in ("localhost", "host:0", "host:x", ":80", "[::1]80"):
        with pytest.raises(ValueError):
            parse_address(bad)


def test_rpc_error_is_shaped_like_grpcs_and_pickles() -> None:
    error = RpcError(7, "ERR_PERMISSION_DENIED", "u2 may not kick u1", {"guid": "g1"})
    assert error.code() is StatusCode.PERMISSION_DENIED and error.code().name == "PERMISSION_DENIED"
    assert error.details() == "u2 may not kick u1"
    assert (error.error_code, error.error_details, error.last_seq) == ("ERR_PERMISSION_DENIED", {"guid": "g1"}, None)
    assert str(error) == "PERMISSION_DENIED ERR_PERMISSION_DENIED: u2 may not kick u1 [guid=g1]"
    assert error.debug_error_string() == str(error)
    error.last_seq = 41
    error.method = "/moderation.v1.Moderation/KickMember"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code(), copy.error_code, copy.details(), copy.error_details, copy.last_seq, copy.method) == (
        StatusCode.PERMISSION_DENIED, "ERR_PERMISSION_DENIED", "u2 may not kick u1", {"guid": "g1"}, 41,
        "/moderation.v1.Moderation/KickMember")
    odd = RpcError(99, "", "what")
    assert odd.code() is StatusCode.UNKNOWN and odd.details() == "status code 99: what"


def test_an_error_from_the_server_carries_the_rich_status_the_grpc_listener_sends() -> None:
    status = envelope_pb2.Status(code=7, error_code="ERR_PERMISSION_DENIED", message="u2 may not kick u1",
                                 details={"guid": "g1", "uid": "u1"})
    error = RpcError.from_status(status, method="/moderation.v1.Moderation/KickMember")
    assert error.initial_metadata() == ()
    [(key, value)] = error.trailing_metadata()
    assert key == "grpc-status-details-bin" and isinstance(value, bytes)
    rich = rpc_status.from_call(error)
    assert (rich.code, rich.message, len(rich.details)) == (7, "u2 may not kick u1", 1)
    info = rpc_status.ErrorInfo()
    assert rich.details[0].type_url == "type.googleapis.com/google.rpc.ErrorInfo" and rich.details[0].Unpack(info)
    assert (info.reason, info.domain, dict(info.metadata)) == (
        "ERR_PERMISSION_DENIED", "moderation.v1", {"guid": "g1", "uid": "u1"})
    # Without an ERR_… code or details, the Status alone; without a method, the domain "mrpc".
    assert not rpc_status.from_call(RpcError(5, "", "gone")).details
    info.Clear()
    rpc_status.from_call(RpcError(16, "ERR_UNAUTHENTICATED", "no")).details[0].Unpack(info)
    assert info.domain == "mrpc"
    # An error this client decided has none, as a deadline has none with grpcio.
    local = RpcError.client_side(StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED", "late")
    assert local.trailing_metadata() == () and rpc_status.from_call(local) is None
    # A status that disagrees with the call is refused, as grpc_status refuses it.
    class Mismatch:
        def code(self) -> StatusCode:
            return StatusCode.NOT_FOUND

        def details(self) -> str:
            return error.details()

        def trailing_metadata(self) -> tuple:
            return error.trailing_metadata()

    with pytest.raises(ValueError, match="doesn't match status code"):
        rpc_status.from_call(Mismatch())


def test_rpc_status_domains_are_the_called_methods_package() -> None:
    assert rpc_status.domain_of("/moderation.v1.Moderation/KickMember") == "moderation.v1"
    assert rpc_status.domain_of("/mrpc.health.v1.Health/Check") == "mrpc.health.v1"
    assert rpc_status.domain_of("/Service/Method") == "mrpc"
    assert rpc_status.domain_of(None) == "mrpc"


def test_rpc_status_builds_its_own_messages_without_googleapis_common_protos() -> None:
    status_class, info_class = rpc_status._build_classes()
    assert (status_class.DESCRIPTOR.full_name, info_class.DESCRIPTOR.full_name) == (
        "google.rpc.Status", "google.rpc.ErrorInfo")
    # The same wire format as the classes in use (googleapis-common-protos' when installed).
    encoded = rpc_status.encode_status(9, "no", "ERR_NOT_A_MEMBER", {"guid": "g1"}, "moderation.v1")
    status = status_class.FromString(encoded)
    info = info_class()
    assert status.details[0].Unpack(info) and (info.reason, dict(info.metadata)) == ("ERR_NOT_A_MEMBER", {"guid": "g1"})
    assert status.SerializeToString(deterministic=True) == encoded
    in_use = rpc_status.ErrorInfo()
    assert status.details[0].Unpack(in_use) and in_use.domain == "moderation.v1"


def test_the_call_of_with_call_is_shaped_like_grpcs() -> None:
    call = mrpc_client.CompletedCall(time.monotonic() + 5)
    assert (call.code(), call.details(), call.initial_metadata(), call.trailing_metadata()) == (
        StatusCode.OK, "", (), ())
    assert not call.is_active() and not call.cancel() and not call.add_callback(lambda: None)
    assert 4 < call.time_remaining() <= 5  # type: ignore[operator]
    assert rpc_status.from_call(call) is None
    assert mrpc_client.CompletedCall(None).time_remaining() is None


def test_status_code_prints_and_compares_like_grpcs() -> None:
    assert [code.value for code in StatusCode] == list(range(17))
    assert str(StatusCode.NOT_FOUND) == "StatusCode.NOT_FOUND" == "{}".format(StatusCode.NOT_FOUND)
    assert StatusCode.NOT_FOUND == 5 and StatusCode(16).name == "UNAUTHENTICATED"


def server_streaming(method: MethodDescriptor) -> bool:
    """Whether the method's server streams. ``MethodDescriptor.server_streaming`` came with
    protobuf 4.25; on older ones (the client supports 4.21 up) it is read from the method's
    ``MethodDescriptorProto``."""
    flag = getattr(method, "server_streaming", None)
    if flag is not None:
        return bool(flag)
    proto = descriptor_pb2.MethodDescriptorProto()
    method.CopyToProto(proto)
    return proto.server_streaming


def test_method_table_covers_every_rpc_of_every_service_in_the_descriptors() -> None:
    from mrpc_client.gen.mrpc.diagnostics.v1 import diagnostics_pb2
    from mrpc_client.gen.mrpc.health.v1 import health_pb2
    from mrpc_client.gen.mrpc.reflection.v1 import reflection_pb2

    expected = {}
    for module in (moderation_pb2, diagnostics_pb2, health_pb2, reflection_pb2):
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                expected["/%s/%s" % (service.full_name, method.name)] = (
                    method.input_type.full_name, method.output_type.full_name, server_streaming(method))
    table = {path: (spec.request_type.DESCRIPTOR.full_name, spec.response_type.DESCRIPTOR.full_name,
                    spec.server_streaming) for path, spec in services.METHODS_BY_PATH.items()}
    assert table == expected
    assert len([p for p in table if p.startswith("/moderation.v1.Moderation/")]) == 58
    assert services.METHODS_BY_PATH["/moderation.v1.Moderation/Subscribe"].server_streaming
    kick = services.MODERATION_V1_MODERATION.method("KickMember")
    assert kick.path == "/moderation.v1.Moderation/KickMember" and kick.request_type is moderation_pb2.KickMemberRequest


class _RecordingChannel:
    """What a stub asks of a channel, recorded."""

    def __init__(self) -> None:
        self.made: dict = {}

    def unary_unary(self, path: str, request_serializer: object = None, response_deserializer: object = None) -> str:
        self.made[path] = ("unary", request_serializer, response_deserializer)
        return path

    def unary_stream(self, path: str, request_serializer: object = None, response_deserializer: object = None) -> str:
        self.made[path] = ("stream", request_serializer, response_deserializer)
        return path


@pytest.mark.parametrize("stub_class, service", [(services.ModerationStub, services.MODERATION_V1_MODERATION),
                                                 (services.DiagnosticsStub, services.MRPC_DIAGNOSTICS_V1_DIAGNOSTICS),
                                                 (services.HealthStub, services.MRPC_HEALTH_V1_HEALTH),
                                                 (services.ReflectionStub, services.MRPC_REFLECTION_V1_REFLECTION)])
def test_stubs_are_grpcio_shaped_one_attribute_per_rpc_named_as_in_the_proto(stub_class: type, service: object) -> None:
    channel = _RecordingChannel()
    stub = stub_class(channel)
    for spec in service.methods:  # type: ignore[attr-defined]
        assert getattr(stub, spec.name) == spec.path
        kind, serializer, deserializer = channel.made[spec.path]
        assert kind == ("stream" if spec.server_streaming else "unary")
        assert serializer == spec.request_type.SerializeToString
        assert deserializer == spec.response_type.FromString
    assert len(channel.made) == len(service.methods)  # type: ignore[attr-defined]


def test_every_message_and_enum_of_a_package_is_importable_from_one_module() -> None:
    from mrpc_client import moderation_v1, mrpc_diagnostics_v1, mrpc_health_v1, mrpc_reflection_v1, mrpc_v1

    modules = {"moderation.v1": moderation_v1, "mrpc.v1": mrpc_v1, "mrpc.health.v1": mrpc_health_v1,
               "mrpc.diagnostics.v1": mrpc_diagnostics_v1, "mrpc.reflection.v1": mrpc_reflection_v1}
    import importlib
    import pkgutil

    import mrpc_client.gen as gen

    seen = {name: set() for name in modules}
    for info in pkgutil.walk_packages(gen.__path__, gen.__name__ + "."):
        if not info.name.endswith("_pb2"):
            continue
        file = importlib.import_module(info.name).DESCRIPTOR
        module = modules[file.package]
        for name, message in file.message_types_by_name.items():
            assert getattr(module, name) is message._concrete_class, "%s.%s" % (file.package, name)
            seen[file.package].add(name)
        for name, enum in file.enum_types_by_name.items():
            assert getattr(module, name).DESCRIPTOR is enum
            seen[file.package].add(name)
            for value in enum.values:
                assert getattr(module, value.name) == value.number
                seen[file.package].add(value.name)
    for package, module in modules.items():
        stubs = {name for name in module.__all__ if name.endswith("Stub")}
        assert set(module.__all__) == seen[package] | stubs, package
    assert moderation_v1.ModerationStub is services.ModerationStub
    assert moderation_v1.KickMemberRequest is moderation_pb2.KickMemberRequest
    assert moderation_v1.ActionType.Name(moderation_v1.ACTION_TYPE_KICKED) == "ACTION_TYPE_KICKED"
    assert mrpc_diagnostics_v1.DiagnosticsStub is services.DiagnosticsStub


def test_generated_classes_live_in_the_package() -> None:
    assert moderation_pb2.KickMemberRequest.__module__ == "mrpc_client.gen.moderation.v1.moderation_pb2"
    request = moderation_pb2.KickMemberRequest(guid="g", uid="u")
    assert pickle.loads(pickle.dumps(request)) == request
    # The descriptors keep the .proto file names the server's reflection uses.
    assert moderation_pb2.DESCRIPTOR.name == "moderation/v1/moderation.proto"


def test_a_method_resolves_from_the_table_or_from_grpcios_arguments() -> None:
    kick = RpcMethod.resolve("/moderation.v1.Moderation/KickMember", server_streaming=False,
                             request_serializer=None, response_deserializer=None)
    request = moderation_pb2.KickMemberRequest(guid="g", uid="u")
    assert kick.encode(request) == request.SerializeToString() and kick.resume is None
    assert kick.response_name == "moderation.v1.KickMemberResponse"
    with pytest.raises(TypeError, match="takes a moderation.v1.KickMemberRequest, got moderation.v1.BanMemberRequest"):
        kick.encode(moderation_pb2.BanMemberRequest())
    with pytest.raises(TypeError, match="is server-streaming: use channel.unary_stream"):
        RpcMethod.resolve("/moderation.v1.Moderation/Subscribe", server_streaming=False, request_serializer=None,
                          response_deserializer=None)
    with pytest.raises(TypeError, match="is unary: use channel.unary_unary"):
        RpcMethod.resolve("/moderation.v1.Moderation/KickMember", server_streaming=True, request_serializer=None,
                          response_deserializer=None)
    with pytest.raises(ValueError, match="expected a path"):
        RpcMethod.resolve("KickMember", server_streaming=False, request_serializer=None, response_deserializer=None)
    subscribe = RpcMethod.resolve("/moderation.v1.Moderation/Subscribe", server_streaming=True,
                                  request_serializer=moderation_pb2.SubscribeRequest.SerializeToString,
                                  response_deserializer=moderation_pb2.SubscribeResponse.FromString)
    assert subscribe.resume is not None
    raw = RpcMethod.resolve("/moderation.v1.Moderation/Subscribe", server_streaming=True, request_serializer=None,
                            response_deserializer=lambda body: body)
    assert raw.resume is None  # responses it cannot read seqs from are not resumed
    unknown = RpcMethod.resolve("/no.Such/Method", server_streaming=False, request_serializer=None,
                                response_deserializer=None)
    assert unknown.encode(b"raw") == b"raw" and unknown.deserialize(b"\x01") == b"\x01"
    with pytest.raises(TypeError, match="protobuf message"):
        unknown.encode("text")


KEY_VARIABLES = ("MODERATION_CLIENT_API_KEY", "MODERATION_CLIENT_API_KEY_FILE", "MRPC_API_KEY", "MRPC_API_KEY_FILE")


def test_channel_arguments_are_checked_when_it_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    # No key anywhere: a channel without one (health checks, or calls that bring their own key).
    with mrpc_client.insecure_channel("127.0.0.1:7600") as channel:
        assert channel._api_key == ""
    monkeypatch.setenv("MODERATION_CLIENT_API_KEY", "app:key-from-env")
    with mrpc_client.insecure_channel("127.0.0.1:7600") as channel:
        assert channel._api_key == "app:key-from-env"
    monkeypatch.setenv("MODERATION_CLIENT_API_KEY_FILE", "/no/such/keys/file")
    monkeypatch.delenv("MODERATION_CLIENT_API_KEY")
    with pytest.raises(OSError):  # a keys file named but unreadable is an error, not "no key"
        mrpc_client.insecure_channel("127.0.0.1:7600")
    monkeypatch.delenv("MODERATION_CLIENT_API_KEY_FILE")
    with pytest.raises(ValueError, match="expected HOST:PORT"):
        mrpc_client.insecure_channel("localhost", api_key="app:key-123456")
    with pytest.raises(ValueError, match="deflate only"):
        mrpc_client.insecure_channel("127.0.0.1:7600", api_key="app:key-123456", compression=Compression.Gzip)
    with pytest.raises(TypeError, match="ssl_channel_credentials"):
        mrpc_client.secure_channel("127.0.0.1:7600", None, api_key="app:key-123456")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="root_certificates do not load"):
        mrpc_client.ssl_channel_credentials(root_certificates=b"not a certificate")
    with pytest.raises(ValueError, match="needs both certificate_chain and private_key"):
        mrpc_client.ssl_channel_credentials(certificate_chain=b"-----BEGIN CERTIFICATE-----")
    with pytest.raises(TypeError, match="PEM bytes"):
        mrpc_client.ssl_channel_credentials(root_certificates="ca.pem")  # type: ignore[arg-type]


KEYS_FILE = """# API keys of this server, one APP_ID:KEY a line.
default:0123456789abcdef

  billing:old-key-000000
billing:new-key-111111
"""


def test_read_api_key_reads_the_servers_keys_file(tmp_path) -> None:
    path = tmp_path / "api-keys"
    path.write_text(KEYS_FILE)
    assert mrpc_client.read_api_key(path, app_id="default") == "default:0123456789abcdef"
    assert mrpc_client.read_api_key(str(path), app_id="billing") == "billing:new-key-111111"  # the newest
    with pytest.raises(ValueError, match="holds keys of apps billing, default: name one with app_id="):
        mrpc_client.read_api_key(path)
    with pytest.raises(ValueError, match="no key for app 'nobody'"):
        mrpc_client.read_api_key(path, app_id="nobody")
    single = tmp_path / "single"
    single.write_text("# one app\ndefault:0123456789abcdef\n")
    assert mrpc_client.read_api_key(single) == "default:0123456789abcdef"
    for bad, line in (("default:short\n", 1), ("# c\nno colon here\n", 2), ("bad app:0123456789\n", 1),
                      ("app:key with spaces\n", 1)):
        broken = tmp_path / "broken"
        broken.write_text(bad)
        with pytest.raises(ValueError, match="line %d: expected APP_ID:KEY" % line):
            mrpc_client.read_api_key(broken)
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n")
    with pytest.raises(ValueError, match="has no key"):
        mrpc_client.read_api_key(empty)
    with pytest.raises(OSError):
        mrpc_client.read_api_key(tmp_path / "missing")


def test_api_key_from_env_reads_the_variable_or_the_file_it_names(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "api-keys"
    path.write_text(KEYS_FILE)
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert mrpc_client.lookup_api_key() is None
    with pytest.raises(ValueError, match="no API key: set MODERATION_CLIENT_API_KEY to APP_ID:KEY, or "
                                         "MODERATION_CLIENT_API_KEY_FILE .* the older MRPC_API_KEY, MRPC_API_KEY_FILE"):
        mrpc_client.api_key_from_env()
    # The older names still work...
    monkeypatch.setenv("MRPC_API_KEY_FILE", str(path))
    assert mrpc_client.api_key_from_env(app_id="billing") == "billing:new-key-111111"
    monkeypatch.setenv("MRPC_API_KEY", " app:from-the-variable ")
    assert mrpc_client.api_key_from_env() == "app:from-the-variable"
    # ...and anything under the new name wins: its keys file over the old variable, its variable over all.
    monkeypatch.setenv("MODERATION_CLIENT_API_KEY_FILE", str(path))
    assert mrpc_client.api_key_from_env(app_id="default") == "default:0123456789abcdef"
    monkeypatch.setenv("MODERATION_CLIENT_API_KEY", "app:the-new-name")
    assert mrpc_client.api_key_from_env() == "app:the-new-name"
    monkeypatch.setenv("MODERATION_CLIENT_API_KEY", "")  # empty is unset
    assert mrpc_client.api_key_from_env(app_id="billing") == "billing:new-key-111111"
    monkeypatch.setenv("RPC_PROBE_API_KEY", "probe:key-0000000")
    assert mrpc_client.api_key_from_env("RPC_PROBE_API_KEY") == "probe:key-0000000"
    monkeypatch.delenv("OTHER_KEY", raising=False)
    monkeypatch.delenv("OTHER_KEY_FILE", raising=False)
    with pytest.raises(ValueError, match="set OTHER_KEY to APP_ID:KEY, or OTHER_KEY_FILE"):
        mrpc_client.api_key_from_env("OTHER_KEY")
