"""The shape of the generated method table (``mrpc_client.gen.services``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, Tuple, Type, TypeVar

from google.protobuf.message import Message

Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)


@dataclasses.dataclass(frozen=True)
class MethodSpec(Generic[Req, Resp]):
    """One RPC, as ``tools/gen-clients`` reads it from the ``.proto`` descriptors.

    Everything the client needs to call a method — its path, the classes to encode the request
    and decode the response with, and whether the server answers with a stream — so that no
    per-method code is written by hand. The generated stubs call these methods by path; a channel
    looks the path up here to check requests and decode responses.
    """

    #: Fully-qualified service name, e.g. ``"moderation.v1.Moderation"``.
    service: str
    #: Method name as declared, e.g. ``"KickMember"``.
    name: str
    #: ``CallHeader.method``, e.g. ``"/moderation.v1.Moderation/KickMember"``.
    path: str
    request_type: Type[Req]
    response_type: Type[Resp]
    #: True when the server answers with MESSAGE frames ended by TRAILERS.
    server_streaming: bool


@dataclasses.dataclass(frozen=True)
class ServiceSpec:
    """A service and its methods, in declaration order."""

    #: Fully-qualified name, e.g. ``"moderation.v1.Moderation"``.
    name: str
    methods: Tuple[MethodSpec[Any, Any], ...]

    def method(self, name: str) -> MethodSpec[Any, Any]:
        """The method declared as ``name`` (e.g. ``"KickMember"``)."""
        for spec in self.methods:
            if spec.name == name:
                return spec
        raise KeyError("%s has no method %r (it has %s)" % (self.name, name, ", ".join(m.name for m in self.methods)))
