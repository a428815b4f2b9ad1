/// The writer's part of mute and unmute: one target's steps 5–9 of the order of checks, shared
/// by the single and the bulk calls (their opening, steps 2–4, is `moderatorAccess`). The group's
/// counters are saved by the caller once all targets are done.
extension WriteContext {
    /// Mutes the member `uid` (steps 5–9). With `ifNotMuted`, a mute in force is a success with
    /// `changed == false`. `durationMs` 0 mutes until unmuted.
    mutating func muteOne(
        _ access: inout GroupAccess, uid: String, reason: String, durationMs: Int64, ifNotMuted: Bool
    ) throws(ModerationError) -> MuteResult {
        let target = try requireTarget(uid, in: access, unlessOwner: .cannotMuteOwner, cannotBe: "muted")
        let membership = try requireMembership(access, uid: uid)
        let state = MuteState(membership, at: now)
        if let existing = state.active {
            guard ifNotMuted else { throw .alreadyMuted(uid, access.guid) }
            return MuteResult(action: nil, member: member(target.user, membership, mute: existing))
        }
        try access.requireOutranks(access.rank(of: uid, membership: membership), toDo: "mute \(uid)")
        try expireMute(state, of: target.user, in: &access)
        let mute = Mute(expiresAt: durationMs > 0 ? now + durationMs : 0, reason: reason)
        try tx.setMemberMute(groupID: access.groupID, uid: uid, mute: mute)
        access.stored.group.version += 1
        let action = try record(
            .muted, on: target.user, group: access.stored, reason: reason, expiresAt: mute.expiresAt)
        return MuteResult(action: action, member: member(target.user, membership, mute: mute))
    }

    /// Lifts the mute of the member `uid` (steps 5–9; the owner is never muted, so step 7 has
    /// nothing to protect). With `onlyIfMuted`, no mute in force is a success with
    /// `changed == false`.
    mutating func unmuteOne(_ access: inout GroupAccess, uid: String, onlyIfMuted: Bool) throws(ModerationError)
        -> LiftResult
    {
        let target = try requireUser(uid)
        try access.requireNotSelf(uid)
        let membership = try requireMembership(access, uid: uid)
        let state = MuteState(membership, at: now)
        guard state.active != nil else {
            guard onlyIfMuted else { throw .userNotMuted(uid, access.guid) }
            try expireMute(state, of: target.user, in: &access)
            return LiftResult(action: nil)
        }
        try access.requireOutranks(access.rank(of: uid, membership: membership), toDo: "unmute \(uid)")
        try tx.setMemberMute(groupID: access.groupID, uid: uid, mute: nil)
        access.stored.group.version += 1
        let action = try record(.unmuted, on: target.user, group: access.stored)
        return LiftResult(action: action)
    }

    /// Converts a mute past its expiry that the change met: lifts it and appends an `unmuted`
    /// action (reason "expired", by the app) before whatever the change records. Called after
    /// every check has passed, so a failing change writes nothing.
    mutating func expireMute(_ state: MuteState, of user: User, in access: inout GroupAccess) throws(ModerationError) {
        guard case .expired = state else { return }
        try tx.setMemberMute(groupID: access.groupID, uid: user.uid, mute: nil)
        access.stored.group.version += 1
        _ = try record(.unmuted, on: user, group: access.stored, by: .app, reason: "expired")
    }

    /// Ends any mute of a member who becomes the owner (the owner is never muted): one in force
    /// is lifted by the actor (`unmuted`, reason "ownershipTransferred"), an expired one converted.
    mutating func endMuteOfNewOwner(_ membership: Membership, of user: User, in access: inout GroupAccess)
        throws(ModerationError)
    {
        let state = MuteState(membership, at: now)
        guard state.active != nil else {
            try expireMute(state, of: user, in: &access)
            return
        }
        try tx.setMemberMute(groupID: access.groupID, uid: user.uid, mute: nil)
        access.stored.group.version += 1
        _ = try record(.unmuted, on: user, group: access.stored, reason: "ownershipTransferred")
    }

    private func member(_ user: User, _ membership: Membership, mute: Mute) -> Member {
        Member(
            uid: user.uid, name: user.name, avatar: user.avatar, scope: membership.scope,
            joinedAt: membership.joinedAt, mute: mute)
    }
}
