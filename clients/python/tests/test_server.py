"""The client against the real moderation-server: handshake, runtime services, multiplexing,
compression, deadlines and the server's size limit."""

from __future__ import annotations

import threading
import time
from typing import Iterator, List

import pytest

import mrpc_client
from mrpc_client import Channel, Compression, RpcError, StatusCode
from mrpc_client import mrpc_diagnostics_v1 as diagnostics
from mrpc_client import mrpc_health_v1 as health
from mrpc_client import mrpc_reflection_v1 as reflection
from mrpc_client.gen import services
from mrpc_client.testing import ServerProcess


@pytest.fixture
def echo(channel: Channel) -> diagnostics.DiagnosticsStub:
    return diagnostics.DiagnosticsStub(channel)


def echo_request_of_size(size: int) -> diagnostics.EchoRequest:
    """An EchoRequest whose encoding is exactly ``size`` bytes."""
    request = diagnostics.EchoRequest(payload=b"x" * size)
    request.payload = b"x" * (size - (request.ByteSize() - size))
    assert request.ByteSize() == size
    return request


def test_handshake_keeps_the_servers_limits(channel: Channel, app_id: str) -> None:
    ack = channel.hello_ack
    assert ack.protocol_version == 1
    assert ack.server_name == "moderation-server"
    assert ack.app_id == app_id
    assert ack.max_message_bytes == 4 << 20 and ack.max_call_header_bytes == 8192
    assert ack.max_concurrent_calls >= 1000
    assert list(ack.accept_encodings) == ["deflate"]
    assert channel.connection().max_message_bytes == ack.max_message_bytes


@pytest.mark.parametrize("key", ["wrong-key-123456", "", "otherapp:" + "x" * 12])
def test_bad_api_key_raises_unauthenticated_at_the_first_call(server_address: str, key: str) -> None:
    with mrpc_client.insecure_channel(server_address, api_key=key) as channel:
        with pytest.raises(RpcError) as caught:
            diagnostics.DiagnosticsStub(channel).Echo(diagnostics.EchoRequest())
    error = caught.value
    assert (error.code(), error.code().name, error.error_code) == (16, "UNAUTHENTICATED", "ERR_UNAUTHENTICATED")
    assert error.details() and not error.local and error.not_run


def test_key_of_another_app_is_refused(server_address: str, api_key: str) -> None:
    with mrpc_client.insecure_channel(server_address, api_key=api_key, app_id="some-other-app") as channel:
        with pytest.raises(RpcError) as caught:
            channel.hello_ack
    assert caught.value.error_code == "ERR_UNAUTHENTICATED"


def test_echo(channel: Channel, echo: diagnostics.DiagnosticsStub) -> None:
    assert echo.Echo(diagnostics.EchoRequest(payload=b"\x00hello\xff")).payload == b"\x00hello\xff"
    assert echo.Echo(diagnostics.EchoRequest()).payload == b""
    # By path, as grpcio's channel.unary_unary: the method table supplies the classes.
    by_path = channel.unary_unary("/mrpc.diagnostics.v1.Diagnostics/Echo")
    response = by_path(diagnostics.EchoRequest(payload=b"by path"), timeout=5)
    assert isinstance(response, diagnostics.EchoResponse) and response.payload == b"by path"


def test_health(channel: Channel) -> None:
    stub = health.HealthStub(channel)
    assert stub.Check(health.HealthCheckRequest()).status == health.SERVING_STATUS_SERVING
    assert stub.Check(health.HealthCheckRequest(service="mrpc.health.v1.Health")).status == \
        health.SERVING_STATUS_SERVING
    assert stub.Check(health.HealthCheckRequest(service="no.such.Service")).status == \
        health.SERVING_STATUS_SERVICE_UNKNOWN


def test_reflection_lists_services_with_streaming_flags_matching_the_protos(channel: Channel) -> None:
    listed = reflection.ReflectionStub(channel).ListServices(reflection.ListServicesRequest()).services
    names = [s.name for s in listed]
    assert names == sorted(names)
    assert {"mrpc.diagnostics.v1.Diagnostics", "mrpc.health.v1.Health", "mrpc.reflection.v1.Reflection"} <= set(names)
    # Standard services vendored under proto/grpc for stock gRPC clients (docs/GRPC.md): served
    # from the same method table, not part of this client's generated code.
    standard = {"grpc.health.v1.Health"}
    for service in listed:
        if service.name in standard:
            continue
        for method in service.methods:
            spec = services.METHODS_BY_PATH.get(method.path)
            assert spec is not None, "the server serves %s, which proto/ does not declare" % method.path
            assert (method.name, method.request_type, method.response_type, method.server_streaming) == (
                spec.name, spec.request_type.DESCRIPTOR.full_name, spec.response_type.DESCRIPTOR.full_name,
                spec.server_streaming)
            assert not method.client_streaming
    if "moderation.v1.Moderation" in names:
        moderation = next(s for s in listed if s.name == "moderation.v1.Moderation")
        flags = {m.name: m.server_streaming for m in moderation.methods}
        assert flags["Subscribe"] is True and flags["KickMember"] is False


