"""What the standard-gRPC tests share: a moderation-server process and its listeners, a throwaway
certificate authority for TLS, call metadata, and reading our errors from gRPC's rich error model.

Nothing here knows our framed protocol: everything goes through stock grpcio, the stubs
grpc_tools.protoc generated from proto/ (tests/grpc/gen_stubs.py), grpcio-health-checking,
grpcio-reflection and grpcio-status — the clients no one here wrote.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import grpc
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

# The package of moderation.v1's methods: ErrorInfo.domain of their errors (docs/GRPC.md).
DOMAIN = "moderation.v1"
GRPC_FLAG = "--grpc-listen"


class GrpcUnsupported(Exception):
    """The server binary does not accept --grpc-listen (a build from before its gRPC listener)."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def check_supports_grpc(binary: str) -> None:
    """Raises GrpcUnsupported when ``binary --help`` does not list --grpc-listen."""
    try:
        result = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    except OSError as error:
        raise RuntimeError("cannot run %s: %s" % (binary, error))
    text = result.stdout.decode(errors="replace")
    if GRPC_FLAG not in text:
        raise GrpcUnsupported("%s does not accept %s (its --help does not list it): this build has no "
                              "standard gRPC listener yet" % (binary, GRPC_FLAG))


class ServerProcess:
    """``moderation-server`` with its main listener (--listen) on an ephemeral port, its second
    listener (--grpc-listen) on a free port of 127.0.0.1 and, with ``plaintext_listen``, a
    --plaintext-listen address on another; a temporary data directory and one API key; stderr goes
    to ``log_path``. Every listener serves gRPC and our framed protocol alike.

    ``target`` is the main port (the address a user is told about, from the "listening on" line),
    ``grpc_target`` the --grpc-listen address and ``plaintext_target`` the --plaintext-listen one
    (None without it), each as ``127.0.0.1:PORT``. A cleartext server is ready once a health Check
    on the main port answers SERVING; a server started with --tls-cert (``tls``) once its log says
    "server started" with those addresses, since a cleartext probe cannot reach it."""

    def __init__(self, binary: str, data_dir: str, api_key: str, log_path: str,
                 extra_args: Optional[Sequence[str]] = None, ready_timeout: float = 30,
                 plaintext_listen: bool = False) -> None:
        self.binary = binary
        self.api_key = api_key
        self.app_id = api_key.split(":", 1)[0]
        self.log_path = log_path
        self.tls = "--tls-cert" in (extra_args or [])
        os.makedirs(data_dir, exist_ok=True)
        last_error: Optional[Exception] = None
        for _attempt in range(3):  # another process may take a free port before the server binds it
            self.grpc_port = free_port()
            self.grpc_target = "127.0.0.1:%d" % self.grpc_port
            self.plaintext_target: Optional[str] = None
            args = [binary, "--listen", "127.0.0.1:0", GRPC_FLAG, self.grpc_target, "--data-dir", data_dir,
                    "--api-key", api_key, "--shutdown-grace", "2", "--durability", "normal"]
            if plaintext_listen:
                self.plaintext_target = "127.0.0.1:%d" % free_port()
                args += ["--plaintext-listen", self.plaintext_target]
            args += list(extra_args or [])
            self._log_start = os.path.getsize(log_path) if os.path.exists(log_path) else 0
            self._log = open(log_path, "ab")
            self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._log)
            self.pid = self.process.pid
            self.stdout_lines: List[str] = []
            self._listening = threading.Event()
            self._reader = threading.Thread(target=self._read_stdout, daemon=True)
            self._reader.start()
            try:
                self._await_ready(ready_timeout)
                return
            except _PortTaken as error:
                last_error = error
                self.kill()
        raise RuntimeError("could not start the server on free ports: %s" % last_error)

    # -- start

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self.stdout_lines.append(line)
            if line.startswith("listening on "):
                self.target = line[len("listening on "):].strip()
                self.port = int(self.target.rsplit(":", 1)[1])
                self._listening.set()

    def log_text(self) -> str:
        """The server's log (its stderr) so far, from this server's start on."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(getattr(self, "_log_start", 0))
                return fh.read().decode(errors="replace")
        except OSError:
            return ""

    def wait_for_log(self, pattern: str, timeout: float = 10) -> str:
        """The first line of the log matching the regular expression ``pattern``, waiting up to
        ``timeout`` s for it; AssertionError (with the log's end) when none comes."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            for line in self.log_text().splitlines():
                if regex.search(line):
                    return line
            if time.monotonic() > deadline:
                raise AssertionError("no line of the server log matches %r within %g s; it ends:\n%s"
                                     % (pattern, timeout, "\n".join(self.log_text().splitlines()[-20:])))
            time.sleep(0.05)

    def _exited(self) -> None:
        code = self.process.wait()
        self._reader.join(2)
        self._log.close()
        log = self.log_text()
        if GRPC_FLAG in log and ("unknown option" in log or "unrecognized" in log):
            raise GrpcUnsupported("%s refused %s: %s" % (self.binary, GRPC_FLAG, log.strip().splitlines()[-1]))
        if "in use" in log.lower():
            raise _PortTaken(log.strip().splitlines()[-1])
        raise RuntimeError("the server exited (code %s) before serving; its log ends:\n%s"
                           % (code, "\n".join(log.strip().splitlines()[-20:])))

    def _await_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._listening.wait(0.1):
            if self.process.poll() is not None:
                self._exited()
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("the server printed no 'listening on' line within %g s" % timeout)
        if self.tls:
            self._await_started_line(deadline, timeout)
        else:
            self._await_serving(deadline, timeout)

    def _await_started_line(self, deadline: float, timeout: float) -> None:
        """TLS only: the "server started" log line, naming every listener, says all are bound."""
        expected = ["listen=" + self.target, "grpc_listen=" + self.grpc_target]
        if self.plaintext_target:
            expected.append("plaintext_listen=" + self.plaintext_target)
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._exited()
            for line in self.log_text().splitlines():
                if " server started " in line:
                    fields = line.split()
                    missing = [field for field in expected if field not in fields]
                    if missing or "tls=off" in fields:
                        self.kill()
                        raise RuntimeError("the server started without %s: %s"
                                           % (", ".join(missing) or "TLS", line))
                    return
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("the TLS server logged no 'server started' line within %g s" % timeout)

    def _await_serving(self, deadline: float, timeout: float) -> None:
        last: Optional[BaseException] = None
        with grpc.insecure_channel(self.target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    self._exited()
                try:
                    reply = health.Check(health_pb2.HealthCheckRequest(), timeout=1, metadata=auth(self.api_key))
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                    last = RuntimeError("health Check answered %s"
                                        % health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
                except grpc.RpcError as error:
                    last = error
                time.sleep(0.1)
        self.kill()
        raise RuntimeError("the main port %s did not answer a health Check with SERVING within %g s (last: %s)"
                           % (self.target, timeout, describe(last) if isinstance(last, grpc.RpcError) else last))

    # -- stop

    def alive(self) -> bool:
        return self.process.poll() is None

    def terminate(self, timeout: float = 15) -> Optional[int]:
        """SIGTERM (the graceful drain), then SIGKILL after ``timeout`` s; the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode

    def signal_term(self) -> None:
        """SIGTERM without waiting: the drain begins."""
        self.process.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()


class _PortTaken(Exception):
    pass


# -- TLS

class Certificates:
    """A throwaway certificate authority and its certificates, made by ``make_test_ca`` (PEM files
    in ``directory``): ``ca.pem``; ``server.pem``/``server.key`` for localhost and 127.0.0.1;
    ``client.pem``/``client.key`` issued by ca; and ``other-ca.pem`` with
    ``other-client.pem``/``other-client.key``, issued by another CA the server does not trust."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def read(self, name: str) -> bytes:
        with open(self.path(name), "rb") as fh:
            return fh.read()

    def server_args(self, client_ca: bool = False) -> List[str]:
        """The server's flags: TLS with server.pem, and with ``client_ca`` client certificates of
        ca.pem required (mutual TLS)."""
        args = ["--tls-cert", self.path("server.pem"), "--tls-key", self.path("server.key")]
        if client_ca:
            args += ["--tls-client-ca", self.path("ca.pem")]
        return args

    def credentials(self, client: Optional[str] = None) -> grpc.ChannelCredentials:
        """grpcio's TLS credentials trusting ca.pem; with ``client`` ("client" or "other-client")
        they present that certificate."""
        if client is None:
            return grpc.ssl_channel_credentials(root_certificates=self.read("ca.pem"))
        return grpc.ssl_channel_credentials(root_certificates=self.read("ca.pem"),
                                            private_key=self.read(client + ".key"),
                                            certificate_chain=self.read(client + ".pem"))


def make_test_ca(directory: str) -> Certificates:
    """Makes a throwaway CA and its certificates in ``directory`` with the openssl command line
    (P-256 keys, valid two days), the same set as tests/grpc-server.sh's make_test_ca."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("the TLS tests need the openssl command line, which is not on PATH")
    os.makedirs(directory, exist_ok=True)

    def run(*args: str) -> None:
        result = subprocess.run([openssl] + list(args), cwd=directory, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, timeout=60)
        if result.returncode != 0:
            raise RuntimeError("openssl %s failed:\n%s" % (" ".join(args), result.stdout.decode(errors="replace")))

    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for ca in ("ca", "other-ca"):
        run("req", "-x509", *key, "-days", "2", "-subj", "/CN=moderation test %s" % ca,
            "-keyout", ca + ".key", "-out", ca + ".pem")
    with open(os.path.join(directory, "server.ext"), "w") as fh:
        fh.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, ca, extra in (("server", "ca", ["-extfile", "server.ext"]), ("client", "ca", []),
                            ("other-client", "other-ca", [])):
        run("req", *key, "-subj", "/CN=%s" % ("localhost" if name == "server" else name),
            "-keyout", name + ".key", "-out", name + ".csr")
        run("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key", "-CAcreateserial",
            "-days", "2", *extra, "-out", name + ".pem")
    return Certificates(directory)


# -- metadata

def auth(api_key: str) -> List[Tuple[str, str]]:
    return [("authorization", "Bearer " + api_key)]


def call_metadata(api_key: str, on_behalf_of: Optional[str] = None, idempotency_key: Optional[str] = None,
                  request_id: Optional[str] = None, header: str = "authorization") -> List[Tuple[str, str]]:
    """The metadata of one call: the key (``authorization: Bearer APP_ID:KEY`` or
    ``x-api-key: APP_ID:KEY``) and our envelope's fields."""
    md = [("authorization", "Bearer " + api_key)] if header == "authorization" else [("x-api-key", api_key)]
    if on_behalf_of is not None:
        md.append(("x-on-behalf-of", on_behalf_of))
    if idempotency_key is not None:
        md.append(("x-idempotency-key", idempotency_key))
    if request_id is not None:
        md.append(("x-request-id", request_id))
    return md


# -- errors

def describe(error: grpc.RpcError) -> str:
    try:
        return "%s %r" % (error.code(), error.details())
    except Exception:
        return repr(error)


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo of ``error``'s ``grpc-status-details-bin``, read with grpcio-status.

    Asserts what docs/GRPC.md promises: the details are there, their google.rpc.Status agrees with
    the call's status and message (rpc_status.from_call checks that), and they hold exactly one
    detail, an ErrorInfo."""
    status = rpc_status.from_call(error)
    assert status is not None, "no grpc-status-details-bin in the trailers of %s" % describe(error)
    assert status.code == error.code().value[0]
    infos = []
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Is(info.DESCRIPTOR):
            detail.Unpack(info)
            infos.append(info)
    assert len(status.details) == 1 and len(infos) == 1, (
        "expected one google.rpc.ErrorInfo in the status details, got %s" % [d.type_url for d in status.details])
    return infos[0]


def expect_error(code: grpc.StatusCode, reason: str, call: Callable[[], object],
                 domain: str = DOMAIN) -> Tuple[grpc.RpcError, Dict[str, str]]:
    """Runs ``call``, which must fail with ``code``, and checks the rich error details: ErrorInfo
    reason ``reason`` (our ERR_… code) and ``domain``; ``details()`` (grpc-message, our message)
    must not be empty. Returns the error and ErrorInfo.metadata (our error's details)."""
    try:
        call()
    except grpc.RpcError as error:
        got = error.code()
        assert got == code, "expected %s %s, got %s" % (code, reason, describe(error))
        info = error_info(error)
        assert (info.reason, info.domain) == (reason, domain), (
            "expected ErrorInfo reason %s domain %s, got reason %r domain %r (%s)"
            % (reason, domain, info.reason, info.domain, describe(error)))
        assert error.details(), "every error carries a message (grpc-message) naming what was wrong"
        return error, dict(info.metadata)
    raise AssertionError("expected %s %s, but the call succeeded" % (code, reason))


class Moderation:
    """moderation.v1.Moderation through the generated ``ModerationStub``, with the metadata of
    each call built from keyword arguments: ``mod.KickMember(request, as_="alice")`` sends
    ``authorization: Bearer APP_ID:KEY`` and ``x-on-behalf-of: alice``; ``idempotency_key=``,
    ``request_id=`` add those; other keyword arguments (``timeout``, ``compression``,
    ``wait_for_ready``) go to grpcio. Records which methods were called (``called``)."""

    def __init__(self, stub, api_key: str, default_timeout: float = 10) -> None:
        self._stub = stub
        self._api_key = api_key
        self._timeout = default_timeout
        self.called: set = set()

    def __getattr__(self, name: str):
        method = getattr(self._stub, name)

        def call(request, as_: Optional[str] = None, idempotency_key: Optional[str] = None,
                 request_id: Optional[str] = None, **kwargs):
            self.called.add(name)
            kwargs.setdefault("timeout", self._timeout)
            metadata = call_metadata(self._api_key, on_behalf_of=as_, idempotency_key=idempotency_key,
                                     request_id=request_id)
            return method(request, metadata=metadata, **kwargs)

        return call


def next_event(stream):
    """The next message of a Subscribe stream that carries an action: the stream's first message,
    ``started`` (the subscription is live), is passed over."""
    event = next(stream)
    if event.HasField("started") and not event.HasField("action"):
        event = next(stream)
    return event


class StreamCollector:
    """Reads a Subscribe stream (a grpcio response iterator) on a thread, keeping every action;
    ``until`` says when to stop reading (the collector then cancels the call). The stream's first
    message, ``started`` (the subscription is live), is kept apart in ``started``."""

    def __init__(self, stream, until: Callable[[object], bool] = lambda action: False) -> None:
        self.stream = stream
        self.actions: List[object] = []
        self.started = None
        self.misplaced_starts = 0
        self.error: Optional[BaseException] = None
        self.done = threading.Event()
        self._until = until
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for event in self.stream:
                if event.HasField("started"):
                    with self._changed:
                        if self.started is None and not self.actions:
                            self.started = event.started
                        else:
                            self.misplaced_starts += 1
                        self._changed.notify_all()
                    continue
                with self._changed:
                    self.actions.append(event.action)
                    self._changed.notify_all()
                if self._until(event.action):
                    self.stream.cancel()  # stop here: RST_STREAM, the server ends the subscription
                    break
        except BaseException as error:  # reported by the test
            self.error = error
        finally:
            with self._changed:
                self.done.set()
                self._changed.notify_all()

    def wait_started(self, timeout: float = 15):
        """Waits for the stream's first message, which says the subscription is live; returns it."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.started is None and not self.done.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            assert self.started is not None, "no started message within %g s (stream error: %s)" % (
                timeout, self.error)
            return self.started

    def wait_for(self, count: int, timeout: float = 15) -> List[object]:
        """Waits until ``count`` actions arrived (or the stream ended); the actions so far."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.actions) < count and not self.done.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            assert len(self.actions) >= count, "got %d of %d events within %g s (stream error: %s)" % (
                len(self.actions), count, timeout, self.error)
            return list(self.actions)

    def wait_done(self, timeout: float = 15) -> None:
        assert self.done.wait(timeout), "the stream did not end within %g s" % timeout

    def cancel(self) -> None:
        self.stream.cancel()
        self._thread.join(5)


class ByteCountingProxy:
    """A TCP relay in front of a listener that counts the bytes each way: what grpcio puts
    on the wire, so a test can tell that a message really travelled compressed (grpcio does not
    show the grpc-encoding it received). ``with ByteCountingProxy(target) as proxy:`` then dial
    ``proxy.target``; ``proxy.up`` (client → server) and ``proxy.down`` are running totals."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.rsplit(":", 1)
        self._upstream = (host, int(port))
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self.target = "127.0.0.1:%d" % self._listener.getsockname()[1]
        self.up = 0
        self.down = 0
        self._lock = threading.Lock()
        self._sockets: List[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._upstream)
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, "up"), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, "down"), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, direction: str) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                with self._lock:
                    setattr(self, direction, getattr(self, direction) + len(data))
                sink.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def counts(self) -> Tuple[int, int]:
        with self._lock:
            return self.up, self.down

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                try:
                    sock.close()
                except OSError:
                    pass

    def __enter__(self) -> "ByteCountingProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class WebhookReceiver:
    """A webhook endpoint of Python's standard library in a thread of this process: verifies each
    request's Standard Webhooks signature (HMAC-SHA256 over ``id.timestamp.body`` with the
    secret's bytes) and keeps what it got; answers 204, or 401 to a request that does not verify."""

    def __init__(self, secret: str) -> None:
        import base64
        import hashlib
        import hmac
        import json
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        key = base64.b64decode(secret[len("whsec_"):])
        self.requests: List[Dict[str, object]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                msg_id = self.headers.get("webhook-id", "")
                timestamp = self.headers.get("webhook-timestamp", "")
                expected = base64.b64encode(
                    hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()).decode()
                given = [s[len("v1,"):] for s in self.headers.get("webhook-signature", "").split()]
                verified = any(hmac.compare_digest(expected, s) for s in given)
                with receiver._lock:
                    receiver.requests.append({"id": msg_id, "verified": verified, "body": json.loads(body),
                                              "content_type": self.headers.get("content-type", "")})
                self.send_response(204 if verified else 401)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/hook" % self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def actions(self) -> List[Dict[str, object]]:
        """The actions delivered so far, in order of arrival."""
        with self._lock:
            return [action for request in self.requests
                    if request["body"]["type"] == "moderation.actions"
                    for action in request["body"]["data"]["actions"]]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
