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

    public init(after: MemberKey? = nil, scopes: Set<Scope> = [], search: String = "", limit: Int) {
        self.after = after
        self.scopes = scopes
        self.search = search
        self.limit = limit
    }
}
