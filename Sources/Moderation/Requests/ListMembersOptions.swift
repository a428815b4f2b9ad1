/// Paging and filters of `ListMembers`.
public struct ListMembersOptions: Sendable, Equatable {
    /// Page size 1–100; 0 means the default of 30.
    public var limit: Int
    /// A previous page's `nextCursor`; empty starts at the beginning.
    public var cursor: String
    /// Only members with these scopes; empty means all.
    public var scopes: Set<Scope>
    /// Case-insensitive substring of the uid or the name; empty means no filter.
    public var search: String
    /// Only members muted now.
    public var mutedOnly: Bool

    public init(
        limit: Int = 0, cursor: String = "", scopes: Set<Scope> = [], search: String = "", mutedOnly: Bool = false
    ) {
        self.limit = limit
        self.cursor = cursor
        self.scopes = scopes
        self.search = search
        self.mutedOnly = mutedOnly
    }
}
