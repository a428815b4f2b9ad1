"""The C example (clients/c) built with make and run against the real server."""

from __future__ import annotations

import os
import subprocess
import uuid
from typing import Tuple

import pytest

from mrpc_client import Channel, RpcError, StatusCode
from mrpc_client import moderation_v1 as m

C_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "c"))
BINARY = os.path.join(C_DIR, "build", "kick-member")


@pytest.fixture(scope="module")
def kick_member() -> str:
    result = subprocess.run(["make", "-C", C_DIR], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, "make -C clients/c failed:\n%s%s" % (result.stdout, result.stderr)
    assert os.access(BINARY, os.X_OK)
    return BINARY


def run(binary: str, *args: str) -> Tuple[int, str]:
    result = subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)
    return result.returncode, result.stdout.strip()


def test_usage(kick_member: str) -> None:
    assert run(kick_member, "only-one-argument")[0] == 2


def test_bad_key_prints_unauthenticated(kick_member: str, server_address: str) -> None:
    code, out = run(kick_member, server_address, "wrong-key-0000", "g", "u")
    assert code == 1
    assert out.startswith("error: status=16 UNAUTHENTICATED code=ERR_UNAUTHENTICATED message=")


def test_unreachable_server(kick_member: str) -> None:
    code, _ = run(kick_member, "127.0.0.1:1", "k", "g", "u")
    assert code == 3


def test_kick_member_against_the_server(kick_member: str, channel: Channel, server_address: str, api_key: str) -> None:
    run_id = uuid.uuid4().hex[:8]
    owner, member, guid = "c-owner-%s" % run_id, "c-member-%s" % run_id, "c-group-%s" % run_id
    stub = m.ModerationStub(channel)
    try:
        stub.CreateUser(m.CreateUserRequest(uid=owner))
    except RpcError as error:
        if error.code() != StatusCode.UNIMPLEMENTED:
            raise
        # The service is not served yet: the C client must report the server's status exactly.
        code, out = run(kick_member, server_address, api_key, guid, member, owner)
        assert code == 1
        assert out == "error: status=12 UNIMPLEMENTED code=ERR_UNIMPLEMENTED message=" \
                      "no method /moderation.v1.Moderation/KickMember on this server"
        return
    stub.CreateUser(m.CreateUserRequest(uid=member))
    stub.CreateGroup(m.CreateGroupRequest(guid=guid, name="C", type=m.GROUP_TYPE_PUBLIC), on_behalf_of=owner)
    stub.JoinGroup(m.JoinGroupRequest(guid=guid), on_behalf_of=member)

    code, out = run(kick_member, server_address, api_key, guid, member, owner)
    assert code == 0, out
    assert out.startswith("ok: kicked %s from %s (action seq " % (member, guid)) and out.endswith("members now 1)")
    assert not stub.GetMemberState(m.GetMemberStateRequest(guid=guid, uid=member), on_behalf_of=owner).is_member

    code, out = run(kick_member, server_address, api_key, guid, member, owner)
    assert (code, out.split(" message=")[0]) == (1, "error: status=9 FAILED_PRECONDITION code=ERR_NOT_A_MEMBER")
    code, out = run(kick_member, server_address, api_key, "no-such-group-%s" % run_id, member, owner)
    assert (code, out.split(" message=")[0]) == (1, "error: status=5 NOT_FOUND code=ERR_GROUP_NOT_FOUND")
