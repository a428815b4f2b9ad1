/// A group loaded for a call, with the acting user's standing in it: steps 2–4 of the fixed
/// order of checks.
struct GroupAccess {
    var stored: StoredGroup
    let caller: ValidatedCaller
    let actorMembership: Membership?
    let actorRank: Rank

    var guid: String { stored.group.guid }
    var groupID: Int64 { stored.id }

    /// Step 2 (existence): loads the group and the actor's membership; `ERR_GROUP_NOT_FOUND`
    /// when there is no such group in the caller's app. With `lock`, the group is locked for the
    /// rest of the change.
    static func load(
        _ snapshot: any StoreSnapshot, appID: Int64?, guid: String, caller: ValidatedCaller,
        lock: (any StoreTransaction)? = nil
    ) throws(ModerationError) -> GroupAccess {
        guard let appID else { throw .groupNotFound(guid) }
        if lock == nil, let actor = caller.actor {
            guard let found = try snapshot.groupAndMembership(appID: appID, guid: guid, uid: actor) else {
                throw .groupNotFound(guid)
            }
            return GroupAccess(stored: found.group, caller: caller, membership: found.membership)
        }
        let found: StoredGroup?
        if let lock {
            found = try lock.groupForUpdate(appID: appID, guid: guid)
        } else {
            found = try snapshot.group(appID: appID, guid: guid)
        }
        guard let stored = found else { throw .groupNotFound(guid) }
        var membership: Membership? = nil
        if let actor = caller.actor {
            membership = try snapshot.membership(groupID: stored.id, uid: actor)
        }
        return GroupAccess(stored: stored, caller: caller, membership: membership)
    }

    init(stored: StoredGroup, caller: ValidatedCaller, membership: Membership?) {
        self.stored = stored
        self.caller = caller
        self.actorMembership = membership
        if caller.actor == nil {
            actorRank = .app
        } else if let membership {
            actorRank = caller.actor == stored.group.owner ? .owner : membership.scope.rank
        } else {
            actorRank = .nonMember
        }
    }

    /// Step 2 (visibility): a private group does not exist for a non-member (the app sees all).
    func requireVisible() throws(ModerationError) {
        if stored.group.type == .private && actorRank == .nonMember { throw .groupNotFound(guid) }
    }

    /// Step 3: the actor is a member (the app passes).
    func requireMember() throws(ModerationError) {
        if actorRank == .nonMember { throw .groupNotJoined(caller.name, guid) }
    }

    /// Step 4: the actor's scope allows the action at all.
    func requireRank(_ minimum: Rank, toDo what: String) throws(ModerationError) {
        if actorRank < minimum { throw .permissionDenied(caller.name, what, guid) }
    }

    /// Step 6: the target is not the actor.
    func requireNotSelf(_ uid: String) throws(ModerationError) {
        if uid == caller.actor { throw .noSelfAction(uid, guid) }
    }

    /// Step 7 of kick, ban and mute: the target is not the owner, whom the group never loses
    /// that way; `refusal` is the call's code (`ERR_CANNOT_KICK_OWNER`, …), `done` names what the
    /// owner cannot be ("kicked").
    func requireNotOwner(_ uid: String, _ refusal: ErrorCode, cannotBe done: String) throws(ModerationError) {
        if uid == stored.group.owner {
            throw ModerationError(refusal, "\(uid) owns group \(guid) and cannot be \(done)")
        }
    }

    /// The last step of a moderation call on a user: the actor outranks `rank`, the target's
    /// (`what` names the action in the refusal).
    func requireOutranks(_ rank: Rank, toDo what: String) throws(ModerationError) {
        guard actorRank.outranks(rank) else { throw .permissionDenied(caller.name, what, guid) }
    }

    /// The rank of a member (or non-member) `uid`.
    func rank(of uid: String, membership: Membership?) -> Rank {
        guard let membership else { return .nonMember }
        return uid == stored.group.owner ? .owner : membership.scope.rank
    }

    /// The group as the actor sees it (the reason of a freeze for moderators and above only).
    func view(isBanned: Bool = false) -> GroupView {
        GroupView(
            group: Redaction.group(stored.group, for: actorRank), hasJoined: actorMembership != nil,
            scope: actorMembership?.scope, joinedAt: actorMembership?.joinedAt ?? 0, isBanned: isBanned)
    }
}
