"""The client over TLS against a real server started with --tls-cert (and --tls-client-ca): calls,
a stream, and every refusal with its reason. The certificates are made here with the openssl
command line, for this run only (no private key is committed)."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
from typing import Dict, Iterator, Optional

import pytest

import mrpc_client
from mrpc_client import Channel, Compression, RpcError
from mrpc_client import moderation_v1 as m
from mrpc_client.mrpc_diagnostics_v1 import DiagnosticsStub, EchoRequest
from mrpc_client.testing import ServerProcess

KEY = "tls-app:tls-test-key-0123456789"

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command line is not installed")


def _openssl(directory: str, *arguments: str) -> None:
    subprocess.run(["openssl", *arguments], cwd=directory, check=True, capture_output=True)


def _authority(directory: str, name: str) -> Dict[str, str]:
    """A CA, a server certificate for localhost / 127.0.0.1 and a client certificate, EC P-256."""
    with open(os.path.join(directory, name + "-ca.cnf"), "w") as config:
        config.write("[req]\ndistinguished_name = dn\nx509_extensions = ca\nprompt = no\n[dn]\nCN = %s CA\n"
                     "[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n" % name)
    _openssl(directory, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
             "-config", name + "-ca.cnf", "-keyout", name + "-ca.key", "-out", name + "-ca.pem")
    for serial, (leaf, common_name, extensions) in enumerate([
            ("server", "localhost", "subjectAltName = DNS:localhost, IP:127.0.0.1\nextendedKeyUsage = serverAuth"),
            ("client", "client-" + name, "extendedKeyUsage = clientAuth")], start=1):
        stem = "%s-%s" % (name, leaf)
        with open(os.path.join(directory, stem + ".cnf"), "w") as config:
            config.write("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = %s\n" % common_name)
        with open(os.path.join(directory, stem + ".ext"), "w") as ext:
            ext.write("basicConstraints = CA:FALSE\n%s\n" % extensions)
        _openssl(directory, "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-config", stem + ".cnf", "-keyout", stem + ".key", "-out", stem + ".csr")
        _openssl(directory, "x509", "-req", "-in", stem + ".csr", "-CA", name + "-ca.pem", "-CAkey", name + "-ca.key",
                 "-set_serial", str(serial), "-days", "2", "-extfile", stem + ".ext", "-out", stem + ".pem")
    path = lambda file: os.path.join(directory, file)  # noqa: E731
    return {"ca": path(name + "-ca.pem"), "cert": path(name + "-server.pem"), "key": path(name + "-server.key"),
            "client_cert": path(name + "-client.pem"), "client_key": path(name + "-client.key")}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Dict[str, str]]:
    directory = str(tmp_path_factory.mktemp("pki"))
    return {"main": _authority(directory, "main"), "other": _authority(directory, "other")}


@pytest.fixture(scope="module")
def tls_server(server_binary: str, pki: Dict[str, Dict[str, str]],
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("tls-server")
    server = ServerProcess(server_binary, str(work / "data"), KEY, str(work / "server.log"),
                           extra_args=["--tls-cert", pki["main"]["cert"], "--tls-key", pki["main"]["key"]])
    yield server
    server.terminate()


@pytest.fixture(scope="module")
def mtls_server(server_binary: str, pki: Dict[str, Dict[str, str]],
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("mtls-server")
    server = ServerProcess(server_binary, str(work / "data"), KEY, str(work / "server.log"),
                           extra_args=["--tls-cert", pki["main"]["cert"], "--tls-key", pki["main"]["key"],
                                       "--tls-client-ca", pki["main"]["ca"]])
    yield server
    server.terminate()


def pem(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def credentials(authority: Dict[str, str], client: Optional[Dict[str, str]] = None) -> mrpc_client.ChannelCredentials:
    """grpcio's way: PEM bytes of the CA, and of a client certificate and its key for mutual TLS."""
    if client is None:
        return mrpc_client.ssl_channel_credentials(root_certificates=pem(authority["ca"]))
    return mrpc_client.ssl_channel_credentials(root_certificates=pem(authority["ca"]),
                                               private_key=pem(client["client_key"]),
                                               certificate_chain=pem(client["client_cert"]))


def refused(channel: Channel, code_name: str) -> RpcError:
    """The error the channel's first call meets (the handshake's)."""
    with channel, pytest.raises(RpcError) as caught:
        DiagnosticsStub(channel).Echo(EchoRequest(), timeout=10)
    assert caught.value.code().name == code_name, str(caught.value)
    return caught.value


