"""The seeds' scenario end to end through moderation.v1.Moderation, with the events it causes
received on compressed subscriptions — written against proto/moderation and SERVICE.md.

Skipped, with the reason, while the server answers UNIMPLEMENTED for
/moderation.v1.Moderation/CreateUser (the service not wired in yet); nothing here changes once
it is.
"""

from __future__ import annotations

import threading
import uuid
from typing import Callable, Dict, List, Optional, Tuple

import pytest

import mrpc_client
from mrpc_client import Channel, Compression, RpcError, ServerStream, StatusCode
from mrpc_client import moderation_v1 as m
from mrpc_client.moderation_v1 import Action, MemberToAdd
from mrpc_client.testing import ServerProcess


def require_moderation(stub: m.ModerationStub, uid: str) -> m.CreateUserResponse:
    """Creates ``uid``; skips the test while the service is not served."""
    try:
        return stub.CreateUser(m.CreateUserRequest(uid=uid, name=uid.title()), timeout=10)
    except RpcError as error:
        if error.code() == StatusCode.UNIMPLEMENTED:
            pytest.skip("moderation.v1.Moderation is not served yet: /moderation.v1.Moderation/CreateUser "
                        "answered %s %s (%s)" % (error.code().name, error.error_code, error.details()))
        raise


def expect_error(code_name: str, error_code: str, call: Callable[[], object]) -> RpcError:
    with pytest.raises(RpcError) as caught:
        call()
    error = caught.value
    assert (error.code().name, error.error_code) == (code_name, error_code), "expected %s %s, got %s" % (
        code_name, error_code, error)
    assert error.details(), "every error carries a message naming what was wrong"
    return error


class EventCollector:
    """Iterates a subscription on a thread, keeping the actions of one group, until its deletion."""

    def __init__(self, stream: ServerStream[m.SubscribeResponse], guid: str) -> None:
        self.stream = stream
        self.guid = guid
        self.actions: List[Action] = []
        self.error: Optional[BaseException] = None
        self.deleted = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for event in self.stream:
                if event.action.action_for.guid == self.guid:
                    self.actions.append(event.action)
                    if event.action.action == m.ACTION_TYPE_DELETED:
                        self.deleted.set()
                        return
        except BaseException as error:  # reported by wait()
            self.error = error
        finally:
            self.deleted.set()

    def wait(self, timeout: float = 15) -> List[Action]:
        assert self.deleted.wait(timeout), "no 'deleted' event within %.0f s; got %s" % (
            timeout, [(act.seq, m.ActionType.Name(act.action)) for act in self.actions])
        self.stream.cancel()
        if self.error is not None:
            raise self.error
        return self.actions


def summary(action: Action) -> Tuple[int, str, str, str]:
    return action.seq, m.ActionType.Name(action.action), action.action_by.uid, action.action_on.uid


