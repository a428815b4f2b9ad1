/// A change to a group's fields (`UpdateGroup`): nil leaves a field as it is.
///
/// `type`, `password` and `joinRequests` need an admin (or the owner, or the app); the other fields a moderator.
/// The RPC adapter resolves the proto `update_mask` into these optionals.
public struct GroupUpdate: Sendable, Equatable {
    public var guid: String
    public var name: String?
    public var icon: String?
    public var description: String?
    public var type: GroupType?
    /// A new password; required when the type becomes `password`.
    public var password: String?
    public var metadata: [String: String]?
    public var tags: [String]?
    /// Whether non-members may ask to join (admin only).
    public var joinRequests: Bool?
    /// When set, the change applies only if the group's version equals it.
    public var ifVersion: UInt64?

    public init(
        guid: String, name: String? = nil, icon: String? = nil, description: String? = nil, type: GroupType? = nil,
        password: String? = nil, metadata: [String: String]? = nil, tags: [String]? = nil, ifVersion: UInt64? = nil,
        joinRequests: Bool? = nil
    ) {
        self.guid = guid
        self.name = name
        self.icon = icon
        self.description = description
        self.type = type
        self.password = password
        self.metadata = metadata
        self.tags = tags
        self.ifVersion = ifVersion
        self.joinRequests = joinRequests
    }

    /// True when it touches `type`, `password` or `joinRequests` (admin-only fields).
    var touchesAdminFields: Bool { type != nil || password != nil || joinRequests != nil }

    /// True when it changes nothing at all.
    var isEmpty: Bool {
        name == nil && icon == nil && description == nil && type == nil && password == nil && metadata == nil
            && tags == nil && joinRequests == nil
    }
}
