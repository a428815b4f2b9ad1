"""Per-call options: what a caller may pass as keyword arguments to any call."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Optional, TypedDict

from .gen.mrpc.v1 import envelope_pb2


class CallOptions(TypedDict, total=False):
    """Keyword options of every call (unary or stream).

    - ``timeout``: seconds; sent as ``CallHeader.timeout_ms`` and enforced by the client too
      (the call fails with DEADLINE_EXCEEDED and a CANCEL is sent). None: no deadline.
    - ``on_behalf_of``: uid of the acting user; empty means the app itself.
    - ``idempotency_key``, ``request_id``, ``metadata``: copied into the ``CallHeader``.
    - ``compress``: accept a deflate-compressed response (unary) or stream (the connection's
      HELLO must have offered deflate, which ``Client`` does by default).
    - ``compress_request``: deflate the request body when it is at least 1 KiB.
    """

    timeout: Optional[float]
    on_behalf_of: str
    idempotency_key: str
    request_id: str
    metadata: Mapping[str, str]
    compress: bool
    compress_request: bool


class StreamOptions(CallOptions, total=False):
    """Keyword options of a server-streaming call, beyond ``CallOptions``.

    - ``resume``: for a resumable stream (``Moderation.Subscribe``), reconnect and resume after a
      disconnect or an UNAVAILABLE / RESOURCE_EXHAUSTED end (default True).
    - ``resume_attempts``: consecutive failed resume attempts before giving up (default 8).
    - ``max_buffered_messages``: messages received but not yet consumed that a stream may hold;
      past it the client ends the stream itself as a slow consumer (and resumes it when it can).
    """

    resume: bool
    resume_attempts: int
    max_buffered_messages: int


_CALL_KEYS = frozenset(CallOptions.__annotations__)
_STREAM_KEYS = _CALL_KEYS | frozenset(("resume", "resume_attempts", "max_buffered_messages"))


@dataclasses.dataclass(frozen=True)
class CallSettings:
    """``CallOptions`` checked and with defaults filled in."""

    timeout: Optional[float] = None
    on_behalf_of: str = ""
    idempotency_key: str = ""
    request_id: str = ""
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)
    compress: bool = False
    compress_request: bool = False
    resume: bool = True
    resume_attempts: int = 8
    max_buffered_messages: int = 10000

    @classmethod
    def from_options(cls, options: Mapping[str, Any], *, streaming: bool, method: str) -> "CallSettings":
        allowed = _STREAM_KEYS if streaming else _CALL_KEYS
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise TypeError("%s: unknown call option%s %s (allowed: %s)" % (
                method, "s" if len(unknown) > 1 else "", ", ".join(unknown), ", ".join(sorted(allowed))))
        settings = cls(**{k: v for k, v in options.items() if not (k == "metadata" and v is None)})
        settings._validate(method)
        return settings

    def _validate(self, method: str) -> None:
        if self.timeout is not None:
            if not isinstance(self.timeout, (int, float)) or isinstance(self.timeout, bool) \
                    or not math.isfinite(self.timeout) or self.timeout <= 0:
                raise ValueError("%s: timeout must be a positive number of seconds or None, got %r" % (method, self.timeout))
            if self.timeout * 1000 > 0xFFFFFFFF:
                raise ValueError("%s: timeout %r s does not fit CallHeader.timeout_ms (u32 milliseconds)" % (method, self.timeout))
        for name in ("on_behalf_of", "idempotency_key", "request_id"):
            if not isinstance(getattr(self, name), str):
                raise TypeError("%s: %s must be a str, got %r" % (method, name, getattr(self, name)))
        if not isinstance(self.metadata, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.metadata.items()):
            raise TypeError("%s: metadata must map str to str, got %r" % (method, self.metadata))
        if self.resume_attempts < 0 or self.max_buffered_messages < 1:
            raise ValueError("%s: resume_attempts must be >= 0 and max_buffered_messages >= 1" % method)

    def call_header(self, path: str, timeout: Optional[float], accept_deflate: bool) -> envelope_pb2.CallHeader:
        """The ``CallHeader`` for ``path``; ``timeout`` is what is left of the deadline, in seconds,
        sent rounded up to whole milliseconds (never shorter than asked)."""
        header = envelope_pb2.CallHeader(
            method=path,
            timeout_ms=0 if timeout is None else max(1, math.ceil(timeout * 1000)),
            on_behalf_of=self.on_behalf_of,
            idempotency_key=self.idempotency_key,
            request_id=self.request_id,
        )
        header.metadata.update(dict(self.metadata))
        if accept_deflate:
            header.accept_encodings.append("deflate")
        return header

    def replace(self, **changes: Any) -> "CallSettings":
        return dataclasses.replace(self, **changes)