def test_seed_scenario_end_to_end(channel: Channel) -> None:
    run = uuid.uuid4().hex[:8]
    alice, bob, carol, dave, erin = ("%s-%s" % (name, run) for name in ("alice", "bob", "carol", "dave", "erin"))
    guid = "group-%s" % run
    mod = m.ModerationStub(channel)

    # Users.
    created = require_moderation(mod, alice)
    assert created.user.uid == alice and created.user.created_at > 0
    for uid in (bob, carol, dave, erin):
        assert mod.CreateUser(m.CreateUserRequest(uid=uid, name=uid.title())).user.uid == uid
    expect_error("ALREADY_EXISTS", "ERR_UID_ALREADY_EXISTS", lambda: mod.CreateUser(m.CreateUserRequest(uid=bob)))

    # The whole app's events, replayed from the start of the log and then live, compressed; and
    # the events bob sees (a kicked or banned user learns of it).
    app_events = EventCollector(mod.Subscribe(m.SubscribeRequest(whole_app=True, after_seq=0),
                                              compression=Compression.Deflate), guid)
    bob_events = EventCollector(mod.Subscribe(m.SubscribeRequest(user_uid=bob, after_seq=0), on_behalf_of=bob,
                                              compression=Compression.Deflate), guid)
    expected: List[Tuple[int, str, str, str]] = []  # (seq, action, by, on) from the responses, in order

    def record(action: Action, kind: int, by: str, on: str) -> Action:
        assert (m.ActionType.Name(action.action), action.action_by.uid, action.action_on.uid) == (
            m.ActionType.Name(kind), by, on)
        assert action.action_for.guid == guid and action.seq > 0 and action.timestamp > 0
        if expected:
            assert action.seq > expected[-1][0], "seq must increase with every action"
        expected.append(summary(action))
        return action

    # Alice creates a public group and owns it.
    group = mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="Group %s" % run, type=m.GROUP_TYPE_PUBLIC),
                            on_behalf_of=alice).group
    assert (group.owner, group.members_count, group.has_joined, group.scope) == (alice, 1, True, m.SCOPE_ADMIN)
    expect_error("ALREADY_EXISTS", "ERR_GUID_ALREADY_EXISTS", lambda: mod.CreateGroup(
        m.CreateGroupRequest(guid=guid, name="again", type=m.GROUP_TYPE_PUBLIC), on_behalf_of=alice))

    # Bob joins; alice adds carol (participant) and dave (moderator); adding bob again is refused per user.
    joined = mod.JoinGroup(m.JoinGroupRequest(guid=guid), on_behalf_of=bob)
    assert joined.group.has_joined and joined.group.members_count == 2
    record(joined.action, m.ACTION_TYPE_JOINED, bob, bob)
    expect_error("ALREADY_EXISTS", "ERR_ALREADY_JOINED", lambda: mod.JoinGroup(m.JoinGroupRequest(guid=guid),
                                                                               on_behalf_of=bob))
    added = mod.AddMembers(m.AddMembersRequest(guid=guid, members=[
        MemberToAdd(uid=carol), MemberToAdd(uid=dave, scope=m.SCOPE_MODERATOR), MemberToAdd(uid=bob)]),
        on_behalf_of=alice)
    assert added.results[carol].ok and added.results[dave].ok
    assert (added.results[bob].ok, added.results[bob].error_code) == (False, "ERR_ALREADY_JOINED")
    assert added.group.members_count == 4
    for uid in sorted((carol, dave), key=lambda u: added.results[u].seq):
        expected.append((added.results[uid].seq, "ACTION_TYPE_ADDED", alice, uid))

    members = mod.ListMembers(m.ListMembersRequest(guid=guid), on_behalf_of=bob).members
    assert {mb.uid: mb.scope for mb in members} == {alice: m.SCOPE_ADMIN, bob: m.SCOPE_PARTICIPANT,
                                                    carol: m.SCOPE_PARTICIPANT, dave: m.SCOPE_MODERATOR}
    assert [(mb.joined_at, mb.uid) for mb in members] == sorted((mb.joined_at, mb.uid) for mb in members)
    assert [mb.uid for mb in mod.ListMembers(m.ListMembersRequest(guid=guid, search=carol[:6].upper()),
                                             on_behalf_of=bob).members] == [carol]

    # Kick: a moderator kicks a participant, who may rejoin; participants cannot kick; nobody kicks the owner.
    expect_error("PERMISSION_DENIED", "ERR_PERMISSION_DENIED",
                 lambda: mod.KickMember(m.KickMemberRequest(guid=guid, uid=dave), on_behalf_of=carol))
    expect_error("PERMISSION_DENIED", "ERR_CANNOT_KICK_OWNER",
                 lambda: mod.KickMember(m.KickMemberRequest(guid=guid, uid=alice), on_behalf_of=dave))
    kicked = record(mod.KickMember(m.KickMemberRequest(guid=guid, uid=bob), on_behalf_of=dave).action,
                    m.ACTION_TYPE_KICKED, dave, bob)
    assert kicked.action_for.members_count == 3
    assert not mod.GetMemberState(m.GetMemberStateRequest(guid=guid), on_behalf_of=bob).is_member
    expect_error("FAILED_PRECONDITION", "ERR_NOT_A_MEMBER",
                 lambda: mod.KickMember(m.KickMemberRequest(guid=guid, uid=bob), on_behalf_of=dave))
    record(mod.JoinGroup(m.JoinGroupRequest(guid=guid), on_behalf_of=bob).action, m.ACTION_TYPE_JOINED, bob, bob)

    # Ban: bob is banned and cannot rejoin; erin is banned pre-emptively.
    ban = mod.BanMember(m.BanMemberRequest(guid=guid, uid=bob, reason="spam"), on_behalf_of=alice)
    assert ban.changed
    assert (ban.ban.uid, ban.ban.reason, ban.ban.banned_by, ban.ban.expires_at) == (bob, "spam", alice, 0)
    assert ban.ban.scope == m.SCOPE_PARTICIPANT
    record(ban.action, m.ACTION_TYPE_BANNED, alice, bob)
    assert ban.action.action_for.members_count == 3
    expect_error("PERMISSION_DENIED", "ERR_BANNED_GROUPMEMBER",
                 lambda: mod.JoinGroup(m.JoinGroupRequest(guid=guid), on_behalf_of=bob))
    expect_error("ALREADY_EXISTS", "ERR_ALREADY_BANNED",
                 lambda: mod.BanMember(m.BanMemberRequest(guid=guid, uid=bob), on_behalf_of=alice))
    assert not mod.BanMember(m.BanMemberRequest(guid=guid, uid=bob, if_not_banned=True), on_behalf_of=alice).changed
    expect_error("PERMISSION_DENIED", "ERR_CANNOT_BAN_OWNER",
                 lambda: mod.BanMember(m.BanMemberRequest(guid=guid, uid=alice), on_behalf_of=dave))
    record(mod.BanMember(m.BanMemberRequest(guid=guid, uid=erin, reason="pre-emptive"), on_behalf_of=dave).action,
           m.ACTION_TYPE_BANNED, dave, erin)
    state = mod.GetMemberState(m.GetMemberStateRequest(guid=guid, uid=bob), on_behalf_of=alice)
    assert (state.is_member, state.is_banned, state.ban.reason) == (False, True, "spam")

    # The banned list: admins and moderators only; search; paging with a cursor.
    expect_error("PERMISSION_DENIED", "ERR_PERMISSION_DENIED",
                 lambda: mod.ListBannedMembers(m.ListBannedMembersRequest(guid=guid), on_behalf_of=carol))
    searched = mod.ListBannedMembers(m.ListBannedMembersRequest(guid=guid, search="BOB-"), on_behalf_of=dave)
    assert [b.uid for b in searched.banned_members] == [bob] and searched.next_cursor == ""
    pages, cursor = [], ""
    while True:
        page = mod.ListBannedMembers(m.ListBannedMembersRequest(guid=guid, limit=1, cursor=cursor),
                                     on_behalf_of=alice)
        pages.append([b.uid for b in page.banned_members])
        cursor = page.next_cursor
        if not cursor:
            break
        assert len(pages) < 5, "paging does not end"
    assert sorted(uid for p in pages for uid in p) == sorted([bob, erin]) and all(len(p) <= 1 for p in pages)
    listed = mod.ListBannedMembers(m.ListBannedMembersRequest(guid=guid), on_behalf_of=alice).banned_members
    assert [(-b.banned_at, b.uid) for b in listed] == sorted((-b.banned_at, b.uid) for b in listed)
    expect_error("INVALID_ARGUMENT", "ERR_INVALID_ARGUMENT", lambda: mod.ListBannedMembers(
        m.ListBannedMembersRequest(guid=guid, limit=101), on_behalf_of=alice))

    # Unban: bob is not re-added but may join again.
    unbanned = mod.UnbanMember(m.UnbanMemberRequest(guid=guid, uid=bob), on_behalf_of=alice)
    assert unbanned.changed
    record(unbanned.action, m.ACTION_TYPE_UNBANNED, alice, bob)
    state = mod.GetMemberState(m.GetMemberStateRequest(guid=guid, uid=bob), on_behalf_of=alice)
    assert (state.is_member, state.is_banned) == (False, False)
    expect_error("FAILED_PRECONDITION", "ERR_USER_NOT_BANNED",
                 lambda: mod.UnbanMember(m.UnbanMemberRequest(guid=guid, uid=bob), on_behalf_of=alice))
    assert not mod.UnbanMember(m.UnbanMemberRequest(guid=guid, uid=bob, only_if_banned=True),
                               on_behalf_of=alice).changed
    record(mod.JoinGroup(m.JoinGroupRequest(guid=guid), on_behalf_of=bob).action, m.ACTION_TYPE_JOINED, bob, bob)

    # Scopes: admins outranking the target; only the owner grants admin; never the owner's own.
    expect_error("PERMISSION_DENIED", "ERR_PERMISSION_DENIED", lambda: mod.ChangeMemberScope(
        m.ChangeMemberScopeRequest(guid=guid, uid=carol, scope=m.SCOPE_MODERATOR), on_behalf_of=dave))
    changed = mod.ChangeMemberScope(m.ChangeMemberScopeRequest(guid=guid, uid=carol, scope=m.SCOPE_MODERATOR),
                                    on_behalf_of=alice)
    record(changed.action, m.ACTION_TYPE_SCOPE_CHANGED, alice, carol)
    assert (changed.action.old_scope, changed.action.new_scope, changed.member.scope) == (
        m.SCOPE_PARTICIPANT, m.SCOPE_MODERATOR, m.SCOPE_MODERATOR)
    expect_error("FAILED_PRECONDITION", "ERR_SAME_SCOPE", lambda: mod.ChangeMemberScope(
        m.ChangeMemberScopeRequest(guid=guid, uid=carol, scope=m.SCOPE_MODERATOR), on_behalf_of=alice))
    record(mod.ChangeMemberScope(m.ChangeMemberScopeRequest(guid=guid, uid=dave, scope=m.SCOPE_ADMIN),
                                 on_behalf_of=alice).action, m.ACTION_TYPE_SCOPE_CHANGED, alice, dave)
    expect_error("FAILED_PRECONDITION", "ERR_GROUP_NO_SELF_ACTION", lambda: mod.ChangeMemberScope(
        m.ChangeMemberScopeRequest(guid=guid, uid=alice, scope=m.SCOPE_MODERATOR), on_behalf_of=alice))
    expect_error("PERMISSION_DENIED", "ERR_CANNOT_CHANGE_OWNER_SCOPE", lambda: mod.ChangeMemberScope(
        m.ChangeMemberScopeRequest(guid=guid, uid=alice, scope=m.SCOPE_MODERATOR), on_behalf_of=dave))

    # Ownership: alice hands the group to dave and stays an admin member.
    transfer = mod.TransferOwnership(m.TransferOwnershipRequest(guid=guid, uid=dave), on_behalf_of=alice)
    record(transfer.action, m.ACTION_TYPE_OWNERSHIP_TRANSFERRED, alice, dave)
    assert transfer.group.owner == dave
    state = mod.GetMemberState(m.GetMemberStateRequest(guid=guid, uid=alice), on_behalf_of=alice)
    assert (state.is_member, state.is_owner, state.scope) == (True, False, m.SCOPE_ADMIN)
    expect_error("PERMISSION_DENIED", "ERR_PERMISSION_DENIED", lambda: mod.TransferOwnership(
        m.TransferOwnershipRequest(guid=guid, uid=carol), on_behalf_of=alice))

    # The action log ("missed events") holds what the responses said, in order, page by page.
    logged: List[Action] = []
    cursor = ""
    while True:
        actions_page = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid, limit=4, cursor=cursor),
                                            on_behalf_of=dave)
        logged.extend(actions_page.actions)
        cursor = actions_page.next_cursor
        if not cursor:
            break
        assert len(logged) < 100, "paging does not end"
    assert logged[0].action == m.ACTION_TYPE_CREATED and logged[0].action_on.uid == alice
    assert [summary(act) for act in logged[1:]] == expected

    # Leave and delete: the owner cannot leave; only the owner deletes.
    expect_error("FAILED_PRECONDITION", "ERR_OWNER_CANNOT_LEAVE",
                 lambda: mod.LeaveGroup(m.LeaveGroupRequest(guid=guid), on_behalf_of=dave))
    record(mod.LeaveGroup(m.LeaveGroupRequest(guid=guid), on_behalf_of=alice).action, m.ACTION_TYPE_LEFT, alice, alice)
    expect_error("PERMISSION_DENIED", "ERR_PERMISSION_DENIED",
                 lambda: mod.DeleteGroup(m.DeleteGroupRequest(guid=guid), on_behalf_of=bob))
    deleted = mod.DeleteGroup(m.DeleteGroupRequest(guid=guid), on_behalf_of=dave).action
    assert m.ActionType.Name(deleted.action) == "ACTION_TYPE_DELETED" and deleted.action_by.uid == dave
    assert deleted.seq > expected[-1][0]
    expected.append(summary(deleted))
    expect_error("NOT_FOUND", "ERR_GROUP_NOT_FOUND", lambda: mod.GetGroup(m.GetGroupRequest(guid=guid),
                                                                          on_behalf_of=dave))

    # The app's subscription saw every action of the group once, in order: "created", then the
    # ones the responses reported.
    events = app_events.wait()
    assert events[0].action == m.ACTION_TYPE_CREATED and events[0].action_on.uid == alice
    assert [summary(act) for act in events[1:]] == expected
    assert events[0].seq == logged[0].seq
    # Bob saw his own actions, those done to him, and those of the group while he was a member
    # (not the creation, nor erin's ban while he was banned himself).
    seen_by_bob = [summary(act) for act in bob_events.wait()]
    erin_ban = next(e for e in expected if e[1] == "ACTION_TYPE_BANNED" and e[3] == erin)
    assert seen_by_bob == [e for e in expected if e != erin_ban]
    assert channel.connection().stats.compressed_frames_received > 0, "the subscriptions asked for deflate"


