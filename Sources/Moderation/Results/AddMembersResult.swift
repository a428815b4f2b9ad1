/// What `AddMembers` returns: a result per uid and the group after the additions.
public struct AddMembersResult: Sendable, Equatable {
    /// Keyed by (lower-cased) uid.
    public var results: [String: UserResult]
    public var group: GroupView
}