def test_reflection_file_descriptor_set(channel: Channel) -> None:
    from google.protobuf import descriptor_pb2

    response = reflection.ReflectionStub(channel).GetFileDescriptorSet(reflection.GetFileDescriptorSetRequest())
    files = descriptor_pb2.FileDescriptorSet.FromString(response.file_descriptor_set)
    assert "mrpc/v1/envelope.proto" in {f.name for f in files.file}


@pytest.mark.parametrize("path", ["/no.Such/Method", "/moderation.v1.Moderation/NoSuchMethod"])
def test_unknown_method_raises_rpc_error_unimplemented_and_the_connection_stays_usable(
        channel: Channel, echo: diagnostics.DiagnosticsStub, path: str) -> None:
    unary = channel.unary_unary(path, request_serializer=diagnostics.EchoRequest.SerializeToString,
                                response_deserializer=diagnostics.EchoResponse.FromString)
    with pytest.raises(RpcError) as caught:
        unary(diagnostics.EchoRequest(), timeout=5)
    assert (caught.value.code(), caught.value.error_code) == (StatusCode.UNIMPLEMENTED, "ERR_UNIMPLEMENTED")
    assert path in caught.value.details() and caught.value.not_run
    # A stream of an unknown method: the same error, raised by the iteration.
    stream = channel.unary_stream(path)(b"", timeout=5)
    with pytest.raises(RpcError) as streamed:
        next(stream)
    assert (streamed.value.code(), streamed.value.error_code) == (StatusCode.UNIMPLEMENTED, "ERR_UNIMPLEMENTED")
    assert stream.code() == StatusCode.UNIMPLEMENTED and not stream.is_active()
    assert echo.Echo(diagnostics.EchoRequest(payload=b"still here")).payload == b"still here"


def test_a_thousand_calls_in_flight_on_one_connection(channel: Channel, echo: diagnostics.DiagnosticsStub) -> None:
    conn = channel.connection()
    before = conn.stats.calls_started
    payloads = [(b"call-%04d-" % i) * (1 + i % 37) for i in range(1000)]
    with channel.batch():  # every CALL is queued, then sent in one write: all 1000 are in flight at once
        futures = [echo.Echo.future(diagnostics.EchoRequest(payload=p)) for p in payloads]
        assert conn.in_flight == 1000
    for i, future in enumerate(futures):
        assert future.result(timeout=30).payload == payloads[i], "reply %d does not match its request" % i
    assert channel.connection() is conn
    assert conn.stats.calls_started - before == 1000
    assert conn.stats.peak_in_flight >= 1000
    assert conn.in_flight == 0


def test_calls_from_many_threads_share_one_connection(channel: Channel, echo: diagnostics.DiagnosticsStub) -> None:
    failures: List[object] = []

    def worker(n: int) -> None:
        try:
            for i in range(100):
                payload = b"thread %d call %d" % (n, i)
                if echo.Echo(diagnostics.EchoRequest(payload=payload)).payload != payload:
                    failures.append((n, i))
        except Exception as error:  # reported below
            failures.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert failures == []
    assert channel.connection().stats.calls_started >= 800


def test_deflate_compresses_the_reply_and_the_request(channel: Channel, echo: diagnostics.DiagnosticsStub) -> None:
    conn = channel.connection()
    payload = b"".join(b"member-%05d joined group-%03d; " % (i, i % 100) for i in range(3000))  # ~90 KB
    compressed_before, sent_before = conn.stats.compressed_frames_received, conn.stats.bytes_sent
    response = echo.Echo(diagnostics.EchoRequest(payload=payload), compression=Compression.Deflate)
    assert response.payload == payload
    assert conn.stats.compressed_frames_received == compressed_before + 1
    assert conn.stats.bytes_sent - sent_before < len(payload) / 4, "the request went compressed"
    # Without compression the server must not compress.
    assert echo.Echo(diagnostics.EchoRequest(payload=payload), compression=Compression.NoCompression).payload == payload
    assert conn.stats.compressed_frames_received == compressed_before + 1


