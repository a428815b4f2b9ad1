"""The client: typed stubs over a connection that is replaced when the server goes away."""

from __future__ import annotations

import contextlib
import ssl
import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Sequence, Tuple, Union

from google.protobuf.message import Message

from .calls import StreamCall
from .connection import Connection, GoingAway
from .errors import RpcError
from .gen.mrpc.v1 import envelope_pb2
from .gen.services import METHODS_BY_PATH, ServiceStubs
from .methods import MethodSpec, Req, Resp
from .options import CallSettings
from .resume import RESUMABLE_STREAMS
from .status import StatusCode
from .stream import ServerStream
from .tls import make_context

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import CallOptions, StreamOptions

Method = Union[MethodSpec[Req, Resp], str]


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


class Client(ServiceStubs):
    """An MRPC client: one typed stub per service (``client.moderation``, ``client.health``,
    ``client.reflection``, ``client.diagnostics``) over one multiplexed connection.

    It exists so callers never manage connections: every call from any thread shares the current
    connection; when the server sends GOAWAY (shutdown, idle timeout) or the connection is lost,
    the next call opens a new one, and resumable streams move to it. The constructor connects at
    once, so a wrong address or API key raises ``RpcError`` here (UNAUTHENTICATED /
    ERR_UNAUTHENTICATED for a bad key).

    Calls: ``client.call(method, request, **options)`` (blocking), ``client.call_async(...)`` (a
    ``concurrent.futures.Future``), ``client.stream(...)`` (an iterator) — or the stubs' typed
    methods, which forward to these. ``method`` is a ``MethodSpec`` from
    ``mrpc_client.gen.services`` or a path (``"/moderation.v1.Moderation/KickMember"``).

    TLS, for a server started with ``--tls-cert``: ``tls=True`` checks its certificate against the
    system's CAs, ``cafile=`` against a CA file of your own (and implies ``tls``); the name checked
    is the address's host unless ``server_hostname=`` says otherwise; ``certfile=``/``keyfile=``
    present a client certificate to a server that asks for one (``--tls-client-ca``);
    ``ssl_context=`` replaces all of these. Without them the client speaks plaintext.
    """

    def __init__(self, address: str, api_key: str, *, client_name: str = "mrpc-client-python", app_id: str = "",
                 accept_encodings: Sequence[str] = ("deflate",), connect_timeout: float = 10.0,
                 connect: bool = True, tls: bool = False, cafile: Optional[str] = None,
                 certfile: Optional[str] = None, keyfile: Optional[str] = None,
                 server_hostname: Optional[str] = None, ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.host, self.port = parse_address(address)
        self.address = address
        self._api_key = api_key
        self._client_name = client_name
        self._app_id = app_id
        self._accept_encodings = tuple(accept_encodings)
        self._connect_timeout = connect_timeout
        # One context for every connection (the CA file read once; a bad file fails here).
        if ssl_context is None and (tls or cafile is not None or certfile is not None):
            ssl_context = make_context(cafile, certfile, keyfile)
        self._ssl_context = ssl_context
        self._server_hostname = server_hostname
        self._lock = threading.Lock()
        self._connection: Optional[Connection] = None
        self._retired: List[Connection] = []
        self._closed = False
        self._attach_stubs(self)
        if connect:
            self.connection()

    # MARK: Connections

    def connection(self, deadline: Optional[float] = None) -> Connection:
        """The connection new calls use, opened (handshake included) when there is none or the
        current one takes no new calls."""
        with self._lock:
            if self._closed:
                raise RpcError.client_side(StatusCode.CANCELLED, "ERR_CANCELLED", "the client is closed", not_run=True)
            conn = self._connection
            if conn is not None and conn.accepting_calls:
                return conn
            if conn is not None:
                self._retired.append(conn)
            self._retired = [c for c in self._retired if not c.closed]
            self._connection = None
            timeout = self._connect_timeout
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    raise RpcError.client_side(StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED",
                                               "the deadline passed before a connection to %s was open" % self.address,
                                               not_run=True)
            conn = Connection.open(self.host, self.port, self._api_key, client_name=self._client_name,
                                   app_id=self._app_id, accept_encodings=self._accept_encodings, timeout=timeout,
                                   ssl_context=self._ssl_context, server_hostname=self._server_hostname)
            self._connection = conn
            return conn

    @property
    def hello_ack(self) -> envelope_pb2.HelloAck:
        """The current connection's HELLO_ACK (server name, version, limits)."""
        return self.connection().hello_ack

    # MARK: Calls

    def call(self, method: Method[Req, Resp], request: Req, **options: "Unpack[CallOptions]") -> Resp:
        """Calls a unary method and waits for its response; raises ``RpcError`` on failure."""
        future = self.call_async(method, request, **options)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    def call_async(self, method: Method[Req, Resp], request: Req,
                   **options: "Unpack[CallOptions]") -> "Future[Resp]":
        """Sends a unary call and returns at once: a Future of the response or of its ``RpcError``.
        Cancelling the Future sends CANCEL."""
        spec = self._resolve(method, streaming=False)
        settings = CallSettings.from_options(options, streaming=False, method=spec.path)
        deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
        for _ in range(3):
            conn = self.connection(deadline)
            try:
                return conn.start_unary(spec, request, settings, deadline)
            except GoingAway:
                continue
        raise RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                   "%s: every new connection to %s went away at once" % (spec.path, self.address),
                                   not_run=True)

    def stream(self, method: Method[Req, Resp], request: Req,
               **options: "Unpack[StreamOptions]") -> ServerStream[Resp]:
        """Starts a server-streaming call; iterate the result for its messages (see ``ServerStream``)."""
        spec = self._resolve(method, streaming=True)
        settings = CallSettings.from_options(options, streaming=True, method=spec.path)
        deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
        return ServerStream(self._start_stream, spec, request, settings, deadline, RESUMABLE_STREAMS.get(spec.path))

    def _start_stream(self, spec: MethodSpec[Any, Any], request: Message, settings: CallSettings,
                      deadline: Optional[float]) -> Tuple[Connection, StreamCall]:
        for _ in range(3):
            conn = self.connection(deadline)
            try:
                return conn, conn.start_stream(spec, request, settings, deadline)
            except GoingAway:
                continue
        raise RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                   "%s: every new connection to %s went away at once" % (spec.path, self.address),
                                   not_run=True)

    def _resolve(self, method: Method[Any, Any], streaming: bool) -> MethodSpec[Any, Any]:
        spec = METHODS_BY_PATH.get(method) if isinstance(method, str) else method
        if spec is None:
            raise ValueError("no method %r in the generated method table (paths look like "
                             "'/moderation.v1.Moderation/KickMember')" % method)
        if spec.server_streaming != streaming:
            raise TypeError("%s is %s: use client.%s" % (
                spec.path, "server-streaming" if spec.server_streaming else "unary",
                "stream" if spec.server_streaming else "call / call_async"))
        return spec

    @contextlib.contextmanager
    def batch(self) -> Iterator[Connection]:
        """Pipelining: calls started inside the block are sent together when it ends."""
        conn = self.connection()
        with conn.batch():
            yield conn

    def ping(self, timeout: float = 5.0) -> float:
        """PING on the current connection; the round trip in seconds."""
        return self.connection().ping(timeout)

    # MARK: Lifetime

    def close(self) -> None:
        """Closes every connection; live calls fail with CANCELLED. Idempotent."""
        with self._lock:
            self._closed = True
            conns = self._retired + ([self._connection] if self._connection else [])
            self._connection = None
            self._retired = []
        for conn in conns:
            conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
