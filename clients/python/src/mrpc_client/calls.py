"""The client side of one call on a connection: a unary call's Future, a stream's message queue.

A call is completed exactly once, by whoever removes it from its connection's table of live
calls (the reader thread on REPLY/TRAILERS, the deadline timer, a GOAWAY, the connection's end,
the caller's cancel). Frames that arrive for a call no longer in the table are dropped.
"""

from __future__ import annotations

import collections
import threading
from concurrent.futures import Future, InvalidStateError
from typing import Any, Callable, Deque, Optional, Tuple, Union

from google.protobuf.message import DecodeError

from .compression import InflateError, StreamInflater, inflate_body
from .errors import RpcError
from .frames import FrameHeader, FrameType, ProtocolViolation, parse_status, split_reply
from .rpc_method import RpcMethod
from .status import StatusCode

#: Replies that say the server did not run the call (safe to retry; an unknown method ran nothing).
NOT_RUN_ERROR_CODES = frozenset(("ERR_TOO_MANY_CALLS", "ERR_UNAVAILABLE", "ERR_RATE_LIMITED", "ERR_OVERLOADED",
                                 "ERR_UNIMPLEMENTED", "ERR_UNAUTHENTICATED"))


def _bad_reply(method: RpcMethod, what: str) -> RpcError:
    return RpcError.client_side(StatusCode.INTERNAL, "ERR_PROTOCOL", "%s: %s" % (method.path, what))


def decode_body(method: RpcMethod, header: FrameHeader, body: bytes, accepted_deflate: bool,
                limit: int, inflater: Optional[StreamInflater] = None) -> Any:
    """The response in a REPLY or MESSAGE body (inflated first when COMPRESSED), decoded."""
    if header.compressed:
        if not accepted_deflate:
            raise _bad_reply(method, "the server sent a compressed body although the call did not accept deflate")
        try:
            body = inflater.inflate(body) if inflater is not None else inflate_body(body, limit)
        except InflateError as error:
            code = StatusCode.RESOURCE_EXHAUSTED if error.too_large else StatusCode.INTERNAL
            raise RpcError.client_side(code, "ERR_MESSAGE_TOO_LARGE" if error.too_large else "ERR_BAD_ENCODING",
                                       "%s: the compressed %s body %s" % (
                                           method.path, FrameType(header.type).name, error)) from None
    elif len(body) > limit:
        raise RpcError.client_side(StatusCode.RESOURCE_EXHAUSTED, "ERR_MESSAGE_TOO_LARGE",
                                   "%s: a body of %d bytes is over the maximum message size %d"
                                   % (method.path, len(body), limit))
    try:
        return method.deserialize(body)
    except (DecodeError, RuntimeWarning, ValueError, TypeError) as error:
        raise _bad_reply(method, "the body is not a valid %s: %s" % (method.response_name, error)) from None


class Call:
    """What every call has: its id, method, deadline and whether it accepted deflate."""

    def __init__(self, stream_id: int, method: RpcMethod, deadline: Optional[float],
                 accepted_deflate: bool, limit: int) -> None:
        self.stream_id = stream_id
        self.method = method
        self.deadline = deadline
        self.accepted_deflate = accepted_deflate
        self.limit = limit

    def on_frame(self, header: FrameHeader, payload: bytes) -> bool:
        """Handles a REPLY, MESSAGE or TRAILERS for this call; True when the call is complete
        (the caller has already removed it from the table only for final frame types)."""
        raise NotImplementedError

    def fail(self, error: RpcError) -> None:
        """Completes the call with ``error`` (the caller removed it from the table)."""
        raise NotImplementedError


class UnaryCall(Call):
    """A unary call: CALL → REPLY, completing ``future``."""

    def __init__(self, stream_id: int, method: RpcMethod, deadline: Optional[float],
                 accepted_deflate: bool, limit: int) -> None:
        super().__init__(stream_id, method, deadline, accepted_deflate, limit)
        self.future: "Future[Any]" = Future()

    def on_frame(self, header: FrameHeader, payload: bytes) -> bool:
        if header.type != FrameType.REPLY:
            self.fail(_bad_reply(self.method, "a unary call got a %s frame" % FrameType(header.type).name))
            return True
        try:
            status, body = split_reply(payload)
            if status.code != 0:
                raise RpcError.from_status(status, not_run=status.error_code in NOT_RUN_ERROR_CODES,
                                            method=self.method.path)
            response = decode_body(self.method, header, body, self.accepted_deflate, self.limit)
        except ProtocolViolation as violation:
            self.fail(_bad_reply(self.method, str(violation)))
        except RpcError as error:
            self.fail(error)
        else:
            try:
                self.future.set_result(response)
            except InvalidStateError:  # the caller cancelled the Future meanwhile
                pass
        return True

    def fail(self, error: RpcError) -> None:
        try:
            self.future.set_exception(error)
        except InvalidStateError:
            pass


