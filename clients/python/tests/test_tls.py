"""The client over TLS against a real server started with --tls-cert (and --tls-client-ca): calls,
a stream, and every refusal with its reason. The certificates are made here with the openssl
command line, for this run only (no private key is committed)."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict, Iterator

import pytest

from mrpc_client import Client, RpcError
from mrpc_client.gen.moderation.v1 import actions_pb2 as a
from mrpc_client.gen.moderation.v1 import groups_pb2 as g
from mrpc_client.gen.moderation.v1 import moderation_pb2 as m
from mrpc_client.gen.mrpc.diagnostics.v1.diagnostics_pb2 import EchoRequest
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


def refused(make: "object", code_name: str) -> RpcError:
    with pytest.raises(RpcError) as caught:
        make()  # type: ignore[operator]
    assert caught.value.code_name == code_name, str(caught.value)
    return caught.value


def test_calls_and_a_stream_over_tls(tls_server: ServerProcess, pki: Dict[str, Dict[str, str]]) -> None:
    with Client(tls_server.address, KEY, cafile=pki["main"]["ca"]) as client:
        conn = client.connection()
        assert conn.tls is not None and conn.tls.startswith("TLSv1.3") and conn.tls.endswith("mrpc/1"), conn.tls
        large = os.urandom(1 << 20)  # many TLS records each way
        assert client.diagnostics.echo(EchoRequest(payload=large), timeout=20).payload == large
        futures = [client.diagnostics.echo_async(EchoRequest(payload=b"%d" % i)) for i in range(200)]
        for i, future in enumerate(futures):
            assert future.result(10).payload == b"%d" % i

        client.moderation.create_user(m.CreateUserRequest(uid="owner", name="Owner"), timeout=10)
        client.moderation.create_group(m.CreateGroupRequest(guid="tls-g", name="G", type=g.GROUP_TYPE_PUBLIC),
                                       on_behalf_of="owner", timeout=10)
        client.moderation.delete_group(m.DeleteGroupRequest(guid="tls-g"), on_behalf_of="owner", timeout=10)
        stream = client.moderation.subscribe(m.SubscribeRequest(whole_app=True, after_seq=0), compress=True)
        try:
            kinds = [next(stream).action.action for _ in range(2)]
        finally:
            stream.close()
        assert kinds == [a.ACTION_TYPE_CREATED, a.ACTION_TYPE_DELETED]


def test_plaintext_client_against_the_tls_server_is_told_to_use_tls(tls_server: ServerProcess) -> None:
    error = refused(lambda: Client(tls_server.address, KEY), "INVALID_ARGUMENT")
    assert error.error_code == "ERR_PROTOCOL" and "speaks TLS only" in error.message, str(error)
    assert tls_server.alive()


def test_an_untrusted_ca_or_another_name_is_refused_with_the_reason(tls_server: ServerProcess,
                                                                    pki: Dict[str, Dict[str, str]]) -> None:
    untrusted = refused(lambda: Client(tls_server.address, KEY, cafile=pki["other"]["ca"]), "UNAVAILABLE")
    assert "certificate is refused" in untrusted.message and "local issuer" in untrusted.message, str(untrusted)
    other_name = refused(lambda: Client(tls_server.address, KEY, cafile=pki["main"]["ca"],
                                        server_hostname="elsewhere.example"), "UNAVAILABLE")
    assert "elsewhere.example" in other_name.message or "mismatch" in other_name.message, str(other_name)
    with Client(tls_server.address, KEY, cafile=pki["main"]["ca"], server_hostname="localhost") as client:
        assert client.diagnostics.echo(EchoRequest(payload=b"ok")).payload == b"ok"


def test_mutual_tls_needs_a_client_certificate(mtls_server: ServerProcess, pki: Dict[str, Dict[str, str]]) -> None:
    main = pki["main"]
    with Client(mtls_server.address, KEY, cafile=main["ca"], certfile=main["client_cert"],
                keyfile=main["client_key"]) as client:
        assert client.diagnostics.echo(EchoRequest(payload=b"mtls")).payload == b"mtls"
    missing = refused(lambda: Client(mtls_server.address, KEY, cafile=main["ca"]), "UNAVAILABLE")
    assert "CERTIFICATE_REQUIRED" in missing.message and "certfile" in missing.message, str(missing)
    other = pki["other"]
    refused(lambda: Client(mtls_server.address, KEY, cafile=main["ca"], certfile=other["client_cert"],
                           keyfile=other["client_key"]), "UNAVAILABLE")


def test_tls_against_a_plaintext_server_hints_at_the_port(server_address: str, api_key: str,
                                                          pki: Dict[str, Dict[str, str]]) -> None:
    error = refused(lambda: Client(server_address, api_key, cafile=pki["main"]["ca"]), "UNAVAILABLE")
    assert "does the server speak TLS on this port?" in error.message, str(error)
