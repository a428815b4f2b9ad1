internal import Moderation

/// What the writer remembers between statements: users, groups, memberships and bans it has read
/// or written, and which groups' counters still have to be written before the batch commits.
///
/// It may hold data of the open transaction, so every change is logged (`undo`); undoing a
/// failed write or a nested savepoint replays the log back to the mark taken before it, and a
/// failed transaction clears everything. Readers never see it: they read committed rows.
struct WriterCache {
    // Invariant: every stored property is private or private(set), and every mutating method
    // but `committed()` (which ends the transaction) logs what it replaces, so `rollback(to:)`
    // undoes any change made after a mark — the group counters kept here until commit included.
    struct UserKey: Hashable {
        let appID: Int64
        let uid: String
    }

    struct GroupKey: Hashable {
        let appID: Int64
        let guid: String
    }

    /// A user in a group (memberships and bans).
    struct EntryKey: Hashable {
        let groupID: Int64
        let uid: String
    }

    /// A cached lookup: `.some(nil)` records that there is no row.
    typealias Known<Value> = Value??

    enum Undo {
        case user(UserKey, StoredUser?)
        case group(GroupKey, StoredGroup?)
        case dirty(GroupKey, Bool)
        case membership(EntryKey, Known<Membership>)
        case ban(EntryKey, Known<Ban>)
    }

    /// Above this many entries the cache is emptied at the next commit.
    static let limit = 100_000

    private(set) var users: [UserKey: StoredUser] = [:]
    private var memberships: [EntryKey: Membership?] = [:]
    private var bans: [EntryKey: Ban?] = [:]
    private(set) var groups: [GroupKey: StoredGroup] = [:]
    private(set) var appOfGroup: [Int64: Int64] = [:]
    /// Groups whose counters changed in the cache but not yet in their row.
    private(set) var dirty: Set<GroupKey> = []
    private var undo: [Undo] = []

    var mark: Int { undo.count }

    func user(_ key: UserKey) -> StoredUser? { users[key] }
    func membership(_ key: EntryKey) -> Known<Membership> { memberships[key] }
    func ban(_ key: EntryKey) -> Known<Ban> { bans[key] }

    mutating func set(_ key: EntryKey, membership: Membership?) {
        undo.append(.membership(key, memberships[key]))
        memberships[key] = .some(membership)
    }

    mutating func set(_ key: EntryKey, ban: Ban?) {
        undo.append(.ban(key, bans[key]))
        bans[key] = .some(ban)
    }

    /// Forgets every membership and ban (a group was deleted with all of its rows).
    mutating func forgetEntries() {
        for (key, value) in memberships { undo.append(.membership(key, .some(value))) }
        for (key, value) in bans { undo.append(.ban(key, .some(value))) }
        memberships.removeAll()
        bans.removeAll()
    }
    func group(_ key: GroupKey) -> StoredGroup? { groups[key] }

    /// The cache key of a group the writer holds (nil when it holds no group with that id).
    func key(ofGroup id: Int64, guid: String) -> GroupKey? {
        guard let appID = appOfGroup[id] else { return nil }
        let key = GroupKey(appID: appID, guid: guid)
        return groups[key]?.id == id ? key : nil
    }

    mutating func set(_ key: UserKey, _ user: StoredUser?) {
        undo.append(.user(key, users[key]))
        users[key] = user
    }

    mutating func set(_ key: GroupKey, _ group: StoredGroup?) {
        undo.append(.group(key, groups[key]))
        // A deleted group's id is never used again: forget it, or every group ever deleted
        // would stay in `appOfGroup` (which the size limit does not count).
        if group == nil, let previous = groups[key] { appOfGroup[previous.id] = nil }
        groups[key] = group
        if let group { appOfGroup[group.id] = key.appID }
    }

    mutating func setDirty(_ key: GroupKey, _ isDirty: Bool) {
        undo.append(.dirty(key, dirty.contains(key)))
        if isDirty { dirty.insert(key) } else { dirty.remove(key) }
    }

    /// Undoes every change made after `mark`.
    mutating func rollback(to mark: Int) {
        while undo.count > mark {
            switch undo.removeLast() {
            case .user(let key, let previous): users[key] = previous
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

    /// After a commit: the log is no longer needed; a cache grown too big is emptied.
    mutating func committed() {
        undo.removeAll(keepingCapacity: true)
        dirty.removeAll()
        if users.count + groups.count + memberships.count + bans.count > Self.limit { self = WriterCache() }
    }
}
