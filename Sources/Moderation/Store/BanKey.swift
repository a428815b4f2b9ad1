/// Keyset position in a banned list, sorted by (bannedAt descending, uid).
public struct BanKey: Sendable, Equatable {
    public var bannedAt: Int64
    public var uid: String

    public init(bannedAt: Int64, uid: String) {
        self.bannedAt = bannedAt
        self.uid = uid
    }
}
