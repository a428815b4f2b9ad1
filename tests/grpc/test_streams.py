"""Subscribe, the server stream, over gRPC: live events of mutations made meanwhile, resume with
after_seq exactly after the last seq seen, deadlines (grpc-timeout), cancellation (RST_STREAM,
checked on the server by the per-app subscription limit), and the end of a stream when the server
drains (UNAVAILABLE with last_seq in ErrorInfo.metadata).
"""

from __future__ import annotations

import time
from typing import List

import grpc

from conftest import API_KEY
from grpc_support import DOMAIN, Moderation, StreamCollector, error_info, expect_error, next_event
from moderation.v1 import actions_pb2 as a
from moderation.v1 import groups_pb2 as g
from moderation.v1 import moderation_pb2 as m
from moderation.v1 import moderation_pb2_grpc

S = grpc.StatusCode


def make_group(mod: Moderation, owner: str, guid: str) -> int:
    """Creates a public group owned by ``owner``; the seq of its "created" action."""
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name=guid, type=g.GROUP_TYPE_PUBLIC), as_=owner)
    return mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid), as_=owner).last_seq


def test_subscribe_delivers_mutations_and_resumes_after_the_last_seq(stub, users, run_id) -> None:
    mod = Moderation(stub, API_KEY)
    owner, *joiners = users("owner", "j1", "j2", "j3", "j4", "j5", "j6")
    guid = "sub-%s" % run_id
    created_seq = make_group(mod, owner, guid)

    # From "created" on (after_seq = created - 1): replayed, then the live ones made meanwhile.
    first = StreamCollector(mod.Subscribe(m.SubscribeRequest(guids=[guid], after_seq=created_seq - 1), as_=owner,
                                          timeout=60))
    assert first.wait_for(1)[0].seq == created_seq
    seqs: List[int] = []
    for uid in joiners[:3]:
        seqs.append(mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=uid).action.seq)
    seqs.append(mod.KickMember(m.KickMemberRequest(guid=guid, uid=joiners[0]), as_=owner).action.seq)
    got = first.wait_for(1 + len(seqs))
    assert [act.seq for act in got] == [created_seq] + seqs
    assert [a.ActionType.Name(act.action) for act in got[1:]] == ["ACTION_TYPE_JOINED"] * 3 + ["ACTION_TYPE_KICKED"]
    assert got[-1].action_on.uid == joiners[0]
    first.cancel()
    last_seen = got[-1].seq

    # Changes while nobody listens; then resume exactly after the last seq seen.
    later = [mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=uid).action.seq for uid in joiners[3:]]
    resumed = StreamCollector(mod.Subscribe(m.SubscribeRequest(guids=[guid], after_seq=last_seen), as_=owner,
                                            timeout=60))
    assert [act.seq for act in resumed.wait_for(len(later))] == later
    live = mod.BanMember(m.BanMemberRequest(guid=guid, uid=joiners[1]), as_=owner).action.seq
    assert [act.seq for act in resumed.wait_for(len(later) + 1)] == later + [live]
    time.sleep(0.3)
    assert len(resumed.actions) == len(later) + 1, "no duplicates after the switch from replay to live"
    resumed.cancel()

    # Resuming from the middle gives exactly the rest.
    middle = StreamCollector(mod.Subscribe(m.SubscribeRequest(guids=[guid], after_seq=seqs[1]), as_=owner, timeout=60))
    rest = seqs[2:] + later + [live]
    assert [act.seq for act in middle.wait_for(len(rest))] == rest
    middle.cancel()

    # A kind filter applies to the replay too.
    bans = StreamCollector(mod.Subscribe(m.SubscribeRequest(guids=[guid], after_seq=0, actions=[a.ACTION_TYPE_BANNED]),
                                         as_=owner, timeout=60))
    assert [act.seq for act in bans.wait_for(1)] == [live]
    bans.cancel()


