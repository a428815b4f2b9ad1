/// What `CheckPost` needs to know about one user in one group, read together (one index lookup
/// per pair on SQLite, one statement per call on PostgreSQL): the group's type and freeze, the
/// user's membership and, for a non-member, the expiry of their ban; and the user's ban from the
/// app.
///
/// Plain values only (no strings): a store keeps one per pair it has answered and copies it for
/// every pair of every call, so it must copy like the integers it is.
public struct PostingStanding: Sendable, Equatable {
    public var groupType: GroupType
    public var frozen: Bool
    /// The user's membership; nil for a non-member.
    public var membership: PostingMembership?
    /// For a non-member: the expiry of their ban row (0: permanent), whether or not it has passed;
    /// nil when there is none. Not read for a member (a member is never banned).
    public var banExpiresAt: Int64?
    /// The user's ban from the app, in force or past its expiry (the rules decide); nil when
    /// there is none.
    public var appBan: AppBanStanding?

    public init(
        groupType: GroupType, frozen: Bool, membership: PostingMembership?, banExpiresAt: Int64?,
        appBan: AppBanStanding? = nil
    ) {
        self.groupType = groupType
        self.frozen = frozen
        self.membership = membership
        self.banExpiresAt = banExpiresAt
        self.appBan = appBan
    }
}

/// What CheckPost needs of a membership: the member's scope and mute, without the mute's reason.
public struct PostingMembership: Sendable, Equatable {
    public var scope: Scope
    /// The mute's expiry (0: until unmuted), also one past its expiry that the sweeper has not
    /// recorded yet (the rules decide); nil when not muted.
    public var muteExpiresAt: Int64?

    public init(scope: Scope, muteExpiresAt: Int64?) {
        self.scope = scope
        self.muteExpiresAt = muteExpiresAt
    }

    public init(_ membership: Membership) {
        self.init(scope: membership.scope, muteExpiresAt: membership.mute?.expiresAt)
    }

    /// The mute, for the rules that judge one (`Mute.isActive(at:)`, `Mute.mutedUntil`).
    public var mute: Mute? { muteExpiresAt.map { Mute(expiresAt: $0) } }
}
