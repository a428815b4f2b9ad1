/// One user's membership and ban state in a group (`GetMemberState`).
public struct MemberState: Sendable, Equatable {
    public var isMember: Bool
    /// The member's scope; nil when not a member.
    public var scope: Scope?
    /// When the user joined, Unix milliseconds; 0 when not a member.
    public var joinedAt: Int64
    public var isOwner: Bool
    /// True when a ban applies now.
    public var isBanned: Bool
    /// The ban record, when banned.
    public var ban: Ban?
    /// The group's current version.
    public var groupVersion: UInt64
    /// The member's mute in effect; nil when not muted (its reason empty unless the reader is an
    /// admin, moderator or the app).
    public var mute: Mute?
}
