"""The client against the real moderation-server: handshake, runtime services, multiplexing,
compression and deadlines."""

from __future__ import annotations

import threading
import time
from typing import List

import pytest

from mrpc_client import Client, MethodSpec, RpcError, StatusCode
from mrpc_client.gen import services
from mrpc_client.gen.mrpc.diagnostics.v1.diagnostics_pb2 import EchoRequest, EchoResponse
from mrpc_client.gen.mrpc.health.v1 import health_pb2
from mrpc_client.gen.mrpc.health.v1.health_pb2 import HealthCheckRequest
from mrpc_client.gen.mrpc.reflection.v1.reflection_pb2 import (GetFileDescriptorSetRequest,
                                                                ListServicesRequest)


def test_handshake_keeps_the_servers_limits(client: Client, app_id: str) -> None:
    ack = client.hello_ack
    assert ack.protocol_version == 1
    assert ack.server_name == "moderation-server"
    assert ack.app_id == app_id
    assert ack.max_message_bytes == 4 << 20 and ack.max_call_header_bytes == 8192
    assert ack.max_concurrent_calls >= 1000
    assert list(ack.accept_encodings) == ["deflate"]
    conn = client.connection()
    assert conn.max_message_bytes == ack.max_message_bytes


@pytest.mark.parametrize("key", ["wrong-key-123456", "", "otherapp:" + "x" * 12])
def test_bad_api_key_raises_unauthenticated(server_address: str, key: str) -> None:
    with pytest.raises(RpcError) as caught:
        Client(server_address, key)
    error = caught.value
    assert (error.code, error.code_name, error.error_code) == (16, "UNAUTHENTICATED", "ERR_UNAUTHENTICATED")
    assert error.message and not error.local


def test_key_of_another_app_is_refused(server_address: str, api_key: str) -> None:
    with pytest.raises(RpcError) as caught:
        Client(server_address, api_key, app_id="some-other-app")
    assert caught.value.error_code == "ERR_UNAUTHENTICATED"


def test_echo(client: Client) -> None:
    assert client.diagnostics.echo(EchoRequest(payload=b"\x00hello\xff")).payload == b"\x00hello\xff"
    assert client.diagnostics.echo(EchoRequest()).payload == b""
    # The generic entry point, by path.
    response: EchoResponse = client.call("/mrpc.diagnostics.v1.Diagnostics/Echo", EchoRequest(payload=b"by path"))
    assert isinstance(response, EchoResponse) and response.payload == b"by path"


def test_health(client: Client) -> None:
    assert client.health.check(HealthCheckRequest()).status == health_pb2.SERVING_STATUS_SERVING
    assert client.health.check(HealthCheckRequest(service="mrpc.health.v1.Health")).status == \
        health_pb2.SERVING_STATUS_SERVING
    assert client.health.check(HealthCheckRequest(service="no.such.Service")).status == \
        health_pb2.SERVING_STATUS_SERVICE_UNKNOWN


def test_reflection_lists_services_with_streaming_flags_matching_the_protos(client: Client) -> None:
    listed = client.reflection.list_services(ListServicesRequest()).services
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


def test_reflection_file_descriptor_set(client: Client) -> None:
    from google.protobuf import descriptor_pb2

    response = client.reflection.get_file_descriptor_set(GetFileDescriptorSetRequest())
    files = descriptor_pb2.FileDescriptorSet.FromString(response.file_descriptor_set)
    assert "mrpc/v1/envelope.proto" in {f.name for f in files.file}


def test_unknown_method_is_unimplemented_and_the_connection_stays_usable(client: Client) -> None:
    bogus = MethodSpec(service="no.Such", name="Method", python_name="method", path="/no.Such/Method",
                       request_type=EchoRequest, response_type=EchoResponse, server_streaming=False)
    with pytest.raises(RpcError) as caught:
        client.call(bogus, EchoRequest())
    assert (caught.value.status_code, caught.value.error_code) == (StatusCode.UNIMPLEMENTED, "ERR_UNIMPLEMENTED")
    assert "/no.Such/Method" in caught.value.message
    assert client.diagnostics.echo(EchoRequest(payload=b"still here")).payload == b"still here"


