#!/usr/bin/env python3
"""Crash safety: SIGKILL a real moderation-server under write load, restart it on the same data
directory, and check that every acknowledged mutation survived and the invariants hold; repeat.

    crash_test.py --server BINARY [--rounds N] [--writers W]

Each round, every writer owns a new group and twenty new users (so its model of the group is
exact), runs random valid mutations on it through its own connection — create, join, leave,
add, kick, ban, unban, change scope — and records each acknowledged one (and its action seq).
Between 1.5 and 4 s into the round the server is SIGKILLed; the one call per writer in flight
then may or may not have happened, and both outcomes are accepted for its user. After the
restart the driver checks every group of every round so far (a recovered store must keep what
was recovered before, too):

- each acknowledged user and group exists; each user is a member / banned / neither exactly as
  acknowledged, members with their acknowledged scope;
- the invariants of docs/SERVICE.md: members_count equals the members listed, nobody listed
  twice, the owner is a member with scope admin, nobody is both member and banned;
- every acknowledged action seq is in the group's action log.

Exits 0 and prints "0 acknowledged mutations lost over N rounds" when all rounds pass.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Set, Tuple

import serverproc
from serverproc import API_KEY, ObservedServer

import mrpc_client
from mrpc_client import RpcError, StatusCode
from mrpc_client import moderation_v1 as m

USERS_PER_GROUP = 20
NONE, MEMBER, BANNED = "none", "member", "banned"
State = Tuple[str, int]  # (none|member|banned, scope when a member)


class GroupModel:
    """What one writer knows was acknowledged for its group."""

    def __init__(self, guid: str, users: List[str]) -> None:
        self.guid = guid
        self.users = users
        self.owner = users[0]
        self.created_users: Set[str] = set()
        self.group_created = False
        self.state: Dict[str, State] = {uid: (NONE, 0) for uid in users[1:]}
        self.seqs: Set[int] = set()
        self.acknowledged = 0
        #: The call in flight when the server died: (uid, state if it happened).
        self.pending: Optional[Tuple[str, State]] = None
        self.pending_user: Optional[str] = None
        self.pending_group = False


class Writer(threading.Thread):
    def __init__(self, address: str, model: GroupModel, seed: int) -> None:
        super().__init__(daemon=True)
        self.address = address
        self.model = model
        self.rng = random.Random(seed)
        self.error: Optional[str] = None
        self.stopped_by_crash = False

    def run(self) -> None:
        model = self.model
        channel = mrpc_client.insecure_channel(self.address, api_key=API_KEY, client_name="crash-writer")
        try:
            mod = m.ModerationStub(channel)
            for uid in model.users:
                model.pending_user = uid
                mod.CreateUser(m.CreateUserRequest(uid=uid, name=uid), timeout=20)
                model.created_users.add(uid)
                model.pending_user = None
                model.acknowledged += 1
            model.pending_group = True
            mod.CreateGroup(m.CreateGroupRequest(guid=model.guid, name=model.guid, type=m.GROUP_TYPE_PUBLIC,
                                                 owner=model.owner), timeout=20)
            model.group_created = True
            model.pending_group = False
            model.acknowledged += 1
            while True:
                self.mutate(mod)
        except RpcError as error:
            if error.local or error.code() in (StatusCode.UNAVAILABLE, StatusCode.CANCELLED):
                self.stopped_by_crash = True  # the server went away mid-call: expected
            else:
                self.error = "%s: %s" % (model.guid, error)
        except Exception as error:  # a model mismatch or a driver bug
            self.error = "%s: %r" % (model.guid, error)
        finally:
            channel.close()

    def mutate(self, mod) -> None:
        model, rng = self.model, self.rng
        uid = rng.choice(model.users[1:])
        kind, scope = model.state[uid]
        if kind == NONE:
            op = rng.choice(["join", "add", "ban"])
        elif kind == MEMBER:
            op = rng.choice(["leave", "kick", "ban", "scope"])
        else:
            op = "unban"
        new_scope = m.SCOPE_MODERATOR if scope == m.SCOPE_PARTICIPANT else m.SCOPE_PARTICIPANT
        after = {"join": (MEMBER, m.SCOPE_PARTICIPANT), "add": (MEMBER, m.SCOPE_PARTICIPANT),
                 "ban": (BANNED, 0), "leave": (NONE, 0), "kick": (NONE, 0), "unban": (NONE, 0),
                 "scope": (MEMBER, new_scope)}[op]
        model.pending = (uid, after)
        guid = model.guid
        if op == "join":
            seq = mod.JoinGroup(m.JoinGroupRequest(guid=guid), on_behalf_of=uid, timeout=20).action.seq
        elif op == "add":
            seq = mod.AddMembers(m.AddMembersRequest(guid=guid, members=[m.MemberToAdd(uid=uid)]),
                                 on_behalf_of=model.owner, timeout=20).results[uid].seq
        elif op == "ban":
            seq = mod.BanMember(m.BanMemberRequest(guid=guid, uid=uid, reason="crash test"),
                                on_behalf_of=model.owner, timeout=20).action.seq
        elif op == "leave":
            seq = mod.LeaveGroup(m.LeaveGroupRequest(guid=guid), on_behalf_of=uid, timeout=20).action.seq
        elif op == "kick":
            seq = mod.KickMember(m.KickMemberRequest(guid=guid, uid=uid), timeout=20).action.seq
        elif op == "unban":
            seq = mod.UnbanMember(m.UnbanMemberRequest(guid=guid, uid=uid), timeout=20).action.seq
        else:
            seq = mod.ChangeMemberScope(m.ChangeMemberScopeRequest(guid=guid, uid=uid, scope=new_scope),
                                        timeout=20).action.seq
        if seq <= 0:
            raise AssertionError("%s of %s acknowledged without an action seq" % (op, uid))
        model.state[uid] = after
        model.seqs.add(seq)
        model.acknowledged += 1
        model.pending = None


def all_pages(call, field: str) -> list:
    items, cursor = [], ""
    while True:
        response = call(cursor)
        items.extend(getattr(response, field))
        cursor = response.next_cursor
        if not cursor:
            return items


def verify(mod: m.ModerationStub, model: GroupModel) -> List[str]:
    """Everything acknowledged for `model` is in the store, and the group's invariants hold.

    When it all holds, the outcome of the call that was in flight at the kill is now known and
    becomes part of the model, so later rounds check exactly what the store recovered."""
    problems: List[str] = []
    for uid in model.users:
        try:
            mod.GetUser(m.GetUserRequest(uid=uid), timeout=20)
            model.created_users.add(uid)
        except RpcError as error:
            if uid in model.created_users or error.error_code != "ERR_UID_NOT_FOUND":
                problems.append("user %s: %s" % (uid, error))
    model.pending_user = None
    try:
        group = mod.GetGroup(m.GetGroupRequest(guid=model.guid), timeout=20).group
        model.group_created = True
        model.pending_group = False
    except RpcError as error:
        if model.group_created or error.error_code != "ERR_GROUP_NOT_FOUND":
            problems.append("group %s: %s" % (model.guid, error))
        return problems
    guid = model.guid
    members = all_pages(lambda c: mod.ListMembers(m.ListMembersRequest(guid=guid, limit=100, cursor=c), timeout=20),
                        "members")
    banned = all_pages(lambda c: mod.ListBannedMembers(
        m.ListBannedMembersRequest(guid=guid, limit=100, cursor=c), timeout=20), "banned_members")
    member_scope = {member.uid: member.scope for member in members}
    banned_uids = {ban.uid for ban in banned}
    if group.members_count != len(members):
        problems.append("%s: members_count %d but %d members listed" % (guid, group.members_count, len(members)))
    if len(member_scope) != len(members):
        problems.append("%s: a member is listed twice" % guid)
    if member_scope.get(group.owner) != m.SCOPE_ADMIN or group.owner != model.owner:
        problems.append("%s: owner %s (expected %s) is not a member with scope admin" % (guid, group.owner, model.owner))
    if banned_uids & set(member_scope):
        problems.append("%s: both member and banned: %s" % (guid, sorted(banned_uids & set(member_scope))))
    for uid, expected in model.state.items():
        if uid in member_scope:
            actual: State = (MEMBER, member_scope[uid])
        elif uid in banned_uids:
            actual = (BANNED, 0)
        else:
            actual = (NONE, 0)
        allowed = [expected]
        if model.pending and model.pending[0] == uid:
            allowed.append(model.pending[1])
        if actual not in allowed:
            problems.append("%s: %s is %s, acknowledged %s" % (guid, uid, actual, " or ".join(map(str, allowed))))
        else:
            model.state[uid] = actual
    model.pending = None
    logged: Set[int] = set()
    after = 0
    while True:
        page = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid, after_seq=after, limit=100), timeout=20)
        logged.update(action.seq for action in page.actions)
        if not page.actions:
            break
        after = page.actions[-1].seq
    missing = model.seqs - logged
    if missing:
        problems.append("%s: %d acknowledged actions missing from the log, e.g. seq %d" % (guid, len(missing), min(missing)))
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    parser.add_argument("--keep", action="store_true", help="keep the data directory and logs")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="moderation-crash-")
    data_dir, log = os.path.join(work, "data"), os.path.join(work, "server.log")
    rng = random.Random(args.seed)
    models: List[GroupModel] = []
    acknowledged = 0
    failed = False
    print("crash-test: %d rounds, %d writers, seed %d, data in %s" % (args.rounds, args.writers, args.seed, data_dir))
    try:
        for round_index in range(1, args.rounds + 1):
            server = ObservedServer(args.server, data_dir, log)
            writers = []
            for w in range(args.writers):
                users = ["cr%d-%d-w%d-u%02d" % (args.seed, round_index, w, i) for i in range(USERS_PER_GROUP)]
                model = GroupModel("cr%d-%d-w%d" % (args.seed, round_index, w), users)
                models.append(model)
                writers.append(Writer(server.address, model, rng.randrange(1 << 30)))
            for writer in writers:
                writer.start()
            time.sleep(rng.uniform(1.5, 4.0))
            server.kill()
            for writer in writers:
                writer.join(30)
            errors = [w.error for w in writers if w.error] + ["a writer did not stop" for w in writers if w.is_alive()]
            round_acks = sum(w.model.acknowledged for w in writers)
            acknowledged += round_acks

            server = ObservedServer(args.server, data_dir, log)
            with mrpc_client.insecure_channel(server.address, api_key=API_KEY, client_name="crash-verifier") as channel:
                mod = m.ModerationStub(channel)
                problems = errors + [p for model in models for p in verify(mod, model)]
            server.terminate()
            status = "ok" if not problems else "FAILED"
            print("crash-test: round %d: %d mutations acknowledged before SIGKILL, %d groups verified: %s"
                  % (round_index, round_acks, len(models), status))
            if problems:
                failed = True
                for problem in problems[:20]:
                    print("  - " + problem)
                break
    finally:
        if not args.keep and not failed:
            shutil.rmtree(work, ignore_errors=True)
    if failed:
        print("crash-test: FAILED (data and log kept in %s)" % work)
        return 1
    print("crash-test: 0 acknowledged mutations lost over %d rounds (%d acknowledged mutations, %d groups)"
          % (args.rounds, acknowledged, len(models)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
