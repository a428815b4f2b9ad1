/// A user's membership row in a group: what the rules need to know about a member.
public struct Membership: Sendable, Equatable {
    public var scope: Scope
    public var joinedAt: Int64

    public init(scope: Scope, joinedAt: Int64) {
        self.scope = scope
        self.joinedAt = joinedAt
    }
}
