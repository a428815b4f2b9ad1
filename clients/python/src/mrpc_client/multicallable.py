"""The callables a stub's attributes are: one method of a channel, called like grpcio's."""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Callable, Generic, Optional, Tuple, TypeVar

from .errors import MetadataTuple
from .options import Compression, Metadata
from .rpc_method import RpcMethod
from .status import StatusCode
from .stream import ServerStream

if TYPE_CHECKING:
    from .channel import Channel

Req = TypeVar("Req")
Resp = TypeVar("Resp")


class CompletedCall:
    """The call that ``with_call`` returns beside the response, shaped like grpcio's ``grpc.Call``
    for a unary call that succeeded: ``code()`` OK, ``details()`` empty, no metadata (this
    protocol has no response headers, and an OK reply no trailers), no longer active. A call that
    fails raises ``RpcError`` instead, as with grpcio; the error is the failed call."""

    def __init__(self, deadline: Optional[float]) -> None:
        self._deadline = deadline

    def initial_metadata(self) -> MetadataTuple:
        return ()

    def trailing_metadata(self) -> MetadataTuple:
        return ()

    def code(self) -> StatusCode:
        return StatusCode.OK

    def details(self) -> str:
        return ""

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> Optional[float]:
        """Seconds that were left of the call's deadline (``timeout=``); None without one."""
        return None if self._deadline is None else max(self._deadline - time.monotonic(), 0.0)

    def cancel(self) -> bool:
        """Nothing to cancel: the call has completed."""
        return False

    def add_callback(self, callback: Callable[[], Any]) -> bool:
        """The call has completed: the callback is not registered (False), as with grpcio."""
        return False

    def __repr__(self) -> str:
        return "<CompletedCall OK>"


class _MethodCallable:
    """What a stub's attribute holds, whatever the method's kind: the channel that calls it and the
    method itself."""

    def __init__(self, channel: "Channel", method: RpcMethod) -> None:
        self._channel = channel
        self._method = method

    @property
    def path(self) -> str:
        """The method's path, e.g. ``"/moderation.v1.Moderation/KickMember"``."""
        return self._method.path

    def __repr__(self) -> str:
        return "<%s %s>" % (type(self).__name__, self._method.path)


class UnaryUnaryMultiCallable(_MethodCallable, Generic[Req, Resp]):
    """A unary method: ``stub.KickMember(request, timeout=2, metadata=[...])`` returns the
    response or raises ``RpcError``; ``stub.KickMember.with_call(request, ...)`` returns
    ``(response, call)``; ``stub.KickMember.future(request, ...)`` returns a
    ``concurrent.futures.Future`` at once (cancelling it sends CANCEL).

    Keywords of both: ``timeout`` (seconds: sent as the call's deadline and enforced by the client
    too), ``metadata`` (pairs or a dict; ``x-on-behalf-of``, ``x-idempotency-key`` and
    ``x-request-id`` are the acting user, the idempotency key and the request id, as on the
    server's gRPC listener; ``authorization: Bearer APP_ID:KEY`` is the call's own API key, see
    ``Channel``), ``compression`` (``Compression.Deflate``: compressed response, and a
    request of 1 KiB or more compressed; default: the channel's), and, as keywords instead of
    metadata, ``on_behalf_of``, ``idempotency_key``, ``request_id``.
    """

    def __call__(self, request: Req, timeout: Optional[float] = None, metadata: Optional[Metadata] = None, *,
                 compression: Optional[Compression] = None, on_behalf_of: Optional[str] = None,
                 idempotency_key: Optional[str] = None, request_id: Optional[str] = None) -> Resp:
        future = self.future(request, timeout, metadata, compression=compression, on_behalf_of=on_behalf_of,
                             idempotency_key=idempotency_key, request_id=request_id)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    def with_call(self, request: Req, timeout: Optional[float] = None, metadata: Optional[Metadata] = None, *,
                  compression: Optional[Compression] = None, on_behalf_of: Optional[str] = None,
                  idempotency_key: Optional[str] = None,
                  request_id: Optional[str] = None) -> Tuple[Resp, CompletedCall]:
        """As calling the method, but returns ``(response, call)`` as grpcio's ``with_call`` does:
        ``call`` is a ``CompletedCall`` (``code()``, ``details()``, ``initial_metadata()``,
        ``trailing_metadata()``). A failed call raises ``RpcError``, which is the call."""
        deadline = None if timeout is None else time.monotonic() + timeout
        response = self(request, timeout, metadata, compression=compression, on_behalf_of=on_behalf_of,
                        idempotency_key=idempotency_key, request_id=request_id)
        return response, CompletedCall(deadline)

    def future(self, request: Req, timeout: Optional[float] = None, metadata: Optional[Metadata] = None, *,
               compression: Optional[Compression] = None, on_behalf_of: Optional[str] = None,
               idempotency_key: Optional[str] = None, request_id: Optional[str] = None) -> "Future[Resp]":
        """Sends the call and returns at once: a Future of the response or of its ``RpcError``."""
        settings = self._channel.settings_of(self._method, timeout=timeout, metadata=metadata,
                                             compression=compression, on_behalf_of=on_behalf_of,
                                             idempotency_key=idempotency_key, request_id=request_id)
        return self._channel.start_unary(self._method, request, settings)


class UnaryStreamMultiCallable(_MethodCallable, Generic[Req, Resp]):
    """A server-streaming method: ``stub.Subscribe(request, ...)`` sends the call and returns a
    ``ServerStream``, an iterator of the responses with ``cancel()``.

    Keywords: those of ``UnaryUnaryMultiCallable`` (``timeout`` bounds the whole stream), and for a
    resumable stream (``Moderation.Subscribe``): ``resume`` (default True: resume after a lost
    connection or an UNAVAILABLE / RESOURCE_EXHAUSTED end), ``resume_attempts`` (consecutive failed
    attempts before the last error is raised, default 8); for any stream
    ``max_buffered_messages`` (messages received but not consumed that it may hold, default 10 000:
    past it the client ends the stream as a slow consumer, and resumes a subscription from what was
    consumed).
    """

    def __call__(self, request: Req, timeout: Optional[float] = None, metadata: Optional[Metadata] = None, *,
                 compression: Optional[Compression] = None, on_behalf_of: Optional[str] = None,
                 idempotency_key: Optional[str] = None, request_id: Optional[str] = None, resume: bool = True,
                 resume_attempts: int = 8, max_buffered_messages: int = 10000) -> ServerStream[Resp]:
        settings = self._channel.settings_of(self._method, timeout=timeout, metadata=metadata,
                                             compression=compression, on_behalf_of=on_behalf_of,
                                             idempotency_key=idempotency_key, request_id=request_id, resume=resume,
                                             resume_attempts=resume_attempts,
                                             max_buffered_messages=max_buffered_messages)
        return self._channel.start_stream(self._method, request, settings)
