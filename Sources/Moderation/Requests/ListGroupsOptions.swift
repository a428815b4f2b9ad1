/// Paging and filters of `ListGroups`.
public struct ListGroupsOptions: Sendable, Equatable {
    /// Page size 1–100; 0 means the default of 30.
    public var limit: Int
    /// A previous page's `nextCursor`; empty starts at the beginning.
    public var cursor: String
    /// Case-insensitive substring of the guid or the name; empty means no filter.
    public var search: String
    /// Only groups the acting user is a member of.
    public var joinedOnly: Bool
    /// Only groups of these types; empty means all.
    public var types: Set<GroupType>
    /// Only groups carrying at least one of these tags; empty means all.
    public var tags: [String]

    public init(
        limit: Int = 0, cursor: String = "", search: String = "", joinedOnly: Bool = false, types: Set<GroupType> = [],
        tags: [String] = []
    ) {
        self.limit = limit
        self.cursor = cursor
        self.search = search
        self.joinedOnly = joinedOnly
        self.types = types
        self.tags = tags
    }
}
