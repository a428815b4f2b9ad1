/// A user's membership row in a group: what the rules need to know about a member.
public struct Membership: Sendable, Equatable {
    public var scope: Scope
    public var joinedAt: Int64
    /// The member's mute, also one past its expiry that the sweeper has not recorded yet (the
    /// rules decide); nil when not muted.
    public var mute: Mute?

    public init(scope: Scope, joinedAt: Int64, mute: Mute? = nil) {
        self.scope = scope
        self.joinedAt = joinedAt
        self.mute = mute
    }
}
