internal import CSQLite
internal import Moderation

extension SQLiteSession {
    func appID(named app: String) throws(ModerationError) -> Int64? {
        if let known = writer.appIDs[app] ?? (isWriter ? nil : sharedAppIDs.get(app)) { return known }
        let found = try connection.run(.appByName) { (statement) throws(ModerationError) -> Int64? in
            statement.bind(1, app)
            return try statement.step() ? statement.int64(0) : nil
        }
        if let found {
            if isWriter { writer.appIDs[app] = found } else { sharedAppIDs.set(app, found) }
        }
        return found
    }

    func createApp(named app: String) throws(ModerationError) -> Int64 {
        if let existing = try appID(named: app) { return existing }
        try connection.run(.insertApp) { (statement) throws(ModerationError) in
            statement.bind(1, app)
            try statement.execute()
        }
        let id = sqlite3_last_insert_rowid(connection.handle)
        writer.appIDs[app] = id
        return id
    }

    func user(appID: Int64, uid: String) throws(ModerationError) -> StoredUser? {
        try connection.run(.userByUID) { (statement) throws(ModerationError) -> StoredUser? in
            statement.bind(1, appID)
            statement.bind(2, uid)
            guard try statement.step() else { return nil }
            let user = User(
                uid: statement.string(1), name: statement.string(2), avatar: statement.string(3),
                metadata: try RecordCoding.metadata(statement.blob(4)), createdAt: statement.int64(5))
            return StoredUser(id: statement.int64(0), user: user)
        }
    }

    func insertUser(appID: Int64, _ user: User) throws(ModerationError) -> StoredUser {
        let folded = TextFolding.fold(user.name)
        try connection.run(.insertUser) { (statement) throws(ModerationError) in
            statement.bind(1, appID)
            statement.bind(2, user.uid)
            statement.bind(3, user.name)
            statement.bind(4, folded)
            statement.bind(5, user.avatar)
            statement.bind(6, blob: RecordCoding.encode(user.metadata))
            statement.bind(7, user.createdAt)
            try statement.execute()
        }
        let id = sqlite3_last_insert_rowid(connection.handle)
        try connection.run(.userSearchInsert) { (statement) throws(ModerationError) in
            statement.bind(1, id)
            statement.bind(2, user.uid)
            statement.bind(3, folded)
            try statement.execute()
        }
        return StoredUser(id: id, user: user)
    }

    func updateUser(_ user: StoredUser) throws(ModerationError) {
        let folded = TextFolding.fold(user.user.name)
        let old = try connection.run(.userFolded) { (statement) throws(ModerationError) -> (String, String)? in
            statement.bind(1, user.id)
            return try statement.step() ? (statement.string(0), statement.string(1)) : nil
        }
        guard let old else { throw .storage("user \(user.user.uid) vanished during an update") }
        try connection.run(.updateUser) { (statement) throws(ModerationError) in
            statement.bind(1, user.id)
            statement.bind(2, user.user.name)
            statement.bind(3, folded)
            statement.bind(4, user.user.avatar)
            statement.bind(5, blob: RecordCoding.encode(user.user.metadata))
            try statement.execute()
        }
        guard old.1 != folded else { return }
        try connection.run(.userSearchDelete) { (statement) throws(ModerationError) in
            statement.bind(1, user.id)
            statement.bind(2, old.0)
            statement.bind(3, old.1)
            try statement.execute()
        }
        try connection.run(.userSearchInsert) { (statement) throws(ModerationError) in
            statement.bind(1, user.id)
            statement.bind(2, user.user.uid)
            statement.bind(3, folded)
            try statement.execute()
        }
    }
}
