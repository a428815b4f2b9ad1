"""One method as a channel calls it, whether the generated method table knows it or not."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Type

from google.protobuf.message import Message

from .gen.services import METHODS_BY_PATH
from .resume import RESUMABLE_STREAMS, SeqResume

Serializer = Callable[[Any], bytes]
Deserializer = Callable[[bytes], Any]


@dataclasses.dataclass(frozen=True)
class RpcMethod:
    """What a call needs of its method: the path, how to encode the request and decode the
    response, and whether the server streams — plus, for a method of the generated table, the
    request class every request must be (protobuf would serialize another class without a word)
    and, for a resumable stream, how to resume it.

    It exists because ``Channel.unary_unary`` / ``unary_stream`` take grpcio's arguments (a path,
    a serializer, a deserializer), so a path the table does not know can still be called: the
    server then answers UNIMPLEMENTED, raised as the same ``RpcError`` as every other failure.
    """

    path: str
    server_streaming: bool
    serialize: Serializer
    deserialize: Deserializer
    #: The request class of the method table, or None for a path it does not know.
    request_type: Optional[Type[Message]]
    #: What a response is, for error messages ("moderation.v1.KickMemberResponse").
    response_name: str
    #: How to resume the stream, for ``Moderation.Subscribe`` with its own response class.
    resume: Optional[SeqResume]

    @classmethod
    def resolve(cls, path: str, *, server_streaming: bool, request_serializer: Optional[Serializer],
                response_deserializer: Optional[Deserializer]) -> "RpcMethod":
        """The method at ``path``. Without a serializer a request is encoded with its own
        ``SerializeToString`` (bytes go as they are); without a deserializer a response is decoded
        as the table's response class, or left as bytes for a path the table does not know.
        A known method called the wrong way (a stream as unary or the reverse) is a ``TypeError``."""
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError("method %r: expected a path like '/moderation.v1.Moderation/KickMember'" % (path,))
        spec = METHODS_BY_PATH.get(path)
        if spec is not None and spec.server_streaming != server_streaming:
            raise TypeError("%s is %s: use channel.%s" % (
                path, "server-streaming" if spec.server_streaming else "unary",
                "unary_stream" if spec.server_streaming else "unary_unary"))
        response_type: Optional[type] = None
        if response_deserializer is None:
            if spec is not None:
                response_type = spec.response_type
                response_deserializer = spec.response_type.FromString
            else:
                response_deserializer = bytes
        else:
            # X.FromString is bound to the class X: that class is what the response is.
            bound = getattr(response_deserializer, "__self__", None)
            response_type = bound if isinstance(bound, type) else None
        if response_type is not None and issubclass(response_type, Message):
            response_name = response_type.DESCRIPTOR.full_name
        else:
            response_name = "response of %s" % path
        policy = RESUMABLE_STREAMS.get(path) if server_streaming else None
        if policy is not None and (response_type is None or not policy.applies_to(response_type)):
            policy = None
        return cls(path=path, server_streaming=server_streaming, serialize=request_serializer or _serialize,
                   deserialize=response_deserializer, request_type=spec.request_type if spec is not None else None,
                   response_name=response_name, resume=policy)

    def encode(self, request: Any) -> bytes:
        """The request's bytes; a message of another class than the method's is a ``TypeError``."""
        expected = self.request_type
        if expected is not None and isinstance(request, Message) and not isinstance(request, expected):
            raise TypeError("%s takes a %s, got %s" % (self.path, expected.DESCRIPTOR.full_name,
                                                       type(request).DESCRIPTOR.full_name))
        body = self.serialize(request)
        if not isinstance(body, bytes):
            raise TypeError("%s: the request serializer returned %s, not bytes" % (self.path, type(body).__name__))
        return body


def _serialize(request: Any) -> bytes:
    if isinstance(request, Message):
        return request.SerializeToString()
    if isinstance(request, bytes):
        return request
    raise TypeError("a request is a protobuf message (or bytes), got %s" % type(request).__name__)
