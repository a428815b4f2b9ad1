/// The fields of a group to create (`CreateGroup`), with its initial members and bans.
public struct NewGroup: Sendable, Equatable {
    public var guid: String
    public var name: String
    public var icon: String
    public var description: String
    public var type: GroupType
    /// Required (non-empty) for a password group; must be empty for the other types.
    public var password: String
    public var metadata: [String: String]
    public var tags: [String]
    /// The owner: required when the app creates the group; a user may give only their own uid.
    public var owner: String?
    /// Users to add at creation (≤ 100), with their scopes.
    public var members: [MemberGrant]
    /// Users to ban at creation (≤ 100).
    public var bannedUIDs: [String]

    public init(
        guid: String, name: String, icon: String = "", description: String = "", type: GroupType = .public,
        password: String = "", metadata: [String: String] = [:], tags: [String] = [], owner: String? = nil,
        members: [MemberGrant] = [], bannedUIDs: [String] = []
    ) {
        self.guid = guid
        self.name = name
        self.icon = icon
        self.description = description
        self.type = type
        self.password = password
        self.metadata = metadata
        self.tags = tags
        self.owner = owner
        self.members = members
        self.bannedUIDs = bannedUIDs
    }
}
