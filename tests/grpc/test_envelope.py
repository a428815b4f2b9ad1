"""Our call envelope on gRPC metadata (docs/GRPC.md): the API key (authorization: Bearer or
x-api-key), x-on-behalf-of, x-request-id and x-idempotency-key; unknown methods; rich error
details with their metadata (our error's details).
"""

from __future__ import annotations

import grpc
import pytest

from conftest import API_KEY, APP_ID
from grpc_support import DOMAIN, Moderation, call_metadata, error_info, expect_error
from moderation.v1 import groups_pb2 as g
from moderation.v1 import actions_pb2 as a
from moderation.v1 import moderation_pb2 as m
from moderation.v1 import moderation_pb2_grpc

S = grpc.StatusCode


def raw_unary(channel: grpc.Channel, path: str):
    """A unary call of ``path`` with bytes in and out (no stub: for methods that do not exist)."""
    return channel.unary_unary(path, request_serializer=lambda b: b, response_deserializer=lambda b: b)


# -- authentication

@pytest.mark.parametrize("metadata, case", [
    ([("authorization", "Bearer " + APP_ID + ":not-the-key")], "wrong key"),
    ([("authorization", "Bearer other-app:grpc-test-key-0123456789abcdef")], "key of an unknown app"),
    ([("x-api-key", APP_ID + ":not-the-key")], "wrong x-api-key"),
    ([], "no key"),
    ([("authorization", "Basic " + API_KEY)], "not a Bearer credential"),
])
def test_a_wrong_or_missing_key_is_unauthenticated(stub, run_id, metadata, case) -> None:
    uid = "unauth-%s" % run_id
    _, details = expect_error(S.UNAUTHENTICATED, "ERR_UNAUTHENTICATED",
                              lambda: stub.CreateUser(m.CreateUserRequest(uid=uid), metadata=metadata, timeout=10))
    # Nothing was done: the user does not exist for the real key.
    expect_error(S.NOT_FOUND, "ERR_UID_NOT_FOUND", lambda: stub.GetUser(
        m.GetUserRequest(uid=uid), metadata=call_metadata(API_KEY), timeout=10))


def test_the_key_in_x_api_key_works_like_authorization(stub, run_id) -> None:
    uid = "xkey-%s" % run_id
    created = stub.CreateUser(m.CreateUserRequest(uid=uid, name="X"), metadata=call_metadata(API_KEY, header="x-api-key"),
                              timeout=10)
    assert created.user.uid == uid
    assert stub.GetUser(m.GetUserRequest(uid=uid), metadata=call_metadata(API_KEY), timeout=10).user.name == "X"


# -- methods that do not exist

def test_an_unknown_method_is_unimplemented(channel, stub) -> None:
    call = raw_unary(channel, "/moderation.v1.Moderation/NoSuchMethod")
    expect_error(S.UNIMPLEMENTED, "ERR_UNIMPLEMENTED", lambda: call(b"", metadata=call_metadata(API_KEY), timeout=10))
    call = raw_unary(channel, "/nosuch.v1.Nothing/Call")
    expect_error(S.UNIMPLEMENTED, "ERR_UNIMPLEMENTED",
                 lambda: call(b"", metadata=call_metadata(API_KEY), timeout=10), domain="nosuch.v1")
    # The connection is still good.
    assert stub.ListGroups(m.ListGroupsRequest(limit=1), metadata=call_metadata(API_KEY), timeout=10) is not None


def test_an_undecodable_request_is_invalid_argument(channel) -> None:
    call = raw_unary(channel, "/moderation.v1.Moderation/GetUser")
    try:
        call(b"\x0a\xff\xff\xff", metadata=call_metadata(API_KEY), timeout=10)  # a field longer than the message
    except grpc.RpcError as error:
        assert error.code() == S.INVALID_ARGUMENT, error
        info = error_info(error)
        assert (info.reason, info.domain) == ("ERR_INVALID_ARGUMENT", DOMAIN)
    else:
        raise AssertionError("an undecodable GetUserRequest was accepted")


# -- the acting user and the request id

def test_on_behalf_of_and_request_id_reach_the_service(stub, users, run_id) -> None:
    mod = Moderation(stub, API_KEY)
    owner, other = users("owner", "other")
    guid = "env-%s" % run_id
    # x-on-behalf-of names the acting user: a user creating a group owns it...
    group = mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="env", type=g.GROUP_TYPE_PUBLIC), as_=owner).group
    assert group.owner == owner and group.has_joined
    # ...and the app itself (no x-on-behalf-of) must name an owner.
    expect_error(S.INVALID_ARGUMENT, "ERR_INVALID_ARGUMENT", lambda: mod.CreateGroup(
        m.CreateGroupRequest(guid=guid + "-app", name="env", type=g.GROUP_TYPE_PUBLIC)))
    joined = mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=other, request_id="req-%s" % run_id)
    assert (joined.action.action_by.uid, joined.action.request_id) == (other, "req-%s" % run_id)
    assert joined.action.idempotency_key == ""
    logged = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid), as_=owner).actions
    assert logged[-1].request_id == "req-%s" % run_id


# -- idempotency

