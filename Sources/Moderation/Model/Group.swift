/// A group as stored, without anything specific to who looks at it and without its password.
///
/// Action log entries carry a `Group` as the snapshot of the group right after the change.
public struct Group: Sendable, Equatable {
    /// Unique within the app: 1–100 characters of `[a-z0-9_-]`.
    public var guid: String
    /// Display name (1–100 characters).
    public var name: String
    /// Icon URL (≤ 3000 characters).
    public var icon: String
    /// Description (≤ 255 characters).
    public var description: String
    /// Who may see and join it.
    public var type: GroupType
    /// Free-form metadata (≤ 5 KB in all).
    public var metadata: [String: String]
    /// Tags (≤ 25, each 1–100 characters).
    public var tags: [String]
    /// UID of the owner, who is always a member with scope admin.
    public var owner: String
    /// Number of members, exact.
    public var membersCount: Int
    /// Bumped by every change to the group, its membership or its bans.
    public var version: UInt64
    /// Creation time, Unix milliseconds.
    public var createdAt: Int64
    /// Last change to the group's own fields (not its membership), Unix milliseconds.
    public var updatedAt: Int64
    /// True while the group is frozen: only its moderators and admins may post.
    public var frozen: Bool
    /// Why the group was frozen; empty when it is not. Shown to its admins, moderators and the
    /// app only, and never part of an action's snapshot.
    public var frozenReason: String
    /// True when non-members may ask to join (`RequestToJoin`); set by admins.
    public var joinRequests: Bool

    public init(
        guid: String, name: String, icon: String = "", description: String = "", type: GroupType,
        metadata: [String: String] = [:], tags: [String] = [], owner: String, membersCount: Int = 0,
        version: UInt64 = 0, createdAt: Int64 = 0, updatedAt: Int64 = 0, frozen: Bool = false,
        frozenReason: String = "", joinRequests: Bool = false
    ) {
        self.guid = guid
        self.name = name
        self.icon = icon
        self.description = description
        self.type = type
        self.metadata = metadata
        self.tags = tags
        self.owner = owner
        self.membersCount = membersCount
        self.version = version
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.frozen = frozen
        self.frozenReason = frozenReason
        self.joinRequests = joinRequests
    }
}

extension Group {
    /// No group: what the actions of the whole app (`ActionRecord.isAppWide`) show as their group
    /// (an empty guid; the wire leaves `action_for` out).
    public static let appWide = Group(guid: "", name: "", type: .public, owner: "")
}
