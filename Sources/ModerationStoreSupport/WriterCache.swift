public import Moderation

/// What a store's writer remembers between statements: users, groups, memberships and bans it
/// has read or written, and which groups' counters still have to be written before the
/// transaction commits. One type for both stores: the SQLite writer keeps it across transactions
/// (`committed()`: it is the only writer), the PostgreSQL writer empties it when a transaction
/// ends (`reset()`: another instance may write the app next).
///
/// It may hold data of the open transaction, so every change is logged (`undo`); undoing a
/// failed write or a nested savepoint replays the log back to the mark taken before it, and a
/// failed transaction clears everything. Readers never see it: they read committed rows.
///
/// A class, owned by one session: as a struct kept in the session (itself a class), every lookup
/// copied it, retaining and releasing each of its tables, several times a write.
public final class WriterCache {
    // Invariant: every stored property is private or private(set), and every method that changes it
    // but `committed()` and `reset()` (which end the transaction) logs what it replaces, so
    // `rollback(to:)` undoes any change made after a mark — the group counters kept here until
    // commit included.
    public struct UserKey: Hashable {
        public let appID: Int64
        public let uid: String

        public init(appID: Int64, uid: String) {
            self.appID = appID
            self.uid = uid
        }
    }

    public struct GroupKey: Hashable {
        public let appID: Int64
        public let guid: String

        public init(appID: Int64, guid: String) {
            self.appID = appID
            self.guid = guid
        }
    }

    /// A cached lookup: `.some(nil)` records that there is no row.
    public typealias Known<Value> = Value??

    private enum Undo {
        case user(UserKey, StoredUser?)
        case group(GroupKey, StoredGroup?)
        case dirty(GroupKey, Bool)
        case membership(GroupUserKey, Known<Membership>)
        case ban(GroupUserKey, Known<Ban>)
    }

    /// Above this many entries the cache is emptied at the next commit.
    public static let limit = 100_000

    private var users: [UserKey: StoredUser] = [:]
    private var memberships: [GroupUserKey: Membership?] = [:]
    private var bans: [GroupUserKey: Ban?] = [:]
    private var groups: [GroupKey: StoredGroup] = [:]
    /// The app of every group and user held, by row id: a deleted one's entry goes with it.
    public private(set) var appOfGroup: [Int64: Int64] = [:]
    private var appOfUserID: [Int64: Int64] = [:]
    /// Groups whose counters changed in the cache but not yet in their row.
    public private(set) var dirty: Set<GroupKey> = []
    private var undo: [Undo] = []

    public init() {}

    public var mark: Int { undo.count }

    public func user(_ key: UserKey) -> StoredUser? { users[key] }
    public func membership(_ key: GroupUserKey) -> Known<Membership> { memberships[key] }
    public func ban(_ key: GroupUserKey) -> Known<Ban> { bans[key] }

    /// The app of a user the writer holds (nil when it holds no user with that id).
    public func appOfUser(_ id: Int64) -> Int64? { appOfUserID[id] }

    public func set(_ key: GroupUserKey, membership: Membership?) {
        undo.append(.membership(key, memberships[key]))
        memberships[key] = .some(membership)
    }

    public func set(_ key: GroupUserKey, ban: Ban?) {
        undo.append(.ban(key, bans[key]))
        bans[key] = .some(ban)
    }

    /// A membership just inserted: as its row reads back, without a mute (a new member is never
    /// muted).
    public func setInserted(_ membership: Membership, groupID: Int64, uid: String) {
        var inserted = membership
        inserted.mute = nil
        set(GroupUserKey(groupID: groupID, uid: uid), membership: inserted)
    }

    /// A ban just inserted: as its row reads back, joined to its user's name and avatar.
    public func setInserted(_ ban: Ban, groupID: Int64, user: StoredUser) {
        var inserted = ban
        inserted.name = user.user.name
        inserted.avatar = user.user.avatar
        set(GroupUserKey(groupID: groupID, uid: user.user.uid), ban: inserted)
    }

