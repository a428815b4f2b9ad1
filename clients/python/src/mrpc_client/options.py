"""Per-call options: the keywords of every call (``timeout``, ``metadata``, ``compression``, …),
checked once and turned into the ``CallHeader`` they stand for."""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from .errors import RpcError
from .gen.mrpc.v1 import envelope_pb2
from .status import StatusCode

#: Call metadata as grpcio takes it — ``(key, value)`` pairs — or as a dict.
Metadata = Union[Sequence[Tuple[str, str]], Mapping[str, str]]

#: Metadata keys that carry a ``CallHeader`` field, as the server's gRPC listener reads them
#: (docs/GRPC.md): the same call means the same thing on both listeners.
ENVELOPE_METADATA = {
    "x-on-behalf-of": "on_behalf_of",
    "x-idempotency-key": "idempotency_key",
    "x-request-id": "request_id",
}
#: Metadata keys that carry the API key, as the server's gRPC listener reads them:
#: ``authorization: Bearer APP_ID:KEY`` (it wins), else ``x-api-key: APP_ID:KEY``. This protocol
#: sends the key once per connection, in HELLO: a call with a key of its own goes on the channel's
#: connection for that key (see ``Channel``), and the key is not sent as call metadata.
KEY_METADATA = ("authorization", "x-api-key")


class Compression(enum.IntEnum):
    """What a call compresses, named and numbered as ``grpc.Compression``.

    ``Deflate``: the response (unary body or stream) may come raw-deflate compressed, and a
    request body of 1 KiB or more is sent compressed when that makes it smaller.
    ``NoCompression``: neither. ``Gzip`` is grpcio's other choice; this protocol has only deflate.
    """

    NoCompression = 0
    Deflate = 1
    Gzip = 2


