internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    func ban(groupID: Int64, uid: String) throws(ModerationError) -> Ban? {
        let key = WriterCache.EntryKey(groupID: groupID, uid: uid)
        if isWriter, let known = cache.ban(key) { return known }
        let found = try connection.run(.ban) { (statement) throws(ModerationError) -> Ban? in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            return try statement.step() ? decodeBan(statement) : nil
        }
        if isWriter { cache.set(key, ban: found) }
        return found
    }

    /// Inserts a ban, dropping any invite of the user to the group and any join request of theirs
    /// (a banned user has neither).
    func insertBan(groupID: Int64, user: StoredUser, ban: Ban) throws(ModerationError) {
        try connection.run(.insertBan) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, user.user.uid)
            statement.bind(3, user.id)
            statement.bind(4, ban.scopeBefore.map { Int64(StorageCodes.code($0)) })
            statement.bind(5, ban.joinedAt)
            statement.bind(6, ban.bannedAt)
            statement.bind(7, ban.bannedBy)
            statement.bind(8, ban.reason)
            statement.bind(9, ban.expiresAt)
            try statement.execute()
        }
        try deleteInvite(groupID: groupID, uid: user.user.uid)
        try deleteJoinRequest(groupID: groupID, uid: user.user.uid)
        cache.setInserted(ban, groupID: groupID, user: user)
    }

    func deleteBan(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.run(.deleteBan) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            try statement.execute()
        }
        cache.set(WriterCache.EntryKey(groupID: groupID, uid: uid), ban: nil)
    }

    func bans(groupID: Int64, query: BanPageQuery) throws(ModerationError) -> [Ban] {
        try userListPage(
            .bans, of: groupID, search: query.search, limit: query.limit,
            bind: { statement in
                statement.bind(2, query.after?.bannedAt ?? Int64.max)
                statement.bind(3, query.after?.uid ?? "")
                statement.bind(4, query.activeAt)
            }, decode: decodeBan)
    }

    func expiredBans(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry] {
        try connection.run(.expiredBans) { (statement) throws(ModerationError) -> [ExpiredEntry] in
            statement.bind(1, now)
            statement.bind(2, limit)
            var rows: [ExpiredEntry] = []
            while try statement.step() {
                rows.append(
                    ExpiredEntry(
                        appID: statement.int64(0), app: statement.string(1), guid: statement.string(2),
                        uid: statement.string(3)))
            }
            return rows
        }
    }

    /// A ban row in the order of `Query.banColumns`.
    private func decodeBan(_ statement: SQLiteStatement) -> Ban {
        Ban(
            uid: statement.string(0), name: statement.string(1), avatar: statement.string(2),
            scopeBefore: statement.optionalInt(3).flatMap(StorageCodes.scope), joinedAt: statement.int64(4),
            bannedAt: statement.int64(5), bannedBy: statement.string(6), reason: statement.string(7),
            expiresAt: statement.int64(8))
    }
}