def test_subscription_resumes_across_a_server_restart(server_binary: str, tmp_path) -> None:
    key = "resume-app:resume-key-12345678"
    data = str(tmp_path / "data")
    first = ServerProcess(server_binary, data, key, str(tmp_path / "first.log"))
    second: Optional[ServerProcess] = None
    try:
        with mrpc_client.insecure_channel(first.address, api_key=key) as channel:
            stub = m.ModerationStub(channel)
            run = uuid.uuid4().hex[:8]
            owner, guid = "owner-%s" % run, "resume-%s" % run
            require_moderation(stub, owner)
            users = ["user-%s-%d" % (run, i) for i in range(4)]
            for uid in users:
                stub.CreateUser(m.CreateUserRequest(uid=uid))
            stub.CreateGroup(m.CreateGroupRequest(guid=guid, name="resume", type=m.GROUP_TYPE_PUBLIC),
                             on_behalf_of=owner)
            stream = stub.Subscribe(m.SubscribeRequest(guids=[guid], after_seq=0), on_behalf_of=owner,
                                    compression=Compression.Deflate, timeout=30)
            seqs: Dict[str, int] = {}
            first_event = next(stream)
            assert first_event.action.action == m.ACTION_TYPE_CREATED
            joined_before = stub.JoinGroup(m.JoinGroupRequest(guid=guid), on_behalf_of=users[0]).action
            assert next(stream).action.seq == joined_before.seq

            # The server drains: the stream ends UNAVAILABLE with last_seq; the client resumes
            # against the restarted server from the last seq it delivered.
            collected: List[Action] = []

            def consume() -> None:
                for event in stream:
                    collected.append(event.action)
                    if len(collected) == 3:
                        return

            consumer = threading.Thread(target=consume, daemon=True)
            consumer.start()
            assert first.terminate() == 0
            second = ServerProcess(server_binary, data, key, str(tmp_path / "second.log"), port=first.port)
            for uid in users[1:]:
                seqs[uid] = stub.JoinGroup(m.JoinGroupRequest(guid=guid), on_behalf_of=uid).action.seq
            consumer.join(20)
            assert not consumer.is_alive(), "the stream did not resume: %s" % collected
            assert [(act.seq, act.action_on.uid) for act in collected] == [(seqs[u], u) for u in users[1:]]
            assert stream.resumes >= 1
            stream.cancel()
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_mute_freeze_check_post_and_delete_user(channel: Channel) -> None:
    """Mutes, freezes and DeleteUser through the generated stubs: mute (a refusal of CheckPost is an answer),
    freeze, bulk mute, and deleting a user whose uid then never comes back."""
    run = uuid.uuid4().hex[:8]
    owner, mod_uid, part, gone = ("%s-%s" % (name, run) for name in ("owner", "mod", "part", "gone"))
    guid = "quiet-%s" % run
    mod = m.ModerationStub(channel)
    require_moderation(mod, owner)
    for uid in (mod_uid, part, gone):
        mod.CreateUser(m.CreateUserRequest(uid=uid, name=uid.title()))
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="Quiet", type=m.GROUP_TYPE_PUBLIC, owner=owner, members=[
        MemberToAdd(uid=mod_uid, scope=m.SCOPE_MODERATOR), MemberToAdd(uid=part), MemberToAdd(uid=gone)]))

    muted = mod.MuteMember(m.MuteMemberRequest(guid=guid, uid=part, reason="flood", duration_ms=60000),
                           on_behalf_of=mod_uid)
    assert muted.changed and m.ActionType.Name(muted.action.action) == "ACTION_TYPE_MUTED"
    verdict = mod.CheckPost(m.CheckPostRequest(checks=[m.PostCheck(guid=guid)]), on_behalf_of=part).results[0]
    assert (verdict.allowed, verdict.error_code, verdict.muted_until) == (
        False, "ERR_MEMBER_MUTED", muted.action.expires_at)
    expect_error("FAILED_PRECONDITION", "ERR_USER_NOT_MUTED", lambda: mod.UnmuteMember(
        m.UnmuteMemberRequest(guid=guid, uid=mod_uid), on_behalf_of=owner))
    assert mod.UnmuteMember(m.UnmuteMemberRequest(guid=guid, uid=part), on_behalf_of=mod_uid).changed
    bulk = mod.BulkMuteMembers(m.BulkMuteMembersRequest(guid=guid, uids=[part, owner]), on_behalf_of=mod_uid)
    assert bulk.results[part].changed and bulk.results[owner].error_code == "ERR_CANNOT_MUTE_OWNER"
    assert mod.BulkUnmuteMembers(m.BulkUnmuteMembersRequest(guid=guid, uids=[part]),
                                 on_behalf_of=mod_uid).results[part].changed

    frozen = mod.FreezeGroup(m.FreezeGroupRequest(guid=guid, reason="pause"), on_behalf_of=owner)
    assert frozen.group.frozen and frozen.group.frozen_reason == "pause"
    answers = mod.CheckPost(m.CheckPostRequest(checks=[m.PostCheck(guid=guid, uid=uid) for uid in (mod_uid, part)]))
    assert [(r.allowed, r.error_code) for r in answers.results] == [(True, ""), (False, "ERR_GROUP_FROZEN")]
    assert not mod.UnfreezeGroup(m.UnfreezeGroupRequest(guid=guid), on_behalf_of=owner).group.frozen

    deleted = mod.DeleteUser(m.DeleteUserRequest(uid=gone), on_behalf_of=gone)
    assert (deleted.groups_left, deleted.bans_dropped) == (1, 0) and deleted.last_seq > 0
    expect_error("NOT_FOUND", "ERR_UID_NOT_FOUND", lambda: mod.GetUser(m.GetUserRequest(uid=gone)))
    expect_error("ALREADY_EXISTS", "ERR_UID_ALREADY_EXISTS", lambda: mod.CreateUser(m.CreateUserRequest(uid=gone)))
    expect_error("FAILED_PRECONDITION", "ERR_USER_OWNS_GROUPS",
                 lambda: mod.DeleteUser(m.DeleteUserRequest(uid=owner)))