def test_calls_and_a_stream_over_tls(tls_server: ServerProcess, pki: Dict[str, Dict[str, str]]) -> None:
    with mrpc_client.secure_channel(tls_server.address, credentials(pki["main"]), api_key=KEY) as channel:
        echo = DiagnosticsStub(channel).Echo
        stub = m.ModerationStub(channel)
        large = os.urandom(1 << 20)  # many TLS records each way
        assert echo(EchoRequest(payload=large), timeout=20).payload == large
        conn = channel.connection()
        assert conn.tls is not None and conn.tls.startswith("TLSv1.3") and conn.tls.endswith("mrpc/1"), conn.tls
        futures = [echo.future(EchoRequest(payload=b"%d" % i)) for i in range(200)]
        for i, future in enumerate(futures):
            assert future.result(10).payload == b"%d" % i

        stub.CreateUser(m.CreateUserRequest(uid="owner", name="Owner"), timeout=10)
        stub.CreateGroup(m.CreateGroupRequest(guid="tls-g", name="G", type=m.GROUP_TYPE_PUBLIC), timeout=10,
                         metadata=[("x-on-behalf-of", "owner")])
        stub.DeleteGroup(m.DeleteGroupRequest(guid="tls-g"), timeout=10, metadata=[("x-on-behalf-of", "owner")])
        with stub.Subscribe(m.SubscribeRequest(whole_app=True, after_seq=0), compression=Compression.Deflate) as stream:
            kinds = [next(stream).action.action for _ in range(2)]
        assert kinds == [m.ACTION_TYPE_CREATED, m.ACTION_TYPE_DELETED]


def test_plaintext_client_against_the_tls_server_is_told_to_use_tls(tls_server: ServerProcess) -> None:
    error = refused(mrpc_client.insecure_channel(tls_server.address, api_key=KEY), "INVALID_ARGUMENT")
    assert error.error_code == "ERR_PROTOCOL" and "speaks TLS only" in error.details(), str(error)
    assert tls_server.alive()


def test_an_untrusted_ca_or_another_name_is_refused_with_the_reason(tls_server: ServerProcess,
                                                                    pki: Dict[str, Dict[str, str]]) -> None:
    untrusted = refused(mrpc_client.secure_channel(tls_server.address, credentials(pki["other"]), api_key=KEY),
                        "UNAVAILABLE")
    assert "certificate is refused" in untrusted.details() and "local issuer" in untrusted.details(), str(untrusted)
    other_name = refused(mrpc_client.secure_channel(tls_server.address, credentials(pki["main"]), api_key=KEY,
                                                    server_hostname="elsewhere.example"), "UNAVAILABLE")
    assert "elsewhere.example" in other_name.details() or "mismatch" in other_name.details(), str(other_name)
    with mrpc_client.secure_channel(tls_server.address, credentials(pki["main"]), api_key=KEY,
                                    server_hostname="localhost") as channel:
        assert DiagnosticsStub(channel).Echo(EchoRequest(payload=b"ok")).payload == b"ok"


def test_mutual_tls_needs_a_client_certificate(mtls_server: ServerProcess, pki: Dict[str, Dict[str, str]]) -> None:
    main = pki["main"]
    with mrpc_client.secure_channel(mtls_server.address, credentials(main, main), api_key=KEY) as channel:
        assert DiagnosticsStub(channel).Echo(EchoRequest(payload=b"mtls")).payload == b"mtls"
    missing = refused(mrpc_client.secure_channel(mtls_server.address, credentials(main), api_key=KEY), "UNAVAILABLE")
    assert "CERTIFICATE_REQUIRED" in missing.details() and "certificate_chain" in missing.details(), str(missing)
    refused(mrpc_client.secure_channel(mtls_server.address, credentials(main, pki["other"]), api_key=KEY),
            "UNAVAILABLE")


def test_a_context_of_your_own(tls_server: ServerProcess, pki: Dict[str, Dict[str, str]]) -> None:
    context = ssl.create_default_context(cafile=pki["main"]["ca"])
    own = mrpc_client.ChannelCredentials(context)
    with mrpc_client.secure_channel(tls_server.address, own, api_key=KEY) as channel:
        assert DiagnosticsStub(channel).Echo(EchoRequest(payload=b"own")).payload == b"own"


def test_tls_against_a_plaintext_server_hints_at_the_port(server_address: str, api_key: str,
                                                          pki: Dict[str, Dict[str, str]]) -> None:
    error = refused(mrpc_client.secure_channel(server_address, credentials(pki["main"]), api_key=api_key),
                    "UNAVAILABLE")
    assert "does the server speak TLS on this port?" in error.details(), str(error)
