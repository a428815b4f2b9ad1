/// Paging and filters of `ListBannedMembers`, and of `ListAppBans`, which pages the same way.
public struct ListBannedOptions: Sendable, Equatable {
    /// Page size 1–100; 0 means the default of 30.
    public var limit: Int
    /// A previous page's `nextCursor`; empty starts at the beginning.
    public var cursor: String
    /// Case-insensitive substring of the uid or the name; empty means no filter.
    public var search: String

    public init(limit: Int = 0, cursor: String = "", search: String = "") {
        self.limit = limit
        self.cursor = cursor
        self.search = search
    }
}
