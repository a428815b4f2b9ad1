/// The writer's part of add, kick, ban and unban: their shared opening (steps 2–4), then one
/// target's part (steps 5–10 of the order of checks), shared by the single and the bulk calls.
/// Step 1 (the arguments) is the service's; the group's counters are saved by the caller once all
/// targets are done.
extension WriteContext {
    /// Steps 2–4 of add, kick, ban and unban: the group visible, the actor a member, admin or
    /// moderator.
    mutating func moderatorAccess(_ guid: String, toDo what: String) throws(ModerationError) -> GroupAccess {
        let access = try access(guid)
        try access.requireVisible()
        try access.requireMember()
        try access.requireRank(.moderator, toDo: what)
        return access
    }

    /// A bulk moderation call (kick, ban, unban, mute, unmute many): steps 2–4 once for the
    /// whole call, then `one` per uid.
    mutating func forEachTarget(
        _ uids: [String], in guid: String, toDo what: String,
        _ one: (inout WriteContext, inout GroupAccess, String) throws(ModerationError) -> UserResult
    ) throws(ModerationError) -> [String: UserResult] {
        var access = try moderatorAccess(guid, toDo: what)
        return try forEachTarget(uids, uid: { $0 }, on: &access, one)
    }

    /// A call on many users of one group (add, invite, kick, ban, … many) after its steps 2–4:
    /// `one` per target as its own step (a domain error becomes that uid's result), then the
    /// group's counters saved once.
    mutating func forEachTarget<Target>(
        _ targets: [Target], uid: (Target) -> String, on access: inout GroupAccess,
        _ one: (inout WriteContext, inout GroupAccess, Target) throws(ModerationError) -> UserResult
    ) throws(ModerationError) -> [String: UserResult] {
        var results: [String: UserResult] = [:]
        for target in targets {
            results[uid(target)] = try perUser { (context: inout WriteContext) throws(ModerationError) -> UserResult in
                try one(&context, &access, target)
            }
        }
        try saveCounters(&access)
        return results
    }

    /// Steps 5, 8, 9 of adding or inviting `grant.uid`: the user exists, is not a member, is not
    /// banned, and the actor may grant the scope (`verb` names the action in the refusal); a ban
    /// past its expiry is converted. Returns the user.
    mutating func requireGrantable(_ access: inout GroupAccess, _ grant: MemberGrant, toDo verb: String)
        throws(ModerationError) -> StoredUser
    {
        let user = try requireUser(grant.uid)
        if try tx.membership(groupID: access.groupID, uid: grant.uid) != nil {
            throw .alreadyJoined(grant.uid, access.guid)
        }
        let banned = try banState(access, uid: grant.uid)
        if banned.active != nil { throw .bannedGroupMember(grant.uid, access.guid) }
        guard access.actorRank.mayGrant(grant.scope) else {
            throw .permissionDenied(caller.name, "\(verb) \(grant.uid) as \(grant.scope.rawValue)", access.guid)
        }
        try expire(banned, in: &access)
        return user
    }

    /// Adds `grant.uid` with `grant.scope` (steps 5, 8, 9).
    mutating func addOne(_ access: inout GroupAccess, _ grant: MemberGrant) throws(ModerationError) -> UserResult {
        let user = try requireGrantable(&access, grant, toDo: "add")
        try tx.insertMember(
            groupID: access.groupID, user: user, membership: Membership(scope: grant.scope, joinedAt: now))
        access.stored.group.membersCount += 1
        access.stored.group.version += 1
        let action = try record(.added, on: user.user, group: access.stored, newScope: grant.scope)
        return .changed(seq: action.seq)
    }

    /// Kicks `uid` (steps 5–9).
    mutating func kickOne(_ access: inout GroupAccess, uid: String) throws(ModerationError) -> ActionRecord {
        let target = try requireTarget(uid, in: access, unlessOwner: .cannotKickOwner, cannotBe: "kicked")
        let membership = try requireMembership(access, uid: uid)
        try access.requireOutranks(access.rank(of: uid, membership: membership), toDo: "kick \(uid)")
        try tx.deleteMember(groupID: access.groupID, uid: uid)
        access.stored.group.membersCount -= 1
        access.stored.group.version += 1
        return try record(.kicked, on: target.user, group: access.stored, oldScope: membership.scope)
    }

