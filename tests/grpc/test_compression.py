"""Message compression (grpc-encoding gzip and deflate, set on the channel or per call) and the
4 MiB message limit, enforced before and after inflation. A byte-counting relay between grpcio
and the server shows what really crossed the wire, since grpcio does not expose the encoding of
what it received.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Optional, Tuple

import grpc
import pytest

from conftest import API_KEY
from grpc_support import ByteCountingProxy, Moderation, expect_error
from moderation.v1 import groups_pb2 as g
from moderation.v1 import members_pb2 as mb
from moderation.v1 import moderation_pb2 as m
from moderation.v1 import moderation_pb2_grpc

S = grpc.StatusCode
MiB = 1 << 20
ENCODINGS = [pytest.param(grpc.Compression.Gzip, id="gzip"), pytest.param(grpc.Compression.Deflate, id="deflate")]


@contextlib.contextmanager
def measured(server_target: str, channel_compression: Optional[grpc.Compression] = None
             ) -> Iterator[Tuple[Moderation, ByteCountingProxy]]:
    """A fresh channel through a byte-counting relay, already connected (one small call made)."""
    with ByteCountingProxy(server_target) as proxy:
        with grpc.insecure_channel(proxy.target, compression=channel_compression) as channel:
            mod = Moderation(moderation_pb2_grpc.ModerationStub(channel), API_KEY)
            mod.ListGroups(m.ListGroupsRequest(limit=1))
            yield mod, proxy


def bytes_of(proxy: ByteCountingProxy, call) -> Tuple[object, int, int]:
    """Runs ``call``; its reply and the bytes that went up and came down for it."""
    up, down = proxy.counts()
    reply = call()
    up2, down2 = proxy.counts()
    return reply, up2 - up, down2 - down


@pytest.fixture(scope="module")
def big_group(stub) -> Tuple[str, str, int]:
    """A group of 100 members whose avatars are 3000 characters: a ListMembers page of ~300 KB."""
    import uuid
    run = uuid.uuid4().hex[:8]
    mod = Moderation(stub, API_KEY)
    owner, guid = "bigowner-%s" % run, "big-%s" % run
    mod.CreateUser(m.CreateUserRequest(uid=owner))
    uids = ["big-%s-%03d" % (run, i) for i in range(99)]
    for i, uid in enumerate(uids):
        mod.CreateUser(m.CreateUserRequest(uid=uid, name="Member %d" % i, avatar="https://avatars.example/" + "a" * 2970))
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="big", type=g.GROUP_TYPE_PUBLIC), as_=owner)
    added = mod.AddMembers(m.AddMembersRequest(guid=guid, members=[mb.MemberToAdd(uid=u) for u in uids]), as_=owner)
    assert added.group.members_count == 100
    page = mod.ListMembers(m.ListMembersRequest(guid=guid, limit=100), as_=owner)
    assert len(page.members) == 100
    return guid, owner, page.ByteSize()


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("where", ["channel", "call"])
def test_compressed_requests_and_responses(server, stub, users, run_id, encoding, where) -> None:
    (uid,) = users("comp")
    metadata = {"k%02d" % i: "value " * 10 for i in range(60)}  # ~4 KB: compresses well
    request = m.UpdateUserRequest(uid=uid, avatar="https://avatars.example/" + "b" * 2900, metadata=metadata)
    size = request.ByteSize()
    assert size > 6000
    with measured(server.target, encoding if where == "channel" else None) as (mod, proxy):
        kwargs = {} if where == "channel" else {"compression": encoding}
        reply, up, down = bytes_of(proxy, lambda: mod.UpdateUser(request, **kwargs))
    assert (reply.user.avatar, dict(reply.user.metadata)) == (request.avatar, metadata)
    assert up < size / 4, "the %d-byte request went up as %d bytes: not compressed" % (size, up)
    assert down < reply.ByteSize() / 4, "the %d-byte reply came down as %d bytes: not compressed" % (
        reply.ByteSize(), down)


def test_the_relay_sees_an_uncompressed_request_whole(server, users) -> None:
    """The control of the measurements above: without compression the bytes are all there."""
    (uid,) = users("plain")
    request = m.UpdateUserRequest(uid=uid, avatar="https://avatars.example/" + "b" * 2900)
    with measured(server.target) as (mod, proxy):
        reply, up, _ = bytes_of(proxy, lambda: mod.UpdateUser(request))
    assert reply.user.avatar == request.avatar
    assert up >= request.ByteSize(), "%d bytes went up for a %d-byte request" % (up, request.ByteSize())


@pytest.mark.parametrize("encoding", [pytest.param(None, id="identity")] + ENCODINGS)
def test_a_large_response_compressed_and_not(server, big_group, encoding) -> None:
    guid, owner, size = big_group
    assert size > 300_000
    with measured(server.target) as (mod, proxy):
        request = m.ListMembersRequest(guid=guid, limit=100)
        kwargs = {} if encoding is None else {"compression": encoding}
        reply, up, down = bytes_of(proxy, lambda: mod.ListMembers(request, as_=owner, **kwargs))
    assert reply.ByteSize() == size and len(reply.members) == 100
    assert all(len(member.avatar) == 2994 for member in reply.members if member.uid != owner)
    if encoding is not None:
        assert down < size / 10, "a %d-byte reply came down as %d bytes with %s accepted" % (size, down, encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_large_compressed_request_under_the_limit_is_inflated_and_read(server, encoding) -> None:
    """3 MiB (under the 4 MiB limit) that compress to a few KB: the server inflates and decodes
    it, and refuses it only for the avatar's own limit of 3000 characters."""
    with measured(server.target) as (mod, proxy):
        request = m.CreateUserRequest(uid="whale", avatar="a" * (3 * MiB))
        (error, _), up, _ = bytes_of(proxy, lambda: expect_error(
            S.INVALID_ARGUMENT, "ERR_INVALID_ARGUMENT", lambda: mod.CreateUser(request, compression=encoding)))
    assert error.details().startswith("avatar"), error.details()
    assert up < 64 * 1024, "3 MiB went up as %d bytes: not compressed" % up


def test_a_request_over_4_mib_is_resource_exhausted(server, stub) -> None:
    mod = Moderation(stub, API_KEY)
    request = m.CreateUserRequest(uid="huge", avatar="a" * (4 * MiB + 1))
    expect_error(S.RESOURCE_EXHAUSTED, "ERR_MESSAGE_TOO_LARGE", lambda: mod.CreateUser(request))
    # The connection and the server carry on.
    assert mod.ListGroups(m.ListGroupsRequest(limit=1)) is not None
    assert server.alive()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_compressed_request_inflating_over_4_mib_is_resource_exhausted(server, encoding) -> None:
    """A few KB on the wire that inflate to 5 MiB (a compression bomb): refused after inflation."""
    with measured(server.target) as (mod, proxy):
        request = m.CreateUserRequest(uid="bomb", avatar="a" * (5 * MiB))
        _, up, _ = bytes_of(proxy, lambda: expect_error(
            S.RESOURCE_EXHAUSTED, "ERR_MESSAGE_TOO_LARGE", lambda: mod.CreateUser(request, compression=encoding)))
        assert up < 64 * 1024, "the bomb went up as %d bytes: not compressed" % up
        assert mod.ListGroups(m.ListGroupsRequest(limit=1)) is not None
    assert server.alive()
