/// A current member of a group, with the profile fields lists show.
public struct Member: Sendable, Equatable {
    public var uid: String
    public var name: String
    public var avatar: String
    public var scope: Scope
    /// When the member joined or was added, Unix milliseconds.
    public var joinedAt: Int64
    /// The member's mute in effect; nil when not muted. (From a store: also one past its expiry,
    /// which the service drops before anyone sees it.)
    public var mute: Mute?

    public init(uid: String, name: String, avatar: String, scope: Scope, joinedAt: Int64, mute: Mute? = nil) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.scope = scope
        self.joinedAt = joinedAt
        self.mute = mute
    }
}
