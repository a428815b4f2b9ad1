/// One page of a group's pending join requests, as the store reads it, sorted by (requestedAt,
/// uid).
public struct JoinRequestPageQuery: Sendable, Equatable {
    /// Start after this position; nil starts at the beginning.
    public var after: MemberKey?
    /// How many rows at most.
    public var limit: Int

    public init(after: MemberKey? = nil, limit: Int) {
        self.after = after
        self.limit = limit
    }
}
