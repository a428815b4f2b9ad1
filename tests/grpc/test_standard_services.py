"""The standard services every gRPC tool expects: grpc.health.v1.Health (Check, Watch) and server
reflection, grpc.reflection.v1alpha (what grpcio-reflection's client and older grpcurl speak) and
grpc.reflection.v1 — resolving moderation.v1.Moderation into a DescriptorPool without the protos.
"""

from __future__ import annotations

import importlib

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2 as alpha_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from conftest import API_KEY
from grpc_support import auth
from moderation.v1 import moderation_pb2 as m

S = grpc.StatusCode
Status = health_pb2.HealthCheckResponse
REFLECTION_V1 = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


# -- health

def test_health_check(channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "moderation.v1.Moderation", "grpc.health.v1.Health"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service), metadata=auth(API_KEY), timeout=10)
        assert reply.status == Status.SERVING, "Check(%r) answered %s" % (service, Status.ServingStatus.Name(reply.status))
    with pytest.raises(grpc.RpcError) as caught:
        health.Check(health_pb2.HealthCheckRequest(service="no.such.v1.Service"), metadata=auth(API_KEY), timeout=10)
    assert caught.value.code() == S.NOT_FOUND, caught.value


def test_health_check_needs_no_key_but_refuses_a_wrong_one(channel) -> None:
    """Kubernetes' gRPC probe and grpc_health_probe send no metadata: health answers them; a
    wrong key is still refused, and no other service answers without a key."""
    health = health_pb2_grpc.HealthStub(channel)
    assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == Status.SERVING
    with pytest.raises(grpc.RpcError) as caught:
        health.Check(health_pb2.HealthCheckRequest(), metadata=[("authorization", "Bearer app:wrong")], timeout=10)
    assert caught.value.code() == S.UNAUTHENTICATED, caught.value
    with pytest.raises(grpc.RpcError) as caught:
        channel.unary_unary("/moderation.v1.Moderation/GetUser")(
            m.GetUserRequest(uid="someone").SerializeToString(), timeout=10)
    assert caught.value.code() == S.UNAUTHENTICATED, caught.value


