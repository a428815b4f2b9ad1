"""A real server that shuts down (SIGTERM) and comes back: GOAWAY, refused calls, reconnection."""

from __future__ import annotations

import pytest

import mrpc_client
from mrpc_client import RpcError, StatusCode
from mrpc_client.mrpc_diagnostics_v1 import DiagnosticsStub, EchoRequest
from mrpc_client.testing import ServerProcess

KEY = "shutdown-app:shutdown-key-123456"


def test_sigterm_sends_goaway_and_the_client_reconnects_to_the_restarted_server(server_binary: str, tmp_path) -> None:
    data = str(tmp_path / "data")
    first = ServerProcess(server_binary, data, KEY, str(tmp_path / "first.log"))
    try:
        channel = mrpc_client.insecure_channel(first.address, api_key=KEY)
        echo = DiagnosticsStub(channel).Echo
        assert echo(EchoRequest(payload=b"before")).payload == b"before"
        conn = channel.connection()
        assert first.terminate() == 0
        assert conn.wait_closed(5)
        assert conn.goaway is not None, "a draining server says GOAWAY before closing"
        assert (conn.goaway.status.code, conn.goaway.status.error_code) == (StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE")
        assert conn.goaway.last_stream_id == 1
        assert not conn.accepting_calls

        with pytest.raises(RpcError) as caught:  # nobody listens: a new connection cannot be opened
            echo(EchoRequest())
        assert caught.value.code() == StatusCode.UNAVAILABLE and caught.value.not_run

        second = ServerProcess(server_binary, data, KEY, str(tmp_path / "second.log"), port=first.port)
        try:
            assert echo(EchoRequest(payload=b"after"), timeout=5).payload == b"after"
            assert channel.connection() is not conn
        finally:
            channel.close()
            assert second.terminate() == 0
    finally:
        first.kill()
