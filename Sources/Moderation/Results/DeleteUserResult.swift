/// What `DeleteUser` returns: what the deletion recorded.
public struct DeleteUserResult: Sendable, Equatable {
    /// Groups the user left (a `left` action, reason `userDeleted`, in each).
    public var groupsLeft = 0
    /// Bans of the user that were dropped (a `userDeleted` action in each group).
    public var bansDropped = 0
    /// Seq of the last action recorded; 0 when the user had no standing in any group.
    public var lastSeq: UInt64 = 0
}
