/// What a reader below moderator does not see: the reasons given with a freeze and a mute, which
/// are for a group's admins, moderators and the app. Applied where the service hands out a group,
/// a member or a member state; and a mute past its expiry is no mute to anyone, whether or not
/// the sweeper has recorded it.
enum Redaction {
    /// `group` as a reader of `rank` sees it.
    static func group(_ group: Group, for rank: Rank) -> Group {
        guard !rank.isModeratorOrAbove, !group.frozenReason.isEmpty else { return group }
        var seen = group
        seen.frozenReason = ""
        return seen
    }

    /// `mute` as a reader of `rank` sees it at `now`: nil once it has ended.
    static func mute(_ mute: Mute?, for rank: Rank, at now: Int64) -> Mute? {
        guard var mute, mute.isActive(at: now) else { return nil }
        if !rank.isModeratorOrAbove { mute.reason = "" }
        return mute
    }

    /// `member` as a reader of `rank` sees them at `now`.
    static func member(_ member: Member, for rank: Rank, at now: Int64) -> Member {
        guard member.mute != nil else { return member }
        var seen = member
        seen.mute = mute(member.mute, for: rank, at: now)
        return seen
    }
}
