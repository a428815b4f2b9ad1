internal import Moderation

/// What the writer remembers within one transaction: users, groups, memberships and bans it has
/// read or written, and which groups' counters still have to be written before COMMIT.
///
/// Valid only inside the transaction that filled it: every row it holds belongs to an app whose
/// lock the transaction holds, so no other writer can change it until COMMIT; the cache is
/// emptied when the transaction ends (another instance may write the app next). Every change is
/// logged, so undoing a failed write or a rolled-back savepoint replays the log back to the mark
/// taken before it.
struct TransactionCache {
    // Invariant: every stored property is private or private(set), and every mutating method but
    // `reset()` logs what it replaces, so `rollback(to:)` undoes any change made after a mark.
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

    private enum Undo {
        case user(UserKey, StoredUser?)
        case group(GroupKey, StoredGroup?)
        case dirty(GroupKey, Bool)
        case membership(EntryKey, Known<Membership>)
        case ban(EntryKey, Known<Ban>)
    }

    private var users: [UserKey: StoredUser] = [:]
    private var memberships: [EntryKey: Membership?] = [:]
    private var bans: [EntryKey: Ban?] = [:]
    private var groups: [GroupKey: StoredGroup] = [:]
    private var appOfGroup: [Int64: Int64] = [:]
    private var appOfUserID: [Int64: Int64] = [:]
    /// Groups whose counters changed in the cache but not yet in their row.
    private(set) var dirty: Set<GroupKey> = []
    private var undo: [Undo] = []

    var mark: Int { undo.count }

    func user(_ key: UserKey) -> StoredUser? { users[key] }
    func membership(_ key: EntryKey) -> Known<Membership> { memberships[key] }
    func ban(_ key: EntryKey) -> Known<Ban> { bans[key] }
    func group(_ key: GroupKey) -> StoredGroup? { groups[key] }

    /// The app of a user the writer holds (nil when it holds no user with that id).
    func appOfUser(_ id: Int64) -> Int64? { appOfUserID[id] }

    /// The cache key of a group the writer holds (nil when it holds no group with that id).
    func key(ofGroup id: Int64, guid: String) -> GroupKey? {
        guard let appID = appOfGroup[id] else { return nil }
        let key = GroupKey(appID: appID, guid: guid)
        return groups[key]?.id == id ? key : nil
    }

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

    mutating func set(_ key: UserKey, _ user: StoredUser?) {
        undo.append(.user(key, users[key]))
        users[key] = user
        if let user { appOfUserID[user.id] = key.appID }
    }

    mutating func set(_ key: GroupKey, _ group: StoredGroup?) {
        undo.append(.group(key, groups[key]))
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

    /// The transaction ended (committed or rolled back): nothing here may be trusted any more.
    mutating func reset() {
        self = TransactionCache()
    }
}
