/// What `DeleteUser` returns: what the deletion recorded.
public struct DeleteUserResult: Sendable, Equatable {
    /// Groups the user left (a `left` action, reason `userDeleted`, in each).
    public var groupsLeft: Int
    /// Bans of the user that were dropped (a `userDeleted` action in each group).
    public var bansDropped: Int
    /// Seq of the last action recorded; 0 when the user had no standing in any group.
    public var lastSeq: UInt64

    public init(groupsLeft: Int, bansDropped: Int, lastSeq: UInt64) {
        self.groupsLeft = groupsLeft
        self.bansDropped = bansDropped
        self.lastSeq = lastSeq
    }
}