#: An item of a stream's queue: a message, or the end (None = OK).
StreamItem = Tuple[bool, Union[Any, RpcError, None]]


class StreamCall(Call):
    """A server stream: CALL → MESSAGE* → TRAILERS, queued for the consuming thread.

    Messages are inflated (one context per stream) and decoded on the reader thread, in arrival
    order, then queued. The queue is bounded: past ``max_buffered`` unconsumed messages the call
    ends itself as a slow consumer instead of growing without bound (the connection then sends
    CANCEL), keeping the messages already queued. ``notice``, when given, sees every decoded
    message on the reader thread as it arrives, before it is queued (it must not block).
    """

    def __init__(self, stream_id: int, method: RpcMethod, deadline: Optional[float],
                 accepted_deflate: bool, limit: int, max_buffered: int,
                 notice: Optional[Callable[[Any], None]] = None) -> None:
        super().__init__(stream_id, method, deadline, accepted_deflate, limit)
        self.max_buffered = max_buffered
        self._notice = notice
        self._inflater: Optional[StreamInflater] = None
        self._items: Deque[StreamItem] = collections.deque()
        self._ready = threading.Condition(threading.Lock())
        self._ended = False
        #: Messages received on this call.
        self.received = 0

    def on_frame(self, header: FrameHeader, payload: bytes) -> bool:
        if header.type == FrameType.MESSAGE:
            try:
                if header.compressed and self._inflater is None:
                    self._inflater = StreamInflater(self.limit)
                message = decode_body(self.method, header, payload, self.accepted_deflate, self.limit,
                                      self._inflater if header.compressed else None)
            except RpcError as error:
                self._end(error)
                return True
            if self._notice is not None:
                self._notice(message)
            with self._ready:
                if self._ended:
                    return True
                if len(self._items) >= self.max_buffered:
                    self._ended = True
                    self._items.append((False, RpcError.client_side(
                        StatusCode.RESOURCE_EXHAUSTED, "ERR_SLOW_CONSUMER",
                        "%s: %d messages received but not consumed; the client ended the stream"
                        % (self.method.path, len(self._items)))))
                    self._ready.notify_all()
                    return True
                self.received += 1
                self._items.append((True, message))
                self._ready.notify_all()
            return False
        if header.type == FrameType.TRAILERS:
            try:
                status = parse_status(payload, "TRAILERS")
            except ProtocolViolation as violation:
                self._end(_bad_reply(self.method, str(violation)))
                return True
            self._end(RpcError.from_status(status, method=self.method.path) if status.code != 0 else None)
            return True
        # A REPLY ends a stream the server refused before starting it (unknown method, bad
        # request, too many calls, draining).
        try:
            status, _ = split_reply(payload)
        except ProtocolViolation as violation:
            self._end(_bad_reply(self.method, str(violation)))
            return True
        if status.code == 0:
            self._end(_bad_reply(self.method, "a server-streaming call got an OK REPLY instead of MESSAGE/TRAILERS"))
        else:
            self._end(RpcError.from_status(status, not_run=True, method=self.method.path))
        return True

    def fail(self, error: RpcError) -> None:
        self._end(error)

    def _end(self, error: Optional[RpcError]) -> None:
        with self._ready:
            if self._ended:
                return
            self._ended = True
            self._items.append((False, error))
            self._ready.notify_all()

    def next_item(self) -> StreamItem:
        """Blocks until the next message or the end. The end is returned once; after it, every
        call returns the end again."""
        with self._ready:
            while not self._items:
                self._ready.wait()
            item = self._items[0]
            if item[0] or len(self._items) > 1:
                self._items.popleft()
            return item

    @property
    def ended(self) -> bool:
        with self._ready:
            return self._ended
