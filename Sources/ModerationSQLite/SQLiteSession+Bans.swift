internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    func ban(groupID: Int64, uid: String) throws(ModerationError) -> Ban? {
        let key = GroupUserKey(groupID: groupID, uid: uid)
        if isWriter, let known = cache.ban(key) { return known }
        let found = try connection.row(.ban, groupID, uid, decode: decodeBan)
        if isWriter { cache.set(key, ban: found) }
        return found
    }

    /// Inserts a ban, dropping any invite of the user to the group and any join request of theirs
    /// (a banned user has neither).
    func insertBan(groupID: Int64, user: StoredUser, ban: Ban) throws(ModerationError) {
        try connection.execute(
            .insertBan, groupID, user.user.uid, user.id, ban.scopeBefore.map { Int64(StorageCodes.code($0)) },
            ban.joinedAt, ban.bannedAt, ban.bannedBy, ban.reason, ban.expiresAt)
        try deleteInvite(groupID: groupID, uid: user.user.uid)
        try deleteJoinRequest(groupID: groupID, uid: user.user.uid)
        cache.setInserted(ban, groupID: groupID, user: user)
    }

    func deleteBan(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.execute(.deleteBan, groupID, uid)
        cache.set(GroupUserKey(groupID: groupID, uid: uid), ban: nil)
    }

    func bans(groupID: Int64, query: BanPageQuery) throws(ModerationError) -> [Ban] {
        try banPage(.bans, of: groupID, query: query, decode: decodeBan)
    }

    func expiredBans(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry] {
        try connection.rows(.expiredBans, now, limit, decode: decodeExpiredEntry)
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
