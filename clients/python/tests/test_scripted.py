"""The client against a scripted peer (fake_server.py): behaviour that needs the server to stay
silent, go away, break the connection or stream on cue."""

from __future__ import annotations

import gc
import struct
import threading
import time
from typing import List, Tuple

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from fake_server import (CANCEL, GOAWAY, HELLO_ACK, MESSAGE, PING, PONG, Call, FakeServer, Frame, Peer,
                         drain_until_closed, idle, status)

import mrpc_client
from mrpc_client import Channel, Compression, RpcError, StatusCode
from mrpc_client.moderation_v1 import (ACTION_TYPE_JOINED, ACTION_TYPE_LEFT, Action, GetUserRequest, Group,
                                       ModerationStub, SubscribeRequest, SubscribeResponse)
from mrpc_client.mrpc_diagnostics_v1 import DiagnosticsStub, EchoRequest, EchoResponse
from mrpc_client.mrpc_v1 import CallHeader

KEY = "fake:key-12345678"


def channel_to(server: FakeServer, **keywords: object) -> Channel:
    return mrpc_client.insecure_channel(server.address, api_key=KEY, **keywords)  # type: ignore[arg-type]


def serve_hello(peer: Peer) -> None:
    peer.send_hello_ack()


def event(seq: int) -> SubscribeResponse:
    """An event; every fourth one is under 32 bytes, which servers send uncompressed."""
    if seq % 4 == 0:
        return SubscribeResponse(action=Action(seq=seq, action=ACTION_TYPE_LEFT))
    return SubscribeResponse(action=Action(
        seq=seq, action=ACTION_TYPE_JOINED,
        action_for=Group(guid="group-1", name="A group with a long enough name to be compressed", members_count=seq)))


# MARK: Handshake

def test_handshake_sends_preface_and_hello_with_key_name_and_encodings() -> None:
    with FakeServer(serve_hello) as server:
        with channel_to(server, client_name="tester/1.0", app_id="fake") as channel:
            assert channel.hello_ack.server_name == "fake"
        server.join()
        server.check()
        hello = server.peers[0].hello
        assert hello is not None
        assert (hello.api_key, hello.client_name, list(hello.accept_encodings), hello.app_id) == (
            KEY, "tester/1.0", ["deflate"], "fake")


def test_goaway_at_handshake_raises_its_status() -> None:
    def refuse(peer: Peer) -> None:
        peer.goaway(0, status(16, "ERR_UNAUTHENTICATED", "the API key is not valid"))
        peer.close()

    with FakeServer(refuse) as server:
        with channel_to(server) as channel, pytest.raises(RpcError) as caught:
            DiagnosticsStub(channel).Echo(EchoRequest())
    assert (caught.value.code(), caught.value.error_code, caught.value.details()) == (
        StatusCode.UNAUTHENTICATED, "ERR_UNAUTHENTICATED", "the API key is not valid")


def test_no_hello_ack_in_time_is_a_deadline() -> None:
    with FakeServer(lambda peer: time.sleep(2)) as server:
        started = time.monotonic()
        with channel_to(server, connect_timeout=0.3) as channel, pytest.raises(RpcError) as caught:
            channel.hello_ack
        assert time.monotonic() - started < 1.5
    assert caught.value.code() == StatusCode.DEADLINE_EXCEEDED and "HELLO_ACK" in caught.value.details()


def test_unreachable_server_is_unavailable() -> None:
    with FakeServer(serve_hello) as server:
        address = server.address
    with mrpc_client.insecure_channel(address, api_key=KEY) as channel, pytest.raises(RpcError) as caught:
        DiagnosticsStub(channel).Echo(EchoRequest())
    assert caught.value.code() == StatusCode.UNAVAILABLE and caught.value.not_run


# MARK: Deadlines

