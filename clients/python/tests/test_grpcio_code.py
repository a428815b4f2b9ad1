"""What docs/CLIENTS.md promises of code written for grpcio against this server: it moves over to
``mrpc_client`` by changing its imports and its channel. Against the real server: the key from
the environment, a call's own key in ``authorization`` metadata, ``with_call``, and the rich
error of ``rpc_status.from_call``. Where grpcio and grpcio-status are installed (the current venv
of run-tests), the same code also runs on grpcio over the server's gRPC wire, and both must see
the same."""

from __future__ import annotations

import importlib
import uuid
from typing import Any, List, Optional, Tuple

import pytest

import mrpc_client
from mrpc_client import RpcError, StatusCode
from mrpc_client import moderation_v1 as m
from mrpc_client.mrpc_diagnostics_v1 import DiagnosticsStub, EchoRequest
from mrpc_client.testing import ServerProcess

KEY_VARIABLES = ("MODERATION_CLIENT_API_KEY", "MODERATION_CLIENT_API_KEY_FILE", "MRPC_API_KEY", "MRPC_API_KEY_FILE")


@pytest.fixture
def no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def echo_as(server_address: str) -> Tuple[str, bytes]:
    """The app of a channel made without a key, and an Echo through it."""
    with mrpc_client.insecure_channel(server_address) as channel:
        return channel.hello_ack.app_id, DiagnosticsStub(channel).Echo(EchoRequest(payload=b"env"), timeout=5).payload


def test_insecure_channel_without_a_key_reads_it_from_the_environment(
        server_address: str, api_key: str, app_id: str, no_key_in_the_environment: pytest.MonkeyPatch,
        tmp_path: Any) -> None:
    env = no_key_in_the_environment
    wrong = app_id + ":not-the-key-0000000"
    env.setenv("MODERATION_CLIENT_API_KEY", api_key)
    assert echo_as(server_address) == (app_id, b"env")
    # The older name alone still works; with both set, the new name wins.
    env.delenv("MODERATION_CLIENT_API_KEY")
    env.setenv("MRPC_API_KEY", api_key)
    assert echo_as(server_address) == (app_id, b"env")
    env.setenv("MODERATION_CLIENT_API_KEY", wrong)
    with pytest.raises(RpcError) as caught:
        echo_as(server_address)
    assert caught.value.error_code == "ERR_UNAUTHENTICATED"
    # A keys file named by MODERATION_CLIENT_API_KEY_FILE wins over the older variable too.
    env.delenv("MODERATION_CLIENT_API_KEY")
    env.setenv("MRPC_API_KEY", wrong)
    keys = tmp_path / "api-keys"
    keys.write_text("# the test server's key\n%s\n" % api_key)
    env.setenv("MODERATION_CLIENT_API_KEY_FILE", str(keys))
    assert echo_as(server_address) == (app_id, b"env")


def grpcio_imports(server_address: str) -> Optional[Tuple[Any, type, Any, type]]:
    """grpcio's channel, RpcError, rpc_status and ErrorInfo, or None where grpcio is not installed."""
    try:
        grpc = importlib.import_module("grpc")
        grpc_rpc_status = importlib.import_module("grpc_status.rpc_status")
        error_details_pb2 = importlib.import_module("google.rpc.error_details_pb2")
    except ImportError:
        return None
    return (grpc.insecure_channel(server_address), grpc.RpcError, grpc_rpc_status, error_details_pb2.ErrorInfo)


