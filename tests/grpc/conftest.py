"""Fixtures of the standard-gRPC tests: stubs generated from proto/, a real moderation-server and
a channel to its main port, a throwaway certificate authority for TLS, and metadata.

Environment (tests/grpc/run-tests sets the first two):

- MODERATION_SERVER: the server binary (default .build/debug/moderation-server);
- MODERATION_GRPC_STUBS: a directory holding the stubs gen_stubs.py generated; when unset they
  are generated here, into a temporary directory;
- MODERATION_GRPC_ALLOW_SKIP=1: a binary without --grpc-listen skips the suite *and passes*.
  Without it the skip is reported and the run fails (see pytest_sessionfinish), so that CI cannot
  go green on a server that has no gRPC listener.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from typing import Callable, Iterator, List, Optional

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import gen_stubs  # noqa: E402

_stubs_dir = os.environ.get("MODERATION_GRPC_STUBS")
_own_stubs: Optional[str] = None
if not _stubs_dir:
    _own_stubs = _stubs_dir = tempfile.mkdtemp(prefix="moderation-grpc-stubs-")
    gen_stubs.generate(_stubs_dir)
gen_stubs.check_imports(_stubs_dir)

import grpc  # noqa: E402

import grpc_support  # noqa: E402
from grpc_support import Certificates, GrpcUnsupported, ServerProcess  # noqa: E402
from moderation.v1 import moderation_pb2 as m  # noqa: E402
from moderation.v1 import moderation_pb2_grpc  # noqa: E402

APP_ID = "grpc-tests"
API_KEY = APP_ID + ":grpc-test-key-0123456789abcdef"

# Why the suite was skipped because the binary has no gRPC listener (None: it was not).
_unsupported: List[str] = []


def server_binary_path() -> str:
    path = os.environ.get("MODERATION_SERVER") or ".build/debug/moderation-server"
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


@pytest.fixture(scope="session")
def server_binary() -> str:
    path = server_binary_path()
    if not os.access(path, os.X_OK):
        pytest.fail("no server binary at %s: build it with `swift build --product moderation-server` "
                    "or set MODERATION_SERVER" % path)
    try:
        grpc_support.check_supports_grpc(path)
    except GrpcUnsupported as error:
        _unsupported.append(str(error))
        pytest.skip(str(error))
    return path


@pytest.fixture(scope="session")
def start_server(server_binary: str, tmp_path_factory) -> Iterator[Callable[..., ServerProcess]]:
    """Starts a server of a test's own (``start_server(extra_args=[...])``; ``plaintext_listen=True``
    adds a --plaintext-listen address) with its own data directory and the suite's API key; every
    one is stopped at the end of the session (SIGTERM, then SIGKILL), if the test did not stop it
    itself."""
    started: List[ServerProcess] = []

    def start(extra_args: Optional[List[str]] = None, api_key: str = API_KEY,
              plaintext_listen: bool = False) -> ServerProcess:
        base = tmp_path_factory.mktemp("server")
        try:
            server = ServerProcess(server_binary, str(base / "data"), api_key, str(base / "server.log"),
                                   extra_args=extra_args, plaintext_listen=plaintext_listen)
        except GrpcUnsupported as error:
            _unsupported.append(str(error))
            pytest.skip(str(error))
        started.append(server)
        return server

    yield start
    for server in started:
        server.terminate()


@pytest.fixture(scope="session")
def server(start_server) -> ServerProcess:
    """The suite's shared server: the main port (--listen) ephemeral, --grpc-listen on a free port;
    webhooks may use this machine's addresses (the scenario's receiver is one)."""
    return start_server(extra_args=["--webhook-allow-private"])


@pytest.fixture(scope="session")
def channel(server: ServerProcess) -> Iterator[grpc.Channel]:
    """A cleartext channel to the shared server's main port, the address a user is told about."""
    with grpc.insecure_channel(server.target) as ch:
        yield ch


@pytest.fixture(scope="session")
def certificates(tmp_path_factory) -> Certificates:
    """A throwaway CA with server and client certificates (grpc_support.make_test_ca), made once
    per session in a temporary directory."""
    return grpc_support.make_test_ca(str(tmp_path_factory.mktemp("certificates")))


@pytest.fixture(scope="session")
def stub(channel: grpc.Channel) -> moderation_pb2_grpc.ModerationStub:
    return moderation_pb2_grpc.ModerationStub(channel)


@pytest.fixture
def md() -> Callable[..., list]:
    """``md(on_behalf_of=..., idempotency_key=..., request_id=...)``: the metadata of a call
    with the suite's API key."""
    def build(on_behalf_of: Optional[str] = None, **kwargs) -> list:
        return grpc_support.call_metadata(API_KEY, on_behalf_of=on_behalf_of, **kwargs)
    return build


@pytest.fixture
def run_id() -> str:
    """A suffix that keeps every test's uids and guids apart on the shared server."""
    return uuid.uuid4().hex[:8]


@pytest.fixture
def users(stub, md, run_id) -> Callable[..., List[str]]:
    """``users("alice", "bob")`` creates those users (uids with the test's run id) and returns the uids."""
    def create(*names: str) -> List[str]:
        uids = []
        for name in names:
            uid = "%s-%s" % (name, run_id)
            reply = stub.CreateUser(m.CreateUserRequest(uid=uid, name=name.title()), metadata=md(), timeout=10)
            assert reply.user.uid == uid
            uids.append(uid)
        return uids
    return create


@pytest.fixture(autouse=True)
def _server_log_on_failure(request):
    """On a failing test, prints the end of the log of every server among its fixtures (the shared
    one, or a module's own)."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        for name, value in getattr(request.node, "funcargs", {}).items():
            if isinstance(value, ServerProcess):
                print("\n--- last lines of the log of %s (%s) ---\n%s" % (
                    name, value.log_path, "\n".join(value.log_text().splitlines()[-30:])))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)


def pytest_sessionfinish(session, exitstatus):
    if _own_stubs:
        shutil.rmtree(_own_stubs, ignore_errors=True)
    if _unsupported and os.environ.get("MODERATION_GRPC_ALLOW_SKIP") != "1":
        # A skipped suite exits 0 in pytest; CI must not pass on a server without the gRPC
        # listener, so the skip fails the run unless MODERATION_GRPC_ALLOW_SKIP=1 says it may.
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = ("the gRPC suite was SKIPPED: %s\n(set MODERATION_GRPC_ALLOW_SKIP=1 to let a skipped "
                   "suite pass; the run fails without it)" % _unsupported[0])
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(message, red=True, bold=True)
        else:
            print(message, file=sys.stderr)
        session.exitstatus = 1