def test_content_rules_and_a_post_text(channel: Channel) -> None:
    """Content rules through the generated stubs, with no code of their own: a group's blocklist
    from its owner, a refused regex answered on its own, CheckPost's matches in bytes of the text
    as sent, listing and deleting."""
    run = uuid.uuid4().hex[:8]
    owner, part = ("%s-%s" % (name, run) for name in ("owner", "part"))
    guid = "rules-%s" % run
    mod = m.ModerationStub(channel)
    require_moderation(mod, owner)
    mod.CreateUser(m.CreateUserRequest(uid=part, name="Part"))
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="Rules", type=m.GROUP_TYPE_PUBLIC, owner=owner,
                                         members=[MemberToAdd(uid=part)]))
    added = mod.AddContentRules(m.AddContentRulesRequest(guid=guid, rules=[
        m.NewContentRule(kind=m.CONTENT_RULE_KIND_WORD, pattern="spam*", action=m.CONTENT_ACTION_BLOCK),
        m.NewContentRule(kind=m.CONTENT_RULE_KIND_REGEX, pattern="x(?=y)", action=m.CONTENT_ACTION_FLAG),
        m.NewContentRule(kind=m.CONTENT_RULE_KIND_DOMAIN, pattern="evil.example", action=m.CONTENT_ACTION_FLAG),
    ]), on_behalf_of=owner)
    assert [r.ok for r in added.results] == [True, False, True]
    assert added.results[1].error_code == "ERR_INVALID_ARGUMENT" and "x(?=y)" in added.results[1].message
    assert m.ActionType.Name(added.action.action) == "ACTION_TYPE_CONTENT_RULES_CHANGED"
    text = "Spammers at évil.example"
    verdict = mod.CheckPost(m.CheckPostRequest(checks=[m.PostCheck(guid=guid, text=text)]),
                            on_behalf_of=part).results[0]
    assert (verdict.allowed, verdict.error_code) == (False, "ERR_CONTENT_BLOCKED")
    raw = text.encode()
    assert [raw[x.start:x.end].decode() for x in verdict.matches] == ["Spammers", "évil.example"]
    flagged = mod.CheckPost(m.CheckPostRequest(checks=[m.PostCheck(guid=guid, text="see evil.example")]),
                            on_behalf_of=part).results[0]
    assert (flagged.allowed, flagged.flagged) == (True, True)
    rules = mod.ListContentRules(m.ListContentRulesRequest(guid=guid), on_behalf_of=owner).rules
    assert [r.pattern for r in rules] == ["spam*", "evil.example"]
    expect_error("PERMISSION_DENIED", "ERR_PERMISSION_DENIED", lambda: mod.ListContentRules(
        m.ListContentRulesRequest(guid=guid), on_behalf_of=part))
    removed = mod.DeleteContentRules(m.DeleteContentRulesRequest(guid=guid, ids=[rules[0].id]), on_behalf_of=owner)
    assert removed.results[0].ok and removed.action.rules_removed == 1
    assert mod.CheckPost(m.CheckPostRequest(checks=[m.PostCheck(guid=guid, text="spam")]),
                         on_behalf_of=part).results[0].allowed


