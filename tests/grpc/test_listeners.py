"""The addresses a client may dial, through stock grpcio: --grpc-listen serves the same as the main
port (--listen); with --tls-cert every listener speaks TLS only (grpc.secure_channel, ALPN h2) and
refuses a cleartext client; with --tls-client-ca it requires client certificates issued by that CA
(mutual TLS); and --plaintext-listen adds a cleartext address, which the server warns about when
client certificates are required. The certificates come from a throwaway CA
(grpc_support.make_test_ca): server.pem names localhost and 127.0.0.1.
"""

from __future__ import annotations

import socket
import time
from typing import List, Optional, Tuple

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from conftest import API_KEY
from grpc_support import Certificates, Moderation, ServerProcess, call_metadata, describe, expect_error
from moderation.v1 import moderation_pb2 as m
from moderation.v1 import moderation_pb2_grpc

S = grpc.StatusCode
Status = health_pb2.HealthCheckResponse
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
H2_SETTINGS, H2_GOAWAY, H2_PROTOCOL_ERROR = 0x4, 0x7, 0x1


def check_health(channel: grpc.Channel, timeout: float = 10) -> int:
    """A health Check without an API key (what probes send): its status."""
    return health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=timeout).status


def create_and_read_user(channel: grpc.Channel, uid: str, name: str) -> str:
    """CreateUser then GetUser through ``channel`` with the suite's key: the name read back."""
    mod = Moderation(moderation_pb2_grpc.ModerationStub(channel), API_KEY)
    assert mod.CreateUser(m.CreateUserRequest(uid=uid, name=name)).user.uid == uid
    return mod.GetUser(m.GetUserRequest(uid=uid)).user.name


def refused(channel: grpc.Channel, timeout: float = 5) -> Tuple[grpc.RpcError, float]:
    """A health Check on ``channel`` that must fail: the error and how long failing took."""
    started = time.monotonic()
    try:
        status = check_health(channel, timeout=timeout)
    except grpc.RpcError as error:
        return error, time.monotonic() - started
    raise AssertionError("the health Check was answered (%s)" % Status.ServingStatus.Name(status))


def secure(server_target: str, certificates: Certificates, client: Optional[str] = None,
           name: str = "127.0.0.1") -> grpc.Channel:
    """A TLS channel to ``server_target``'s port, dialled as ``name`` (the certificate names both
    localhost and 127.0.0.1, so grpcio verifies the host either way)."""
    port = server_target.rsplit(":", 1)[1]
    return grpc.secure_channel("%s:%s" % (name, port), certificates.credentials(client))


# -- --grpc-listen

def test_the_grpc_listen_address_serves_the_same_as_the_main_port(server, channel, run_id) -> None:
    assert server.grpc_target != server.target
    with grpc.insecure_channel(server.grpc_target) as second:
        assert check_health(second) == Status.SERVING
        uid = "second-%s" % run_id
        assert create_and_read_user(second, uid, "Second") == "Second"
    # The same service and store: the main port reads the user made through the other address.
    mod = Moderation(moderation_pb2_grpc.ModerationStub(channel), API_KEY)
    assert mod.GetUser(m.GetUserRequest(uid=uid)).user.name == "Second"


# -- TLS

@pytest.fixture(scope="module")
def tls_server(start_server, certificates) -> ServerProcess:
    return start_server(certificates.server_args())


@pytest.mark.parametrize("port, name", [("main", "127.0.0.1"), ("grpc-listen", "localhost")])
def test_tls_serves_health_without_a_key_and_calls_with_one(tls_server, certificates, run_id, port, name) -> None:
    target = tls_server.target if port == "main" else tls_server.grpc_target
    with secure(target, certificates, name=name) as channel:
        assert check_health(channel) == Status.SERVING
        assert create_and_read_user(channel, "tls-%s-%s" % (port, run_id), "Over TLS") == "Over TLS"
        # The key is still required.
        expect_error(S.UNAUTHENTICATED, "ERR_UNAUTHENTICATED", lambda: moderation_pb2_grpc.ModerationStub(
            channel).GetUser(m.GetUserRequest(uid="tls-%s-%s" % (port, run_id)), timeout=10))


def read_h2_frames(sock: socket.socket) -> Tuple[List[Tuple[int, int, bytes]], bool]:
    """Every HTTP/2 frame the peer sends until it closes the connection: (type, stream, payload)
    each, and whether the connection really ended (rather than the read timing out)."""
    data = b""
    closed = False
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            closed = True
            break
        except socket.timeout:
            break
        if not chunk:
            closed = True
            break
        data += chunk
    frames = []
    while len(data) >= 9:
        length = int.from_bytes(data[:3], "big")
        kind, stream = data[3], int.from_bytes(data[5:9], "big") & 0x7FFFFFFF
        frames.append((kind, stream, data[9:9 + length]))
        data = data[9 + length:]
    assert not data, "a truncated frame: %r" % data
    return frames, closed


