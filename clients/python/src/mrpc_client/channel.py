"""The channel: what stubs call through, over a connection that is replaced when the server goes
away — made by ``insecure_channel`` / ``secure_channel`` as grpcio's are."""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .calls import StreamCall
from .connection import Connection, GoingAway
from .credentials import ChannelCredentials
from .errors import RpcError
from .gen.mrpc.v1 import envelope_pb2
from .keys import lookup_api_key
from .multicallable import UnaryStreamMultiCallable, UnaryUnaryMultiCallable
from .options import CallSettings, Compression, deflates
from .rpc_method import Deserializer, RpcMethod, Serializer
from .status import StatusCode
from .stream import ServerStream


def parse_address(address: str) -> Tuple[str, int]:
    """``"host:port"`` or ``"[v6]:port"`` → (host, port)."""
    if address.startswith("["):
        host, sep, rest = address[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ValueError("address %r: expected [HOST]:PORT" % address)
        port_text = rest[1:]
    else:
        host, sep, port_text = address.rpartition(":")
        if not sep:
            raise ValueError("address %r: expected HOST:PORT" % address)
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError("address %r: expected HOST:PORT with a port in 1–65535" % address)
    return host, int(port_text)


class Channel:
    """A channel to an MRPC server: stubs (``ModerationStub(channel)``) call through it, and
    ``with channel:`` closes it.

    It exists so callers never manage connections. It connects at the first call (a wrong address
    or API key is that call's ``RpcError``: UNAVAILABLE, or UNAUTHENTICATED / ERR_UNAUTHENTICATED);
    every call from any thread shares the current connection; when the server sends GOAWAY
    (shutdown, idle timeout) or the connection is lost, the next call opens a new one, and
    resumable streams move to it.

    The API key (``api_key=``, ``APP_ID:KEY`` or bare) is the channel's, sent once per connection
    in HELLO; without one the channel reads ``MODERATION_CLIENT_API_KEY`` (or the keys file
    ``MODERATION_CLIENT_API_KEY_FILE`` names, or the older ``MRPC_API_KEY`` / ``MRPC_API_KEY_FILE``):
    see ``lookup_api_key``. When none is found the channel has no key: its calls may call the
    health checks, or bring a key of their own. A call's own key — metadata
    ``("authorization", "Bearer APP_ID:KEY")`` as with grpcio (or ``x-api-key``) — is used for
    that call: since this protocol authenticates a connection, not a call, the channel keeps one
    connection per key a call has named (opened at its first call, replaced like the channel's
    own); a call naming the channel's own key uses the channel's connection. ``compression`` is
    the default of every call; ``client_name`` and ``app_id`` (of the channel's own key) go in
    HELLO. Beyond grpcio's channel: ``hello_ack`` (the server's limits), ``batch()``
    (pipelining), ``ping()``, ``connection()``.
    """

    def __init__(self, target: str, *, api_key: Optional[str] = None,
                 credentials: Optional[ChannelCredentials] = None, server_hostname: Optional[str] = None,
                 compression: Optional[Compression] = None, client_name: str = "mrpc-client-python",
                 app_id: str = "", connect_timeout: float = 10.0) -> None:
        self.host, self.port = parse_address(target)
        self.target = target
        if api_key is None:
            api_key = lookup_api_key() or ""
        if not isinstance(api_key, str):
            raise TypeError("api_key must be a str (APP_ID:KEY or a bare key), got %r" % (api_key,))
        if credentials is not None and not isinstance(credentials, ChannelCredentials):
            raise TypeError("credentials must come from ssl_channel_credentials(), got %r" % (credentials,))
        if server_hostname is not None and credentials is None:
            raise ValueError("server_hostname is the name a TLS certificate is checked against: it needs "
                             "secure_channel")
        self._api_key = api_key
        self._credentials = credentials
        self._server_hostname = server_hostname
        deflates("the channel", compression)  # a wrong choice is the constructor's error, not every call's
        self._compression = compression
        self._client_name = client_name
        self._app_id = app_id
        self._connect_timeout = connect_timeout
        self._lock = threading.Lock()
        #: The current connection of each API key ("" for none): the channel's own, and those of
        #: keys that calls brought.
        self._connections: Dict[str, Connection] = {}
        self._retired: List[Connection] = []
        self._closed = False

    # MARK: Methods (what stubs are made of)

    def unary_unary(self, method: str, request_serializer: Optional[Serializer] = None,
                    response_deserializer: Optional[Deserializer] = None) -> UnaryUnaryMultiCallable[Any, Any]:
        """A unary method by path, as grpcio's ``channel.unary_unary``: the generated stubs pass
        the message classes' ``SerializeToString`` / ``FromString``. A path the generated method
        table does not know is called all the same (the server answers UNIMPLEMENTED when it has
        no such method); calling a known stream this way is a ``TypeError``."""
        return UnaryUnaryMultiCallable(self, RpcMethod.resolve(
            method, server_streaming=False, request_serializer=request_serializer,
            response_deserializer=response_deserializer))

    def unary_stream(self, method: str, request_serializer: Optional[Serializer] = None,
                     response_deserializer: Optional[Deserializer] = None) -> UnaryStreamMultiCallable[Any, Any]:
        """A server-streaming method by path, as grpcio's ``channel.unary_stream``."""
        return UnaryStreamMultiCallable(self, RpcMethod.resolve(
            method, server_streaming=True, request_serializer=request_serializer,
            response_deserializer=response_deserializer))

    # MARK: Connections

    def connection(self, deadline: Optional[float] = None, *, api_key: Optional[str] = None) -> Connection:
        """The connection new calls with ``api_key`` use (default: the channel's own key), opened
        (handshake included) when there is none or the current one takes no new calls."""
        key = self._api_key if api_key is None else api_key
        with self._lock:
            if self._closed:
                raise RpcError.client_side(StatusCode.CANCELLED, "ERR_CANCELLED", "the channel is closed", not_run=True)
            conn = self._connections.get(key)
            if conn is not None and conn.accepting_calls:
                return conn
            if conn is not None:
                self._retired.append(conn)
            self._retired = [c for c in self._retired if not c.closed]
            # Keys whose connection has ended (the server closes idle ones) are forgotten.
            self._connections = {k: c for k, c in self._connections.items() if k != key and not c.closed}
            timeout = self._connect_timeout
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    raise RpcError.client_side(StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED",
                                               "the deadline passed before a connection to %s was open" % self.target,
                                               not_run=True)
            conn = Connection.open(self.host, self.port, key, client_name=self._client_name,
                                   app_id=self._app_id if key == self._api_key else "", timeout=timeout,
                                   ssl_context=self._credentials.ssl_context if self._credentials else None,
                                   server_hostname=self._server_hostname)
            self._connections[key] = conn
            return conn

    @property
    def hello_ack(self) -> envelope_pb2.HelloAck:
        """The current connection's HELLO_ACK (server name, version, limits), connecting first
        when needed: a way to fail early on a wrong address or key."""
        return self.connection().hello_ack

    @contextlib.contextmanager
    def batch(self) -> Iterator[Connection]:
        """Pipelining: calls started inside the block on the channel's own connection (calls
        that bring no key of their own) are sent together when it ends."""
        conn = self.connection()
        with conn.batch():
            yield conn

    def ping(self, timeout: float = 5.0) -> float:
        """PING on the current connection; the round trip in seconds."""
        return self.connection().ping(timeout)

    # MARK: Calls (for the multi-callables)

    def settings_of(self, method: RpcMethod, **keywords: Any) -> CallSettings:
        """A call's keywords checked, with the channel's default compression."""
        return CallSettings.of_call(method.path, default_compression=self._compression, **keywords)

    def start_unary(self, method: RpcMethod, request: Any, settings: CallSettings) -> "Future[Any]":
        """Sends a unary call on the current connection (a new one when it is going away)."""
        deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
        return self._on_a_connection(method, settings, deadline,
                                     lambda conn: conn.start_unary(method, request, settings, deadline))

    def start_stream(self, method: RpcMethod, request: Any, settings: CallSettings) -> ServerStream[Any]:
        """Starts a server-streaming call; see ``ServerStream``."""
        deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
        return ServerStream(self._start_stream_attempt, method, request, settings, deadline)

    def _start_stream_attempt(self, method: RpcMethod, request: Any, settings: CallSettings,
                              deadline: Optional[float],
                              notice: Optional[Callable[[Any], None]]) -> Tuple[Connection, StreamCall]:
        def start(conn: Connection) -> Tuple[Connection, StreamCall]:
            return conn, conn.start_stream(method, request, settings, deadline, notice)

        return self._on_a_connection(method, settings, deadline, start)

    def _on_a_connection(self, method: RpcMethod, settings: CallSettings, deadline: Optional[float],
                         start: Callable[[Connection], Any]) -> Any:
        for _ in range(3):
            try:
                conn = self.connection(deadline, api_key=settings.api_key)
            except RpcError as error:
                # A refused handshake is this call's error (its ErrorInfo's domain is the method's).
                if error.method is None:
                    error.method = method.path
                raise
            try:
                return start(conn)
            except GoingAway:
                continue
        raise RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                   "%s: every new connection to %s went away at once" % (method.path, self.target),
                                   not_run=True)

    # MARK: Lifetime

    def close(self) -> None:
        """Closes every connection; live calls fail with CANCELLED. Idempotent."""
        with self._lock:
            self._closed = True
            conns = self._retired + list(self._connections.values())
            self._connections = {}
            self._retired = []
        for conn in conns:
            conn.close()

    def __enter__(self) -> "Channel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<Channel %s%s>" % (self.target, " TLS" if self._credentials else "")