    /// Steps 5–7 of kick, ban and mute: the target is a user of the app (`ERR_UID_NOT_FOUND`),
    /// not the actor, and not the owner (`GroupAccess.requireNotOwner`).
    mutating func requireTarget(
        _ uid: String, in access: GroupAccess, unlessOwner refusal: ErrorCode, cannotBe done: String
    ) throws(ModerationError) -> StoredUser {
        let target = try requireUser(uid)
        try access.requireNotSelf(uid)
        try access.requireNotOwner(uid, refusal, cannotBe: done)
        return target
    }

    /// The step of the calls on a member (kick, mute, unmute, scope change, transfer) where the
    /// target must be a member of the group (`ERR_NOT_A_MEMBER`).
    func requireMembership(_ access: GroupAccess, uid: String) throws(ModerationError) -> Membership {
        guard let membership = try tx.membership(groupID: access.groupID, uid: uid) else {
            throw .notAMember(uid, access.guid)
        }
        return membership
    }

    /// Bans `uid`, removing them when a member (steps 5–9). With `ifNotBanned`, an existing ban
    /// is a success with `changed == false`.
    mutating func banOne(
        _ access: inout GroupAccess, uid: String, reason: String, durationMs: Int64, ifNotBanned: Bool
    ) throws(ModerationError) -> BanResult {
        let target = try requireTarget(uid, in: access, unlessOwner: .cannotBanOwner, cannotBe: "banned")
        let banned = try banState(access, uid: uid)
        if let existing = banned.active {
            guard ifNotBanned else { throw .alreadyBanned(uid, access.guid) }
            return BanResult(action: nil, ban: withProfile(existing, target.user))
        }
        let membership = try tx.membership(groupID: access.groupID, uid: uid)
        try access.requireOutranks(access.rank(of: uid, membership: membership), toDo: "ban \(uid)")
        try expire(banned, in: &access)
        if membership != nil {
            try tx.deleteMember(groupID: access.groupID, uid: uid)
            access.stored.group.membersCount -= 1
        }
        let ban = Ban(
            uid: uid, name: target.user.name, avatar: target.user.avatar, scopeBefore: membership?.scope,
            joinedAt: membership?.joinedAt ?? 0, bannedAt: now, bannedBy: caller.actionUID, reason: reason,
            expiresAt: durationMs > 0 ? now + durationMs : 0)
        try tx.insertBan(groupID: access.groupID, user: target, ban: ban)
        access.stored.group.version += 1
        let action = try record(
            .banned, on: target.user, group: access.stored, oldScope: membership?.scope, reason: reason,
            expiresAt: ban.expiresAt)
        return BanResult(action: action, ban: ban)
    }

    /// Lifts the ban of `uid` (steps 5–9); the rank check is against the scope the user had
    /// before the ban (a pre-emptive ban: a non-member). With `onlyIfBanned`, no ban is a success
    /// with `changed == false`.
    mutating func unbanOne(_ access: inout GroupAccess, uid: String, onlyIfBanned: Bool) throws(ModerationError)
        -> LiftResult
    {
        let target = try requireUser(uid)
        try access.requireNotSelf(uid)
        let banned = try banState(access, uid: uid)
        guard let ban = banned.active else {
            guard onlyIfBanned else { throw .userNotBanned(uid, access.guid) }
            try expire(banned, in: &access)
            return LiftResult(action: nil)
        }
        try access.requireOutranks(ban.scopeBefore?.rank ?? .nonMember, toDo: "unban \(uid)")
        try tx.deleteBan(groupID: access.groupID, uid: uid)
        access.stored.group.version += 1
        let action = try record(.unbanned, on: target.user, group: access.stored, oldScope: ban.scopeBefore)
        return LiftResult(action: action)
    }

    private func withProfile(_ ban: Ban, _ user: User) -> Ban {
        var ban = ban
        ban.name = user.name
        ban.avatar = user.avatar
        return ban
    }
}
