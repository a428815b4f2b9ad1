/// Keyset position in a member list, sorted by (joinedAt, uid).
public struct MemberKey: Sendable, Equatable {
    public var joinedAt: Int64
    public var uid: String

    public init(joinedAt: Int64, uid: String) {
        self.joinedAt = joinedAt
        self.uid = uid
    }
}

/// Keyset position in a banned list, sorted by (bannedAt descending, uid).
public struct BanKey: Sendable, Equatable {
    public var bannedAt: Int64
    public var uid: String

    public init(bannedAt: Int64, uid: String) {
        self.bannedAt = bannedAt
        self.uid = uid
    }
}

/// Keyset position in a group list, sorted by (createdAt, guid).
public struct GroupKey: Sendable, Equatable {
    public var createdAt: Int64
    public var guid: String

    public init(createdAt: Int64, guid: String) {
        self.createdAt = createdAt
        self.guid = guid
    }
}
