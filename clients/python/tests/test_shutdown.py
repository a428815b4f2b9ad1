"""A real server that shuts down (SIGTERM) and comes back: GOAWAY, refused calls, reconnection."""

from __future__ import annotations

import pytest

from mrpc_client import Client, RpcError, StatusCode
from mrpc_client.gen.mrpc.diagnostics.v1.diagnostics_pb2 import EchoRequest
from mrpc_client.testing import ServerProcess

KEY = "shutdown-app:shutdown-key-123456"


def test_sigterm_sends_goaway_and_the_client_reconnects_to_the_restarted_server(server_binary: str, tmp_path) -> None:
    data = str(tmp_path / "data")
    first = ServerProcess(server_binary, data, KEY, str(tmp_path / "first.log"))
    try:
        client = Client(first.address, KEY)
        assert client.diagnostics.echo(EchoRequest(payload=b"before")).payload == b"before"
        conn = client.connection()
        assert first.terminate() == 0
        assert conn.wait_closed(5)
        assert conn.goaway is not None, "a draining server says GOAWAY before closing"
        assert (conn.goaway.status.code, conn.goaway.status.error_code) == (StatusCode.UNAVAILABLE, "ERR_UNAVAILABLE")
        assert conn.goaway.last_stream_id == 1
        assert not conn.accepting_calls

        with pytest.raises(RpcError) as caught:  # nobody listens: a new connection cannot be opened
            client.diagnostics.echo(EchoRequest())
        assert caught.value.status_code == StatusCode.UNAVAILABLE and caught.value.not_run

        second = ServerProcess(server_binary, data, KEY, str(tmp_path / "second.log"), port=first.port)
        try:
            assert client.diagnostics.echo(EchoRequest(payload=b"after"), timeout=5).payload == b"after"
            assert client.connection() is not conn
        finally:
            client.close()
            assert second.terminate() == 0
    finally:
        first.kill()
