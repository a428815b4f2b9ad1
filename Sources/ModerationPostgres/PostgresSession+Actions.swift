internal import Moderation
internal import ModerationStoreSupport

extension PostgresSession {
    /// An action row before its users and group snapshot are resolved.
    private struct ActionRow {
        var seq: UInt64
        var groupID: Int64
        var revision: UInt64
        var kind: ActionKind
        var by: String
        var on: String?
        var membersCount: Int
        var version: UInt64
        var oldScope: Scope?
        var newScope: Scope?
        var reason: String
        var expiresAt: Int64
        var timestamp: Int64
        var idempotencyKey: String
        var requestID: String
        var reportID: UInt64
    }

    private struct RevisionKey: Hashable {
        let groupID: Int64
        let revision: UInt64
    }

    /// The next seq comes from the head read under the app's lock, counted in memory: what
    /// `UPDATE apps SET head_seq = head_seq + 1 … RETURNING` would return, without a round trip
    /// per action (the row lock that orders the app's commits is the one taken for the write).
    func appendAction(_ action: inout ActionRecord, appID: Int64, group: StoredGroup) throws(ModerationError) {
        try lockApp(id: appID)
        let seq = (writer.heads[appID] ?? 0) + 1
        let value = action
        try connection.send(
            .insertAction,
            [
                .int(appID), .int(seq), .int(group.id), .int(group.revision), .int(StorageCodes.code(value.kind)),
                .text(value.actionBy.uid), .optional(value.actionOn?.uid), .int(value.group.membersCount),
                .int(value.group.version), .optional(value.oldScope.map { StorageCodes.code($0) }),
                .optional(value.newScope.map { StorageCodes.code($0) }), .text(value.reason), .int(value.expiresAt),
                .int(value.timestamp), .text(value.idempotencyKey), .text(value.requestID), .int(Int64(value.reportID)),
            ])
        writer.heads[appID] = seq
        writer.dirtyHeads.insert(appID)
        action.seq = seq
        batchActions.append(action)
    }

    func hasActions(groupID: Int64, on uid: String) throws(ModerationError) -> Bool {
        try connection.query(.hasActionsOn, [.int(groupID), .text(uid)]).rowCount > 0
    }

    func actions(appID: Int64, query: ActionLogQuery) throws(ModerationError) -> [ActionRecord] {
        let app = try connection.query(.appLog, [.int(appID)])
        let appName = app.rowCount > 0 ? app.string(0, 0) : ""
        var parameters: [PGValue] = [
            .int(appID), .int(query.afterSeq), .int(query.throughSeq ?? UInt64(Int64.max)),
            .int(StorageCodes.mask(query.kinds)), .optional(query.actor), .optional(query.target), .int(query.limit),
        ]
        if let groupID = query.groupID { parameters.append(.int(groupID)) }
        let rows = try connection.query(query.groupID == nil ? .actionsOfApp : .actionsOfGroup, parameters)
        var users: [String: User] = [User.appUID: .app]
        var revisions: [RevisionKey: Group] = [:]
        var records: [ActionRecord] = []
        records.reserveCapacity(rows.rowCount)
        for index in 0..<rows.rowCount {
            let row = ActionRow(
                seq: rows.uint64(index, 0), groupID: rows.int64(index, 1), revision: rows.uint64(index, 2),
                kind: StorageCodes.kind(rows.int(index, 3)), by: rows.string(index, 4),
                on: rows.optionalString(index, 5), membersCount: rows.int(index, 6), version: rows.uint64(index, 7),
                oldScope: rows.optionalInt(index, 8).flatMap(StorageCodes.scope),
                newScope: rows.optionalInt(index, 9).flatMap(StorageCodes.scope), reason: rows.string(index, 10),
                expiresAt: rows.int64(index, 11), timestamp: rows.int64(index, 12),
                idempotencyKey: rows.string(index, 13), requestID: rows.string(index, 14),
                reportID: rows.uint64(index, 15))
            var group = try revision(RevisionKey(groupID: row.groupID, revision: row.revision), cache: &revisions)
            group.membersCount = row.membersCount
            group.version = row.version
            let by = try resolveUser(row.by, appID: appID, cache: &users)
            let on = try row.on.map { (uid: String) throws(ModerationError) -> User in
                try resolveUser(uid, appID: appID, cache: &users)
            }
            records.append(
                ActionRecord(
                    app: appName, seq: row.seq, kind: row.kind, actionBy: by, actionOn: on, group: group,
                    oldScope: row.oldScope, newScope: row.newScope, reason: row.reason, expiresAt: row.expiresAt,
                    timestamp: row.timestamp, idempotencyKey: row.idempotencyKey, requestID: row.requestID,
                    reportID: row.reportID))
        }
        return records
    }

