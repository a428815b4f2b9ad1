"""The caller's side of a server stream: an iterator of messages with ``cancel()``, resumed when
it can be."""

from __future__ import annotations

import threading
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterator, Optional, Tuple, TypeVar, Union

from google.protobuf.message import Message

from .calls import StreamCall
from .errors import MetadataTuple, RpcError
from .options import CallSettings
from .rpc_method import RpcMethod
from .status import StatusCode

if TYPE_CHECKING:
    from .connection import Connection

Resp = TypeVar("Resp")

#: Starts one attempt of a stream: (connection, call) for (method, request, settings, deadline,
#: a notice to run on each message as it arrives).
Starter = Callable[[RpcMethod, Any, CallSettings, Optional[float], Optional[Callable[[Any], None]]],
                   Tuple["Connection", StreamCall]]


def is_resumable(error: RpcError) -> bool:
    """Ends after which a resumable stream is restarted: the connection was lost or went away
    (UNAVAILABLE, from the server or the client), or the reader fell behind (RESOURCE_EXHAUSTED
    with ``last_seq`` from the server, or this client's own slow-consumer end)."""
    if error.code() == StatusCode.UNAVAILABLE:
        return True
    if error.code() == StatusCode.RESOURCE_EXHAUSTED:
        return "last_seq" in error.error_details or (error.local and error.error_code == "ERR_SLOW_CONSUMER")
    return False


