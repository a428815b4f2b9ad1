/// A current member of a group, with the profile fields lists show.
public struct Member: Sendable, Equatable {
    public var uid: String
    public var name: String
    public var avatar: String
    public var scope: Scope
    /// When the member joined or was added, Unix milliseconds.
    public var joinedAt: Int64

    public init(uid: String, name: String, avatar: String, scope: Scope, joinedAt: Int64) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.scope = scope
        self.joinedAt = joinedAt
    }
}
