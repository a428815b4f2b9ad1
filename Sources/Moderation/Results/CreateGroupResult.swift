/// What `CreateGroup` returns: the new group as its creator sees it and a result per initial
/// member and ban.
public struct CreateGroupResult: Sendable, Equatable {
    public var group: GroupView
    /// Keyed by (lower-cased) uid.
    public var results: [String: UserResult]
}