def insecure_channel(target: str, *, api_key: Optional[str] = None, compression: Optional[Compression] = None,
                     client_name: str = "mrpc-client-python", app_id: str = "",
                     connect_timeout: float = 10.0) -> Channel:
    """A plaintext channel to ``target`` (``"127.0.0.1:7600"``), as ``grpc.insecure_channel``.
    Keep plaintext on loopback: the API key would cross the network in clear."""
    return Channel(target, api_key=api_key, compression=compression, client_name=client_name, app_id=app_id,
                   connect_timeout=connect_timeout)


def secure_channel(target: str, credentials: ChannelCredentials, *, api_key: Optional[str] = None,
                   server_hostname: Optional[str] = None, compression: Optional[Compression] = None,
                   client_name: str = "mrpc-client-python", app_id: str = "",
                   connect_timeout: float = 10.0) -> Channel:
    """A TLS channel to ``target``, as ``grpc.secure_channel``, for a server started with
    ``--tls-cert``. ``credentials`` come from ``ssl_channel_credentials``; the certificate must name
    the target's host (an IP address is checked against its IP entries), or ``server_hostname``."""
    if not isinstance(credentials, ChannelCredentials):
        raise TypeError("secure_channel needs credentials from ssl_channel_credentials(), got %r" % (credentials,))
    return Channel(target, api_key=api_key, credentials=credentials, server_hostname=server_hostname,
                   compression=compression, client_name=client_name, app_id=app_id, connect_timeout=connect_timeout)
