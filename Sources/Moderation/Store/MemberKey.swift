/// Keyset position in a member list, sorted by (joinedAt, uid).
public struct MemberKey: Sendable, Equatable {
    public var joinedAt: Int64
    public var uid: String

    public init(joinedAt: Int64, uid: String) {
        self.joinedAt = joinedAt
        self.uid = uid
    }
}
