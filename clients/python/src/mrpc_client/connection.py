"""One MRPC connection: handshake, multiplexed calls, PING, GOAWAY, close.

Threading model. A connection runs three daemon threads:

- the **reader** reads frames and completes calls: it matches each REPLY / MESSAGE / TRAILERS to
  its call by stream id, answers PING, and handles GOAWAY and the end of the connection. It never
  blocks on anything but the socket, so the server's output is always drained (the server stops
  reading from a client that does not read — a reader that could block on a send would deadlock
  with it); the PONGs and CANCELs it sends are queued for the writer;
- the **writer** sends queued frames, coalescing whatever accumulated into one ``sendall``;
- the **timer** enforces client-side deadlines: a call still live at its deadline fails with
  DEADLINE_EXCEEDED and a CANCEL is queued. It is separate from the writer so that a deadline
  fires on time even while a large frame is being sent to a slow server.

Callers on any number of threads start calls: under the connection's lock a call takes the next
stream id, enters the table of live calls and queues its CALL frame, so ids increase in the order
frames are sent. Futures' callbacks run on the reader or timer thread (or the cancelling caller's)
and must not block.

Over TLS the socket is a ``TLSSocket`` (``tls.py``), which lets the reader and the writer use one
TLS connection from their two threads.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import heapq
import itertools
import os
import socket
import ssl
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Sequence, Tuple

from google.protobuf.message import DecodeError

from .calls import Call, StreamCall, UnaryCall
from .compression import COMPRESSION_THRESHOLD, deflate_body
from .errors import RpcError
from .frames import (FLAG_COMPRESSED, HEADER, PREFACE, U32, FrameHeader, FrameReader, FrameType, ProtocolViolation,
                     encode_frame, is_extension, type_name)
from .gen.mrpc.v1 import envelope_pb2
from .options import CallSettings
from .rpc_method import RpcMethod
from .status import StatusCode, code_name
from .tls import TLSSocket

#: Before HELLO_ACK states the limits, frames up to this size are read.
HANDSHAKE_MAX_PAYLOAD = 1 << 20
#: Unsent bytes above which callers starting calls wait for the writer (the reader never waits).
MAX_QUEUED_BYTES = 8 << 20
_MAX_STREAM_ID = 0xFFFFFFFF


@dataclasses.dataclass
class ConnectionStats:
    """Counters of one connection, for monitoring and tests."""

    calls_started: int = 0
    frames_sent: int = 0
    frames_received: int = 0
    #: REPLY and MESSAGE frames that arrived with the COMPRESSED flag.
    compressed_frames_received: int = 0
    #: Frames for calls no longer live (completed by a deadline or a cancel), dropped.
    frames_dropped: int = 0
    bytes_sent: int = 0
    #: Most calls live at once on this connection.
    peak_in_flight: int = 0
    cancels_sent: int = 0


class GoingAway(Exception):
    """The connection takes no new calls (GOAWAY received, closed, or stream ids used up)."""


class Connection:
    """A handshaken connection to an MRPC server; thread-safe.

    Use ``Connection.open`` to connect. A ``Channel`` owns connections and replaces one that is
    going away; use a ``Connection`` directly only to control exactly which socket calls use.
    """

    def __init__(self, sock: Any, reader: FrameReader, hello_ack: envelope_pb2.HelloAck,
                 address: str) -> None:
        self._sock = sock
        #: "TLSv1.3 mrpc/1" over TLS (the version and the ALPN protocol), None for plaintext.
        self.tls: Optional[str] = None
        if isinstance(sock, TLSSocket):
            self.tls = " ".join(p for p in (sock.version, sock.alpn_protocol) if p)
        self._reader = reader
        #: The server's HELLO_ACK: name, version and the limits it enforces.
        self.hello_ack = hello_ack
        self.address = address
        #: The largest request body the server takes: exactly HELLO_ACK's max_message_bytes (the
        #: frame may be larger by the CallHeader and its length); 4 MiB, the protocol's default,
        #: only for a server that states none.
        self.max_message_bytes = hello_ack.max_message_bytes or (4 << 20)
        self.max_call_header_bytes = hello_ack.max_call_header_bytes or (8 << 10)
        self.max_concurrent_calls = hello_ack.max_concurrent_calls or 1 << 30
        reader.max_payload = self.max_message_bytes + self.max_call_header_bytes + 64 * 1024
        self.stats = ConnectionStats()
        self._lock = threading.Lock()
        self._wake_writer = threading.Condition(self._lock)
        self._wake_timer = threading.Condition(self._lock)
        self._slot_free = threading.Condition(self._lock)
        self._calls: Dict[int, Call] = {}
        self._next_id = 1
        self._out: List[bytes] = []
        self._out_bytes = 0
        self._out_frames = 0
        self._corked = 0
        self._waiting_for_slot = 0
        self._deadlines: List[Tuple[float, int, int]] = []  # (deadline, tiebreak, stream id)
        self._tiebreak = itertools.count()
        self._pings: Dict[bytes, "Future[float]"] = {}
        self._deferred_cancels: Deque[int] = collections.deque()
        self._accepting = True
        self._closed = False
        self._close_error: Optional[RpcError] = None
        #: The GOAWAY the server sent, if any.
        self.goaway: Optional[envelope_pb2.Goaway] = None
        self._closed_event = threading.Event()
        name = "mrpc %s" % address
        self._reader_thread = threading.Thread(target=self._read_loop, name=name + " reader", daemon=True)
        self._writer_thread = threading.Thread(target=self._write_loop, name=name + " writer", daemon=True)
        self._timer_thread = threading.Thread(target=self._timer_loop, name=name + " deadlines", daemon=True)
        self._threads = (self._reader_thread, self._writer_thread, self._timer_thread)
        for thread in self._threads:
            thread.start()

    # MARK: Opening

    @classmethod
    def open(cls, host: str, port: int, api_key: str, *, client_name: str = "mrpc-client-python",
             app_id: str = "", accept_encodings: Sequence[str] = ("deflate",), timeout: float = 10.0,
             ssl_context: Optional[ssl.SSLContext] = None, server_hostname: Optional[str] = None) -> "Connection":
        """Connects, establishes TLS when ``ssl_context`` is given, sends the preface and HELLO,
        and waits for HELLO_ACK.

        Over TLS the server's certificate is checked as the context says (``ChannelCredentials``
        make one that checks it and its name, offering ALPN "mrpc/1"), against the name
        ``server_hostname`` (default: ``host``).

        Raises ``RpcError``: the server's status when it answers GOAWAY (UNAUTHENTICATED /
        ERR_UNAUTHENTICATED for a bad key; INVALID_ARGUMENT / ERR_PROTOCOL from a TLS-only server
        to a plaintext client), UNAVAILABLE when it cannot be reached, closes, or TLS fails (the
        message says why: an unknown CA, another name, a missing client certificate),
        DEADLINE_EXCEEDED when no answer comes within ``timeout`` seconds.
        """
        address = "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)
        deadline = time.monotonic() + timeout
        try:
            sock: Any = socket.create_connection((host, port), timeout=timeout)
        except OSError as error:
            raise RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                       "cannot connect to %s: %s" % (address, error), not_run=True) from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if ssl_context is not None:
                sock = cls._establish_tls(sock, ssl_context, server_hostname or host, address)
            hello = envelope_pb2.Hello(api_key=api_key, client_name=client_name, app_id=app_id,
                                       accept_encodings=list(accept_encodings))
            sock.sendall(PREFACE + encode_frame(FrameType.HELLO, 0, hello.SerializeToString()))
            reader = FrameReader(sock, HANDSHAKE_MAX_PAYLOAD)
            ack = cls._await_hello_ack(sock, reader, address, deadline)
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return cls(sock, reader, ack, address)

    @staticmethod
    def _establish_tls(sock: socket.socket, context: ssl.SSLContext, server_hostname: str,
                       address: str) -> TLSSocket:
        tls = TLSSocket(sock, context, server_hostname)
        try:
            tls.handshake()
        except socket.timeout:
            raise RpcError.client_side(StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED",
                                       "TLS handshake with %s: no answer in time" % address, not_run=True) from None
        except ssl.SSLCertVerificationError as error:
            raise RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                       "TLS handshake with %s failed: the server's certificate is refused: %s"
                                       % (address, error.verify_message or error), not_run=True) from None
        except (ssl.SSLError, OSError) as error:
            reason = getattr(error, "reason", None) or str(error)
            hint = ""
            if reason in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"):
                hint = " (does the server speak TLS on this port?)"
            raise RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                       "TLS handshake with %s failed: %s%s" % (address, error, hint),
                                       not_run=True) from None
        return tls

    @staticmethod
    def _await_hello_ack(sock: Any, reader: FrameReader, address: str,
                         deadline: float) -> envelope_pb2.HelloAck:
        def failure(code: StatusCode, error_code: str, text: str) -> RpcError:
            return RpcError.client_side(code, error_code, "handshake with %s: %s" % (address, text), not_run=True)

        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise failure(StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED", "no HELLO_ACK in time")
            sock.settimeout(remaining)
            try:
                frame = reader.read()
            except socket.timeout:
                raise failure(StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED", "no HELLO_ACK in time") from None
            except ProtocolViolation as violation:
                raise failure(StatusCode.INTERNAL, "ERR_PROTOCOL", str(violation)) from None
            except ssl.SSLError as error:
                # TLS 1.3: a server that wants a client certificate says so after the handshake.
                hint = ""
                if "CERTIFICATE_REQUIRED" in str(error):
                    hint = (" (it asks for a client certificate: "
                            "ssl_channel_credentials(certificate_chain=, private_key=))")
                raise failure(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                              "the server refused the TLS connection: %s%s" % (error, hint)) from None
            except OSError as error:
                raise failure(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE", "connection lost: %s" % error) from None
            if frame is None:
                raise failure(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE", "the server closed the connection")
            header, payload = frame
            if is_extension(header.type):
                continue
            if header.type == FrameType.PING and len(payload) == 8:
                sock.sendall(encode_frame(FrameType.PONG, 0, payload))
                continue
            if header.type == FrameType.HELLO_ACK:
                try:
                    return envelope_pb2.HelloAck.FromString(payload)
                except DecodeError as error:
                    raise failure(StatusCode.INTERNAL, "ERR_PROTOCOL", "HELLO_ACK is not a valid mrpc.v1.HelloAck: %s"
                                  % error) from None
            if header.type == FrameType.GOAWAY:
                try:
                    goaway = envelope_pb2.Goaway.FromString(payload)
                except DecodeError as error:
                    raise failure(StatusCode.INTERNAL, "ERR_PROTOCOL", "GOAWAY is not a valid mrpc.v1.Goaway: %s"
                                  % error) from None
                raise RpcError.from_status(goaway.status, not_run=True)
            raise failure(StatusCode.INTERNAL, "ERR_PROTOCOL",
                          "expected HELLO_ACK or GOAWAY, got %s" % type_name(header.type))

    # MARK: State

    @property
    def accepting_calls(self) -> bool:
        """False once the connection will take no new call (GOAWAY, closed, ids used up)."""
        with self._lock:
            return self._accepting

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    @property
    def in_flight(self) -> int:
        """Calls live now."""
        with self._lock:
            return len(self._calls)

    def wait_closed(self, timeout: Optional[float] = None) -> bool:
        """Waits until the connection has ended; True when it has."""
        return self._closed_event.wait(timeout)

    # MARK: Calls

    def start_unary(self, method: RpcMethod, request: Any, settings: CallSettings,
                    deadline: Optional[float]) -> "Future[Any]":
        """Sends a unary CALL; the Future completes with the response or an ``RpcError``."""
        call = self._start(method, request, settings, deadline, streaming=False)
        assert isinstance(call, UnaryCall)
        future = call.future
        future.add_done_callback(lambda f: f.cancelled() and self.cancel(call.stream_id))
        return future

    def start_stream(self, method: RpcMethod, request: Any, settings: CallSettings,
                     deadline: Optional[float], notice: Optional[Callable[[Any], None]] = None) -> StreamCall:
        """Sends a server-streaming CALL; read it with ``StreamCall.next_item`` (``notice`` sees
        each message on the reader thread as it arrives)."""
        call = self._start(method, request, settings, deadline, streaming=True, notice=notice)
        assert isinstance(call, StreamCall)
        return call

    def _start(self, method: RpcMethod, request: Any, settings: CallSettings, deadline: Optional[float],
               streaming: bool, notice: Optional[Callable[[Any], None]] = None) -> Call:
        body = method.encode(request)
        # The server refuses a body over the max_message_bytes of its HELLO_ACK (an inflated one
        # too): refuse it here, before anything is sent, with the server's code and limit.
        if len(body) > self.max_message_bytes:
            raise RpcError.client_side(StatusCode.RESOURCE_EXHAUSTED, "ERR_MESSAGE_TOO_LARGE",
                                       "%s: the request of %d bytes is over the server's maximum message size %d"
                                       % (method.path, len(body), self.max_message_bytes), not_run=True)
        flags = 0
        if settings.compress and len(body) >= COMPRESSION_THRESHOLD:
            compressed = deflate_body(body)
            if len(compressed) < len(body):
                body, flags = compressed, FLAG_COMPRESSED
        accept_deflate = settings.compress and "deflate" in self.hello_ack.accept_encodings
        with self._lock:
            while True:
                if not self._accepting:
                    raise GoingAway()
                if len(self._calls) < self.max_concurrent_calls and (
                        self._out_bytes < MAX_QUEUED_BYTES or self._corked):
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise RpcError.client_side(
                        StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED",
                        "%s: the deadline passed while waiting to send (%d calls in flight, %d bytes queued)"
                        % (method.path, len(self._calls), self._out_bytes), not_run=True)
                # Inside batch(), what is queued must go out now, or no slot would ever free.
                self._waiting_for_slot += 1
                self._wake_writer.notify_all()
                try:
                    self._slot_free.wait(remaining)
                finally:
                    self._waiting_for_slot -= 1
            if self._next_id > _MAX_STREAM_ID:
                self._accepting = False
                raise GoingAway()
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            header = settings.call_header(method.path, remaining, accept_deflate)
            encoded_header = header.SerializeToString()
            if len(encoded_header) > self.max_call_header_bytes:
                raise RpcError.client_side(
                    StatusCode.RESOURCE_EXHAUSTED, "ERR_MESSAGE_TOO_LARGE",
                    "%s: the CallHeader of %d bytes is over the server's limit %d (metadata too large?)"
                    % (method.path, len(encoded_header), self.max_call_header_bytes), not_run=True)
            stream_id = self._next_id
            self._next_id += 1
            call: Call
            if streaming:
                call = StreamCall(stream_id, method, deadline, accept_deflate, self.max_message_bytes,
                                  settings.max_buffered_messages, notice)
            else:
                call = UnaryCall(stream_id, method, deadline, accept_deflate, self.max_message_bytes)
            self._calls[stream_id] = call
            if deadline is not None:
                heapq.heappush(self._deadlines, (deadline, next(self._tiebreak), stream_id))
                if self._deadlines[0][2] == stream_id:
                    self._wake_timer.notify_all()
            # The body is queued as its own piece: a large request is not copied under the lock.
            prefix = U32.pack(len(encoded_header)) + encoded_header
            self._enqueue_locked(HEADER.pack(len(prefix) + len(body), FrameType.CALL, flags, 0, stream_id) + prefix,
                                 body)
            self.stats.calls_started += 1
            self.stats.peak_in_flight = max(self.stats.peak_in_flight, len(self._calls))
        return call

    def cancel(self, stream_id: int, error: Optional[RpcError] = None) -> bool:
        """Gives up a live call: it fails with ``error`` (default CANCELLED) and CANCEL is sent.
        False when the call had already completed."""
        call = self._take(stream_id)
        if call is None:
            return False
        with self._lock:
            if not self._closed:
                self._enqueue_locked(encode_frame(FrameType.CANCEL, stream_id))
                self.stats.cancels_sent += 1
        call.fail(error or RpcError.client_side(StatusCode.CANCELLED, "ERR_CANCELLED",
                                                "%s: cancelled by the client" % call.method.path))
        self._after_completion()
        return True

    def cancel_soon(self, stream_id: int) -> None:
        """``cancel`` without ever blocking, for finalizers: a garbage collection may run them
        on a thread that holds this connection's lock. The writer thread does the cancel."""
        self._deferred_cancels.append(stream_id)
        if self._lock.acquire(blocking=False):
            try:
                self._wake_writer.notify_all()
            finally:
                self._lock.release()

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Holds frames queued inside the block and sends them together when it ends (pipelining:
        many CALLs in one write). Calls started inside the block are all in flight at once."""
        with self._lock:
            self._corked += 1
        try:
            yield
        finally:
            with self._lock:
                self._corked -= 1
                self._wake_writer.notify_all()

    def ping(self, timeout: float = 5.0) -> float:
        """Sends PING and waits for its PONG; returns the round trip in seconds."""
        token = os.urandom(8)
        future: "Future[float]" = Future()
        started = time.monotonic()
        with self._lock:
            if self._closed:
                raise self._closed_error_locked()
            self._pings[token] = future
            self._enqueue_locked(encode_frame(FrameType.PING, 0, token))
        try:
            future.result(timeout)
        except FutureTimeout:
            raise RpcError.client_side(StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED",
                                       "no PONG from %s within %.3g s" % (self.address, timeout)) from None
        finally:
            with self._lock:
                self._pings.pop(token, None)
        return time.monotonic() - started

    def close(self) -> None:
        """Closes the connection now: live calls fail with CANCELLED, the socket is shut down and
        the connection's threads end before this returns (unless called from one of them)."""
        self._shutdown(RpcError.client_side(StatusCode.CANCELLED, "ERR_CANCELLED",
                                            "the client closed the connection to %s" % self.address))
        current = threading.current_thread()
        for thread in self._threads:
            if thread is not current:
                thread.join()

    # MARK: Internals shared by the threads

    def _enqueue_locked(self, *pieces: bytes) -> None:
        """Queues one frame (given as consecutive pieces) for the writer."""
        self._out.extend(pieces)
        self._out_bytes += sum(len(p) for p in pieces)
        self._out_frames += 1
        self._wake_writer.notify_all()

    def _take(self, stream_id: int) -> Optional[Call]:
        with self._lock:
            call = self._calls.pop(stream_id, None)
            if call is not None:
                self._slot_free.notify_all()
            return call

    def _after_completion(self) -> None:
        """After GOAWAY, the connection closes itself once its last call has completed."""
        with self._lock:
            done = not self._accepting and not self._calls and not self._closed and self.goaway is not None
        if done:
            self._shutdown(self._goaway_error(for_live_call=True))

    def _closed_error_locked(self) -> RpcError:
        return self._close_error or RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                                         "the connection to %s is closed" % self.address)

    def _goaway_error(self, for_live_call: bool) -> RpcError:
        goaway = self.goaway
        reason = ""
        if goaway is not None and goaway.HasField("status"):
            s = goaway.status
            reason = " (GOAWAY %s%s%s)" % (code_name(s.code),
                                           " " + s.error_code if s.error_code else "",
                                           ": " + s.message if s.message else "")
        if for_live_call:
            return RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                        "the connection to %s closed before the call completed%s" % (self.address, reason))
        return RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                    "the server %s went away before running the call%s; it may be retried"
                                    % (self.address, reason), not_run=True)

    def _shutdown(self, error: RpcError) -> None:
        """Ends the connection: every live call and PING fails with ``error``."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._accepting = False
            self._close_error = error
            calls = list(self._calls.values())
            self._calls.clear()
            pings = list(self._pings.values())
            self._pings.clear()
            self._deadlines.clear()
            self._wake_writer.notify_all()
            self._wake_timer.notify_all()
            self._slot_free.notify_all()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        for call in calls:
            call.fail(error)
        for ping in pings:
            if not ping.done():
                ping.set_exception(error)
        self._closed_event.set()

    # MARK: Reader thread

    def _read_loop(self) -> None:
        error: Optional[RpcError] = None
        try:
            while True:
                frame = self._reader.read()
                if frame is None:
                    break
                self._dispatch(*frame)
        except ProtocolViolation as violation:
            error = RpcError.client_side(StatusCode.INTERNAL, "ERR_PROTOCOL",
                                         "the server %s broke the protocol: %s" % (self.address, violation))
        except OSError as os_error:
            if not self.closed:
                error = RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                             "the connection to %s was lost: %s" % (self.address, os_error))
        except Exception as unexpected:  # a bug here must fail the calls, not leave them hanging
            error = RpcError.client_side(StatusCode.INTERNAL, "ERR_INTERNAL",
                                         "the client failed while reading from %s: %r" % (self.address, unexpected))
        finally:
            self._shutdown(error or self._goaway_error(for_live_call=True))
            try:
                self._sock.close()
            except OSError:
                pass

    def _dispatch(self, header: FrameHeader, payload: bytes) -> None:
        self.stats.frames_received += 1
        kind = header.type
        if is_extension(kind):
            return
        if header.compressed and kind not in (FrameType.REPLY, FrameType.MESSAGE):
            raise ProtocolViolation("a %s frame cannot be compressed" % type_name(kind))
        if kind in (FrameType.REPLY, FrameType.MESSAGE, FrameType.TRAILERS):
            if header.stream_id == 0:
                raise ProtocolViolation("%s on stream 0" % type_name(kind))
            if header.compressed:
                self.stats.compressed_frames_received += 1
            self._dispatch_call_frame(header, payload)
        elif kind == FrameType.PING:
            if header.stream_id != 0 or len(payload) != 8:
                raise ProtocolViolation("PING must carry 8 bytes on stream 0")
            with self._lock:
                if not self._closed:
                    self._enqueue_locked(encode_frame(FrameType.PONG, 0, payload))
        elif kind == FrameType.PONG:
            with self._lock:
                future = self._pings.pop(payload, None)
            if future is not None and not future.done():
                future.set_result(0.0)
        elif kind == FrameType.GOAWAY:
            try:
                goaway = envelope_pb2.Goaway.FromString(payload)
            except DecodeError as error:
                raise ProtocolViolation("GOAWAY is not a valid mrpc.v1.Goaway: %s" % error) from None
            self._on_goaway(goaway)
        else:
            raise ProtocolViolation("a server cannot send %s" % type_name(kind))

    def _dispatch_call_frame(self, header: FrameHeader, payload: bytes) -> None:
        final = header.type != FrameType.MESSAGE
        with self._lock:
            call = self._calls.pop(header.stream_id, None) if final else self._calls.get(header.stream_id)
            if call is not None and final:
                self._slot_free.notify_all()
        if call is None:
            self.stats.frames_dropped += 1
            return
        complete = call.on_frame(header, payload)
        if complete and not final:
            # The call ended itself on a MESSAGE (bad body, slow consumer): tell the server.
            if self._take(header.stream_id) is call:
                with self._lock:
                    if not self._closed:
                        self._enqueue_locked(encode_frame(FrameType.CANCEL, header.stream_id))
                        self.stats.cancels_sent += 1
        if complete:
            self._after_completion()

    def _on_goaway(self, goaway: envelope_pb2.Goaway) -> None:
        with self._lock:
            self.goaway = goaway
            self._accepting = False
            doomed = [sid for sid in self._calls if sid > goaway.last_stream_id]
            calls = [self._calls.pop(sid) for sid in doomed]
            self._slot_free.notify_all()
        error = self._goaway_error(for_live_call=False)
        for call in calls:
            call.fail(error)
        self._after_completion()

    # MARK: Writer thread

    def _write_loop(self) -> None:
        while True:
            while self._deferred_cancels:
                self.cancel(self._deferred_cancels.popleft())
            with self._lock:
                while not self._closed and not self._deferred_cancels and (
                        not self._out or (self._corked and not self._waiting_for_slot)):
                    # The timeout picks up a cancel_soon() that could not take the lock to notify.
                    self._wake_writer.wait(1.0)
                if self._closed:
                    return
                if not self._out or (self._corked and not self._waiting_for_slot):
                    continue
                pieces, self._out, sent_bytes, sent_frames = self._out, [], self._out_bytes, self._out_frames
                self._out_bytes = self._out_frames = 0
                self._slot_free.notify_all()
            try:
                self._sock.sendall(b"".join(pieces))
            except OSError as error:
                self._shutdown(RpcError.client_side(StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE",
                                                    "the connection to %s was lost while sending: %s"
                                                    % (self.address, error)))
                return
            self.stats.frames_sent += sent_frames
            self.stats.bytes_sent += sent_bytes

    # MARK: Timer thread

    def _timer_loop(self) -> None:
        while True:
            expired: List[Call] = []
            with self._lock:
                while not self._closed:
                    now = time.monotonic()
                    while self._deadlines and self._deadlines[0][0] <= now:
                        _, _, stream_id = heapq.heappop(self._deadlines)
                        call = self._calls.pop(stream_id, None)
                        if call is not None:
                            expired.append(call)
                            self._enqueue_locked(encode_frame(FrameType.CANCEL, stream_id))
                            self.stats.cancels_sent += 1
                            self._slot_free.notify_all()
                    if expired:
                        break
                    self._wake_timer.wait(self._deadlines[0][0] - now if self._deadlines else None)
                if self._closed and not expired:
                    return
            for call in expired:
                call.fail(RpcError.client_side(
                    StatusCode.DEADLINE_EXCEEDED, "ERR_DEADLINE_EXCEEDED",
                    "%s: no reply before the deadline (client-side; CANCEL sent)" % call.method.path))
            self._after_completion()