def test_invite_into_a_private_group(channel: Channel) -> None:
    """Invites through the generated stubs: a private group is visible to its invitee while the
    invite is live; accepting makes a member with the invited scope; a declined invite is gone."""
    run = uuid.uuid4().hex[:8]
    owner, guest, other = ("%s-%s" % (name, run) for name in ("owner", "guest", "other"))
    guid = "hidden-%s" % run
    mod = m.ModerationStub(channel)
    require_moderation(mod, owner)
    for uid in (guest, other):
        mod.CreateUser(m.CreateUserRequest(uid=uid, name=uid.title()))
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="Hidden", type=m.GROUP_TYPE_PRIVATE, owner=owner))
    expect_error("NOT_FOUND", "ERR_GROUP_NOT_FOUND", lambda: mod.GetGroup(m.GetGroupRequest(guid=guid),
                                                                            on_behalf_of=guest))
    invited = mod.InviteMembers(m.InviteMembersRequest(guid=guid, members=[
        MemberToAdd(uid=guest, scope=m.SCOPE_MODERATOR), MemberToAdd(uid=other)]), on_behalf_of=owner)
    assert invited.results[guest].changed and invited.results[other].changed
    assert mod.GetGroup(m.GetGroupRequest(guid=guid), on_behalf_of=guest).group.guid == guid
    mine = mod.ListMyInvites(m.ListMyInvitesRequest(), on_behalf_of=guest).invites
    assert [(i.guid, i.scope, i.group.type) for i in mine] == [(guid, m.SCOPE_MODERATOR, m.GROUP_TYPE_PRIVATE)]
    accepted = mod.AcceptInvite(m.AcceptInviteRequest(guid=guid), on_behalf_of=guest)
    assert m.ActionType.Name(accepted.action.action) == "ACTION_TYPE_INVITE_ACCEPTED"
    assert (accepted.group.has_joined, accepted.group.scope) == (True, m.SCOPE_MODERATOR)
    declined = mod.DeclineInvite(m.DeclineInviteRequest(guid=guid), on_behalf_of=other)
    assert m.ActionType.Name(declined.action.action) == "ACTION_TYPE_INVITE_DECLINED"
    assert not mod.ListInvites(m.ListInvitesRequest(guid=guid), on_behalf_of=owner).invites
    expect_error("NOT_FOUND", "ERR_GROUP_NOT_FOUND",
                 lambda: mod.AcceptInvite(m.AcceptInviteRequest(guid=guid), on_behalf_of=other))
    expect_error("NOT_FOUND", "ERR_INVITE_NOT_FOUND",
                 lambda: mod.RevokeInvite(m.RevokeInviteRequest(guid=guid, uid=other), on_behalf_of=owner))