def test_the_first_message_says_the_stream_is_live(stub, users, run_id) -> None:
    """A live-only subscription has nothing to resume from: the ``started`` message is how a
    stock gRPC client knows its stream is live, and every action committed after it arrives."""
    mod = Moderation(stub, API_KEY)
    owner, joiner = users("owner", "joiner")
    guid = "live-%s" % run_id
    created_seq = make_group(mod, owner, guid)
    live = StreamCollector(mod.Subscribe(m.SubscribeRequest(guids=[guid]), as_=owner, timeout=60))
    started = live.wait_started()
    assert started.after_seq >= created_seq and started.head_seq == started.after_seq, started
    joined = mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=joiner).action.seq
    assert [act.seq for act in live.wait_for(1)] == [joined]
    assert live.misplaced_starts == 0
    live.cancel()

    resumed = StreamCollector(mod.Subscribe(m.SubscribeRequest(guids=[guid], after_seq=created_seq - 1), as_=owner,
                                            timeout=60))
    started = resumed.wait_started()
    assert (started.after_seq, started.head_seq) == (created_seq - 1, joined), started
    assert [act.seq for act in resumed.wait_for(2)] == [created_seq, joined]
    resumed.cancel()


def test_subscribe_refusals_carry_their_codes(stub, users, run_id) -> None:
    mod = Moderation(stub, API_KEY)
    owner, stranger = users("owner", "stranger")
    guid = "subref-%s" % run_id
    make_group(mod, owner, guid)

    def first_event(request, as_=None):
        return lambda: next(mod.Subscribe(request, as_=as_, timeout=10))

    expect_error(S.PERMISSION_DENIED, "ERR_GROUP_NOT_JOINED",
                 first_event(m.SubscribeRequest(guids=[guid], after_seq=0), as_=stranger))
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 first_event(m.SubscribeRequest(whole_app=True, after_seq=0), as_=stranger))
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 first_event(m.SubscribeRequest(user_uid=owner, after_seq=0), as_=stranger))
    expect_error(S.NOT_FOUND, "ERR_GROUP_NOT_FOUND",
                 first_event(m.SubscribeRequest(guids=["nothing-%s" % run_id], after_seq=0), as_=owner))
    expect_error(S.INVALID_ARGUMENT, "ERR_INVALID_ARGUMENT",
                 first_event(m.SubscribeRequest(guids=[guid], whole_app=True, after_seq=0)))


def test_a_deadline_ends_a_subscribe_with_deadline_exceeded(stub, users, run_id) -> None:
    mod = Moderation(stub, API_KEY)
    (owner,) = users("owner")
    guid = "deadline-%s" % run_id
    make_group(mod, owner, guid)
    started = time.monotonic()
    stream = mod.Subscribe(m.SubscribeRequest(guids=[guid]), as_=owner, timeout=0.2)  # live: nothing comes
    try:
        for index, event in enumerate(stream):
            if index == 0 and event.HasField("started"):
                continue  # the stream's first message: live
            raise AssertionError("a live subscription of an idle group delivered %s" % event)
    except grpc.RpcError as error:
        assert error.code() == S.DEADLINE_EXCEEDED, error
    else:
        raise AssertionError("the subscription ended without an error before its deadline")
    elapsed = time.monotonic() - started
    assert elapsed < 5, "the 0.2 s deadline took %.1f s" % elapsed


def _limited(start_server):
    """A server allowing one subscription per app: what the server frees shows what it ended."""
    server = start_server(["--max-subscriptions-per-app", "1"])
    channel = grpc.insecure_channel(server.target)
    mod = Moderation(moderation_pb2_grpc.ModerationStub(channel), API_KEY)
    mod.CreateUser(m.CreateUserRequest(uid="owner"))
    created_seq = make_group(mod, "owner", "g")
    return server, channel, mod, created_seq


