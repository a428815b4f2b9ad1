/// Keyset position in a group list, sorted by (createdAt, guid).
public struct GroupKey: Sendable, Equatable {
    public var createdAt: Int64
    public var guid: String

    public init(createdAt: Int64, guid: String) {
        self.createdAt = createdAt
        self.guid = guid
    }
}