def test_knock_approved(channel: Channel) -> None:
    """Join requests through the generated stubs: refused while off, then a knock approved."""
    run = uuid.uuid4().hex[:8]
    owner, knocker = ("%s-%s" % (name, run) for name in ("owner", "knocker"))
    guid = "door-%s" % run
    mod = m.ModerationStub(channel)
    require_moderation(mod, owner)
    mod.CreateUser(m.CreateUserRequest(uid=knocker, name="Knocker"))
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="Door", type=m.GROUP_TYPE_PRIVATE, owner=owner))
    expect_error("NOT_FOUND", "ERR_GROUP_NOT_FOUND",
                 lambda: mod.RequestToJoin(m.RequestToJoinRequest(guid=guid), on_behalf_of=knocker))
    assert mod.UpdateGroup(m.UpdateGroupRequest(guid=guid, join_requests=True), on_behalf_of=owner).group.join_requests
    knocked = mod.RequestToJoin(m.RequestToJoinRequest(guid=guid, message="please"), on_behalf_of=knocker)
    assert m.ActionType.Name(knocked.action.action) == "ACTION_TYPE_JOIN_REQUESTED"
    listed = mod.ListJoinRequests(m.ListJoinRequestsRequest(guid=guid), on_behalf_of=owner).join_requests
    assert [(r.uid, r.message) for r in listed] == [(knocker, "please")]
    approved = mod.ApproveJoinRequest(m.ApproveJoinRequestRequest(guid=guid, uid=knocker), on_behalf_of=owner)
    assert m.ActionType.Name(approved.action.action) == "ACTION_TYPE_JOIN_REQUEST_APPROVED"
    assert approved.group.members_count == 2
    assert mod.GetGroup(m.GetGroupRequest(guid=guid), on_behalf_of=knocker).group.has_joined