def test_health_watch(channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    watch = health.Watch(health_pb2.HealthCheckRequest(), metadata=auth(API_KEY), timeout=30)
    assert next(watch).status == Status.SERVING
    # An unknown service: SERVICE_UNKNOWN, and the call stays open (health.proto's contract).
    unknown = health.Watch(health_pb2.HealthCheckRequest(service="no.such.v1.Service"), metadata=auth(API_KEY),
                           timeout=30)
    assert next(unknown).status == Status.SERVICE_UNKNOWN
    assert unknown.is_active()
    for call in (watch, unknown):
        call.cancel()
        with pytest.raises(grpc.RpcError) as caught:
            next(call)
        assert caught.value.code() == S.CANCELLED
    # (NOT_SERVING while draining: test_streams.test_a_drain_ends_streams_unavailable_with_last_seq.)


# -- reflection

class _AddMetadata(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                   grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Adds the API key to every call of a channel (what grpcurl's -H does): the reflection
    descriptor database makes its calls without metadata."""

    def __init__(self, metadata) -> None:
        self._metadata = list(metadata)

    def _details(self, details):
        return details._replace(metadata=list(details.metadata or []) + self._metadata)

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_stream_unary(self, continuation, details, requests):
        return continuation(self._details(details), requests)

    def intercept_stream_stream(self, continuation, details, requests):
        return continuation(self._details(details), requests)


class _V1Stub:
    """grpc.reflection.v1's ServerReflectionInfo. Its messages are the same as v1alpha's, field for
    field (only the package differs), so v1alpha's classes encode and decode them."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.ServerReflectionInfo = channel.stream_stream(
            REFLECTION_V1, request_serializer=alpha_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=alpha_pb2.ServerReflectionResponse.FromString)


def v1_database(channel: grpc.Channel):
    """A reflection descriptor database over grpc.reflection.v1: grpcio-reflection's own v1 client
    when the installed version has one, else its v1alpha client re-pointed at v1's method."""
    try:
        module = importlib.import_module("grpc_reflection.v1.proto_reflection_descriptor_database")
        return module.ProtoReflectionDescriptorDatabase(channel)
    except ImportError:
        database = ProtoReflectionDescriptorDatabase(channel)
        database._stub = _V1Stub(channel)
        return database


@pytest.fixture
def keyed_channel(server):
    with grpc.insecure_channel(server.target) as channel:
        yield grpc.intercept_channel(channel, _AddMetadata(auth(API_KEY)))


@pytest.mark.parametrize("version", ["v1alpha", "v1"])
def test_reflection_lists_and_resolves_the_service(keyed_channel, version) -> None:
    database = ProtoReflectionDescriptorDatabase(keyed_channel) if version == "v1alpha" else v1_database(keyed_channel)
    services = set(database.get_services())
    for name in ("moderation.v1.Moderation", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"):
        assert name in services, "%s is not in ListServices: %s" % (name, sorted(services))

    pool = descriptor_pool.DescriptorPool(database)
    service = pool.FindServiceByName("moderation.v1.Moderation")
    local = m.DESCRIPTOR.services_by_name["Moderation"]
    reflected = {meth.name: (meth.input_type.full_name, meth.output_type.full_name, meth.server_streaming)
                 for meth in service.methods}
    expected = {meth.name: (meth.input_type.full_name, meth.output_type.full_name, meth.server_streaming)
                for meth in local.methods}
    assert reflected == expected
    assert reflected["Subscribe"][2] and not reflected["KickMember"][2]
    assert service.file.name == "moderation/v1/moderation.proto"

    # Messages from the imported files resolve too, with the same fields as the generated code's.
    for name in ("moderation.v1.Action", "moderation.v1.Group", "moderation.v1.KickMemberRequest",
                 "moderation.v1.BannedMember", "moderation.v1.User"):
        remote = pool.FindMessageTypeByName(name)
        mine = m.DESCRIPTOR.pool.FindMessageTypeByName(name)
        assert [(f.name, f.number, f.type) for f in remote.fields] == [(f.name, f.number, f.type) for f in mine.fields]
    errors = pool.FindEnumTypeByName("moderation.v1.ErrorCode")
    assert "ERR_BANNED_GROUPMEMBER" in errors.values_by_name

    with pytest.raises(KeyError):
        pool.FindServiceByName("no.such.v1.Service")


@pytest.mark.parametrize("path", ["/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", REFLECTION_V1])
def test_reflection_answers_several_requests_on_one_stream(keyed_channel, path) -> None:
    call = keyed_channel.stream_stream(path, request_serializer=alpha_pb2.ServerReflectionRequest.SerializeToString,
                                       response_deserializer=alpha_pb2.ServerReflectionResponse.FromString)
    requests = [
        alpha_pb2.ServerReflectionRequest(list_services=""),
        alpha_pb2.ServerReflectionRequest(file_by_filename="moderation/v1/moderation.proto"),
        alpha_pb2.ServerReflectionRequest(file_containing_symbol="moderation.v1.Action"),
        alpha_pb2.ServerReflectionRequest(file_containing_symbol="no.such.Symbol"),
    ]
    replies = list(call(iter(requests), timeout=10))
    assert len(replies) == len(requests)
    assert [r.WhichOneof("message_response") for r in replies] == [
        "list_services_response", "file_descriptor_response", "file_descriptor_response", "error_response"]
    assert [r.original_request for r in replies] == requests
    assert replies[3].error_response.error_code == S.NOT_FOUND.value[0]
    # Each file_descriptor_response holds the file asked for (and may add its imports).
    names = [[descriptor_pb2.FileDescriptorProto.FromString(raw).name
              for raw in r.file_descriptor_response.file_descriptor_proto] for r in replies[1:3]]
    assert "moderation/v1/moderation.proto" in names[0] and "moderation/v1/actions.proto" in names[1], names
