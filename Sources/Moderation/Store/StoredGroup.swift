/// A group as a store holds it: the domain value, its password hash, and the store's keys.
///
/// `revision` numbers the group's descriptive state (every field but `membersCount` and
/// `version`): a store records each revision once and lets action log entries refer to it, so an
/// entry does not copy the group's metadata. It changes only through
/// `StoreTransaction.updateGroup(_:descriptive: true)`.
public struct StoredGroup: Sendable, Equatable {
    /// The store's key for the group; never reused, even after the group is deleted.
    public var id: Int64
    /// The descriptive revision, starting at 1.
    public var revision: UInt64
    public var group: Group
    /// The argon2id hash string of a password group's password; nil for the other types.
    public var passwordHash: String?

    public init(id: Int64, revision: UInt64, group: Group, passwordHash: String?) {
        self.id = id
        self.revision = revision
        self.group = group
        self.passwordHash = passwordHash
    }
}

extension StoredGroup {
    /// No group: what `StoreTransaction.appendAction` is given for an action of the whole app.
    /// Key 0, which no stored group has (group keys start at 1).
    public static let appWide = StoredGroup(id: 0, revision: 0, group: .appWide, passwordHash: nil)
}
