internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    /// From memory (`AppBanMemory`): every call on behalf of a user asks. The writer sees the
    /// changes of its open transaction first (`WriterState.appBanChanges`).
    func appBanStanding(appID: Int64, uid: String) throws(ModerationError) -> AppBanStanding? {
        if isWriter, let pending = writer.appBanChanges[AppBanKey(appID: appID, uid: uid)] { return pending }
        return appBans.standing(appID: appID, uid: uid, copy: &appBanCopy)
    }

    func appBan(appID: Int64, uid: String) throws(ModerationError) -> AppBan? {
        try connection.row(.appBan, appID, uid, decode: decodeAppBan)
    }

    func insertAppBan(appID: Int64, user: StoredUser, ban: AppBan) throws(ModerationError) {
        try connection.execute(
            .insertAppBan, appID, user.user.uid, user.id, ban.bannedAt, ban.bannedBy, ban.reason, ban.expiresAt,
            ban.shadow)
        writer.appBanChanges[AppBanKey(appID: appID, uid: user.user.uid)] = .some(ban.standing)
    }

    func deleteAppBan(appID: Int64, uid: String) throws(ModerationError) {
        try connection.execute(.deleteAppBan, appID, uid)
        writer.appBanChanges[AppBanKey(appID: appID, uid: uid)] = .some(nil)
    }

    func appBans(appID: Int64, query: BanPageQuery) throws(ModerationError) -> [AppBan] {
        try banPage(.appBans, of: appID, appID: appID, query: query, decode: decodeAppBan)
    }

    func expiredAppBans(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry] {
        try connection.rows(.expiredAppBans, now, limit) { statement in
            ExpiredEntry(appID: statement.int64(0), app: statement.string(1), guid: "", uid: statement.string(2))
        }
    }

    /// Every app's bans from the app, for `AppBanMemory` when the store opens.
    func allAppBans() throws(ModerationError) -> AppBanMemory.Table {
        try connection.run(.allAppBans) { (statement) throws(ModerationError) -> AppBanMemory.Table in
            var table: AppBanMemory.Table = [:]
            while try statement.step() {
                table[statement.int64(0), default: [:]][statement.string(1)] = AppBanStanding(
                    expiresAt: statement.int64(2), shadow: statement.int(3) != 0)
            }
            return table
        }
    }

    /// An app ban row in the order of `Query.appBanColumns`.
    private func decodeAppBan(_ statement: SQLiteStatement) -> AppBan {
        AppBan(
            uid: statement.string(0), name: statement.string(1), avatar: statement.string(2),
            bannedAt: statement.int64(3), bannedBy: statement.string(4), reason: statement.string(5),
            expiresAt: statement.int64(6), shadow: statement.int(7) != 0)
    }
}
