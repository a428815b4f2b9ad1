/// One page of the groups a viewer may see, as the store reads it.
///
/// Visible: every group to the app (`viewer == nil`); to a user, public and password groups and
/// the private groups they are a member of, minus the groups they are banned from now.
public struct GroupPageQuery: Sendable, Equatable {
    /// The acting user; nil for the app.
    public var viewer: String?
    public var after: GroupKey?
    /// Folded substring of the guid or the name; empty means no filter.
    public var search: String = ""
    public var joinedOnly: Bool = false
    /// Empty means all.
    public var types: Set<GroupType> = []
    /// Groups with at least one of these tags; empty means all.
    public var tags: [String] = []
    public var limit: Int
    /// For ban expiry, Unix milliseconds.
    public var now: Int64
}