def test_report_is_private(channel: Channel) -> None:
    """Reports through the generated stubs: a moderator lists and resolves one; the reported
    member reads the group's log without it."""
    run = uuid.uuid4().hex[:8]
    owner, reporter, target = ("%s-%s" % (name, run) for name in ("owner", "reporter", "target"))
    guid = "court-%s" % run
    mod = m.ModerationStub(channel)
    require_moderation(mod, owner)
    for uid in (reporter, target):
        mod.CreateUser(m.CreateUserRequest(uid=uid, name=uid.title()))
    mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="Court", type=m.GROUP_TYPE_PUBLIC, owner=owner, members=[
        MemberToAdd(uid=reporter), MemberToAdd(uid=target)]))
    filed = mod.ReportMember(m.ReportMemberRequest(guid=guid, uid=target, category=m.REPORT_CATEGORY_HATE),
                             on_behalf_of=reporter)
    assert m.ActionType.Name(filed.action.action) == "ACTION_TYPE_REPORTED"
    listed = mod.ListReports(m.ListReportsRequest(guid=guid, status=m.REPORT_STATUS_OPEN), on_behalf_of=owner)
    assert [x.target for x in listed.reports] == [target] and dict(listed.counts) == {target: 1}
    expect_error("PERMISSION_DENIED", "ERR_PERMISSION_DENIED", lambda: mod.ListReports(
        m.ListReportsRequest(guid=guid, status=m.REPORT_STATUS_OPEN), on_behalf_of=target))
    resolved = mod.ResolveReport(m.ResolveReportRequest(guid=guid, report_id=filed.report.report_id,
                                                        resolution=m.REPORT_RESOLUTION_ACTIONED), on_behalf_of=owner)
    assert resolved.report.status == m.REPORT_STATUS_RESOLVED
    seen = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid), on_behalf_of=target).actions
    assert not [x for x in seen if m.ActionType.Name(x.action) in ("ACTION_TYPE_REPORTED", "ACTION_TYPE_REPORT_RESOLVED")]
