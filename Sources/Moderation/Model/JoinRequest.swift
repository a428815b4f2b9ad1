/// A non-member's pending request to join a group ("knock"), until an admin or moderator
/// approves or rejects it, the user cancels it, or joins, is added, banned or deleted.
public struct JoinRequest: Sendable, Equatable {
    /// The requesting user.
    public var uid: String
    /// The requesting user's display name.
    public var name: String
    /// The requesting user's avatar URL.
    public var avatar: String
    /// What the user wrote (≤ 255 characters); for the group's admins and moderators.
    public var message: String
    /// When the request was made, Unix milliseconds.
    public var requestedAt: Int64

    public init(uid: String, name: String = "", avatar: String = "", message: String, requestedAt: Int64) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.message = message
        self.requestedAt = requestedAt
    }
}