def test_the_same_idempotency_key_gets_the_same_reply(stub, users, run_id) -> None:
    mod = Moderation(stub, API_KEY)
    owner, target, late = users("owner", "target", "late")
    guid = "idem-%s" % run_id
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="idem", type=g.GROUP_TYPE_PUBLIC), as_=owner)
    mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=target)
    key = "ban-%s" % run_id

    first = mod.BanMember(m.BanMemberRequest(guid=guid, uid=target, reason="spam"), as_=owner, idempotency_key=key)
    again = mod.BanMember(m.BanMemberRequest(guid=guid, uid=target, reason="spam"), as_=owner, idempotency_key=key)
    assert first.changed and again == first, "a retry with the same key must get the first reply"
    assert first.action.idempotency_key == key
    # The key is not bound to the arguments: other arguments still get the first reply.
    other_args = mod.BanMember(m.BanMemberRequest(guid=guid, uid=late, reason="other"), as_=owner, idempotency_key=key)
    assert other_args == first
    assert not mod.GetMemberState(m.GetMemberStateRequest(guid=guid, uid=late), as_=owner).is_banned
    # Without the key the same ban is a new call, refused.
    expect_error(S.ALREADY_EXISTS, "ERR_ALREADY_BANNED",
                 lambda: mod.BanMember(m.BanMemberRequest(guid=guid, uid=target), as_=owner))
    # Only one "banned" action was recorded.
    banned = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid, actions=[a.ACTION_TYPE_BANNED]), as_=owner).actions
    assert [act.seq for act in banned] == [first.action.seq]

    # A failure is replayed too: late may not kick (not a member); after late joins, the same
    # call with the same key still answers the first failure (not ERR_PERMISSION_DENIED).
    kick_key = "kick-%s" % run_id
    expect_error(S.PERMISSION_DENIED, "ERR_GROUP_NOT_JOINED", lambda: mod.KickMember(
        m.KickMemberRequest(guid=guid, uid=owner), as_=late, idempotency_key=kick_key))
    mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=late)
    expect_error(S.PERMISSION_DENIED, "ERR_GROUP_NOT_JOINED", lambda: mod.KickMember(
        m.KickMemberRequest(guid=guid, uid=owner), as_=late, idempotency_key=kick_key))
    # Keys are per acting user: the owner's call with the same key is its own.
    unbanned = mod.UnbanMember(m.UnbanMemberRequest(guid=guid, uid=target), as_=owner, idempotency_key=kick_key)
    assert unbanned.changed and unbanned.action.idempotency_key == kick_key


# -- error details in ErrorInfo.metadata

def test_error_details_travel_in_error_info_metadata(stub, users, run_id) -> None:
    """Five wrong passwords of one user for one group: the sixth JoinGroup is ERR_RATE_LIMITED
    (RESOURCE_EXHAUSTED) with details.retry_after_ms (docs/SERVICE.md, "Limits on calls")."""
    mod = Moderation(stub, API_KEY)
    owner, guesser = users("owner", "guesser")
    guid = "pw-%s" % run_id
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="pw", type=g.GROUP_TYPE_PASSWORD, password="sesame-1234"),
                    as_=owner)
    expect_error(S.INVALID_ARGUMENT, "ERR_EMPTY_GROUP_PASS",
                 lambda: mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=guesser))
    for attempt in range(5):
        _, details = expect_error(S.PERMISSION_DENIED, "ERR_WRONG_GROUP_PASS", lambda: mod.JoinGroup(
            m.JoinGroupRequest(guid=guid, password="guess-%d" % attempt), as_=guesser))
        assert "retry_after_ms" not in details
    _, details = expect_error(S.RESOURCE_EXHAUSTED, "ERR_RATE_LIMITED", lambda: mod.JoinGroup(
        m.JoinGroupRequest(guid=guid, password="sesame-1234"), as_=guesser))
    assert int(details["retry_after_ms"]) > 0, details
    assert int(details["retry_after_ms"]) <= 15 * 60 * 1000, details


def test_the_app_rate_limit_reports_retry_after_ms(start_server) -> None:
    server = start_server(["--rate-limit", "1", "--rate-burst", "2"])
    with grpc.insecure_channel(server.target) as channel:
        mod = Moderation(moderation_pb2_grpc.ModerationStub(channel), API_KEY)
        outcomes = []
        for i in range(6):
            try:
                mod.GetUser(m.GetUserRequest(uid="rate-%d" % i))
                outcomes.append("ok")
            except grpc.RpcError as error:
                if error.code() == S.NOT_FOUND:
                    outcomes.append("ok")  # served (the user does not exist)
                    continue
                assert error.code() == S.RESOURCE_EXHAUSTED, error
                info = error_info(error)
                assert (info.reason, info.domain) == ("ERR_RATE_LIMITED", DOMAIN)
                assert int(info.metadata["retry_after_ms"]) > 0
                outcomes.append("limited")
        assert "limited" in outcomes, "6 calls at once over a rate of 1/s with a burst of 2: %s" % outcomes


def test_messages_keep_their_non_ascii_and_percent_signs(stub) -> None:
    """grpc-message is percent-encoded UTF-8 on the wire; grpcio's details() must give back our
    message exactly: here a refusal that quotes the (invalid) uid it was given, which holds
    non-ASCII letters and a literal "%41" that must not be decoded to "A"."""
    bad = "Zoë %41 ünïcode"
    error, _ = expect_error(S.INVALID_ARGUMENT, "ERR_INVALID_ARGUMENT", lambda: stub.GetUser(
        m.GetUserRequest(uid=bad), metadata=call_metadata(API_KEY), timeout=10))
    message = error.details()
    assert message.startswith("uid"), message
    assert bad.lower() in message or bad in message, "the message quotes the uid as given: %r" % message