def test_a_cleartext_http2_client_on_a_tls_port_gets_a_goaway_saying_why(tls_server, certificates) -> None:
    """What a cleartext HTTP/2 client reads from a TLS-only port: a GOAWAY (PROTOCOL_ERROR, no
    stream processed) whose debug data says why, and no SETTINGS before it, so that no client
    takes the connection for made; then the connection ends. The server serves TLS clients on."""
    for target in (tls_server.target, tls_server.grpc_target):
        host, port = target.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(H2_PREFACE + bytes([0, 0, 0, H2_SETTINGS, 0, 0, 0, 0, 0]))
            frames, closed = read_h2_frames(sock)
        assert closed, "the server kept the cleartext connection open"
        assert [kind for kind, _, _ in frames] == [H2_GOAWAY], frames
        goaway = frames[0][2]
        last_stream, code = int.from_bytes(goaway[:4], "big"), int.from_bytes(goaway[4:8], "big")
        assert (last_stream, code) == (0, H2_PROTOCOL_ERROR), frames
        assert b"TLS only" in goaway[8:], goaway
    tls_server.wait_for_log("closing connection: a plaintext client on a TLS port")
    with secure(tls_server.target, certificates) as channel:
        assert check_health(channel) == Status.SERVING
    assert tls_server.alive()


def test_a_cleartext_grpc_channel_to_a_tls_port_fails_unavailable(tls_server) -> None:
    """grpcio's cleartext channel to the TLS port fails at once (UNAVAILABLE) rather than taking
    the connection for made and retrying the call on new ones until its deadline."""
    with grpc.insecure_channel(tls_server.target) as channel:
        error, took = refused(channel, timeout=1.5)
    assert error.code() == S.UNAVAILABLE, "a cleartext channel to the TLS port: %s after %.1f s" % (
        describe(error), took)


# -- mutual TLS

@pytest.fixture(scope="module")
def mtls_server(start_server, certificates) -> ServerProcess:
    return start_server(certificates.server_args(client_ca=True))


def test_mtls_serves_a_client_with_a_certificate_of_the_ca(mtls_server, certificates, run_id) -> None:
    for port, target in (("main", mtls_server.target), ("grpc-listen", mtls_server.grpc_target)):
        with secure(target, certificates, client="client") as channel:
            assert check_health(channel) == Status.SERVING
            assert create_and_read_user(channel, "mtls-%s-%s" % (port, run_id), "Mutual") == "Mutual"


@pytest.mark.parametrize("client", [pytest.param(None, id="no certificate"),
                                    pytest.param("other-client", id="another CA's certificate")])
def test_mtls_refuses_a_client_without_a_certificate_of_the_ca(mtls_server, certificates, client) -> None:
    for target in (mtls_server.target, mtls_server.grpc_target):
        with secure(target, certificates, client=client) as channel:
            error, took = refused(channel)
        assert error.code() == S.UNAVAILABLE, describe(error)
    # The server serves on.
    with secure(mtls_server.target, certificates, client="client") as channel:
        assert check_health(channel) == Status.SERVING
    assert mtls_server.alive()


# -- --plaintext-listen

def test_plaintext_listen_with_client_certificates_required_warns_and_serves_cleartext(
        start_server, certificates, run_id) -> None:
    server = start_server(certificates.server_args(client_ca=True), plaintext_listen=True)
    warning = server.wait_for_log(r"WARNING --plaintext-listen %s serves without TLS" % server.plaintext_target)
    assert "--tls-client-ca" in warning and "API key" in warning, warning

    with grpc.insecure_channel(server.plaintext_target) as channel:
        assert check_health(channel) == Status.SERVING
        assert create_and_read_user(channel, "plain-%s" % run_id, "Plain") == "Plain"
        expect_error(S.UNAUTHENTICATED, "ERR_UNAUTHENTICATED", lambda: moderation_pb2_grpc.ModerationStub(
            channel).GetUser(m.GetUserRequest(uid="plain-%s" % run_id), metadata=call_metadata(
                "grpc-tests:not-the-key"), timeout=10))
    # TLS clients of the plaintext address are refused; the main port still wants a certificate.
    with secure(server.plaintext_target, certificates, client="client") as channel:
        assert refused(channel)[0].code() == S.UNAVAILABLE
    with secure(server.target, certificates) as channel:
        assert refused(channel)[0].code() == S.UNAVAILABLE
    with secure(server.target, certificates, client="client") as channel:
        assert check_health(channel) == Status.SERVING
