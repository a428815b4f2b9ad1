internal import Moderation
internal import ModerationStoreSupport

extension PostgresSession {
    /// Reads what a batch's writes declared they will read (`WriteFootprint`) into the writer's
    /// cache before they run: per app, its lock, then every group and user standing in one
    /// statement. Without it every write waits for a round trip or two in the middle (its
    /// target's standing, its group's first read in the batch) while PostgreSQL idles; with it
    /// the writes find their rows in the cache and only send their changes, which PostgreSQL
    /// runs in one stream while the writer goes on.
    ///
    /// Exact, as the cache must be: the rows are read under the app's lock, before any write of
    /// the transaction. An app another writer holds is skipped (its writes are deferred as
    /// before), as is an app that does not exist; the first app may wait for its lock, as the
    /// batch's first write would. Groups are read without a row lock, as `groupForUpdate` reads
    /// them. A group or a user it does not find is recorded as missing (`missingGroups`,
    /// `missingUsers`). Each pair's wrong passwords come along (`sharedPasswordFailures`), for a
    /// join's check of the limit, and the stored replies of the writes' idempotency keys are read
    /// in one more statement per app (`idempotentReply`). Returns how many standings it kept.
    func prefetch(_ footprints: [WriteFootprint]) throws(ModerationError) -> Int {
        var kept = 0
        struct Pair: Hashable {
            let app: String
            let guid: String
            let uid: String
        }
        var apps: [String] = []
        var pairsOfApp: [String: (guids: [String], uids: [String])] = [:]
        var seen = Set<Pair>()
        var replaysOfApp: [String: Set<ReplayKey>] = [:]
        for footprint in footprints {
            if pairsOfApp[footprint.app] == nil { apps.append(footprint.app) }
            if let replay = footprint.replay { replaysOfApp[footprint.app, default: []].insert(replay) }
            var pairs = pairsOfApp[footprint.app] ?? ([], [])
            // The actor of most writes is the same: each (group, user) once.
            for uid in footprint.uids.isEmpty ? [""] : footprint.uids
            where seen.insert(Pair(app: footprint.app, guid: footprint.guid, uid: uid)).inserted {
                pairs.guids.append(footprint.guid)
                pairs.uids.append(uid)
            }
            pairsOfApp[footprint.app] = pairs
        }
        for app in apps {
            guard let pairs = pairsOfApp[app] else { continue }
            let appID: Int64?
            do {
                appID = try self.appID(named: app)
            } catch  where isDeferred && connection.failure == nil {
                // Held by another writer: its writes find that out themselves and are deferred.
                isDeferred = false
                continue
            }
            guard let appID else { continue }
            let rows = try connection.query(
                .prefetch, [.int(appID), .textArray(pairs.guids), .textArray(pairs.uids), .text(app)])
            let pairUID = Self.groupColumnCount + Self.standingColumnCount
            var found = Set<String>()
            for row in 0..<rows.rowCount {
                let guid = rows.string(row, 2)
                found.insert(guid)
                prefetchedPasswordFailures[PasswordAttemptKey(app: app, guid: guid, uid: rows.string(row, pairUID))] =
                    rows.int64s(row, pairUID + 1)
                // A group comes once per user named in it: decoded the first time only.
                let groupID = rows.int64(row, 0)
                let key = WriterCache.GroupKey(appID: appID, guid: guid)
                if cache.group(key) == nil { cache.set(key, decodeGroup(rows, row)) }
                guard !rows.isNull(row, Self.groupColumnCount) else {
                    // No live user by the pair's uid: missing to the batch's writes, as a group.
                    let uid = rows.string(row, pairUID)
                    guard !uid.isEmpty else { continue }
                    missingUsers.insert(WriterCache.UserKey(appID: appID, uid: uid))
                    keepEntries(rows, row, from: Self.groupColumnCount, groupID: groupID, uid: uid)
                    continue
                }
                keepStanding(rows, row, from: Self.groupColumnCount, appID: appID, groupID: groupID)
                kept += 1
            }
            try noteMissingGroups(of: pairs, found: found, app: app, appID: appID)
            if let replays = replaysOfApp[app] { try readReplies(Array(replays), appID: appID) }
        }
        return kept
    }

    /// Reads the stored replies of `replays` into `prefetchedReplies` (nil for a key without one).
    /// Exact under the app's lock, which every write of a reply takes; a reply this transaction
    /// stores later drops its entry (`saveIdempotentReply`).
    private func readReplies(_ replays: [ReplayKey], appID: Int64) throws(ModerationError) {
        for replay in replays { prefetchedReplies[StoredReplyKey(appID: appID, replay: replay)] = .some(nil) }
        let rows = try connection.query(
            .prefetchReplies, [.int(appID), .textArray(replays.map(\.actor)), .textArray(replays.map(\.key))])
        for row in 0..<rows.rowCount {
            let key = StoredReplyKey(
                appID: appID, replay: ReplayKey(actor: rows.string(row, 0), key: rows.string(row, 1)))
            prefetchedReplies[key] = StoredReply(createdAt: rows.int64(row, 2), bytes: rows.bytes(row, 3))
        }
    }

    /// The pairs whose group the read-ahead did not find: the group is recorded as missing (no
    /// write of the batch asks PostgreSQL again; the app's lock keeps it missing until a write of
    /// this transaction creates it, which caches it), and the pairs' wrong passwords are read in
    /// one statement, so a write on a group that does not exist costs no round trip of its own
    /// under the app's lock.
    private func noteMissingGroups(
        of pairs: (guids: [String], uids: [String]), found: Set<String>, app: String, appID: Int64
    ) throws(ModerationError) {
        var missing: (guids: [String], uids: [String]) = ([], [])
        for (guid, uid) in zip(pairs.guids, pairs.uids) where !found.contains(guid) {
            missing.guids.append(guid)
            missing.uids.append(uid)
            missingGroups.insert(WriterCache.GroupKey(appID: appID, guid: guid))
            prefetchedPasswordFailures[PasswordAttemptKey(app: app, guid: guid, uid: uid)] = []
        }
        guard !missing.guids.isEmpty else { return }
        let rows = try connection.query(
            .passwordFailuresOfPairs, [.text(app), .textArray(missing.guids), .textArray(missing.uids)])
        for row in 0..<rows.rowCount {
            prefetchedPasswordFailures[
                PasswordAttemptKey(app: app, guid: rows.string(row, 0), uid: rows.string(row, 1))] =
                rows.int64s(row, 2)
        }
    }
}
