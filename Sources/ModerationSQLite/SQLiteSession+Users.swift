internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    func appID(named app: String) throws(ModerationError) -> Int64? {
        if let known = isWriter ? writer.appIDs[app] : readerAppIDs[app] { return known }
        let found = try connection.row(.appByName, app) { $0.int64(0) }
        if let found {
            if isWriter { writer.appIDs[app] = found } else { readerAppIDs[app] = found }
        }
        return found
    }

    func createApp(named app: String) throws(ModerationError) -> Int64 {
        if let existing = try appID(named: app) { return existing }
        try connection.execute(.insertApp, app)
        let id = connection.lastInsertedRowID
        writer.appIDs[app] = id
        return id
    }

    func user(appID: Int64, uid: String) throws(ModerationError) -> StoredUser? {
        let key = WriterCache.UserKey(appID: appID, uid: uid)
        if isWriter, let cached = cache.user(key) { return cached }
        let found = try connection.row(.userByUID, appID, uid) { (statement) throws(ModerationError) in
            let user = User(
                uid: statement.string(1), name: statement.string(2), avatar: statement.string(3),
                metadata: try RecordCoding.metadata(statement.blob(4)), createdAt: statement.int64(5))
            return StoredUser(id: statement.int64(0), user: user)
        }
        if isWriter, let found { cache.set(key, found) }
        return found
    }

    func uidRetired(appID: Int64, uid: String) throws(ModerationError) -> Bool {
        try connection.row(.uidRetired, appID, uid) { _ in true } ?? false
    }

    func insertUser(appID: Int64, _ user: User) throws(ModerationError) -> StoredUser {
        let id = try insertSearchable(.insertUser, kind: .user, appID: appID, key: user.uid, name: user.name) {
            statement in statement.bind(from: 5, user.avatar, RecordCoding.encode(user.metadata), user.createdAt)
        }
        let stored = StoredUser(id: id, user: user)
        cache.set(WriterCache.UserKey(appID: appID, uid: user.uid), stored)
        return stored
    }

    func updateUser(_ user: StoredUser) throws(ModerationError) {
        let folded = TextFolding.fold(user.user.name)
        guard let old = try searchableRow(.userFolded, id: user.id) else {
            throw .storage("user \(user.user.uid) vanished during an update")
        }
        cache.set(WriterCache.UserKey(appID: old.appID, uid: user.user.uid), user)
        try connection.execute(
            .updateUser, user.id, user.user.name, folded, user.user.avatar, RecordCoding.encode(user.user.metadata))
        try reindexSearch(kind: .user, id: user.id, old: old, key: user.user.uid, folded: folded)
    }

    /// Erases the profile through `updateUser` (so the search index forgets the name), drops the
    /// user's pending invites and join requests, then marks the row deleted.
    func deleteUser(_ user: StoredUser, at time: Int64) throws(ModerationError) {
        try updateUser(StoredUser(id: user.id, user: User(uid: user.user.uid, createdAt: user.user.createdAt)))
        try deleteInvites(ofUser: user.id)
        try deleteJoinRequests(ofUser: user.id)
        try connection.execute(.markUserDeleted, user.id, time)
        guard let appID = cache.appOfUser(user.id) else { return }
        cache.set(WriterCache.UserKey(appID: appID, uid: user.user.uid), nil)
    }
}