def _subscribe_when_free(mod: Moderation, created_seq: int, timeout: float = 10):
    """Subscribes (replaying "created") as soon as the app's single slot is free again."""
    deadline = time.monotonic() + timeout
    while True:
        stream = mod.Subscribe(m.SubscribeRequest(guids=["g"], after_seq=created_seq - 1), as_="owner", timeout=30)
        try:
            assert next_event(stream).action.seq == created_seq
            return stream
        except grpc.RpcError as error:
            if error.code() != S.RESOURCE_EXHAUSTED or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_cancel_and_deadline_end_the_subscription_on_the_server(start_server) -> None:
    server, channel, mod, created_seq = _limited(start_server)
    with channel:
        stream = _subscribe_when_free(mod, created_seq, timeout=0)
        # The slot is taken: a second subscription is refused, with the limit in the details.
        _, details = expect_error(S.RESOURCE_EXHAUSTED, "ERR_TOO_MANY_SUBSCRIPTIONS", lambda: next(mod.Subscribe(
            m.SubscribeRequest(guids=["g"], after_seq=0), as_="owner", timeout=10)))
        assert details.get("max_subscriptions_per_app") == "1", details

        # Cancel (RST_STREAM): the iterator ends CANCELLED here, and the server ends the
        # subscription: its slot is free again for a new one.
        assert stream.cancel()
        try:
            next(stream)
            raise AssertionError("a cancelled stream delivered a message")
        except grpc.RpcError as error:
            assert error.code() == S.CANCELLED, error
        stream = _subscribe_when_free(mod, created_seq)
        stream.cancel()

        # A deadline (grpc-timeout) ends it on the server as well.
        give_up = time.monotonic() + 10
        while True:
            short = mod.Subscribe(m.SubscribeRequest(guids=["g"], after_seq=created_seq), as_="owner", timeout=0.5)
            try:
                event = next_event(short)
                raise AssertionError("a live subscription of an idle group delivered %s" % event)
            except grpc.RpcError as error:
                if error.code() == S.RESOURCE_EXHAUSTED and time.monotonic() < give_up:
                    time.sleep(0.1)  # the cancelled subscription is not freed yet
                    continue
                assert error.code() == S.DEADLINE_EXCEEDED, error
                break
        _subscribe_when_free(mod, created_seq).cancel()
    assert server.alive()


def test_a_drain_ends_streams_unavailable_with_last_seq(start_server) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    server, channel, mod, created_seq = _limited(start_server)
    with channel:
        stream = mod.Subscribe(m.SubscribeRequest(guids=["g"], after_seq=created_seq - 1), as_="owner", timeout=60)
        assert next_event(stream).action.seq == created_seq
        mod.CreateUser(m.CreateUserRequest(uid="joiner"))
        joined = mod.JoinGroup(m.JoinGroupRequest(guid="g"), as_="joiner").action.seq
        assert next(stream).action.seq == joined

        health = health_pb2_grpc.HealthStub(channel)
        watched = health.Watch(health_pb2.HealthCheckRequest(), metadata=[("authorization", "Bearer " + API_KEY)],
                               timeout=30)
        assert next(watched).status == health_pb2.HealthCheckResponse.SERVING

        server.signal_term()
        try:
            event = next(stream)
            raise AssertionError("a draining server sent another event: %s" % event)
        except grpc.RpcError as error:
            assert error.code() == S.UNAVAILABLE, error
            info = error_info(error)
            assert (info.reason, info.domain) == ("ERR_UNAVAILABLE", DOMAIN)
            assert info.metadata["last_seq"] == str(joined), dict(info.metadata)
        # Health turned NOT_SERVING while draining, and Watch said so before its stream ended.
        statuses = []
        try:
            for reply in watched:
                statuses.append(reply.status)
                if reply.status == health_pb2.HealthCheckResponse.NOT_SERVING:
                    watched.cancel()
                    break
        except grpc.RpcError as error:
            assert error.code() in (S.UNAVAILABLE, S.CANCELLED), error
        assert health_pb2.HealthCheckResponse.NOT_SERVING in statuses, (
            "Watch did not report NOT_SERVING during the drain: %s" % statuses)
    assert server.terminate() == 0