def code_written_for_grpcio(channel: Any, rpc_error: type, rpc_status: Any, error_info: type, key: str) -> List[Any]:
    """Calls as a grpcio user writes them (the key in every call's metadata, ``with_call``,
    ``rpc_status.from_call`` and its ErrorInfo); what each returned."""
    stub = m.ModerationStub(channel)
    auth = [("authorization", "Bearer " + key)]
    seen: List[Any] = []
    response, call = stub.CreateUser.with_call(m.CreateUserRequest(uid="grpcio-" + uuid.uuid4().hex[:8], name="Ada"),
                                               timeout=5, metadata=auth)
    seen.append((response.user.name, call.code().name, call.details(), tuple(call.initial_metadata()),
                 tuple(call.trailing_metadata())))
    for metadata in (auth, [("authorization", "Bearer " + key.split(":")[0] + ":not-the-key-00000")], []):
        try:
            stub.GetUser(m.GetUserRequest(uid="nobody"), timeout=5, metadata=metadata)
        except rpc_error as error:
            status = rpc_status.from_call(error)
            info = error_info()
            assert len(status.details) == 1 and status.details[0].Unpack(info)
            seen.append((error.code().name, error.details(), status.code, status.message, info.reason,
                         info.domain, dict(info.metadata)))
        else:
            seen.append("no error")
    return seen


def test_code_written_for_grpcio_runs_after_changing_its_imports_and_its_channel(
        server_address: str, api_key: str, no_key_in_the_environment: pytest.MonkeyPatch) -> None:
    # No key for the channel: every call brings its own, as with grpcio.
    with mrpc_client.insecure_channel(server_address) as channel:
        ours = code_written_for_grpcio(channel, RpcError, mrpc_client.rpc_status, mrpc_client.rpc_status.ErrorInfo,
                                       api_key)
    no_key = "/moderation.v1.Moderation/GetUser needs an API key, and the call carries none"
    assert ours[0] == ("Ada", "OK", "", (), ())
    assert ours[1] == ("NOT_FOUND", "user nobody not found", 5, "user nobody not found", "ERR_UID_NOT_FOUND",
                       "moderation.v1", {})
    assert ours[2] == ("UNAUTHENTICATED", "the API key is not valid", 16, "the API key is not valid",
                       "ERR_UNAUTHENTICATED", "moderation.v1", {})
    assert ours[3][0] == "UNAUTHENTICATED" and ours[3][1].startswith(no_key) and ours[3][4:6] == (
        "ERR_UNAUTHENTICATED", "moderation.v1")
    grpcio = grpcio_imports(server_address)
    if grpcio is None:
        return  # the oldest venv: no grpcio beside the client
    channel, grpc_error, grpc_rpc_status, error_info = grpcio
    with channel:
        theirs = code_written_for_grpcio(channel, grpc_error, grpc_rpc_status, error_info, api_key)
    assert ours == theirs
    # The googleapis-common-protos classes, when installed, are the ones rpc_status returns.
    assert mrpc_client.rpc_status.ErrorInfo is error_info


def test_a_calls_own_key_decides_its_app(server_binary: str, tmp_path: Any) -> None:
    alpha, beta = "alpha:alpha-key-0123456789", "beta:beta-key-0123456789"
    keys = tmp_path / "api-keys"
    keys.write_text("%s\n%s\n" % (alpha, beta))
    server = ServerProcess(server_binary, str(tmp_path / "data"), alpha, str(tmp_path / "server.log"),
                           extra_args=["--api-keys-file", str(keys)])
    try:
        with mrpc_client.insecure_channel(server.address, api_key=alpha) as channel:
            stub = m.ModerationStub(channel)
            as_beta = [("authorization", "Bearer " + beta)]
            response, call = stub.CreateUser.with_call(m.CreateUserRequest(uid="u1", name="beta's"), timeout=5,
                                                       metadata=as_beta)
            assert response.user.name == "beta's" and call.code() == StatusCode.OK
            # The user is beta's: alpha (the channel's key) does not see it; beta, and alpha's
            # key given per call, are what they say.
            with pytest.raises(RpcError) as caught:
                stub.GetUser(m.GetUserRequest(uid="u1"), timeout=5)
            assert caught.value.error_code == "ERR_UID_NOT_FOUND"
            assert stub.GetUser(m.GetUserRequest(uid="u1"), timeout=5, metadata=as_beta).user.name == "beta's"
            with pytest.raises(RpcError):
                stub.GetUser(m.GetUserRequest(uid="u1"), timeout=5, metadata={"x-api-key": alpha})
            assert channel.hello_ack.app_id == "alpha"
            assert channel.connection(api_key=beta).hello_ack.app_id == "beta"
    finally:
        server.terminate()