def test_client_enforces_its_deadline_against_a_silent_server_and_sends_cancel() -> None:
    calls: List[Call] = []
    frames: List[Frame] = []

    def silent(peer: Peer) -> None:
        peer.send_hello_ack()
        calls.append(peer.read_call())
        frames.append(peer.read_frame())

    with FakeServer(silent) as server:
        with channel_to(server) as channel:
            started = time.monotonic()
            with pytest.raises(RpcError) as caught:
                DiagnosticsStub(channel).Echo(EchoRequest(payload=b"never answered"), timeout=0.2)
            elapsed = time.monotonic() - started
            server.join()
        server.check()
    assert 0.2 <= elapsed < 1.0
    error = caught.value
    assert (error.code(), error.error_code, error.local) == (StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED", True)
    call, cancel = calls[0], frames[0]
    assert call.header.method == "/mrpc.diagnostics.v1.Diagnostics/Echo"
    # What is left of the 200 ms when the CALL is written: at most 200, and not much less (a
    # loaded machine may take a few milliseconds between the call and its frame).
    assert 100 <= call.header.timeout_ms <= 200, call.header.timeout_ms
    assert (cancel.type, cancel.stream_id, cancel.payload) == (CANCEL, call.stream_id, b"")


def test_async_call_deadline_fails_its_future() -> None:
    with FakeServer(idle) as server:
        with channel_to(server) as channel:
            future = DiagnosticsStub(channel).Echo.future(EchoRequest(), timeout=0.1)
            with pytest.raises(RpcError) as caught:
                future.result(timeout=2)
            assert caught.value.code() == StatusCode.DEADLINE_EXCEEDED


def test_cancelling_a_future_sends_cancel() -> None:
    frames: List[Frame] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        frames.extend(drain_until_closed(peer))

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            future = DiagnosticsStub(channel).Echo.future(EchoRequest())
            time.sleep(0.1)
            assert future.cancel()
            time.sleep(0.1)
        server.join()
    assert [f.type for f in frames] == [3, CANCEL] and frames[0].stream_id == frames[1].stream_id


# MARK: Multiplexing

def test_stream_ids_increase_in_send_order_and_replies_match_out_of_order() -> None:
    count = 300
    order: List[int] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        calls = [peer.read_call() for _ in range(count)]
        order.extend(c.stream_id for c in calls)
        for call in reversed(calls):  # answer in the opposite order
            peer.reply(call.stream_id, EchoResponse(payload=EchoRequest.FromString(call.body).payload))
        drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            results: List[Tuple[bytes, bytes]] = []
            lock = threading.Lock()
            echo = DiagnosticsStub(channel).Echo

            def worker(n: int) -> None:
                futures = [(b"%d/%d" % (n, i), echo.future(EchoRequest(payload=b"%d/%d" % (n, i))))
                           for i in range(count // 6)]
                for payload, future in futures:
                    with lock:
                        results.append((payload, future.result(timeout=5).payload))

            threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(10)
        server.join()
        server.check()
    assert order == sorted(order) and len(set(order)) == count and order[0] >= 1
    assert len(results) == count and all(a == b for a, b in results)


def test_client_keeps_to_max_concurrent_calls_even_inside_a_batch() -> None:
    outstanding_peaks: List[int] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack(max_concurrent_calls=5)
        answered = 0
        while answered < 12:
            held = [peer.read_call()]
            while len(held) < min(5, 12 - answered):
                held.append(peer.read_call())
            try:  # with 5 live calls, the client must wait for a reply before sending a sixth
                peer.read_frame(timeout=0.2)
                outstanding_peaks.append(len(held) + 1)
            except (OSError, EOFError):
                outstanding_peaks.append(len(held))
            for call in held:
                peer.reply(call.stream_id, EchoResponse(payload=EchoRequest.FromString(call.body).payload))
            answered += len(held)
        drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            with channel.batch():
                futures = [DiagnosticsStub(channel).Echo.future(EchoRequest(payload=b"%d" % i)) for i in range(12)]
            assert [f.result(timeout=5).payload for f in futures] == [b"%d" % i for i in range(12)]
        server.join()
        server.check()
    assert outstanding_peaks == [5, 5, 2]


# MARK: PING, GOAWAY, connection loss, close

def test_server_ping_is_answered_with_the_same_bytes() -> None:
    seen: List[Frame] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        peer.send(PING, 0, b"\x01\x02\x03\x04\x05\x06\x07\x08")
        frame = peer.read_frame()
        seen.append(frame)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            channel.hello_ack
            server.join()
        server.check()
    assert (seen[0].type, seen[0].stream_id, seen[0].payload) == (PONG, 0, b"\x01\x02\x03\x04\x05\x06\x07\x08")


def test_goaway_fails_calls_above_last_stream_id_and_new_calls_use_a_new_connection() -> None:
    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        if peer.index == 0:
            calls = [peer.read_call() for _ in range(3)]
            peer.goaway(calls[0].stream_id, status(14, "ERR_UNAVAILABLE", "the server is shutting down"))
            time.sleep(0.05)
            peer.reply(calls[0].stream_id, EchoResponse(payload=b"finished"))
            drain_until_closed(peer)  # the client closes once its last call is done
            peer.close()
        else:
            call = peer.read_call()
            peer.reply(call.stream_id, EchoResponse(payload=b"on the new connection"))
            drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            echo = DiagnosticsStub(channel).Echo
            first = channel.connection()
            with channel.batch():
                futures = [echo.future(EchoRequest(payload=b"%d" % i)) for i in range(3)]
            assert futures[0].result(timeout=5).payload == b"finished"
            for future in futures[1:]:
                error = future.exception(timeout=5)
                assert isinstance(error, RpcError)
                assert (error.code(), error.not_run) == (StatusCode.UNAVAILABLE, True)
                assert "GOAWAY" in error.details() and "may be retried" in error.details()
            assert first.wait_closed(5), "the client should close a connection that went away once it is idle"
            assert not first.accepting_calls and first.goaway is not None
            assert echo(EchoRequest(), timeout=5).payload == b"on the new connection"
            assert channel.connection() is not first
        server.join()
        server.check()
    assert len(server.peers) == 2


def test_lost_connection_fails_live_calls_and_the_next_call_reconnects() -> None:
    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        call = peer.read_call()
        if peer.index == 0:
            peer.close()
        else:
            peer.reply(call.stream_id, EchoResponse(payload=b"second connection"))
            drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            echo = DiagnosticsStub(channel).Echo
            with pytest.raises(RpcError) as caught:
                echo(EchoRequest(), timeout=5)
            assert caught.value.code() == StatusCode.UNAVAILABLE and caught.value.local
            assert not caught.value.not_run  # it may have run
            assert echo(EchoRequest(), timeout=5).payload == b"second connection"
        server.join()


def test_server_breaking_the_protocol_fails_calls_with_err_protocol() -> None:
    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        peer.send(0x85, 0, b"an extension frame, ignored")
        call = peer.read_call()
        peer.reply(call.stream_id, EchoResponse(payload=b"ok"))
        peer.read_call()
        peer.send(0x20, 0, b"")  # an unknown type below 0x80
        drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            echo = DiagnosticsStub(channel).Echo
            assert echo(EchoRequest(), timeout=5).payload == b"ok"
            with pytest.raises(RpcError) as caught:
                echo(EchoRequest(), timeout=5)
            assert (caught.value.code(), caught.value.error_code) == (StatusCode.INTERNAL, "ERR_PROTOCOL")
            assert "0x20" in caught.value.details()
        server.join()


def test_close_fails_live_calls_with_cancelled_and_stops_the_threads() -> None:
    with FakeServer(idle) as server:
        channel = channel_to(server)
        echo = DiagnosticsStub(channel).Echo
        conn = channel.connection()
        future = echo.future(EchoRequest())
        channel.close()
        error = future.exception(timeout=2)
        assert isinstance(error, RpcError) and error.code() == StatusCode.CANCELLED
        assert conn.closed and not any(t.is_alive() for t in conn._threads)
        with pytest.raises(RpcError) as caught:
            echo(EchoRequest())
        assert caught.value.code() == StatusCode.CANCELLED
        channel.close()  # idempotent
        server.join()


# MARK: Streams

def subscribe_script(log: List[SubscribeRequest], plan: dict):
    """Serves Subscribe on each connection per ``plan[connection index]``:
    (first seq, last seq, how the attempt ends: "unavailable", "drop", "ok", "rate_limited")."""

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        call = peer.read_call()
        assert call.header.method == "/moderation.v1.Moderation/Subscribe"
        assert list(call.header.accept_encodings) == ["deflate"]
        request = SubscribeRequest.FromString(call.body)
        log.append(request)
        first, last, end = plan[peer.index]
        for seq in range(first, last + 1):
            peer.stream_message(call.stream_id, event(seq), compress=True)
        if end == "unavailable":  # as a draining server does: GOAWAY, then the stream's end
            peer.goaway(call.stream_id, status(14, "ERR_UNAVAILABLE", "the server is shutting down"))
            peer.trailers(call.stream_id, status(14, "ERR_UNAVAILABLE", "the server is shutting down", last_seq=str(last)))
        elif end == "rate_limited":
            peer.trailers(call.stream_id, status(8, "ERR_RATE_LIMITED", "slow down", retry_after_ms="100"))
        elif end == "ok":
            peer.trailers(call.stream_id)
        if end == "drop":
            time.sleep(0.05)
            peer.close()
            return
        drain_until_closed(peer)

    return script


def test_compressed_subscription_resumes_after_unavailable_and_disconnect_without_gap_or_duplicate() -> None:
    log: List[SubscribeRequest] = []
    plan = {0: (1, 5, "unavailable"), 1: (6, 9, "drop"), 2: (10, 12, "ok")}
    with FakeServer(subscribe_script(log, plan)) as server:
        with channel_to(server) as channel:
            stream = ModerationStub(channel).Subscribe(SubscribeRequest(whole_app=True), timeout=10,
                                                       compression=Compression.Deflate)
            seqs = []
            for item in stream:
                seqs.append(item.action.seq)
                if item.action.seq % 4:
                    assert item.action.action_for.name.startswith("A group")
            assert stream.resumes == 2 and stream.last_seq == 12
            assert stream.code() == StatusCode.OK and not stream.is_active()
            # This server sends no SubscriptionStarted: nothing says the subscription is live.
            assert not stream.wait_started(0) and stream.started_after_seq is None
        server.join()
        server.check()
    assert seqs == list(range(1, 13))
    assert not log[0].HasField("after_seq")
    assert [r.after_seq for r in log[1:]] == [5, 9]
    assert all(r.whole_app for r in log)
    assert len(server.peers) == 3


def test_stream_end_that_is_not_resumable_is_raised() -> None:
    log: List[SubscribeRequest] = []
    with FakeServer(subscribe_script(log, {0: (1, 2, "rate_limited")})) as server:
        with channel_to(server) as channel:
            stream = ModerationStub(channel).Subscribe(SubscribeRequest(user_uid="u1"), compression=Compression.Deflate)
            assert [e.action.seq for e in (next(stream), next(stream))] == [1, 2]
            with pytest.raises(RpcError) as caught:
                next(stream)
            assert caught.value.error_code == "ERR_RATE_LIMITED"
            assert caught.value.error_details == {"retry_after_ms": "100"}
            assert caught.value.last_seq == 2, "the error that ends a subscription says where to resume"
            assert (stream.code(), stream.details()) == (StatusCode.RESOURCE_EXHAUSTED, "slow down")
            # How it ended, as grpcio's stream says it: the rich status in its trailing metadata.
            info = mrpc_client.rpc_status.ErrorInfo()
            assert mrpc_client.rpc_status.from_call(stream).details[0].Unpack(info)
            assert (info.reason, info.domain, dict(info.metadata)) == (
                "ERR_RATE_LIMITED", "moderation.v1", {"retry_after_ms": "100"})
            with pytest.raises(StopIteration):
                next(stream)
    assert len(log) == 1


def test_stopping_iteration_sends_cancel() -> None:
    stream_ids: List[int] = []
    frames: List[Frame] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        call = peer.read_call()
        for seq in range(1, 4):
            peer.stream_message(call.stream_id, event(seq), compress=False)
        stream_ids.append(call.stream_id)
        frames.append(peer.read_frame())
        drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            for item in ModerationStub(channel).Subscribe(SubscribeRequest(whole_app=True)):
                if item.action.seq == 2:
                    break
            gc.collect()  # CPython drops the stream at once; this only makes it certain
            deadline = time.monotonic() + 3
            while not frames and time.monotonic() < deadline:
                time.sleep(0.01)
        server.join()
        server.check()
    assert (frames[0].type, frames[0].stream_id) == (CANCEL, stream_ids[0])


def test_cancel_from_a_finalizer_never_blocks_even_under_the_connections_lock() -> None:
    frames: List[Frame] = []
    stream_ids: List[int] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        stream_ids.append(peer.read_call().stream_id)
        frames.append(peer.read_frame())
        drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            stream = ModerationStub(channel).Subscribe(SubscribeRequest(whole_app=True))
            conn = channel.connection()
            stream_id = stream.stream_id
            assert stream_id is not None
            with conn._lock:  # as if a garbage collection ran the finalizer inside a critical section
                conn.cancel_soon(stream_id)
            deadline = time.monotonic() + 3
            while not frames and time.monotonic() < deadline:
                time.sleep(0.01)
        server.join()
        server.check()
    assert (frames[0].type, frames[0].stream_id) == (CANCEL, stream_ids[0])
    with pytest.raises(RpcError) as caught:  # cancelled behind the stream's back: it says so
        next(stream)
    assert caught.value.code() == StatusCode.CANCELLED


def test_slow_consumer_is_ended_by_the_client_and_resumed_from_what_it_consumed() -> None:
    log: List[SubscribeRequest] = []
    cancels: List[int] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        while True:  # every attempt streams up to seq 30 then ends OK
            try:
                frame = peer.read_frame()
            except (EOFError, OSError):
                return
            if frame.type == CANCEL:
                cancels.append(frame.stream_id)
                continue
            call = Call(frame)
            request = SubscribeRequest.FromString(call.body)
            log.append(request)
            for seq in range(request.after_seq + 1, 31):
                peer.stream_message(call.stream_id, event(seq), compress=False)
            peer.trailers(call.stream_id)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            stream = ModerationStub(channel).Subscribe(SubscribeRequest(whole_app=True, after_seq=0),
                                                       max_buffered_messages=5)
            conn = channel.connection()
            deadline = time.monotonic() + 5
            while conn.stats.cancels_sent == 0 and time.monotonic() < deadline:
                time.sleep(0.01)  # nothing consumed: the reader overflows the buffer and cancels
            seqs = [item.action.seq for item in stream]
            assert channel.connection().stats.frames_dropped >= 24
        server.join()
        server.check()
    assert seqs == list(range(1, 31))
    assert len(cancels) == len(log) - 1 >= 1
    starts = [r.after_seq for r in log]
    assert starts[:2] == [0, 5] and starts == sorted(set(starts))


def test_unary_method_refuses_stream_entry_point_and_vice_versa() -> None:
    with FakeServer(idle) as server:
        with channel_to(server) as channel:
            with pytest.raises(TypeError, match="server-streaming"):
                channel.unary_unary("/moderation.v1.Moderation/Subscribe")
            with pytest.raises(TypeError, match="unary"):
                channel.unary_stream("/mrpc.diagnostics.v1.Diagnostics/Echo")


# MARK: Call options on the wire

def test_metadata_and_keywords_become_the_call_header() -> None:
    headers: List[CallHeader] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        for _ in range(2):
            call = peer.read_call()
            headers.append(call.header)
            peer.reply(call.stream_id, EchoResponse())
        drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            echo = DiagnosticsStub(channel).Echo
            echo(EchoRequest(), 2.5, [("x-on-behalf-of", "u1"), ("x-idempotency-key", "kick-u2-1"),
                                      ("x-request-id", "req-9"), ("trace", "abc")])
            echo(EchoRequest(), metadata={"trace": "def"}, on_behalf_of="u3", idempotency_key="k2", request_id="r2")
        server.join()
        server.check()
    first, second = headers
    assert (first.on_behalf_of, first.idempotency_key, first.request_id, dict(first.metadata)) == (
        "u1", "kick-u2-1", "req-9", {"trace": "abc"})
    assert 2400 <= first.timeout_ms <= 2500 and list(first.accept_encodings) == []
    assert (second.on_behalf_of, second.idempotency_key, second.request_id, dict(second.metadata)) == (
        "u3", "k2", "r2", {"trace": "def"})
    assert second.timeout_ms == 0


# MARK: A call's own API key

def test_a_call_with_its_own_key_goes_on_a_connection_opened_with_that_key() -> None:
    """HELLO carries the key once per connection: a call that names another key than the
    channel's gets a connection of that key; calls naming the same key share it, and a call
    naming the channel's own key uses the channel's connection."""
    seen: List[Tuple[str, str, dict]] = []  # (the connection's HELLO key, the echoed payload, metadata)

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        while True:
            try:
                call = peer.read_call(timeout=5)
            except (EOFError, OSError):
                return
            assert peer.hello is not None
            payload = EchoRequest.FromString(call.body).payload
            seen.append((peer.hello.api_key, payload.decode(), dict(call.header.metadata)))
            peer.reply(call.stream_id, EchoResponse(payload=payload))

    with FakeServer(script) as server:
        with channel_to(server, app_id="fake") as channel:
            echo = DiagnosticsStub(channel).Echo
            echo(EchoRequest(payload=b"channel"), timeout=5)
            echo(EchoRequest(payload=b"other"), timeout=5, metadata=[("authorization", "Bearer other:key-0000001")])
            echo(EchoRequest(payload=b"other again"), timeout=5,
                 metadata=[("authorization", "bearer other:key-0000001"), ("trace", "t")])
            echo(EchoRequest(payload=b"by x-api-key"), timeout=5, metadata={"x-api-key": "third:key-0000002"})
            echo(EchoRequest(payload=b"own key"), timeout=5, metadata=[("authorization", "Bearer " + KEY)])
            channel_connection = channel.connection()
            assert channel.connection(api_key="other:key-0000001") is not channel_connection
        server.join()
        server.check()
    assert seen == [(KEY, "channel", {}), ("other:key-0000001", "other", {}),
                    ("other:key-0000001", "other again", {"trace": "t"}), ("third:key-0000002", "by x-api-key", {}),
                    (KEY, "own key", {})]
    assert [peer.hello.api_key for peer in server.peers] == [  # type: ignore[union-attr]
        KEY, "other:key-0000001", "third:key-0000002"]
    # The channel's app_id goes with its own key only.
    assert [peer.hello.app_id for peer in server.peers] == ["fake", "", ""]  # type: ignore[union-attr]


def test_a_channel_without_a_key_sends_hello_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODERATION_CLIENT_API_KEY", "MODERATION_CLIENT_API_KEY_FILE", "MRPC_API_KEY", "MRPC_API_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    with FakeServer(idle) as server:
        with mrpc_client.insecure_channel(server.address) as channel:
            channel.hello_ack
        server.join()
    assert server.peers[0].hello is not None and server.peers[0].hello.api_key == ""


def test_a_refused_key_of_a_call_is_that_calls_error_and_carries_its_rich_status() -> None:
    def script(peer: Peer) -> None:
        assert peer.hello is not None
        if peer.hello.api_key != KEY:
            peer.goaway(0, status(16, "ERR_UNAUTHENTICATED", "the API key is not valid"))
            peer.close()
            return
        idle(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            stub = ModerationStub(channel)
            with pytest.raises(RpcError) as caught:
                stub.GetUser(GetUserRequest(uid="u1"), timeout=5, metadata=[("authorization", "Bearer x:wrong-key")])
            assert channel.hello_ack.app_id == "fake"  # the channel's own connection is fine
        server.join()
        server.check()
    error = caught.value
    assert (error.code(), error.error_code, error.not_run, error.method) == (
        StatusCode.UNAUTHENTICATED, "ERR_UNAUTHENTICATED", True, "/moderation.v1.Moderation/GetUser")
    info = mrpc_client.rpc_status.ErrorInfo()
    assert mrpc_client.rpc_status.from_call(error).details[0].Unpack(info)
    assert (info.reason, info.domain) == ("ERR_UNAUTHENTICATED", "moderation.v1")


def test_a_subscription_with_its_own_key_resumes_with_that_key() -> None:
    log: List[SubscribeRequest] = []
    plan = {0: (1, 3, "drop"), 1: (4, 5, "ok")}
    with FakeServer(subscribe_script(log, plan)) as server:
        with channel_to(server) as channel:
            stream = ModerationStub(channel).Subscribe(SubscribeRequest(whole_app=True), timeout=10,
                                                       compression=Compression.Deflate,
                                                       metadata=[("authorization", "Bearer sub:key-0000003")])
            assert [event.action.seq for event in stream] == [1, 2, 3, 4, 5]
            assert stream.resumes == 1 and stream.trailing_metadata() == ()
        server.join()
        server.check()
    assert [peer.hello.api_key for peer in server.peers] == ["sub:key-0000003"] * 2  # type: ignore[union-attr]
    assert [r.after_seq for r in log[1:]] == [3]


# MARK: Subscriptions: the started message, last_seq, cancel

def future_subscribe_response() -> type:
    """``SubscribeResponse`` as the lead's proto change makes it: ``action``, or (first, with no
    action) ``started`` = ``SubscriptionStarted{after_seq}``. Built here from a descriptor of its
    own (package ``mrpc_client_tests``), so the tests hold whichever proto this client has."""
    name = "mrpc_client_tests/future_subscribe.proto"
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(name)
    except KeyError:
        file = descriptor_pb2.FileDescriptorProto(name=name, package="mrpc_client_tests", syntax="proto3",
                                                  dependency=["moderation/v1/actions.proto"])
        started = file.message_type.add(name="SubscriptionStarted")
        started.field.add(name="after_seq", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_UINT64,
                          label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        response = file.message_type.add(name="SubscribeResponse")
        response.field.add(name="action", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                           type_name=".moderation.v1.Action", label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        response.field.add(name="started", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                           type_name=".mrpc_client_tests.SubscriptionStarted",
                           label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        pool.AddSerializedFile(file.SerializeToString())
    descriptor = pool.FindMessageTypeByName("mrpc_client_tests.SubscribeResponse")
    # protobuf 4.22 added message_factory.GetMessageClass and 6.x removed MessageFactory.GetPrototype:
    # neither spans every protobuf the client supports (4.21 up), so use whichever this one has.
    get_message_class = getattr(message_factory, "GetMessageClass", None)
    if get_message_class is not None:
        return get_message_class(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def started_subscribe_script(log: List[SubscribeRequest], plan: dict):
    """Serves Subscribe per ``plan[connection index]``: (after_seq announced as started or None,
    seqs of the events, how the attempt ends: "drop" or "ok")."""
    response = future_subscribe_response()

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        call = peer.read_call()
        log.append(SubscribeRequest.FromString(call.body))
        started, seqs, end = plan[peer.index]
        if started is not None:
            peer.stream_message(call.stream_id, response(started={"after_seq": started}), compress=False)
        for seq in seqs:
            peer.stream_message(call.stream_id, response(action=Action(seq=seq, action=ACTION_TYPE_JOINED)),
                                compress=False)
        if end == "drop":
            time.sleep(0.05)
            peer.close()
            return
        peer.trailers(call.stream_id)
        drain_until_closed(peer)

    return script


def subscribe_with(channel: Channel, request: SubscribeRequest, **keywords: object):
    """Subscribe, its responses decoded as the future ``SubscribeResponse``."""
    subscribe = channel.unary_stream("/moderation.v1.Moderation/Subscribe",
                                     request_serializer=SubscribeRequest.SerializeToString,
                                     response_deserializer=future_subscribe_response().FromString)
    return subscribe(request, **keywords)


def test_the_started_message_is_not_delivered_and_says_where_delivery_begins() -> None:
    log: List[SubscribeRequest] = []
    plan = {0: (7, [8, 9, 10], "drop"), 1: (10, [11, 12], "ok")}
    with FakeServer(started_subscribe_script(log, plan)) as server:
        with channel_to(server) as channel:
            stream = subscribe_with(channel, SubscribeRequest(whole_app=True, after_seq=7), timeout=10)
            assert stream.wait_started(5) and stream.started_after_seq in (7, 10)
            assert [event.action.seq for event in stream] == [8, 9, 10, 11, 12]
            assert (stream.started_after_seq, stream.resumes, stream.last_seq) == (10, 1, 12)
        server.join()
        server.check()
    assert [r.after_seq for r in log] == [7, 10]


def test_a_live_subscription_lost_before_any_event_resumes_after_the_started_seq() -> None:
    log: List[SubscribeRequest] = []
    plan = {0: (41, [], "drop"), 1: (41, [42, 43], "ok")}
    with FakeServer(started_subscribe_script(log, plan)) as server:
        with channel_to(server) as channel:
            stream = subscribe_with(channel, SubscribeRequest(whole_app=True), timeout=10)
            assert [event.action.seq for event in stream] == [42, 43]
        server.join()
        server.check()
    assert not log[0].HasField("after_seq"), "the request asked for live events"
    assert log[1].HasField("after_seq") and log[1].after_seq == 41, "no gap: resumed where delivery began"


def test_a_message_without_an_event_is_not_delivered_by_the_generated_stub() -> None:
    """To a client whose proto predates SubscriptionStarted, that first message is one with no
    ``action``: the subscription goes on with the events that follow, whichever proto it has."""
    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        call = peer.read_call()
        peer.send(MESSAGE, call.stream_id, b"\x12\x02\x08\x07")  # field 2: {after_seq: 7}, no action
        for seq in (8, 9):
            peer.stream_message(call.stream_id, event(seq), compress=False)
        peer.trailers(call.stream_id)
        drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            stream = ModerationStub(channel).Subscribe(SubscribeRequest(whole_app=True, after_seq=7), timeout=10)
            assert [item.action.seq for item in stream] == [8, 9]
            assert stream.delivered == 2 and stream.last_seq == 9
        server.join()
        server.check()


def test_a_subscription_that_cannot_resume_raises_its_last_error_with_last_seq() -> None:
    def script(peer: Peer) -> None:
        if peer.index > 0:  # the server is gone for good: every new connection closes at once
            peer.close()
            return
        peer.send_hello_ack()
        call = peer.read_call()
        for seq in (5, 6):
            peer.stream_message(call.stream_id, event(seq), compress=False)
        time.sleep(0.05)
        peer.close()

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            stream = ModerationStub(channel).Subscribe(SubscribeRequest(whole_app=True, after_seq=4),
                                                       resume_attempts=2)
            assert [next(stream).action.seq, next(stream).action.seq] == [5, 6]
            with pytest.raises(RpcError) as caught:
                next(stream)
        server.join()
    error = caught.value
    assert error.code() == StatusCode.UNAVAILABLE and error.last_seq == 6
    assert len(server.peers) == 4, "the first connection, then 1 + resume_attempts attempts"


def test_cancelling_a_stream_from_another_thread_ends_its_iteration_with_cancelled() -> None:
    cancels: List[Frame] = []

    def script(peer: Peer) -> None:
        peer.send_hello_ack()
        call = peer.read_call()
        peer.stream_message(call.stream_id, event(1), compress=False)
        cancels.append(peer.read_frame())
        drain_until_closed(peer)

    with FakeServer(script) as server:
        with channel_to(server) as channel:
            stream = ModerationStub(channel).Subscribe(SubscribeRequest(whole_app=True))
            assert next(stream).action.seq == 1
            assert stream.is_active() and stream.code() is None and stream.details() is None
            threading.Timer(0.1, stream.cancel).start()
            with pytest.raises(RpcError) as caught:
                next(stream)  # blocks until the cancel
            assert caught.value.code() == StatusCode.CANCELLED and caught.value.last_seq == 1
            assert stream.code() == StatusCode.CANCELLED and not stream.is_active()
            assert not stream.cancel(), "a second cancel finds nothing to cancel"
            with pytest.raises(RpcError):
                next(stream)
            deadline = time.monotonic() + 3
            while not cancels and time.monotonic() < deadline:  # the writer sends it; closing would not
                time.sleep(0.01)
        server.join()
        server.check()
    assert cancels[0].type == CANCEL


def test_hello_ack_frame_type_constant() -> None:
    # The fake server's constants are its own; they must agree with the protocol document.
    assert (HELLO_ACK, GOAWAY, struct.calcsize(">IBBHI")) == (2, 10, 12)
