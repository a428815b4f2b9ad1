"""The caller's side of a server stream: an iterator of messages that resumes when it can."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterator, Optional, Tuple

from google.protobuf.message import Message

from .calls import StreamCall
from .errors import RpcError
from .methods import MethodSpec, Resp
from .options import CallSettings
from .resume import SeqResume
from .status import StatusCode

if TYPE_CHECKING:
    from .connection import Connection

#: Starts one attempt of a stream: (connection, call) for (spec, request, settings, deadline).
Starter = Callable[[MethodSpec[Any, Any], Message, CallSettings, Optional[float]], Tuple["Connection", StreamCall]]


def is_resumable(error: RpcError) -> bool:
    """Ends after which a resumable stream is restarted: the connection was lost or went away
    (UNAVAILABLE, from the server or the client), or the reader fell behind (RESOURCE_EXHAUSTED
    with ``last_seq`` from the server, or this client's own slow-consumer end)."""
    if error.code == StatusCode.UNAVAILABLE:
        return True
    if error.code == StatusCode.RESOURCE_EXHAUSTED:
        return "last_seq" in error.details or (error.local and error.error_code == "ERR_SLOW_CONSUMER")
    return False


class ServerStream(Generic[Resp], Iterator[Resp]):
    """Iterates the messages of one server-streaming call, in order.

    It exists to give a stream a lifetime the caller controls: the CALL is sent when the stream
    is created, iteration blocks for each message, the stream's end status is raised as
    ``RpcError`` (or ends the iteration when OK), and ``close()`` — or leaving a ``with`` block,
    or dropping the last reference — sends CANCEL.

    For a resumable method (``Moderation.Subscribe``, see ``resume.py``) with ``resume=True``, a
    disconnect or an UNAVAILABLE / RESOURCE_EXHAUSTED end restarts the call, on a new connection
    when needed, from the seq of the last message delivered, so the caller sees every message
    once, in order. Messages at or below that seq are skipped should a server repeat them.
    """

    def __init__(self, starter: Starter, spec: MethodSpec[Any, Resp], request: Message, settings: CallSettings,
                 deadline: Optional[float], policy: Optional[SeqResume]) -> None:
        self._starter = starter
        self.spec = spec
        self._request = request
        self._settings = settings
        self._deadline = deadline
        self._policy = policy if settings.resume else None
        self._lock = threading.Lock()
        self._conn: Optional["Connection"] = None
        self._call: Optional[StreamCall] = None
        self._finished = False
        self._failures = 0
        self._last_error: Optional[RpcError] = None
        #: Seq of the last message delivered (resumable streams), else None.
        self.position: Optional[int] = None if self._policy is None else self._policy.start_of(request)
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
                    raise StopIteration
                call = self._call
            if call is None:
                self._restart()
                continue
            is_message, value = call.next_item()
            if is_message:
                assert isinstance(value, Message)
                if self._policy is not None:
                    seq = self._policy.seq_of(value)
                    if self.position is not None and seq <= self.position:
                        continue
                    self.position = seq
                self._failures = 0
                self.delivered += 1
                return value  # type: ignore[return-value]
            with self._lock:
                if self._call is call:
                    self._call = None
                    self._conn = None
                if self._finished:
                    raise StopIteration
                if value is None:
                    self._finished = True
                    raise StopIteration
                assert isinstance(value, RpcError)
                if self._policy is None or not is_resumable(value):
                    self._finished = True
                    raise value
                self._last_error = value
                if self.position is None and value.details.get("last_seq", "").isdigit() \
                        and int(value.details["last_seq"]) > 0:
                    self.position = int(value.details["last_seq"])

    def _start_or_defer(self) -> None:
        try:
            self._start()
        except RpcError as error:
            if self._policy is None or not is_resumable(error):
                self._finished = True
                raise
            self._last_error = error
            self._failures += 1

    def _start(self) -> None:
        request = self._request
        if self._policy is not None and self.position is not None:
            request = self._policy.resumed(request, self.position)
        conn, call = self._starter(self.spec, request, self._settings, self._deadline)
        with self._lock:
            if self._finished:
                conn.cancel(call.stream_id)
                return
            self._conn, self._call = conn, call

    def _restart(self) -> None:
        """Starts the stream again after a resumable end, backing off after failed attempts."""
        while True:
            if self._failures > self._settings.resume_attempts:
                with self._lock:
                    self._finished = True
                assert self._last_error is not None
                raise self._last_error
            if self._failures:
                pause = min(0.05 * 2 ** (self._failures - 1), 2.0)
                if self._deadline is not None:
                    pause = min(pause, max(self._deadline - time.monotonic(), 0))
                time.sleep(pause)
            if self._deadline is not None and time.monotonic() >= self._deadline:
                with self._lock:
                    self._finished = True
                raise RpcError.client_side(StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED",
                                           "%s: the deadline passed while resuming the stream" % self.spec.path)
            self._failures += 1
            try:
                self._start()
            except RpcError as error:
                if not is_resumable(error):
                    with self._lock:
                        self._finished = True
                    raise
                self._last_error = error
                continue
            self.resumes += 1
            return

    # MARK: Lifetime

    def close(self) -> None:
        """Stops the stream: sends CANCEL when it is still live; iteration then ends."""
        with self._lock:
            if self._finished and self._call is None:
                return
            self._finished = True
            conn, call = self._conn, self._call
            self._conn = self._call = None
        if conn is not None and call is not None:
            conn.cancel(call.stream_id)

    cancel = close

    def __enter__(self) -> "ServerStream[Resp]":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

    @property
    def stream_id(self) -> Optional[int]:
        """Stream id of the current attempt (None between attempts or after the end)."""
        call = self._call
        return None if call is None else call.stream_id
