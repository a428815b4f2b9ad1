internal import Moderation
internal import ModerationStoreSupport

extension PostgresSession {
    /// A live user. A writer in the middle of a write on a group (`WriterState.focusGroup`)
    /// reads the user's whole standing in it (`standing`).
    func user(appID: Int64, uid: String) throws(ModerationError) -> StoredUser? {
        let key = WriterCache.UserKey(appID: appID, uid: uid)
        if isWriter, let cached = cache.user(key) { return cached }
        // Not created since the read-ahead missed it: creating it caches it (above).
        if isWriter, missingUsers.contains(key) { return nil }
        if isWriter, let groupID = writer.focusGroup {
            try standing(appID: appID, groupID: groupID, uid: uid)
            return cache.user(key)
        }
        let row = try connection.query(.userByUID, [.int(appID), .text(uid)])
        guard row.rowCount > 0 else { return nil }
        let found = decodeUser(row, 0)
        if isWriter { cache.set(key, found) }
        return found
    }

    /// Reads a live user's row, membership and ban in a group in one round trip and keeps what
    /// the writer's cache does not hold yet: the rules ask for the three together (the target of
    /// a kick or ban, the user joining), so one round trip serves where three did. Exact, not a
    /// guess: a writer reads under the app's lock, which every change to these rows takes; the
    /// statements this transaction sent before are executed before it; and what the cache
    /// already holds (this transaction's own changes) is kept. Nothing is kept when there is no
    /// such user (the caller then asks for what it needs alone).
    func standing(appID: Int64, groupID: Int64, uid: String) throws(ModerationError) {
        let row = try connection.query(.standing, [.int(appID), .text(uid), .int(groupID)])
        guard row.rowCount > 0 else { return }
        keepStanding(row, 0, from: 0, appID: appID, groupID: groupID)
    }

    /// Keeps a row of `.standing`'s columns (from column `first` on) in the writer's cache,
    /// except what the cache holds already (this transaction's own changes).
    func keepStanding(_ rows: PGResult, _ row: Int, from first: Int, appID: Int64, groupID: Int64) {
        // A user comes once per group named with them: decoded the first time only.
        let uid = rows.string(row, first + 1)
        let userKey = WriterCache.UserKey(appID: appID, uid: uid)
        if cache.user(userKey) == nil { cache.set(userKey, decodeUser(rows, row, from: first)) }
        keepEntries(rows, row, from: first, groupID: groupID, uid: uid)
    }

    /// Keeps the membership and ban of a row of `.standing`'s columns for `uid` in the group,
    /// except what the cache holds already; they need no live user's row (`prefetch` matches them
    /// on the uid it was given).
    func keepEntries(_ rows: PGResult, _ row: Int, from first: Int, groupID: Int64, uid: String) {
        let entry = GroupUserKey(groupID: groupID, uid: uid)
        if cache.membership(entry) == nil {
            cache.set(entry, membership: decodeMembership(rows, row, from: first + 6))
        }
        // A ban counts with its user's row, as `.ban` joins them (that row always exists: users are
        // marked deleted, never removed).
        let banned = !rows.isNull(row, first + 10) && !rows.isNull(row, first + 11)
        if cache.ban(entry) == nil { cache.set(entry, ban: banned ? decodeBan(rows, row, from: first + 10) : nil) }
    }

    /// A user from (id, uid, name, avatar, metadata, created_at), at column `first` on.
    func decodeUser(_ rows: PGResult, _ row: Int, from first: Int = 0) -> StoredUser {
        let user = User(
            uid: rows.string(row, first + 1), name: rows.string(row, first + 2), avatar: rows.string(row, first + 3),
            metadata: RecordCoding.metadata(rows.strings(row, first + 4)), createdAt: rows.int64(row, first + 5))
        return StoredUser(id: rows.int64(row, first), user: user)
    }

    func uidRetired(appID: Int64, uid: String) throws(ModerationError) -> Bool {
        try connection.query(.uidRetired, [.int(appID), .text(uid)]).rowCount > 0
    }

    func insertUser(appID: Int64, _ user: User) throws(ModerationError) -> StoredUser {
        try lockApp(id: appID)
        let row = try connection.query(
            .insertUser,
            [
                .int(appID), .text(user.uid), .text(user.name), .text(TextFolding.fold(user.name)), .text(user.avatar),
                RecordCoding.encode(user.metadata), .int(user.createdAt),
            ])
        let stored = StoredUser(id: row.int64(0, 0), user: user)
        cache.set(WriterCache.UserKey(appID: appID, uid: user.uid), stored)
        return stored
    }

    func updateUser(_ user: StoredUser) throws(ModerationError) {
        try connection.send(
            .updateUser,
            [
                .int(user.id), .text(user.user.name), .text(TextFolding.fold(user.user.name)), .text(user.user.avatar),
                RecordCoding.encode(user.user.metadata),
            ])
        if let appID = cache.appOfUser(user.id) {
            cache.set(WriterCache.UserKey(appID: appID, uid: user.user.uid), user)
        }
    }

    /// Erases the profile, drops the user's pending invites and join requests and marks the row deleted.
    func deleteUser(_ user: StoredUser, at time: Int64) throws(ModerationError) {
        try updateUser(StoredUser(id: user.id, user: User(uid: user.user.uid, createdAt: user.user.createdAt)))
        try deleteInvites(ofUser: user.id)
        try deleteJoinRequests(ofUser: user.id)
        try connection.send(.markUserDeleted, [.int(user.id), .int(time)])
        guard let appID = cache.appOfUser(user.id) else { return }
        cache.set(WriterCache.UserKey(appID: appID, uid: user.user.uid), nil)
    }
}
