/// One page of live invites, as the store reads it: a group's (keyed by uid) or a user's across
/// groups (keyed by guid), sorted by (invitedAt descending, key).
public struct InvitePageQuery: Sendable, Equatable {
    /// Start after this position; nil starts at the beginning.
    public var after: InviteKey?
    /// How many rows at most.
    public var limit: Int
    /// Only invites live at this time (expiring after it), Unix milliseconds.
    public var liveAt: Int64

    public init(after: InviteKey? = nil, limit: Int, liveAt: Int64) {
        self.after = after
        self.limit = limit
        self.liveAt = liveAt
    }
}
