/// What `CheckPost` needs to know about one user in one group, read together (one index lookup
/// per pair on SQLite, one statement per call on PostgreSQL): the group's type and freeze, the
/// user's membership and, for a non-member, the expiry of their ban.
public struct PostingStanding: Sendable, Equatable {
    public var groupType: GroupType
    public var frozen: Bool
    /// The user's membership (its mute included); nil for a non-member.
    public var membership: Membership?
    /// For a non-member: the expiry of their ban row (0: permanent), whether or not it has passed;
    /// nil when there is none. Not read for a member (a member is never banned).
    public var banExpiresAt: Int64?

    public init(groupType: GroupType, frozen: Bool, membership: Membership?, banExpiresAt: Int64?) {
        self.groupType = groupType
        self.frozen = frozen
        self.membership = membership
        self.banExpiresAt = banExpiresAt
    }
}
