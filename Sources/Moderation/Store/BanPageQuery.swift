/// One page of a group's bans in force (or of the app's bans: `StoreSnapshot.appBans`), as the
/// store reads it.
public struct BanPageQuery: Sendable, Equatable {
    /// Start after this position; nil starts at the beginning.
    public var after: BanKey?
    /// Folded substring of the uid or the name; empty means no filter.
    public var search: String
    /// How many rows at most.
    public var limit: Int
    /// Only bans in force at this time (permanent, or expiring after it), Unix milliseconds.
    public var activeAt: Int64

    public init(after: BanKey? = nil, search: String = "", limit: Int, activeAt: Int64) {
        self.after = after
        self.search = search
        self.limit = limit
        self.activeAt = activeAt
    }
}