def test_a_thousand_calls_in_flight_on_one_connection(client: Client) -> None:
    conn = client.connection()
    before = conn.stats.calls_started
    payloads = [(b"call-%04d-" % i) * (1 + i % 37) for i in range(1000)]
    with client.batch():  # every CALL is queued, then sent in one write: all 1000 are in flight at once
        futures = [client.diagnostics.echo_async(EchoRequest(payload=p)) for p in payloads]
        assert conn.in_flight == 1000
    for i, future in enumerate(futures):
        assert future.result(timeout=30).payload == payloads[i], "reply %d does not match its request" % i
    assert client.connection() is conn
    assert conn.stats.calls_started - before == 1000
    assert conn.stats.peak_in_flight >= 1000
    assert conn.in_flight == 0


def test_calls_from_many_threads_share_one_connection(client: Client) -> None:
    failures: List[object] = []

    def worker(n: int) -> None:
        try:
            for i in range(100):
                payload = b"thread %d call %d" % (n, i)
                if client.diagnostics.echo(EchoRequest(payload=payload)).payload != payload:
                    failures.append((n, i))
        except Exception as error:  # reported below
            failures.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert failures == []
    assert client.connection().stats.calls_started >= 800


def test_compressed_unary_reply_is_inflated(client: Client) -> None:
    conn = client.connection()
    payload = b"".join(b"member-%05d joined group-%03d; " % (i, i % 100) for i in range(3000))  # ~90 KB
    compressed_before = conn.stats.compressed_frames_received
    response = client.diagnostics.echo(EchoRequest(payload=payload), compress=True)
    assert response.payload == payload
    assert conn.stats.compressed_frames_received == compressed_before + 1
    # Without compress=True the server must not compress.
    assert client.diagnostics.echo(EchoRequest(payload=payload)).payload == payload
    assert conn.stats.compressed_frames_received == compressed_before + 1
    # A compressed request body is accepted too.
    assert client.diagnostics.echo(EchoRequest(payload=payload), compress_request=True).payload == payload


def test_deadline_that_expires_on_a_slow_call(client: Client) -> None:
    """A 1 MiB echo cannot make the round trip in 1 ms: the client gives up at its deadline,
    sends CANCEL, drops the late reply, and the connection stays usable."""
    conn = client.connection()
    cancels = conn.stats.cancels_sent
    started = time.monotonic()
    with pytest.raises(RpcError) as caught:
        client.diagnostics.echo(EchoRequest(payload=b"x" * (1 << 20)), timeout=0.001)
    assert time.monotonic() - started < 0.5
    error = caught.value
    assert (error.status_code, error.error_code) == (StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED")
    assert conn.stats.cancels_sent == cancels + 1
    assert client.diagnostics.echo(EchoRequest(payload=b"after"), timeout=30).payload == b"after"


def test_ping(client: Client) -> None:
    rtt = client.ping()
    assert 0 < rtt < 5


def test_wrong_request_type_is_refused_before_sending(client: Client) -> None:
    with pytest.raises(TypeError, match="mrpc.diagnostics.v1.EchoRequest"):
        client.diagnostics.echo(HealthCheckRequest())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown call option"):
        client.diagnostics.echo(EchoRequest(), deadline=3)  # type: ignore[call-arg]


def test_oversized_request_is_refused_before_sending(client: Client) -> None:
    limit = client.hello_ack.max_message_bytes
    with pytest.raises(RpcError) as caught:
        client.diagnostics.echo(EchoRequest(payload=b"x" * limit))
    assert caught.value.error_code == "ERR_MESSAGE_TOO_LARGE" and caught.value.local and caught.value.not_run