    /// Per app, deletes the longest prefix of the log older than `cutoff` (up to `limit` actions
    /// in all) and records it in `pruned_through`. An app another writer holds is left for the
    /// next run (`SKIP LOCKED`): pruning never waits.
    func pruneActions(before cutoff: Int64, limit: Int) throws(ModerationError) -> Int {
        let apps = try connection.query(.appsForPruning, [])
        var removed = 0
        for index in 0..<apps.rowCount where removed < limit {
            let appID = apps.int64(index, 0)
            let pruned = apps.uint64(index, 1)
            let oldest = try connection.query(.pruneScan, [.int(appID), .int(pruned), .int(limit - removed)])
            var last: UInt64?
            var count = 0
            for row in 0..<oldest.rowCount {
                guard oldest.int64(row, 1) < cutoff else { break }
                last = oldest.uint64(row, 0)
                count += 1
            }
            guard let last else { continue }
            let locked = try connection.query(.lockAppForPruning, [.int(appID)])
            // Held by another writer, or pruned by another instance since the scan: next time.
            guard locked.rowCount > 0, locked.uint64(0, 0) == pruned else { continue }
            locksHeld = true
            try connection.send(.pruneDelete, [.int(appID), .int(pruned), .int(last)])
            try connection.send(.setPrunedThrough, [.int(appID), .int(last)])
            removed += count
        }
        try pruneRevisions(before: cutoff, limit: limit)
        return removed
    }

    /// Deletes superseded revisions that no retained action can show: within a group, actions
    /// refer to nondecreasing revisions, so everything below the first retained action's
    /// revision is unreachable. (A new action only ever refers to a group's current revision,
    /// which is never superseded, so this needs no app lock.)
    private func pruneRevisions(before cutoff: Int64, limit: Int) throws(ModerationError) {
        let candidates = try connection.query(.supersededRevisions, [.int(cutoff), .int(limit)])
        var firstRetained: [Int64: UInt64?] = [:]
        for index in 0..<candidates.rowCount {
            let groupID = candidates.int64(index, 0)
            let revision = candidates.uint64(index, 1)
            let minimum: UInt64?
            if let known = firstRetained[groupID] {
                minimum = known
            } else {
                let first = try connection.query(.firstRetainedRevision, [.int(groupID)])
                minimum = first.rowCount > 0 ? first.uint64(0, 0) : nil
                firstRetained[groupID] = minimum
            }
            if let minimum, revision >= minimum { continue }
            try connection.send(.deleteRevision, [.int(groupID), .int(revision)])
        }
    }

    private func revision(_ key: RevisionKey, cache: inout [RevisionKey: Group]) throws(ModerationError) -> Group {
        if let known = cache[key] { return known }
        let row = try connection.query(.revision, [.int(key.groupID), .int(key.revision)])
        guard row.rowCount > 0 else { throw .storage("group revision \(key.groupID)/\(key.revision) is missing") }
        let group = Group(
            guid: row.string(0, 0), name: row.string(0, 1), icon: row.string(0, 2), description: row.string(0, 3),
            type: StorageCodes.groupType(row.int(0, 4)), metadata: RecordCoding.metadata(row.strings(0, 5)),
            tags: row.strings(0, 6), owner: row.string(0, 7), createdAt: row.int64(0, 8), updatedAt: row.int64(0, 9),
            frozen: row.bool(0, 10), joinRequests: row.bool(0, 11))
        cache[key] = group
        return group
    }

    private func resolveUser(_ uid: String, appID: Int64, cache: inout [String: User]) throws(ModerationError) -> User {
        if let known = cache[uid] { return known }
        let user = try user(appID: appID, uid: uid)?.user ?? User(uid: uid)
        cache[uid] = user
        return user
    }
}
