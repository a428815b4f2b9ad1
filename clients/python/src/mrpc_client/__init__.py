"""A Python client for MRPC servers (docs/PROTOCOL.md), shaped like grpcio and generated from the
same ``.proto`` files.

It shares nothing with the server but ``proto/``: the message classes are protoc's
(``mrpc_client.gen``, gathered per proto package in ``mrpc_client.moderation_v1`` and its
siblings), the stubs and method table are generated from the descriptors
(``mrpc_client.gen.services``), and the framing is implemented here from the protocol document.

    import mrpc_client
    from mrpc_client import moderation_v1 as m

    with mrpc_client.insecure_channel("127.0.0.1:7600", api_key="myapp:secret-key") as channel:
        stub = m.ModerationStub(channel)
        try:
            stub.KickMember(m.KickMemberRequest(guid="g1", uid="u2"), timeout=2.0,
                            metadata=[("x-on-behalf-of", "u1")])
        except mrpc_client.RpcError as error:
            print(error.code().name, error.error_code, error.details())
"""

from . import rpc_status
from .channel import Channel, insecure_channel, parse_address, secure_channel
from .connection import Connection, ConnectionStats
from .credentials import ChannelCredentials, ssl_channel_credentials
from .errors import RpcError
from .keys import api_key_from_env, lookup_api_key, read_api_key
from .methods import MethodSpec, ServiceSpec
from .multicallable import CompletedCall, UnaryStreamMultiCallable, UnaryUnaryMultiCallable
from .options import Compression
from .status import StatusCode
from .stream import ServerStream

__all__ = [
    "Channel",
    "ChannelCredentials",
    "CompletedCall",
    "Compression",
    "Connection",
    "ConnectionStats",
    "MethodSpec",
    "RpcError",
    "ServerStream",
    "ServiceSpec",
    "StatusCode",
    "UnaryStreamMultiCallable",
    "UnaryUnaryMultiCallable",
    "api_key_from_env",
    "insecure_channel",
    "lookup_api_key",
    "parse_address",
    "read_api_key",
    "rpc_status",
    "secure_channel",
    "ssl_channel_credentials",
]

__version__ = "0.2.0"
