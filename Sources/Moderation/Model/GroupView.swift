/// A group as one acting user sees it: the group plus that user's own standing in it.
public struct GroupView: Sendable, Equatable {
    /// The group.
    public var group: Group
    /// True when the acting user is a member.
    public var hasJoined: Bool = false
    /// The acting user's scope when a member.
    public var scope: Scope?
    /// When the acting user joined, Unix milliseconds; 0 when not a member.
    public var joinedAt: Int64 = 0
    /// True when the acting user is banned from the group now.
    public var isBanned: Bool = false
}