def test_a_channels_default_compression_holds_for_every_call(server_address: str, api_key: str) -> None:
    payload = b"abc" * 20000
    with mrpc_client.insecure_channel(server_address, api_key=api_key, compression=Compression.Deflate) as channel:
        echo = diagnostics.DiagnosticsStub(channel)
        assert echo.Echo(diagnostics.EchoRequest(payload=payload)).payload == payload
        assert channel.connection().stats.compressed_frames_received == 1
        assert echo.Echo(diagnostics.EchoRequest(payload=payload), compression=Compression.NoCompression).payload \
            == payload
        assert channel.connection().stats.compressed_frames_received == 1


def test_deadline_that_expires_on_a_slow_call(channel: Channel, echo: diagnostics.DiagnosticsStub) -> None:
    """A 1 MiB echo cannot make the round trip in 1 ms: the client gives up at its deadline,
    sends CANCEL, drops the late reply, and the connection stays usable."""
    conn = channel.connection()
    cancels = conn.stats.cancels_sent
    started = time.monotonic()
    with pytest.raises(RpcError) as caught:
        echo.Echo(diagnostics.EchoRequest(payload=b"x" * (1 << 20)), timeout=0.001)
    assert time.monotonic() - started < 0.5
    error = caught.value
    assert (error.code(), error.error_code) == (StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED")
    assert conn.stats.cancels_sent == cancels + 1
    assert echo.Echo(diagnostics.EchoRequest(payload=b"after"), timeout=30).payload == b"after"


def test_ping(channel: Channel) -> None:
    rtt = channel.ping()
    assert 0 < rtt < 5


def test_wrong_request_type_or_keyword_is_refused_before_sending(echo: diagnostics.DiagnosticsStub) -> None:
    with pytest.raises(TypeError, match="takes a mrpc.diagnostics.v1.EchoRequest, got mrpc.health.v1.HealthCheck"):
        echo.Echo(health.HealthCheckRequest())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="deadline"):
        echo.Echo(diagnostics.EchoRequest(), deadline=3)  # type: ignore[call-arg]


def expect_too_large_before_sending(channel: Channel, echo: diagnostics.DiagnosticsStub, size: int,
                                    limit: int) -> None:
    conn = channel.connection()
    calls, sent = conn.stats.calls_started, conn.stats.bytes_sent
    with pytest.raises(RpcError) as caught:
        echo.Echo(echo_request_of_size(size), timeout=30)
    error = caught.value
    assert (error.code(), error.error_code) == (StatusCode.RESOURCE_EXHAUSTED, "ERR_MESSAGE_TOO_LARGE")
    assert error.local and error.not_run
    assert "request of %d bytes" % size in error.details() and "maximum message size %d" % limit in error.details()
    assert (conn.stats.calls_started, conn.stats.bytes_sent) == (calls, sent), "nothing may be sent"


def test_a_request_over_the_servers_limit_fails_before_sending(channel: Channel,
                                                               echo: diagnostics.DiagnosticsStub) -> None:
    """The limit is HELLO_ACK's max_message_bytes, on the encoded request: exactly that many
    bytes go, one more fails here with the server's own code."""
    limit = channel.hello_ack.max_message_bytes
    assert limit == 4194304
    at_limit = echo_request_of_size(limit)
    assert echo.Echo(at_limit, timeout=60).payload == at_limit.payload
    expect_too_large_before_sending(channel, echo, limit + 1, limit)
    # Under the frame size limit (the message's, the CallHeader's and 1 KiB), over the message's.
    expect_too_large_before_sending(channel, echo, limit + 9220, limit)


@pytest.fixture(scope="module")
def small_limit_server(server_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("small-limit")
    server = ServerProcess(server_binary, str(work / "data"), "limits:limit-test-key-0000", str(work / "server.log"),
                           extra_args=["--max-message-bytes", "65536"])
    yield server
    server.terminate()


def test_the_limit_is_the_one_the_server_states_and_the_server_agrees(small_limit_server: ServerProcess) -> None:
    with mrpc_client.insecure_channel(small_limit_server.address, api_key="limits:limit-test-key-0000") as channel:
        echo = diagnostics.DiagnosticsStub(channel)
        assert channel.hello_ack.max_message_bytes == 65536
        assert echo.Echo(echo_request_of_size(65536), timeout=10).payload == b"x" * (65536 - 4)
        expect_too_large_before_sending(channel, echo, 65537, 65536)
        # Past the client's check, the server refuses the same request with the same code.
        conn = channel.connection()
        conn.max_message_bytes = 1 << 20
        with pytest.raises(RpcError) as caught:
            echo.Echo(echo_request_of_size(65537), timeout=10)
        assert (caught.value.code(), caught.value.error_code, caught.value.local) == (
            StatusCode.RESOURCE_EXHAUSTED, "ERR_MESSAGE_TOO_LARGE", False)
        assert "65537" in caught.value.details() and "65536" in caught.value.details()