@dataclasses.dataclass(frozen=True)
class CallSettings:
    """The options of one call, checked, with defaults filled in."""

    timeout: Optional[float] = None
    on_behalf_of: str = ""
    idempotency_key: str = ""
    request_id: str = ""
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)
    compress: bool = False
    resume: bool = True
    resume_attempts: int = 8
    max_buffered_messages: int = 10000
    #: The call's own API key (``authorization`` / ``x-api-key`` metadata); None: the channel's.
    api_key: Optional[str] = None

    @classmethod
    def of_call(cls, path: str, *, timeout: Optional[float] = None, metadata: Optional[Metadata] = None,
                compression: Optional[Compression] = None, default_compression: Optional[Compression] = None,
                on_behalf_of: Optional[str] = None, idempotency_key: Optional[str] = None,
                request_id: Optional[str] = None, **stream: Any) -> "CallSettings":
        """The settings of a call of ``path`` from its keywords. ``x-on-behalf-of``,
        ``x-idempotency-key`` and ``x-request-id`` in ``metadata`` fill the ``CallHeader`` fields of
        the same meaning, like the keywords ``on_behalf_of=``, ``idempotency_key=``, ``request_id=``
        (giving one both ways is an error); ``authorization: Bearer APP_ID:KEY`` (else
        ``x-api-key: APP_ID:KEY``) is the call's API key; every other key is
        ``CallHeader.metadata``. ``stream`` holds the stream-only keywords (``resume``,
        ``resume_attempts``, ``max_buffered_messages``). An ``authorization`` value that is not
        ``Bearer KEY`` is the ``RpcError`` the gRPC listener answers it with, UNAUTHENTICATED."""
        fields: Dict[str, Any] = {}
        for name, value in (("on_behalf_of", on_behalf_of), ("idempotency_key", idempotency_key),
                            ("request_id", request_id)):
            if value is not None:
                if not isinstance(value, str):
                    raise TypeError("%s: %s must be a str, got %r" % (path, name, value))
                fields[name] = value
        extra: Dict[str, str] = {}
        keys: Dict[str, str] = {}
        for key, value in _pairs(path, metadata):
            if key in KEY_METADATA:
                if key in keys:
                    raise ValueError("%s: metadata key %r is given twice" % (path, key))
                keys[key] = _bearer_key(path, value) if key == "authorization" else value.strip()
                continue
            field = ENVELOPE_METADATA.get(key)
            if field is None:
                if key in extra:
                    raise ValueError("%s: metadata key %r is given twice (this protocol's metadata is a map)"
                                     % (path, key))
                extra[key] = value
            elif field in fields:
                raise ValueError("%s: %s is given twice (the keyword %s= and the metadata key %r, or that key twice)"
                                 % (path, field, field, key))
            else:
                fields[field] = value
        chosen = compression if compression is not None else default_compression
        api_key = keys.get("authorization", keys.get("x-api-key"))
        settings = cls(timeout=timeout, metadata=extra, compress=deflates(path, chosen), api_key=api_key, **fields,
                       **stream)
        settings._validate(path)
        return settings

    def _validate(self, path: str) -> None:
        if self.timeout is not None:
            if not isinstance(self.timeout, (int, float)) or isinstance(self.timeout, bool) \
                    or not math.isfinite(self.timeout) or self.timeout <= 0:
                raise ValueError("%s: timeout must be a positive number of seconds or None, got %r" % (path, self.timeout))
            if self.timeout * 1000 > 0xFFFFFFFF:
                raise ValueError("%s: timeout %r s does not fit CallHeader.timeout_ms (u32 milliseconds)" % (path, self.timeout))
        if not isinstance(self.resume, bool):
            raise TypeError("%s: resume must be True or False, got %r" % (path, self.resume))
        for name in ("resume_attempts", "max_buffered_messages"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError("%s: %s must be an int, got %r" % (path, name, value))
        if self.resume_attempts < 0 or self.max_buffered_messages < 1:
            raise ValueError("%s: resume_attempts must be >= 0 and max_buffered_messages >= 1" % path)

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


def _bearer_key(path: str, value: str) -> str:
    """The key in an ``authorization`` value: ``Bearer APP_ID:KEY`` (the scheme in any case), as
    the server's gRPC listener takes it; another value is refused as it refuses it."""
    scheme, _, key = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise RpcError.client_side(StatusCode.UNAUTHENTICATED, "ERR_UNAUTHENTICATED",
                                   '%s: the authorization header must be "Bearer APP_ID:KEY"' % path, not_run=True)
    return key.strip()


def _pairs(path: str, metadata: Optional[Metadata]) -> Sequence[Tuple[str, str]]:
    """``metadata`` as checked (key, value) pairs: text keys in lower case (as gRPC requires of
    header names) and text values."""
    if metadata is None:
        return ()
    if isinstance(metadata, Mapping):
        items = list(metadata.items())
    elif isinstance(metadata, (str, bytes)):
        raise TypeError("%s: metadata must be (key, value) pairs or a dict, got %r" % (path, metadata))
    else:
        items = []
        for item in metadata:
            if not isinstance(item, tuple) or len(item) != 2:
                raise TypeError("%s: metadata must be (key, value) pairs or a dict, got the item %r" % (path, item))
            items.append(item)
    for key, value in items:
        if not isinstance(key, str) or not key or key != key.lower():
            raise ValueError("%s: metadata key %r: keys are non-empty lower-case text" % (path, key))
        if not isinstance(value, str):
            raise TypeError("%s: metadata %r: values are text on this protocol, got %r" % (path, key, value))
    return items


def deflates(where: str, compression: Optional[Compression]) -> bool:
    """Whether ``compression`` means deflate; a choice this protocol lacks is an error naming
    ``where`` it was made."""
    if compression is None or compression == Compression.NoCompression:
        return False
    if compression == Compression.Deflate:
        return True
    if compression == Compression.Gzip:
        raise ValueError("%s: this protocol compresses with deflate only: use Compression.Deflate" % where)
    raise TypeError("%s: compression must be a mrpc_client.Compression, got %r" % (where, compression))
