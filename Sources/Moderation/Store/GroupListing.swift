/// A group in a list, with the viewer's membership.
public struct GroupListing: Sendable, Equatable {
    public var group: StoredGroup
    /// The viewer's membership; nil for a non-member or the app.
    public var membership: Membership?

    public init(group: StoredGroup, membership: Membership?) {
        self.group = group
        self.membership = membership
    }
}
