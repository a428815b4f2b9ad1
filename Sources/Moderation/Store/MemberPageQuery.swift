/// One page of a group's members, as the store reads it: keyset, filters, size.
public struct MemberPageQuery: Sendable, Equatable {
    /// Start after this position; nil starts at the beginning.
    public var after: MemberKey?
    /// Only these scopes; empty means all.
    public var scopes: Set<Scope>
    /// Substring of the uid or the folded name, already folded with `TextFolding.fold`; empty
    /// means no filter.
    public var search: String
    /// How many rows at most.
    public var limit: Int
    /// Only members whose mute applies at this time (until unmuted, or expiring after it), Unix
    /// milliseconds; nil for every member.
    public var mutedAt: Int64?

    public init(
        after: MemberKey? = nil, scopes: Set<Scope> = [], search: String = "", limit: Int, mutedAt: Int64? = nil
    ) {
        self.after = after
        self.scopes = scopes
        self.search = search
        self.limit = limit
        self.mutedAt = mutedAt
    }

    /// The first page of every member, unfiltered: the page a cache of member pages keeps.
    public var isWholeFirstPage: Bool {
        after == nil && search.isEmpty && mutedAt == nil && (scopes.isEmpty || scopes.count == Scope.allCases.count)
    }
}
