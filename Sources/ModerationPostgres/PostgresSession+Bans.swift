internal import Moderation
internal import ModerationStoreSupport

extension PostgresSession {
    func ban(groupID: Int64, uid: String) throws(ModerationError) -> Ban? {
        let key = GroupUserKey(groupID: groupID, uid: uid)
        if isWriter, let known = cache.ban(key) { return known }
        if isWriter, let appID = cache.appOfGroup[groupID] {
            try standing(appID: appID, groupID: groupID, uid: uid)
            if let known = cache.ban(key) { return known }
        }
        let row = try connection.query(.ban, [.int(groupID), .text(uid)])
        let found = row.rowCount > 0 ? decodeBan(row, 0) : nil
        if isWriter { cache.set(key, ban: found) }
        return found
    }

    /// Inserts a ban, dropping any invite of the user to the group and any join request of theirs
    /// in the same statement (a banned user has neither).
    func insertBan(groupID: Int64, user: StoredUser, ban: Ban) throws(ModerationError) {
        try connection.send(
            .insertBan,
            [
                .int(groupID), .text(user.user.uid), .int(user.id),
                .optional(ban.scopeBefore.map { StorageCodes.code($0) }), .int(ban.joinedAt), .int(ban.bannedAt),
                .text(ban.bannedBy), .text(ban.reason), .int(ban.expiresAt),
            ])
        cache.setInserted(ban, groupID: groupID, user: user)
    }

    func deleteBan(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.send(.deleteBan, [.int(groupID), .text(uid)])
        cache.set(GroupUserKey(groupID: groupID, uid: uid), ban: nil)
    }

    func bans(groupID: Int64, query: BanPageQuery) throws(ModerationError) -> [Ban] {
        let rows = try banPage(.bansPage, orSearch: SearchSQL.bans, of: groupID, query: query)
        return (0..<rows.rowCount).map { decodeBan(rows, $0) }
    }

    /// One page of a group's bans or of the app's, which page alike: $1 the group (the app),
    /// $2/$3 the keyset (banned_at descending, uid), $4 the time the bans must be in force at,
    /// $5 the limit.
    func banPage(_ statement: Statement, orSearch searchSQL: String, of owner: Int64, query: BanPageQuery)
        throws(ModerationError) -> PGResult
    {
        try SearchSQL.page(
            statement, orSearch: searchSQL, for: query.search,
            [
                .int(owner), .int(query.after?.bannedAt ?? Int64.max), .text(query.after?.uid ?? ""),
                .int(query.activeAt), .int(query.limit),
            ], on: connection)
    }

    /// Expired bans whose app this transaction holds or could lock now: the statement locks the
    /// apps of the bans it returns and skips bans of apps another writer holds (they are swept
    /// in a later run, or expire on contact). The sweeper then rechecks each ban under the lock,
    /// so however many instances sweep, each expiry is recorded once.
    func expiredBans(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry] {
        try lockedExpiries(.expiredBans, at: now, limit: limit)
    }

    /// The rows of `expiredBans`, `expiredMutes` or `expiredAppBans` (app id, app, guid, uid, the
    /// app's head seq and version of its bans from the app), whose apps the statement locked: the
    /// transaction now holds each of them.
    func lockedExpiries(_ statement: Statement, at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry] {
        let rows = try connection.query(statement, [.int(now), .int(limit)])
        var expired: [ExpiredEntry] = []
        expired.reserveCapacity(rows.rowCount)
        for row in 0..<rows.rowCount {
            let appID = rows.int64(row, 0)
            let app = rows.string(row, 1)
            if writer.heads[appID] == nil {
                writer.appIDs[app] = appID
                hold(appID: appID, head: rows.uint64(row, 4), appBansVersion: rows.uint64(row, 5))
            }
            expired.append(ExpiredEntry(appID: appID, app: app, guid: rows.string(row, 2), uid: rows.string(row, 3)))
        }
        return expired
    }

    /// A ban row in the order of `Statement.banColumns`, from column `first` on.
    func decodeBan(_ rows: PGResult, _ row: Int, from first: Int = 0) -> Ban {
        Ban(
            uid: rows.string(row, first), name: rows.string(row, first + 1), avatar: rows.string(row, first + 2),
            scopeBefore: rows.optionalInt(row, first + 3).flatMap(StorageCodes.scope),
            joinedAt: rows.int64(row, first + 4), bannedAt: rows.int64(row, first + 5),
            bannedBy: rows.string(row, first + 6), reason: rows.string(row, first + 7),
            expiresAt: rows.int64(row, first + 8))
    }
}
