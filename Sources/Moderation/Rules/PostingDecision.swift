/// The rule of `CheckPost`: may a user post in a group now, from what the store read about them
/// (`PostingStanding`)?
///
/// The answer depends only on the group and the user, never on who asks, and is checked in this
/// order: the group exists (`ERR_GROUP_NOT_FOUND`); for a non-member, a ban in force
/// (`ERR_BANNED_GROUPMEMBER`, any type of group: the banned user knows the group, as GetGroup
/// tells them), else a private group is as missing (`ERR_GROUP_NOT_FOUND`: its existence never
/// leaks), else `ERR_GROUP_NOT_JOINED`; for a member, a mute in force (`ERR_MEMBER_MUTED` with
/// its `muted_until`), then a freeze, which only moderators and above pass (`ERR_GROUP_FROZEN`).
/// Only then the user's ban from the app: a ban in force refuses (`ERR_USER_BANNED_FROM_APP`), a
/// shadow ban allows the post marked `shadowed`; a ban past its expiry counts for nothing.
enum PostingDecision {
    static func verdict(_ standing: PostingStanding?, at now: Int64) -> PostVerdict {
        guard let standing else { return PostVerdict(refusal: .groupNotFound) }
        guard let membership = standing.membership else {
            if let expiry = standing.banExpiresAt, expiry == 0 || expiry > now {
                return PostVerdict(refusal: .bannedGroupMember)
            }
            return PostVerdict(refusal: standing.groupType == .private ? .groupNotFound : .groupNotJoined)
        }
        if let mute = membership.mute, mute.isActive(at: now) {
            return PostVerdict(refusal: .memberMuted, mutedUntil: mute.mutedUntil)
        }
        if standing.frozen && !membership.scope.rank.isModeratorOrAbove {
            return PostVerdict(refusal: .groupFrozen)
        }
        guard let appBan = standing.appBan, appBan.isActive(at: now) else { return .allowed }
        return appBan.shadow ? .shadowed : PostVerdict(refusal: .userBannedFromApp)
    }
}