class ServerStream(Generic[Resp], Iterator[Resp]):
    """The messages of one server-streaming call, in order, as grpcio's streaming calls give them.

    It exists to give a stream a lifetime the caller controls: the CALL is sent when the stream
    is created, iteration blocks for each message, an error end is raised as ``RpcError`` and an
    OK end ends the iteration. ``cancel()`` — or leaving a ``with`` block, or dropping the last
    reference — sends CANCEL; iterating a cancelled stream raises ``RpcError`` CANCELLED (as
    grpcio does). ``code()`` and ``details()`` say how it ended (None while it is active).

    ``Moderation.Subscribe`` (see ``resume.py``) is resumable: with ``resume=True`` (the default)
    a disconnect or an UNAVAILABLE / RESOURCE_EXHAUSTED end restarts the call, on a new connection
    when needed, with ``after_seq`` = the seq of the last event delivered (``last_seq``), so the
    caller sees every event once, in order; events at or below that seq are skipped should a
    server repeat them. The error that finally ends a subscription carries ``last_seq`` too. A
    server may open a subscription with a message saying it is live (``SubscribeResponse.started``,
    ``after_seq`` = where delivery begins) instead of an event: it is not delivered, it sets
    ``started_after_seq`` and wakes ``wait_started``, and when nothing was delivered yet a resume
    starts after its ``after_seq``. A message without an event (such a message, to a client whose
    proto predates it) is never delivered either.
    """

    def __init__(self, starter: Starter, method: RpcMethod, request: Any, settings: CallSettings,
                 deadline: Optional[float]) -> None:
        self._starter = starter
        self.method = method
        self._request = request
        self._settings = settings
        self._deadline = deadline
        self._policy = method.resume if isinstance(request, Message) else None
        self._resumes = settings.resume and self._policy is not None
        self._lock = threading.Lock()
        self._conn: Optional["Connection"] = None
        self._call: Optional[StreamCall] = None
        self._finished = False
        #: How it ended: None while active, "OK", or the error it ended with.
        self._outcome: Union[None, str, RpcError] = None
        self._cancelled = False
        self._failures = 0
        self._last_error: Optional[RpcError] = None
        self._started = threading.Event()
        #: Subscriptions: seq of the last event delivered (at first, where the request starts).
        self.last_seq: Optional[int] = self._policy.start_of(request) if self._policy is not None else None
        #: Subscriptions: ``after_seq`` of the latest message saying the subscription is live.
        self.started_after_seq: Optional[int] = None
        #: Times the stream was restarted after a resumable end.
        self.resumes = 0
        #: Messages delivered to the caller.
        self.delivered = 0
        self._start_or_defer()

    # MARK: Iteration

    def __iter__(self) -> "ServerStream[Resp]":
        return self

    def __next__(self) -> Resp:
        while True:
            with self._lock:
                if self._finished:
                    if self._cancelled:
                        assert isinstance(self._outcome, RpcError)
                        raise self._outcome
                    raise StopIteration
                call = self._call
            if call is None:
                self._restart()
                continue
            is_message, value = call.next_item()
            if is_message:
                message: Resp = value  # type: ignore[assignment]
                if self._policy is not None:
                    assert isinstance(message, Message)
                    started = self._policy.started_of(message)
                    if started is not None:
                        if self.last_seq is None:
                            self.last_seq = started
                        continue
                    seq = self._policy.seq_of(message)
                    if seq is None or (self.last_seq is not None and seq <= self.last_seq):
                        continue
                    self.last_seq = seq
                self._failures = 0
                self.delivered += 1
                return message
            with self._lock:
                if self._call is call:
                    self._call = None
                    self._conn = None
                if self._finished:
                    continue  # cancelled meanwhile: said at the top
            if value is None:
                self._finish(None)
                raise StopIteration
            assert isinstance(value, RpcError)
            if not self._resumes or not is_resumable(value):
                raise self._fail(value)
            self._last_error = value
            if self.last_seq is None and value.error_details.get("last_seq", "").isdigit() \
                    and int(value.error_details["last_seq"]) > 0:
                self.last_seq = int(value.error_details["last_seq"])

    def _finish(self, error: Optional[RpcError]) -> None:
        """Records how the stream ended: OK (None) or ``error``."""
        with self._lock:
            if not self._finished:
                self._finished = True
                self._outcome = "OK" if error is None else error

    def _fail(self, error: RpcError) -> RpcError:
        """Ends the stream with ``error`` and returns it to be raised, with ``last_seq`` for a
        subscription."""
        if self._policy is not None:
            error.last_seq = self.last_seq
        self._finish(error)
        return error

    def _notice(self, message: Any) -> None:
        """On the reader thread, as each message arrives: a subscription said to be live."""
        if self._policy is not None:
            started = self._policy.started_of(message)
            if started is not None:
                self.started_after_seq = started
                self._started.set()

    def _weak_notice(self) -> Optional[Callable[[Any], None]]:
        """``_notice`` for the call, without a strong reference: the connection holds its calls,
        and a stream its caller dropped must be collected (and cancelled by ``__del__``)."""
        if self._policy is None:
            return None
        stream = weakref.ref(self)

        def notice(message: Any) -> None:
            alive = stream()
            if alive is not None:
                alive._notice(message)

        return notice

    def _start_or_defer(self) -> None:
        try:
            self._start()
        except RpcError as error:
            if not self._resumes or not is_resumable(error):
                raise self._fail(error) from None
            self._last_error = error
            self._failures += 1

    def _start(self) -> None:
        request = self._request
        if self._policy is not None and self._resumes and self.last_seq is not None:
            request = self._policy.resumed(request, self.last_seq)
        conn, call = self._starter(self.method, request, self._settings, self._deadline, self._weak_notice())
        with self._lock:
            if self._finished:
                conn.cancel(call.stream_id)
                return
            self._conn, self._call = conn, call

    def _restart(self) -> None:
        """Starts the stream again after a resumable end, backing off after failed attempts."""
        while True:
            if self._failures > self._settings.resume_attempts:
                assert self._last_error is not None
                raise self._fail(self._last_error)
            if self._failures:
                pause = min(0.05 * 2 ** (self._failures - 1), 2.0)
                if self._deadline is not None:
                    pause = min(pause, max(self._deadline - time.monotonic(), 0))
                time.sleep(pause)
            if self._deadline is not None and time.monotonic() >= self._deadline:
                raise self._fail(RpcError.client_side(
                    StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED",
                    "%s: the deadline passed while resuming the stream" % self.method.path))
            self._failures += 1
            try:
                self._start()
            except RpcError as error:
                if not is_resumable(error):
                    raise self._fail(error) from None
                self._last_error = error
                continue
            self.resumes += 1
            return

    # MARK: State

    def wait_started(self, timeout: Optional[float] = None) -> bool:
        """Waits until the server says the subscription is live (``SubscribeResponse.started``);
        True when it has. A server that sends no such message never says so: False after
        ``timeout``."""
        return self._started.wait(timeout)

    def is_active(self) -> bool:
        """True until the stream has ended (OK, an error, or ``cancel()``)."""
        with self._lock:
            return not self._finished

    def code(self) -> Optional[StatusCode]:
        """How the stream ended: OK, the error's code, CANCELLED after ``cancel()``; None while
        it is active (unlike grpcio, this does not wait for the end)."""
        with self._lock:
            outcome = self._outcome
        if outcome is None:
            return None
        return StatusCode.OK if isinstance(outcome, str) else outcome.code()

    def details(self) -> Optional[str]:
        """The message of the status the stream ended with ("" for OK); None while it is active."""
        with self._lock:
            outcome = self._outcome
        if outcome is None:
            return None
        return "" if isinstance(outcome, str) else outcome.details()

    def initial_metadata(self) -> MetadataTuple:
        """Always empty: this protocol has no response headers."""
        return ()

    def trailing_metadata(self) -> Optional[MetadataTuple]:
        """How the stream ended, as grpcio's trailing metadata: empty for OK, the error's
        ``trailing_metadata()`` for an error (``grpc-status-details-bin`` when the server sent it,
        which ``mrpc_client.rpc_status.from_call`` reads); None while it is active."""
        with self._lock:
            outcome = self._outcome
        if outcome is None:
            return None
        return () if isinstance(outcome, str) else outcome.trailing_metadata()

    def time_remaining(self) -> Optional[float]:
        """Seconds left before the stream's deadline (``timeout=``); None without one."""
        return None if self._deadline is None else max(self._deadline - time.monotonic(), 0.0)

    @property
    def stream_id(self) -> Optional[int]:
        """Stream id of the current attempt (None between attempts or after the end)."""
        call = self._call
        return None if call is None else call.stream_id

    # MARK: Lifetime

    def cancel(self) -> bool:
        """Stops the stream: sends CANCEL when it is still live. True when it was active."""
        error = RpcError.client_side(StatusCode.CANCELLED, "ERR_CANCELLED", "%s: cancelled by the client"
                                     % self.method.path)
        if self._policy is not None:
            error.last_seq = self.last_seq
        with self._lock:
            if self._finished:
                return False
            self._finished = True
            self._cancelled = True
            self._outcome = error
            conn, call = self._conn, self._call
            self._conn = self._call = None
        if conn is not None and call is not None:
            conn.cancel(call.stream_id)
        return True

    def __enter__(self) -> "ServerStream[Resp]":
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def __del__(self) -> None:
        # No lock here: a finalizer may run during a garbage collection on a thread that holds
        # the stream's or the connection's lock. cancel_soon() never blocks.
        # Cancelling a call that has already ended does nothing.
        conn, call = self._conn, self._call
        if conn is not None and call is not None:
            try:
                conn.cancel_soon(call.stream_id)
            except Exception:  # interpreter shutdown: the connection may already be gone
                pass
