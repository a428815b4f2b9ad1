"""Every RPC of moderation.v1 through stock grpcio and protoc-generated stubs, in the seeds'
scenario (the same one clients/python/tests/test_moderation_scenario.py runs on our framed
protocol): users, groups, join, members, add, kick, ban, unban, the banned list, scope changes,
bulk moderation, ownership transfer, mutes, freezes, CheckPost, bans from the app, user deletion, invites, join requests, reports, the action log,
leave and delete — and the events they cause on a Subscribe stream. Each refused step checks the gRPC status and the ERR_… reason of the
ErrorInfo in grpc-status-details-bin (docs/SERVICE.md's error table).
"""

from __future__ import annotations

import time
from typing import List, Tuple

import grpc

from conftest import API_KEY
from grpc_support import Moderation, StreamCollector, WebhookReceiver, expect_error
from moderation.v1 import actions_pb2 as a
from moderation.v1 import content_pb2 as c
from moderation.v1 import groups_pb2 as g
from moderation.v1 import members_pb2 as mb
from moderation.v1 import moderation_pb2 as m
from moderation.v1 import reports_pb2 as r
from moderation.v1 import webhooks_pb2 as w

S = grpc.StatusCode


def summary(action) -> Tuple[int, str, str, str]:
    return action.seq, a.ActionType.Name(action.action), action.action_by.uid, action.action_on.uid


