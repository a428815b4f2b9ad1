internal import Moderation
internal import ModerationStoreSupport

extension PostgresSession {
    func user(appID: Int64, uid: String) throws(ModerationError) -> StoredUser? {
        let key = WriterCache.UserKey(appID: appID, uid: uid)
        if isWriter, let cached = cache.user(key) { return cached }
        let row = try connection.query(.userByUID, [.int(appID), .text(uid)])
        guard row.rowCount > 0 else { return nil }
        let user = User(
            uid: row.string(0, 1), name: row.string(0, 2), avatar: row.string(0, 3),
            metadata: RecordCoding.metadata(row.strings(0, 4)), createdAt: row.int64(0, 5))
        let found = StoredUser(id: row.int64(0, 0), user: user)
        if isWriter { cache.set(key, found) }
        return found
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
