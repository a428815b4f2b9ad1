"""A Python client for MRPC servers (docs/PROTOCOL.md), generated from the same ``.proto`` files.

It shares nothing with the server but ``proto/``: the message classes are protoc's
(``mrpc_client.gen``), the method table and typed stubs are generated from the descriptors
(``mrpc_client.gen.services``), and the framing is implemented here from the protocol document.

    from mrpc_client import Client, RpcError
    from mrpc_client.gen.moderation.v1.moderation_pb2 import KickMemberRequest

    with Client("127.0.0.1:7600", "myapp:secret-key") as client:
        client.moderation.kick_member(KickMemberRequest(guid="g1", uid="u2"), on_behalf_of="u1", timeout=2.0)
"""

from .client import Client, parse_address
from .connection import Connection, ConnectionStats
from .errors import RpcError
from .methods import MethodSpec, ServiceSpec
from .options import CallOptions, StreamOptions
from .status import StatusCode
from .stream import ServerStream

__all__ = [
    "CallOptions",
    "Client",
    "Connection",
    "ConnectionStats",
    "MethodSpec",
    "RpcError",
    "ServerStream",
    "ServiceSpec",
    "StatusCode",
    "StreamOptions",
    "parse_address",
]

__version__ = "0.1.0"