def test_every_rpc_in_the_seed_scenario(stub, users, run_id) -> None:
    mod = Moderation(stub, API_KEY)
    alice, bob, carol, dave, erin, frank, gina = users("alice", "bob", "carol", "dave", "erin", "frank", "gina")
    guid = "group-%s" % run_id

    # Users: create, read, update (only the user itself or the app).
    expect_error(S.ALREADY_EXISTS, "ERR_UID_ALREADY_EXISTS", lambda: mod.CreateUser(m.CreateUserRequest(uid=bob)))
    assert mod.GetUser(m.GetUserRequest(uid=bob)).user.name == "Bob"
    error, _ = expect_error(S.NOT_FOUND, "ERR_UID_NOT_FOUND",
                            lambda: mod.GetUser(m.GetUserRequest(uid="nobody-%s" % run_id)))
    assert "nobody-%s" % run_id in error.details(), "the message names the uid: %r" % error.details()
    updated = mod.UpdateUser(m.UpdateUserRequest(uid=bob, name="Bobby", update_mask=["name"]), as_=bob)
    assert updated.user.name == "Bobby"
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 lambda: mod.UpdateUser(m.UpdateUserRequest(uid=bob, name="Not yours"), as_=carol))
    assert mod.UpdateUser(m.UpdateUserRequest(uid=bob, name="Bob", update_mask=["name"])).user.name == "Bob"

    # Alice creates a public group and owns it; the action log gives the seq of "created".
    group = mod.CreateGroup(m.CreateGroupRequest(guid=guid, name="Group %s" % run_id, type=g.GROUP_TYPE_PUBLIC,
                                                 tags=["grpc"]), as_=alice).group
    assert (group.owner, group.members_count, group.has_joined, group.scope) == (alice, 1, True, mb.SCOPE_ADMIN)
    expect_error(S.ALREADY_EXISTS, "ERR_GUID_ALREADY_EXISTS", lambda: mod.CreateGroup(
        m.CreateGroupRequest(guid=guid, name="again", type=g.GROUP_TYPE_PUBLIC), as_=alice))
    created = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid), as_=alice).actions
    assert [a.ActionType.Name(act.action) for act in created] == ["ACTION_TYPE_CREATED"]
    created_seq = created[0].seq

    # The app's event stream, from just before "created": replay, then live.
    events = StreamCollector(
        mod.Subscribe(m.SubscribeRequest(whole_app=True, after_seq=created_seq - 1), timeout=120),
        until=lambda act: act.action_for.guid == guid and act.action == a.ACTION_TYPE_DELETED)

    expected: List[Tuple[int, str, str, str]] = []

    def record(action, kind: int, by: str, on: str):
        assert (a.ActionType.Name(action.action), action.action_by.uid, action.action_on.uid) == (
            a.ActionType.Name(kind), by, on)
        assert action.action_for.guid == guid and action.seq > created_seq and action.timestamp > 0
        if expected:
            assert action.seq > expected[-1][0], "seq must increase with every action"
        expected.append(summary(action))
        return action

    def record_results(results, kind: str, by: str, uids: List[str]) -> None:
        for uid in sorted(uids, key=lambda u: results[u].seq):
            assert results[uid].ok and results[uid].changed and results[uid].seq > 0, results[uid]
            expected.append((results[uid].seq, kind, by, uid))

    # A non-member reads a public group; ListGroups finds it.
    seen = mod.GetGroup(m.GetGroupRequest(guid=guid), as_=bob).group
    assert (seen.guid, seen.has_joined, seen.scope) == (guid, False, mb.SCOPE_UNSPECIFIED)
    listed = mod.ListGroups(m.ListGroupsRequest(search=guid.upper()), as_=bob)
    assert [grp.guid for grp in listed.groups] == [guid] and listed.next_cursor == ""

    # Join and add.
    joined = mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=bob)
    assert joined.group.has_joined and joined.group.members_count == 2
    record(joined.action, a.ACTION_TYPE_JOINED, bob, bob)
    expect_error(S.ALREADY_EXISTS, "ERR_ALREADY_JOINED", lambda: mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=bob))
    assert [grp.guid for grp in mod.ListGroups(m.ListGroupsRequest(joined_only=True), as_=bob).groups] == [guid]
    added = mod.AddMembers(m.AddMembersRequest(guid=guid, members=[
        mb.MemberToAdd(uid=carol), mb.MemberToAdd(uid=dave, scope=mb.SCOPE_MODERATOR), mb.MemberToAdd(uid=bob)]),
        as_=alice)
    assert (added.results[bob].ok, added.results[bob].error_code) == (False, "ERR_ALREADY_JOINED")
    assert added.group.members_count == 4
    record_results(added.results, "ACTION_TYPE_ADDED", alice, [carol, dave])
    members = mod.ListMembers(m.ListMembersRequest(guid=guid), as_=bob).members
    assert {x.uid: x.scope for x in members} == {alice: mb.SCOPE_ADMIN, bob: mb.SCOPE_PARTICIPANT,
                                                carol: mb.SCOPE_PARTICIPANT, dave: mb.SCOPE_MODERATOR}
    assert [x.uid for x in mod.ListMembers(m.ListMembersRequest(guid=guid, scopes=[mb.SCOPE_MODERATOR]),
                                           as_=bob).members] == [dave]
    expect_error(S.PERMISSION_DENIED, "ERR_GROUP_NOT_JOINED",
                 lambda: mod.ListMembers(m.ListMembersRequest(guid=guid), as_=erin))

    # Group updates: moderators change the descriptive fields, only admins the type; if_version.
    version = mod.GetGroup(m.GetGroupRequest(guid=guid), as_=dave).group.version
    changed_group = mod.UpdateGroup(m.UpdateGroupRequest(guid=guid, description="moderated over gRPC",
                                                         if_version=version), as_=dave).group
    assert changed_group.description == "moderated over gRPC" and changed_group.version == version + 1
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED", lambda: mod.UpdateGroup(
        m.UpdateGroupRequest(guid=guid, type=g.GROUP_TYPE_PRIVATE), as_=dave))
    expect_error(S.ABORTED, "ERR_VERSION_CONFLICT", lambda: mod.UpdateGroup(
        m.UpdateGroupRequest(guid=guid, description="stale", if_version=version), as_=alice))
    # (An update records an "updated" action: read back from the log below, not compared here.)
    updated_action = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid, actions=[a.ACTION_TYPE_UPDATED]),
                                          as_=alice).actions
    assert len(updated_action) == 1 and updated_action[0].action_by.uid == dave
    expected.append(summary(updated_action[0]))

    # Kick: a moderator kicks a participant, who may rejoin; participants cannot kick; nobody kicks the owner.
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 lambda: mod.KickMember(m.KickMemberRequest(guid=guid, uid=dave), as_=carol))
    expect_error(S.PERMISSION_DENIED, "ERR_CANNOT_KICK_OWNER",
                 lambda: mod.KickMember(m.KickMemberRequest(guid=guid, uid=alice), as_=dave))
    expect_error(S.FAILED_PRECONDITION, "ERR_GROUP_NO_SELF_ACTION",
                 lambda: mod.KickMember(m.KickMemberRequest(guid=guid, uid=dave), as_=dave))
    kicked = record(mod.KickMember(m.KickMemberRequest(guid=guid, uid=bob), as_=dave).action,
                    a.ACTION_TYPE_KICKED, dave, bob)
    assert kicked.action_for.members_count == 3
    assert not mod.GetMemberState(m.GetMemberStateRequest(guid=guid), as_=bob).is_member
    expect_error(S.FAILED_PRECONDITION, "ERR_NOT_A_MEMBER",
                 lambda: mod.KickMember(m.KickMemberRequest(guid=guid, uid=bob), as_=dave))
    record(mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=bob).action, a.ACTION_TYPE_JOINED, bob, bob)

    # Ban: bob is banned and cannot rejoin; erin is banned pre-emptively.
    ban = mod.BanMember(m.BanMemberRequest(guid=guid, uid=bob, reason="spam"), as_=alice)
    assert ban.changed and (ban.ban.uid, ban.ban.reason, ban.ban.banned_by, ban.ban.expires_at) == (bob, "spam", alice, 0)
    assert ban.ban.scope == mb.SCOPE_PARTICIPANT
    record(ban.action, a.ACTION_TYPE_BANNED, alice, bob)
    expect_error(S.PERMISSION_DENIED, "ERR_BANNED_GROUPMEMBER",
                 lambda: mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=bob))
    expect_error(S.PERMISSION_DENIED, "ERR_BANNED_GROUPMEMBER",
                 lambda: mod.GetGroup(m.GetGroupRequest(guid=guid), as_=bob))
    expect_error(S.ALREADY_EXISTS, "ERR_ALREADY_BANNED",
                 lambda: mod.BanMember(m.BanMemberRequest(guid=guid, uid=bob), as_=alice))
    assert not mod.BanMember(m.BanMemberRequest(guid=guid, uid=bob, if_not_banned=True), as_=alice).changed
    expect_error(S.PERMISSION_DENIED, "ERR_CANNOT_BAN_OWNER",
                 lambda: mod.BanMember(m.BanMemberRequest(guid=guid, uid=alice), as_=dave))
    record(mod.BanMember(m.BanMemberRequest(guid=guid, uid=erin, reason="pre-emptive"), as_=dave).action,
           a.ACTION_TYPE_BANNED, dave, erin)
    state = mod.GetMemberState(m.GetMemberStateRequest(guid=guid, uid=bob), as_=alice)
    assert (state.is_member, state.is_banned, state.ban.reason) == (False, True, "spam")

    # The banned list: admins and moderators only; search; paging; limits.
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 lambda: mod.ListBannedMembers(m.ListBannedMembersRequest(guid=guid), as_=carol))
    searched = mod.ListBannedMembers(m.ListBannedMembersRequest(guid=guid, search="BOB-"), as_=dave)
    assert [b.uid for b in searched.banned_members] == [bob] and searched.next_cursor == ""
    first = mod.ListBannedMembers(m.ListBannedMembersRequest(guid=guid, limit=1), as_=alice)
    assert len(first.banned_members) == 1 and first.next_cursor
    second = mod.ListBannedMembers(m.ListBannedMembersRequest(guid=guid, limit=1, cursor=first.next_cursor), as_=alice)
    assert sorted([first.banned_members[0].uid, second.banned_members[0].uid]) == sorted([bob, erin])
    error, _ = expect_error(S.INVALID_ARGUMENT, "ERR_INVALID_ARGUMENT", lambda: mod.ListBannedMembers(
        m.ListBannedMembersRequest(guid=guid, limit=101), as_=alice))
    assert error.details().startswith("limit"), "the message starts with the field's name: %r" % error.details()

    # Unban: bob is not re-added but may join again.
    unbanned = mod.UnbanMember(m.UnbanMemberRequest(guid=guid, uid=bob), as_=alice)
    assert unbanned.changed
    record(unbanned.action, a.ACTION_TYPE_UNBANNED, alice, bob)
    state = mod.GetMemberState(m.GetMemberStateRequest(guid=guid, uid=bob), as_=alice)
    assert (state.is_member, state.is_banned) == (False, False)
    expect_error(S.FAILED_PRECONDITION, "ERR_USER_NOT_BANNED",
                 lambda: mod.UnbanMember(m.UnbanMemberRequest(guid=guid, uid=bob), as_=alice))
    assert not mod.UnbanMember(m.UnbanMemberRequest(guid=guid, uid=bob, only_if_banned=True), as_=alice).changed
    record(mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=bob).action, a.ACTION_TYPE_JOINED, bob, bob)

    # Scopes: admins outranking the target; only the owner grants admin; never the owner's own.
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED", lambda: mod.ChangeMemberScope(
        m.ChangeMemberScopeRequest(guid=guid, uid=carol, scope=mb.SCOPE_MODERATOR), as_=dave))
    scoped = mod.ChangeMemberScope(m.ChangeMemberScopeRequest(guid=guid, uid=carol, scope=mb.SCOPE_MODERATOR),
                                   as_=alice)
    record(scoped.action, a.ACTION_TYPE_SCOPE_CHANGED, alice, carol)
    assert (scoped.action.old_scope, scoped.action.new_scope, scoped.member.scope) == (
        mb.SCOPE_PARTICIPANT, mb.SCOPE_MODERATOR, mb.SCOPE_MODERATOR)
    expect_error(S.FAILED_PRECONDITION, "ERR_SAME_SCOPE", lambda: mod.ChangeMemberScope(
        m.ChangeMemberScopeRequest(guid=guid, uid=carol, scope=mb.SCOPE_MODERATOR), as_=alice))
    record(mod.ChangeMemberScope(m.ChangeMemberScopeRequest(guid=guid, uid=dave, scope=mb.SCOPE_ADMIN),
                                 as_=alice).action, a.ACTION_TYPE_SCOPE_CHANGED, alice, dave)
    expect_error(S.FAILED_PRECONDITION, "ERR_GROUP_NO_SELF_ACTION", lambda: mod.ChangeMemberScope(
        m.ChangeMemberScopeRequest(guid=guid, uid=alice, scope=mb.SCOPE_MODERATOR), as_=alice))
    expect_error(S.PERMISSION_DENIED, "ERR_CANNOT_CHANGE_OWNER_SCOPE", lambda: mod.ChangeMemberScope(
        m.ChangeMemberScopeRequest(guid=guid, uid=alice, scope=mb.SCOPE_MODERATOR), as_=dave))

    # Bulk moderation: a result per uid; the call itself fails only for the first checks.
    bulk_ban = mod.BulkBanMembers(m.BulkBanMembersRequest(guid=guid, uids=[erin, frank], reason="bulk",
                                                          if_not_banned=True), as_=dave)
    assert (bulk_ban.results[erin].ok, bulk_ban.results[erin].changed) == (True, False)
    record_results(bulk_ban.results, "ACTION_TYPE_BANNED", dave, [frank])
    bulk_unban = mod.BulkUnbanMembers(m.BulkUnbanMembersRequest(guid=guid, uids=[frank, gina]), as_=dave)
    assert (bulk_unban.results[gina].ok, bulk_unban.results[gina].error_code) == (False, "ERR_USER_NOT_BANNED")
    record_results(bulk_unban.results, "ACTION_TYPE_UNBANNED", dave, [frank])
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED", lambda: mod.BulkKickMembers(
        m.BulkKickMembersRequest(guid=guid, uids=[carol]), as_=bob))
    expect_error(S.PERMISSION_DENIED, "ERR_GROUP_NOT_JOINED", lambda: mod.BulkKickMembers(
        m.BulkKickMembersRequest(guid=guid, uids=[carol]), as_=gina))
    bulk_kick = mod.BulkKickMembers(m.BulkKickMembersRequest(guid=guid, uids=[bob, alice]), as_=dave)
    assert (bulk_kick.results[alice].ok, bulk_kick.results[alice].error_code) == (False, "ERR_CANNOT_KICK_OWNER")
    record_results(bulk_kick.results, "ACTION_TYPE_KICKED", dave, [bob])
    record(mod.JoinGroup(m.JoinGroupRequest(guid=guid), as_=bob).action, a.ACTION_TYPE_JOINED, bob, bob)

    # Ownership: alice hands the group to dave and stays an admin member.
    transfer = mod.TransferOwnership(m.TransferOwnershipRequest(guid=guid, uid=dave), as_=alice)
    record(transfer.action, a.ACTION_TYPE_OWNERSHIP_TRANSFERRED, alice, dave)
    assert transfer.group.owner == dave
    state = mod.GetMemberState(m.GetMemberStateRequest(guid=guid, uid=alice), as_=alice)
    assert (state.is_member, state.is_owner, state.scope) == (True, False, mb.SCOPE_ADMIN)
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED", lambda: mod.TransferOwnership(
        m.TransferOwnershipRequest(guid=guid, uid=carol), as_=alice))

    # Mutes: a moderator mutes a participant, who stays a member but may not post (CheckPost).
    expect_error(S.PERMISSION_DENIED, "ERR_CANNOT_MUTE_OWNER",
                 lambda: mod.MuteMember(m.MuteMemberRequest(guid=guid, uid=dave), as_=alice))
    muted = mod.MuteMember(m.MuteMemberRequest(guid=guid, uid=bob, reason="calm down", duration_ms=3600000),
                           as_=carol)
    assert muted.changed and muted.action.expires_at > 0
    assert (muted.member.muted_until, muted.member.mute_reason) == (muted.action.expires_at, "calm down")
    record(muted.action, a.ACTION_TYPE_MUTED, carol, bob)
    expect_error(S.ALREADY_EXISTS, "ERR_ALREADY_MUTED",
                 lambda: mod.MuteMember(m.MuteMemberRequest(guid=guid, uid=bob), as_=carol))
    verdicts = mod.CheckPost(m.CheckPostRequest(checks=[
        m.PostCheck(guid=guid, uid=bob), m.PostCheck(guid=guid, uid=carol), m.PostCheck(guid=guid, uid=gina)])).results
    assert [(v.allowed, v.error_code) for v in verdicts] == [
        (False, "ERR_MEMBER_MUTED"), (True, ""), (False, "ERR_GROUP_NOT_JOINED")]
    assert verdicts[0].muted_until == muted.action.expires_at
    assert [x.uid for x in mod.ListMembers(m.ListMembersRequest(guid=guid, muted_only=True), as_=bob).members] == [bob]
    own = mod.GetMemberState(m.GetMemberStateRequest(guid=guid), as_=bob)
    assert (own.muted_until, own.mute_reason) == (muted.action.expires_at, ""), "a participant sees when, not why"
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED", lambda: mod.CheckPost(
        m.CheckPostRequest(checks=[m.PostCheck(guid=guid, uid=carol)]), as_=bob))
    record(mod.UnmuteMember(m.UnmuteMemberRequest(guid=guid, uid=bob), as_=carol).action,
           a.ACTION_TYPE_UNMUTED, carol, bob)
    expect_error(S.FAILED_PRECONDITION, "ERR_USER_NOT_MUTED",
                 lambda: mod.UnmuteMember(m.UnmuteMemberRequest(guid=guid, uid=bob), as_=carol))
    bulk_mute = mod.BulkMuteMembers(m.BulkMuteMembersRequest(guid=guid, uids=[bob, dave], reason="bulk"), as_=alice)
    assert (bulk_mute.results[dave].ok, bulk_mute.results[dave].error_code) == (False, "ERR_CANNOT_MUTE_OWNER")
    record_results(bulk_mute.results, "ACTION_TYPE_MUTED", alice, [bob])
    bulk_unmute = mod.BulkUnmuteMembers(m.BulkUnmuteMembersRequest(guid=guid, uids=[bob]), as_=alice)
    record_results(bulk_unmute.results, "ACTION_TYPE_UNMUTED", alice, [bob])

    # Freeze: admins only; while frozen participants may not post and moderators may.
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 lambda: mod.FreezeGroup(m.FreezeGroupRequest(guid=guid), as_=carol))
    frozen = mod.FreezeGroup(m.FreezeGroupRequest(guid=guid, reason="cool-down"), as_=alice)
    assert frozen.group.frozen and frozen.group.frozen_reason == "cool-down" and frozen.action.reason == "cool-down"
    record(frozen.action, a.ACTION_TYPE_FROZEN, alice, "")
    assert [v.error_code for v in mod.CheckPost(m.CheckPostRequest(checks=[
        m.PostCheck(guid=guid, uid=bob), m.PostCheck(guid=guid, uid=carol)])).results] == ["ERR_GROUP_FROZEN", ""]
    seen = mod.GetGroup(m.GetGroupRequest(guid=guid), as_=bob).group
    assert (seen.frozen, seen.frozen_reason) == (True, ""), "a participant sees the freeze, not why"
    expect_error(S.FAILED_PRECONDITION, "ERR_ALREADY_FROZEN",
                 lambda: mod.FreezeGroup(m.FreezeGroupRequest(guid=guid), as_=alice))
    record(mod.UnfreezeGroup(m.UnfreezeGroupRequest(guid=guid), as_=dave).action, a.ACTION_TYPE_UNFROZEN, dave, "")
    expect_error(S.FAILED_PRECONDITION, "ERR_GROUP_NOT_FROZEN",
                 lambda: mod.UnfreezeGroup(m.UnfreezeGroupRequest(guid=guid), as_=dave))

    # DeleteUser: an owner is refused; erin, banned, is deleted and her ban goes with her.
    error, _ = expect_error(S.FAILED_PRECONDITION, "ERR_USER_OWNS_GROUPS",
                            lambda: mod.DeleteUser(m.DeleteUserRequest(uid=dave), as_=dave))
    assert guid in error.details(), "the message names the group: %r" % error.details()
    gone = mod.DeleteUser(m.DeleteUserRequest(uid=erin))
    assert (gone.groups_left, gone.bans_dropped) == (0, 1) and gone.last_seq > expected[-1][0]
    expected.append((gone.last_seq, "ACTION_TYPE_USER_DELETED", "@app", erin))
    expect_error(S.NOT_FOUND, "ERR_UID_NOT_FOUND", lambda: mod.GetUser(m.GetUserRequest(uid=erin)))
    expect_error(S.ALREADY_EXISTS, "ERR_UID_ALREADY_EXISTS", lambda: mod.CreateUser(m.CreateUserRequest(uid=erin)))

    # Invites: carol invites gina and frank (bob is a member already); gina sees her invite and
    # accepts it; frank's is revoked, so he has none left to decline.
    invited = mod.InviteMembers(m.InviteMembersRequest(guid=guid, members=[
        mb.MemberToAdd(uid=gina), mb.MemberToAdd(uid=frank), mb.MemberToAdd(uid=bob)]), as_=carol)
    assert (invited.results[bob].ok, invited.results[bob].error_code) == (False, "ERR_ALREADY_JOINED")
    record_results(invited.results, "ACTION_TYPE_INVITED", carol, [gina, frank])
    mine = mod.ListMyInvites(m.ListMyInvitesRequest(), as_=gina).invites
    assert [(i.guid, i.invited_by, i.group.guid) for i in mine] == [(guid, carol, guid)]
    listed_invites = mod.ListInvites(m.ListInvitesRequest(guid=guid), as_=carol).invites
    assert sorted(i.uid for i in listed_invites) == sorted([gina, frank])
    accepted = mod.AcceptInvite(m.AcceptInviteRequest(guid=guid), as_=gina)
    assert accepted.group.has_joined and accepted.group.scope == mb.SCOPE_PARTICIPANT
    record(accepted.action, a.ACTION_TYPE_INVITE_ACCEPTED, gina, gina)
    record(mod.RevokeInvite(m.RevokeInviteRequest(guid=guid, uid=frank), as_=carol).action,
           a.ACTION_TYPE_INVITE_REVOKED, carol, frank)
    expect_error(S.NOT_FOUND, "ERR_INVITE_NOT_FOUND",
                 lambda: mod.DeclineInvite(m.DeclineInviteRequest(guid=guid), as_=frank))

    # Join requests: an admin turns them on; frank knocks, is rejected, knocks again and cancels;
    # approving a request that is gone is refused.
    expect_error(S.FAILED_PRECONDITION, "ERR_JOIN_REQUESTS_DISABLED",
                 lambda: mod.RequestToJoin(m.RequestToJoinRequest(guid=guid), as_=frank))
    opened = mod.UpdateGroup(m.UpdateGroupRequest(guid=guid, join_requests=True, update_mask=["join_requests"]),
                             as_=dave).group
    assert opened.join_requests
    expected.append(summary(mod.ListGroupActions(
        m.ListGroupActionsRequest(guid=guid, actions=[a.ACTION_TYPE_UPDATED]), as_=dave).actions[-1]))
    record(mod.RequestToJoin(m.RequestToJoinRequest(guid=guid, message="hi"), as_=frank).action,
           a.ACTION_TYPE_JOIN_REQUESTED, frank, frank)
    pending = mod.ListJoinRequests(m.ListJoinRequestsRequest(guid=guid), as_=carol).join_requests
    assert [(r.uid, r.message) for r in pending] == [(frank, "hi")]
    rejected = mod.RejectJoinRequest(m.RejectJoinRequestRequest(guid=guid, uid=frank, reason="later"), as_=carol)
    assert rejected.action.reason == "later"
    record(rejected.action, a.ACTION_TYPE_JOIN_REQUEST_REJECTED, carol, frank)
    record(mod.RequestToJoin(m.RequestToJoinRequest(guid=guid), as_=frank).action,
           a.ACTION_TYPE_JOIN_REQUESTED, frank, frank)
    record(mod.CancelJoinRequest(m.CancelJoinRequestRequest(guid=guid), as_=frank).action,
           a.ACTION_TYPE_JOIN_REQUEST_CANCELLED, frank, frank)
    expect_error(S.NOT_FOUND, "ERR_JOIN_REQUEST_NOT_FOUND", lambda: mod.ApproveJoinRequest(
        m.ApproveJoinRequestRequest(guid=guid, uid=frank), as_=carol))

    # Reports: gina reports bob; carol (moderator) lists and resolves it. The owner, dave, reads
    # them in the log below; bob, the reported member, never sees them.
    reported = mod.ReportMember(m.ReportMemberRequest(guid=guid, uid=bob, category=r.REPORT_CATEGORY_SPAM,
                                                      text="ads"), as_=gina)
    assert reported.report.status == r.REPORT_STATUS_OPEN and reported.action.report_id == reported.report.report_id
    record(reported.action, a.ACTION_TYPE_REPORTED, gina, bob)
    expect_error(S.ALREADY_EXISTS, "ERR_ALREADY_REPORTED", lambda: mod.ReportMember(
        m.ReportMemberRequest(guid=guid, uid=bob, category=r.REPORT_CATEGORY_SPAM), as_=gina))
    open_reports = mod.ListReports(m.ListReportsRequest(guid=guid, status=r.REPORT_STATUS_OPEN), as_=carol)
    assert [x.report_id for x in open_reports.reports] == [reported.report.report_id]
    assert dict(open_reports.counts) == {bob: 1}
    resolved = mod.ResolveReport(m.ResolveReportRequest(guid=guid, report_id=reported.report.report_id,
                                                        resolution=r.REPORT_RESOLUTION_DISMISSED), as_=carol)
    assert resolved.report.status == r.REPORT_STATUS_RESOLVED
    record(resolved.action, a.ACTION_TYPE_REPORT_RESOLVED, carol, gina)
    seen_by_bob = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid, limit=100), as_=bob).actions
    assert not [x for x in seen_by_bob if x.action in (a.ACTION_TYPE_REPORTED, a.ACTION_TYPE_REPORT_RESOLVED)]

    # The action log ("missed events") holds what the responses said, in order, page by page.
    logged = []
    cursor = ""
    while True:
        page = mod.ListGroupActions(m.ListGroupActionsRequest(guid=guid, limit=4, cursor=cursor), as_=dave)
        logged.extend(page.actions)
        cursor = page.next_cursor
        if not cursor:
            break
        assert len(logged) < 100, "paging does not end"
    assert logged[0].seq == created_seq and logged[0].action_on.uid == alice
    assert [summary(act) for act in logged[1:]] == expected

    # Bans from the whole app: only the app bans. A banned moderator's calls fail and CheckPost
    # refuses them in every group; a shadow-banned one is allowed, marked shadowed. Neither is in
    # the group's log (their actions belong to no group).
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 lambda: mod.BanUserFromApp(m.BanUserFromAppRequest(uid=carol), as_=dave))
    app_ban = mod.BanUserFromApp(m.BanUserFromAppRequest(uid=carol, reason="abuse"))
    assert (app_ban.ban.uid, app_ban.ban.reason, app_ban.ban.shadow) == (carol, "abuse", False)
    assert a.ActionType.Name(app_ban.action.action) == "ACTION_TYPE_APP_BANNED" and not app_ban.action.action_for.guid
    expect_error(S.ALREADY_EXISTS, "ERR_ALREADY_BANNED",
                 lambda: mod.BanUserFromApp(m.BanUserFromAppRequest(uid=carol)))
    expect_error(S.PERMISSION_DENIED, "ERR_USER_BANNED_FROM_APP",
                 lambda: mod.GetGroup(m.GetGroupRequest(guid=guid), as_=carol))
    assert [(v.allowed, v.error_code) for v in mod.CheckPost(m.CheckPostRequest(checks=[
        m.PostCheck(guid=guid, uid=carol)])).results] == [(False, "ERR_USER_BANNED_FROM_APP")]
    assert [b.uid for b in mod.ListAppBans(m.ListAppBansRequest(search=carol)).app_bans] == [carol]
    assert a.ActionType.Name(mod.UnbanUserFromApp(m.UnbanUserFromAppRequest(uid=carol)).action.action) == (
        "ACTION_TYPE_APP_UNBANNED")
    expect_error(S.FAILED_PRECONDITION, "ERR_USER_NOT_BANNED",
                 lambda: mod.UnbanUserFromApp(m.UnbanUserFromAppRequest(uid=carol)))
    assert mod.BanUserFromApp(m.BanUserFromAppRequest(uid=carol, shadow=True)).ban.shadow
    assert mod.GetGroup(m.GetGroupRequest(guid=guid), as_=carol).group.guid == guid
    shadowed = mod.CheckPost(m.CheckPostRequest(checks=[m.PostCheck(guid=guid, uid=carol)])).results[0]
    assert (shadowed.allowed, shadowed.shadowed) == (True, True)
    mod.UnbanUserFromApp(m.UnbanUserFromAppRequest(uid=carol))
    assert not mod.ListAppBans(m.ListAppBansRequest(search=carol)).app_bans

    # Content rules: the app's blocklist makes CheckPost read the post; a regex that needs
    # backtracking is refused on its own; matches are byte offsets in the text as sent.
    def word(pattern):
        return c.NewContentRule(kind=c.CONTENT_RULE_KIND_WORD, pattern=pattern, action=c.CONTENT_ACTION_BLOCK)
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 lambda: mod.AddContentRules(m.AddContentRulesRequest(rules=[word("x")]), as_=dave))
    added = mod.AddContentRules(m.AddContentRulesRequest(rules=[
        word("badword"),
        c.NewContentRule(kind=c.CONTENT_RULE_KIND_REGEX, pattern="(a)\\1", action=c.CONTENT_ACTION_BLOCK)]))
    assert [x.ok for x in added.results] == [True, False]
    assert added.results[1].error_code == "ERR_INVALID_ARGUMENT"
    assert a.ActionType.Name(added.action.action) == "ACTION_TYPE_CONTENT_RULES_CHANGED"
    assert added.action.rules_added == 1 and not added.action.action_for.guid
    verdict = mod.CheckPost(m.CheckPostRequest(checks=[m.PostCheck(guid=guid, uid=dave, text="so BÁDWORD")]))
    blocked = verdict.results[0]
    assert (blocked.allowed, blocked.error_code) == (False, "ERR_CONTENT_BLOCKED")
    assert [(x.rule_id, x.start, x.end) for x in blocked.matches] == [(added.results[0].rule.id, 3, 11)]
    assert [x.pattern for x in mod.ListContentRules(m.ListContentRulesRequest()).rules] == ["badword"]
    assert not mod.ListContentRules(m.ListContentRulesRequest(guid=guid), as_=dave).rules
    removed = mod.DeleteContentRules(m.DeleteContentRulesRequest(ids=[added.results[0].rule.id, 999999]))
    assert [x.error_code for x in removed.results] == ["", "ERR_CONTENT_RULE_NOT_FOUND"]
    assert mod.CheckPost(m.CheckPostRequest(checks=[m.PostCheck(guid=guid, uid=dave, text="badword")])).results[0].allowed

    # Webhooks: the group's actions from here on pushed to a receiver of Python's standard
    # library, which verifies each signature; only the app manages them.
    secret = "whsec_" + "c2NlbmFyaW8tc2VjcmV0LTMyLWJ5dGVzLWxvbmchIQ=="
    receiver = WebhookReceiver(secret)
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 lambda: mod.CreateWebhook(m.CreateWebhookRequest(url=receiver.url), as_=dave))
    hook = mod.CreateWebhook(m.CreateWebhookRequest(url=receiver.url, guids=[guid], secret=secret,
                                                     description="scenario"))
    assert hook.secret == secret and hook.webhook.id.startswith("wh_")
    assert w.WebhookState.Name(hook.webhook.status.state) == "WEBHOOK_STATE_ACTIVE"
    ping = mod.TestWebhook(m.TestWebhookRequest(id=hook.webhook.id))
    assert (ping.http_status, ping.error) == (204, "")
    assert hook.webhook.id in [x.id for x in mod.ListWebhooks(m.ListWebhooksRequest()).webhooks]
    assert mod.UpdateWebhook(m.UpdateWebhookRequest(id=hook.webhook.id, description="the scenario's",
                                                     update_mask=["description"])).webhook.description == (
        "the scenario's")
    assert mod.ReplayWebhook(m.ReplayWebhookRequest(id=hook.webhook.id, after_seq=hook.webhook.status.last_delivered_seq)
                             ).webhook.status.last_delivered_seq == hook.webhook.status.last_delivered_seq
    expect_error(S.NOT_FOUND, "ERR_WEBHOOK_NOT_FOUND",
                 lambda: mod.DeleteWebhook(m.DeleteWebhookRequest(id="wh_none")))

    # Leave and delete: the owner cannot leave; only the owner deletes.
    expect_error(S.FAILED_PRECONDITION, "ERR_OWNER_CANNOT_LEAVE",
                 lambda: mod.LeaveGroup(m.LeaveGroupRequest(guid=guid), as_=dave))
    expect_error(S.INVALID_ARGUMENT, "ERR_INVALID_ARGUMENT", lambda: mod.LeaveGroup(m.LeaveGroupRequest(guid=guid)))
    record(mod.LeaveGroup(m.LeaveGroupRequest(guid=guid), as_=alice).action, a.ACTION_TYPE_LEFT, alice, alice)
    expect_error(S.PERMISSION_DENIED, "ERR_PERMISSION_DENIED",
                 lambda: mod.DeleteGroup(m.DeleteGroupRequest(guid=guid), as_=bob))
    deleted = mod.DeleteGroup(m.DeleteGroupRequest(guid=guid), as_=dave).action
    assert (a.ActionType.Name(deleted.action), deleted.action_by.uid) == ("ACTION_TYPE_DELETED", dave)
    assert deleted.seq > expected[-1][0]
    expected.append(summary(deleted))
    expect_error(S.NOT_FOUND, "ERR_GROUP_NOT_FOUND", lambda: mod.GetGroup(m.GetGroupRequest(guid=guid), as_=dave))

    # The webhook delivered the group's last actions, signed, in seq order, ending with "deleted".
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any(
            x["action"] == "ACTION_TYPE_DELETED" for x in receiver.actions()):
        time.sleep(0.05)
    delivered = receiver.actions()
    assert all(request["verified"] for request in receiver.requests)
    assert all(request["content_type"] == "application/json" for request in receiver.requests)
    assert [int(x["seq"]) for x in delivered] == sorted(int(x["seq"]) for x in delivered)
    assert [x["action"] for x in delivered][-1] == "ACTION_TYPE_DELETED"
    assert {x["actionFor"]["guid"] for x in delivered} == {guid}
    assert int(delivered[-1]["seq"]) == deleted.seq
    mod.DeleteWebhook(m.DeleteWebhookRequest(id=hook.webhook.id))
    receiver.close()

    # The app's stream saw every action of the group once, in order, ending with "deleted".
    events.wait_done(20)
    assert events.error is None, "the Subscribe stream failed: %s" % events.error
    ours = [act for act in events.actions if act.action_for.guid == guid]
    assert ours[0].seq == created_seq and ours[0].action == a.ACTION_TYPE_CREATED
    assert [summary(act) for act in ours[1:]] == expected

    # Every RPC of the service was called.
    service = m.DESCRIPTOR.services_by_name["Moderation"]
    assert sorted(method.name for method in service.methods) == sorted(mod.called), (
        "not called: %s" % sorted(set(method.name for method in service.methods) - mod.called))
