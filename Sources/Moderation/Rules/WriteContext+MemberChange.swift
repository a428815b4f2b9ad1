/// The writer's part of `ChangeMemberScope` and `TransferOwnership`, and the opening they share.
extension WriteContext {
    /// Steps 2–8 of scope change and ownership transfer: the group visible, the actor a member of
    /// at least `minimum` rank, the target an existing user, not the actor, not the owner
    /// (`ifOwner`), and a member.
    mutating func memberChange(
        _ guid: String, uid: String, actorAtLeast minimum: Rank, toDo what: String,
        ifOwner ownerError: @autoclosure () -> ModerationError
    ) throws(ModerationError) -> MemberChange {
        let access = try access(guid)
        try access.requireVisible()
        try access.requireMember()
        try access.requireRank(minimum, toDo: what)
        let target = try requireUser(uid)
        try access.requireNotSelf(uid)
        if uid == access.stored.group.owner { throw ownerError() }
        let membership = try requireMembership(access, uid: uid)
        return MemberChange(access: access, target: target, membership: membership)
    }

    /// The writer's part of `ChangeMemberScope`: after the shared opening, the actor outranks the
    /// member (only the owner or the app grants or revokes admin), then the scope must change.
    mutating func changeMemberScope(guid: String, uid: String, to scope: Scope) throws(ModerationError)
        -> ScopeChangeResult
    {
        var change = try memberChange(
            guid, uid: uid, actorAtLeast: .admin, toDo: "change scopes",
            ifOwner: ModerationError(
                .cannotChangeOwnerScope, "\(uid) owns group \(guid); the owner's scope is always admin"))
        let old = change.membership.scope
        let actorRank = change.access.actorRank
        let touchesAdmin = scope == .admin || old == .admin
        guard actorRank.outranks(old.rank), !touchesAdmin || actorRank.isOwnerOrApp else {
            throw .permissionDenied(caller.name, "make \(uid) \(scope.rawValue)", guid)
        }
        guard old != scope else {
            throw ModerationError(.sameScope, "\(uid) is already \(scope.rawValue) in group \(guid)")
        }
        try tx.setMemberScope(groupID: change.access.groupID, uid: uid, scope: scope)
        change.access.stored.group.version += 1
        let user = change.target.user
        let action = try record(.scopeChanged, on: user, group: change.access.stored, oldScope: old, newScope: scope)
        try saveCounters(&change.access)
        let member = Member(
            uid: uid, name: user.name, avatar: user.avatar, scope: scope, joinedAt: change.membership.joinedAt,
            mute: Redaction.mute(change.membership.mute, for: actorRank, at: now))
        return ScopeChangeResult(action: action, member: member)
    }

    /// The writer's part of `TransferOwnership`: after the shared opening (for the app, naming the
    /// current owner is the self-action), the new owner's mute ends (the owner is never muted),
    /// the new owner gets scope admin and the old owner stays a member with scope admin.
    mutating func transferOwnership(guid: String, uid: String) throws(ModerationError) -> GroupActionResult {
        var change = try memberChange(
            guid, uid: uid, actorAtLeast: .owner, toDo: "transfer ownership",
            ifOwner: ModerationError(.groupNoSelfAction, "\(uid) already owns group \(guid)"))
        try endMuteOfNewOwner(change.membership, of: change.target.user, in: &change.access)
        if change.membership.scope != .admin {
            try tx.setMemberScope(groupID: change.access.groupID, uid: uid, scope: .admin)
        }
        change.access.stored.group.owner = uid
        change.access.stored.group.updatedAt = now
        change.access.stored.group.version += 1
        try tx.updateGroup(&change.access.stored, descriptive: true)
        let action = try record(
            .ownershipTransferred, on: change.target.user, group: change.access.stored,
            oldScope: change.membership.scope,
            newScope: .admin)
        let view = GroupAccess(stored: change.access.stored, caller: caller, membership: change.access.actorMembership)
            .view()
        return GroupActionResult(action: action, group: view)
    }
}
