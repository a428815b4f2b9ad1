/// The writer's part of the invite calls: one invitee's steps 5–9 (shared by every uid of an
/// `InviteMembers` call), and accepting, declining and revoking. Step 1 is the service's; an
/// invite is no membership, so recording one leaves the group's version alone.
extension WriteContext {
    /// Invites `grant.uid` with `grant.scope` (steps 5, 8, 9, as `addOne`): the user exists, is
    /// not a member (`ERR_ALREADY_JOINED`), not banned (`ERR_BANNED_GROUPMEMBER`: inviting never
    /// unbans), and the actor may grant the scope. A live invite is refreshed: scope, inviter,
    /// time and expiry replaced, and `invited` recorded again.
    mutating func inviteOne(_ access: inout GroupAccess, _ grant: MemberGrant, expiresInMs: Int64)
        throws(ModerationError) -> UserResult
    {
        let user = try requireGrantable(&access, grant, toDo: "invite")
        let invite = Invite(
            uid: grant.uid, scope: grant.scope, invitedBy: caller.actionUID, invitedAt: now,
            expiresAt: now + expiresInMs)
        try tx.upsertInvite(groupID: access.groupID, user: user, invite: invite)
        let action = try record(
            .invited, on: user.user, group: access.stored, newScope: grant.scope, expiresAt: invite.expiresAt)
        return .changed(seq: action.seq)
    }

    /// Steps 2–8 of accepting and declining: the group exists; a ban in force is
    /// `ERR_BANNED_GROUPMEMBER` (before visibility, as `GetGroup`); a private group exists for
    /// the user only while their invite is live (else `ERR_GROUP_NOT_FOUND`, so a private group's
    /// existence never leaks); then the invite must be live (`ERR_INVITE_NOT_FOUND`).
    mutating func inviteeAccess(_ guid: String, uid: String) throws(ModerationError) -> (
        access: GroupAccess, user: StoredUser, invite: Invite, ban: BanState
    ) {
        let access = try access(guid)
        let user = try requireUser(uid)
        let banned = try banState(access, uid: uid)
        if banned.active != nil { throw .bannedGroupMember(uid, guid) }
        let invite = try tx.invite(groupID: access.groupID, uid: uid).flatMap { $0.isLive(at: now) ? $0 : nil }
        if access.actorMembership != nil { throw .alreadyJoined(uid, guid) }
        guard let invite else {
            if access.stored.group.type == .private { throw .groupNotFound(guid) }
            throw .inviteNotFound(uid, guid)
        }
        return (access, user, invite, banned)
    }

    /// Accepts the acting user's live invite: they become a member with the invited scope,
    /// whatever the group's type, and `inviteAccepted` is recorded (its `newScope` the scope).
    mutating func acceptInvite(guid: String, uid: String) throws(ModerationError) -> GroupActionResult {
        var (access, user, invite, banned) = try inviteeAccess(guid, uid: uid)
        try expire(banned, in: &access)
        let membership = Membership(scope: invite.scope, joinedAt: now)
        try tx.insertMember(groupID: access.groupID, user: user, membership: membership)
        access.stored.group.membersCount += 1
        access.stored.group.version += 1
        let action = try record(.inviteAccepted, on: user.user, group: access.stored, newScope: invite.scope)
        try saveCounters(&access)
        let view = GroupView(
            group: Redaction.group(access.stored.group, for: invite.scope.rank), hasJoined: true, scope: invite.scope,
            joinedAt: now)
        return GroupActionResult(action: action, group: view)
    }

    /// Declines the acting user's live invite; `inviteDeclined` is recorded.
    mutating func declineInvite(guid: String, uid: String) throws(ModerationError) -> ActionRecord {
        let (access, user, invite, _) = try inviteeAccess(guid, uid: uid)
        try tx.deleteInvite(groupID: access.groupID, uid: uid)
        return try record(.inviteDeclined, on: user.user, group: access.stored, oldScope: invite.scope)
    }

    /// Withdraws `uid`'s live invite (steps 2–9): the group visible, the actor a member and an
    /// admin or moderator, the user exists, the invite live (`ERR_INVITE_NOT_FOUND`), and a
    /// moderator may revoke only invites with scope participant. `inviteRevoked` is recorded.
    mutating func revokeInvite(guid: String, uid: String) throws(ModerationError) -> ActionRecord {
        let access = try moderatorAccess(guid, toDo: "revoke invites")
        let user = try requireUser(uid)
        guard let invite = try tx.invite(groupID: access.groupID, uid: uid), invite.isLive(at: now) else {
            throw .inviteNotFound(uid, guid)
        }
        guard access.actorRank.isAdminOrAbove || invite.scope == .participant else {
            throw .permissionDenied(caller.name, "revoke an invite as \(invite.scope.rawValue)", guid)
        }
        try tx.deleteInvite(groupID: access.groupID, uid: uid)
        return try record(.inviteRevoked, on: user.user, group: access.stored, oldScope: invite.scope)
    }
}

extension Rank {
    /// Whether a member of this rank may give `scope` to a new member (adding or inviting): a
    /// moderator only participants, an admin participants and moderators, the owner and the app
    /// any scope.
    func mayGrant(_ scope: Scope) -> Bool {
        switch self {
        case .owner, .app: true
        case .admin: scope != .admin
        case .moderator: scope == .participant
        case .participant, .nonMember: false
        }
    }
}
