"""Fixtures shared by the client tests.

Tests that need the real server read its address and API key from the environment that
``clients/python/run-tests`` sets after starting ``moderation-server`` on an ephemeral port:
MRPC_TEST_ADDRESS, MRPC_TEST_API_KEY, MRPC_TEST_APP_ID, and MODERATION_SERVER (the binary, for
tests that start a server of their own).
"""

from __future__ import annotations

import os
import sys
from typing import Iterator

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

import mrpc_client  # noqa: E402


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail("%s is not set: run these tests with clients/python/run-tests, which starts the server" % name)
    return value


@pytest.fixture(scope="session")
def server_address() -> str:
    return _env("MRPC_TEST_ADDRESS")


@pytest.fixture(scope="session")
def api_key() -> str:
    return _env("MRPC_TEST_API_KEY")


@pytest.fixture(scope="session")
def app_id() -> str:
    return _env("MRPC_TEST_APP_ID")


@pytest.fixture(scope="session")
def server_binary() -> str:
    return _env("MODERATION_SERVER")


@pytest.fixture
def channel(server_address: str, api_key: str) -> Iterator[mrpc_client.Channel]:
    with mrpc_client.insecure_channel(server_address, api_key=api_key, client_name="mrpc-client-python tests") as c:
        yield c
