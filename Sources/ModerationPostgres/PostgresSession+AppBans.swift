internal import Moderation

extension PostgresSession {
    /// On a writer, from memory (`AppBanSets`) at the version read under the app's lock, with
    /// the transaction's own changes; an app that never banned anyone costs nothing more than the
    /// lock its write takes anyway. A reader without the read cache asks PostgreSQL.
    func appBanStanding(appID: Int64, uid: String) throws(ModerationError) -> AppBanStanding? {
        guard isWriter else {
            let row = try connection.query(.appBanStanding, [.int(appID), .text(uid)])
            guard row.rowCount > 0 else { return nil }
            return AppBanStanding(expiresAt: row.int64(0, 0), shadow: row.bool(0, 1))
        }
        return try transactionAppBans(appID: appID)[uid]
    }

    /// Every ban from the app of `appID`, read in this transaction (a reader's snapshot, or a
    /// writer's under the app's lock).
    func appBansOfApp(appID: Int64) throws(ModerationError) -> AppBanSets.Bans {
        let rows = try connection.query(.appBansOfApp, [.int(appID)])
        var bans: AppBanSets.Bans = [:]
        for row in 0..<rows.rowCount {
            bans[rows.string(row, 0)] = AppBanStanding(expiresAt: rows.int64(row, 1), shadow: rows.bool(row, 2))
        }
        return bans
    }

    func appBan(appID: Int64, uid: String) throws(ModerationError) -> AppBan? {
        let row = try connection.query(.appBan, [.int(appID), .text(uid)])
        return row.rowCount > 0 ? decodeAppBan(row, 0) : nil
    }

    /// Inserts the ban and bumps the app's `app_bans_version` in one statement; the writer's
    /// copy of the app's bans follows.
    func insertAppBan(appID: Int64, user: StoredUser, ban: AppBan) throws(ModerationError) {
        var bans = try transactionAppBans(appID: appID)
        try connection.send(
            .insertAppBan,
            [
                .int(appID), .text(user.user.uid), .int(user.id), .int(ban.bannedAt), .text(ban.bannedBy),
                .text(ban.reason), .int(ban.expiresAt), .bool(ban.shadow),
            ])
        bans[user.user.uid] = ban.standing
        changedAppBans(appID: appID, to: bans)
    }

    func deleteAppBan(appID: Int64, uid: String) throws(ModerationError) {
        var bans = try transactionAppBans(appID: appID)
        try connection.send(.deleteAppBan, [.int(appID), .text(uid)])
        bans[uid] = nil
        changedAppBans(appID: appID, to: bans)
    }

    func appBans(appID: Int64, query: BanPageQuery) throws(ModerationError) -> [AppBan] {
        let rows = try banPage(.appBansPage, orSearch: SearchSQL.appBans, of: appID, query: query)
        return (0..<rows.rowCount).map { decodeAppBan(rows, $0) }
    }

    /// Expired app bans whose app this transaction holds or could lock now, as `expiredBans`.
    func expiredAppBans(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry] {
        try lockedExpiries(.expiredAppBans, at: now, limit: limit)
    }

    /// The writer's view of the app's bans from the app: with the app's lock taken (and its
    /// version read under it), those this transaction changed, else the committed ones at that
    /// version — kept in `AppBanSets`, or read now (exact: nothing changes them while the lock is
    /// held) and kept.
    private func transactionAppBans(appID: Int64) throws(ModerationError) -> AppBanSets.Bans {
        try lockApp(id: appID)
        if let changed = writer.appBanChanges[appID] { return changed }
        let version = writer.appBansVersions[appID] ?? 0
        if let kept = appBanSets?.bans(appID: appID, version: version) { return kept }
        let generation = appBanSets?.generation ?? 0
        let bans = try appBansOfApp(appID: appID)
        appBanSets?.keep(bans, appID: appID, version: version, generation: generation)
        return bans
    }

    /// Records the transaction's change to the app's bans: the set it will commit, one version on.
    private func changedAppBans(appID: Int64, to bans: AppBanSets.Bans) {
        writer.appBanChanges[appID] = bans
        writer.appBansVersions[appID, default: 0] += 1
    }

    /// An app ban row in the order of `Statement.appBanColumns`.
    private func decodeAppBan(_ rows: PGResult, _ row: Int) -> AppBan {
        AppBan(
            uid: rows.string(row, 0), name: rows.string(row, 1), avatar: rows.string(row, 2),
            bannedAt: rows.int64(row, 3), bannedBy: rows.string(row, 4), reason: rows.string(row, 5),
            expiresAt: rows.int64(row, 6), shadow: rows.bool(row, 7))
    }
}