    /// Changes a membership held here after its row changed (nothing when none is held, or the
    /// one held is an absence).
    public func updateMembership(_ key: GroupUserKey, _ change: (inout Membership) -> Void) {
        guard let known = memberships[key], var membership = known else { return }
        change(&membership)
        set(key, membership: membership)
    }

    /// Forgets every membership and ban (a group was deleted with all of its rows).
    public func forgetEntries() {
        for (key, value) in memberships { undo.append(.membership(key, .some(value))) }
        for (key, value) in bans { undo.append(.ban(key, .some(value))) }
        memberships.removeAll()
        bans.removeAll()
    }

    public func group(_ key: GroupKey) -> StoredGroup? { groups[key] }

    /// The cache key of a group the writer holds (nil when it holds no group with that id).
    public func key(ofGroup id: Int64, guid: String) -> GroupKey? {
        guard let appID = appOfGroup[id] else { return nil }
        let key = GroupKey(appID: appID, guid: guid)
        return groups[key]?.id == id ? key : nil
    }

    public func set(_ key: UserKey, _ user: StoredUser?) {
        undo.append(.user(key, users[key]))
        if user == nil, let previous = users[key] { appOfUserID[previous.id] = nil }
        users[key] = user
        if let user { appOfUserID[user.id] = key.appID }
    }

    public func set(_ key: GroupKey, _ group: StoredGroup?) {
        undo.append(.group(key, groups[key]))
        // A deleted group's id is never used again: forget it, or every group ever deleted
        // would stay in `appOfGroup` (which the size limit does not count).
        if group == nil, let previous = groups[key] { appOfGroup[previous.id] = nil }
        groups[key] = group
        if let group { appOfGroup[group.id] = key.appID }
    }

    public func setDirty(_ key: GroupKey, _ isDirty: Bool) {
        undo.append(.dirty(key, dirty.contains(key)))
        if isDirty { dirty.insert(key) } else { dirty.remove(key) }
    }

    /// Keeps a group's new counters (members count and version) here, marked for writing before
    /// the transaction commits: they change with nearly every write, so a batch writes each
    /// group's row once. False when the group is not held: the caller writes them now.
    public func keepCounters(of group: StoredGroup) -> Bool {
        guard let key = key(ofGroup: group.id, guid: group.group.guid) else { return false }
        set(key, group)
        setDirty(key, true)
        return true
    }

    /// Forgets a deleted group, with its counters still to be written and every membership and
    /// ban held (its rows went with it).
    public func forgetDeleted(_ group: StoredGroup) {
        if let key = key(ofGroup: group.id, guid: group.group.guid) {
            set(key, nil)
            setDirty(key, false)
        }
        forgetEntries()
    }

    /// Undoes every change made after `mark`.
    public func rollback(to mark: Int) {
        while undo.count > mark {
            switch undo.removeLast() {
            case .user(let key, let previous):
                users[key] = previous
                if let previous { appOfUserID[previous.id] = key.appID }
            case .group(let key, let previous):
                groups[key] = previous
                if let previous { appOfGroup[previous.id] = key.appID }
            case .dirty(let key, let wasDirty):
                if wasDirty { dirty.insert(key) } else { dirty.remove(key) }
            case .membership(let key, let previous): memberships[key] = previous
            case .ban(let key, let previous): bans[key] = previous
            }
        }
    }

    /// After a commit, for a writer that is its store's only one (SQLite): the rows stay true,
    /// the log is no longer needed; a cache grown too big is emptied.
    public func committed() {
        undo.removeAll(keepingCapacity: true)
        dirty.removeAll()
        if users.count + groups.count + memberships.count + bans.count > Self.limit { reset() }
    }

    /// The transaction ended, for a writer whose rows others may change next (PostgreSQL): nothing
    /// here may be trusted any more.
    public func reset() {
        // Every stored property: the cache is as new.
        users = [:]
        memberships = [:]
        bans = [:]
        groups = [:]
        appOfGroup = [:]
        appOfUserID = [:]
        dirty = []
        undo = []
    }
}
