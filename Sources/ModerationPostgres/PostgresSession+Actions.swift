internal import Moderation
internal import ModerationStoreSupport

/// What an action is inserted with beside its record: the app and the group revision it shows.
struct ActionInsertRow {
    let appID: Int64
    let groupID: Int64
    let revision: UInt64
}

extension PostgresSession {
    /// The next seq comes from the head read under the app's lock, counted in memory: what
    /// `UPDATE apps SET head_seq = head_seq + 1 … RETURNING` would return, without a round trip
    /// per action (the row lock that orders the app's commits is the one taken for the write).
    /// The row is inserted with the batch's others (`sendActions`), not now.
    func appendAction(_ action: inout ActionRecord, appID: Int64, group: StoredGroup) throws(ModerationError) {
        try lockApp(id: appID)
        let seq = (writer.heads[appID] ?? 0) + 1
        writer.heads[appID] = seq
        writer.dirtyHeads.insert(appID)
        action.seq = seq
        batchActions.append(action)
        actionRows.append(ActionInsertRow(appID: appID, groupID: group.id, revision: group.revision))
    }

    /// Inserts the batch's actions not inserted yet, all in one statement: before COMMIT, and
    /// before the writer reads the log. Sends nothing when there are none.
    func sendActions() throws(ModerationError) {
        guard actionsSent < batchActions.count else { return }
        let pending = actionsSent..<batchActions.count
        let actions = batchActions[pending]
        let rows = actionRows[pending]
        try connection.send(
            .insertActions,
            [
                .intArray(rows.map(\.appID)), .intArray(actions.map { Int64(clamping: $0.seq) }),
                .intArray(rows.map(\.groupID)), .intArray(rows.map { Int64(clamping: $0.revision) }),
                .intArray(actions.map { Int64(StorageCodes.code($0.kind)) }), .textArray(actions.map(\.actionBy.uid)),
                .textArray(actions.map { $0.actionOn?.uid }), .intArray(actions.map { Int64($0.group.membersCount) }),
                .intArray(actions.map { Int64(clamping: $0.group.version) }),
                .intArray(actions.map { action -> Int64? in action.oldScope.map { Int64(StorageCodes.code($0)) } }),
                .intArray(actions.map { action -> Int64? in action.newScope.map { Int64(StorageCodes.code($0)) } }),
                .textArray(actions.map(\.reason)), .intArray(actions.map(\.expiresAt)),
                .intArray(actions.map(\.timestamp)), .textArray(actions.map(\.idempotencyKey)),
                .textArray(actions.map(\.requestID)), .intArray(actions.map { Int64(clamping: $0.reportID) }),
                .boolArray(actions.map(\.shadow)), .intArray(actions.map { Int64($0.rulesAdded) }),
                .intArray(actions.map { Int64($0.rulesRemoved) }),
            ])
        actionsSent = batchActions.count
    }

    func hasActions(groupID: Int64, on uid: String) throws(ModerationError) -> Bool {
        if isWriter { try sendActions() }
        return try connection.query(.hasActionsOn, [.int(groupID), .text(uid)]).rowCount > 0
    }

    /// A page of the log, with the group revision each action shows and its users resolved in the
    /// same statement (`Statement.actionResolvedColumns`): one round trip however many actions,
    /// which matters most for the commit feed, where an instance reads the other instances'
    /// actions of every app it has subscribers of.
    func actions(appID: Int64, query: ActionLogQuery) throws(ModerationError) -> [ActionRecord] {
        if isWriter { try sendActions() }
        let app = try connection.query(.appLog, [.int(appID)])
        let appName = app.rowCount > 0 ? app.string(0, 0) : ""
        var parameters: [PGValue] = [
            .int(appID), .int(query.afterSeq), .int(query.throughSeq ?? UInt64(Int64.max)),
            .int(StorageCodes.mask(query.kinds)), .optional(query.actor), .optional(query.target), .int(query.limit),
        ]
        if let groupID = query.groupID { parameters.append(.int(groupID)) }
        let rows = try connection.query(query.groupID == nil ? .actionsOfApp : .actionsOfGroup, parameters)
        var records: [ActionRecord] = []
        records.reserveCapacity(rows.rowCount)
        for index in 0..<rows.rowCount {
            let row = StoredAction(
                seq: rows.uint64(index, 0), groupID: rows.int64(index, 1), revision: rows.uint64(index, 2),
                kind: StorageCodes.kind(rows.int(index, 3)), by: rows.string(index, 4),
                on: rows.optionalString(index, 5), membersCount: rows.int(index, 6), version: rows.uint64(index, 7),
                oldScope: rows.optionalInt(index, 8).flatMap(StorageCodes.scope),
                newScope: rows.optionalInt(index, 9).flatMap(StorageCodes.scope), reason: rows.string(index, 10),
                expiresAt: rows.int64(index, 11), timestamp: rows.int64(index, 12),
                idempotencyKey: rows.string(index, 13), requestID: rows.string(index, 14),
                reportID: rows.uint64(index, 15), shadow: rows.bool(index, 16), rulesAdded: rows.int(index, 17),
                rulesRemoved: rows.int(index, 18))
            var group: Group?
            if row.isOfGroup {
                guard !rows.isNull(index, Self.actionColumnCount) else {
                    throw .storage("group revision \(row.groupID)/\(row.revision) is missing")
                }
                group = decodeRevision(rows, index, from: Self.actionColumnCount)
            }
            let by = resolvedUser(row.by, rows, index, from: Self.actionColumnCount + 12)
            let on = row.on.map { resolvedUser($0, rows, index, from: Self.actionColumnCount + 18) }
            records.append(row.record(app: appName, revision: group, by: by, on: on))
        }
        return records
    }

    /// How many columns `Statement.actionColumns` has.
    private static let actionColumnCount = 19

    /// Per app, deletes the longest prefix of the log older than `cutoff` (up to `limit` actions
    /// in all) and records it in `pruned_through`. Only the apps that have such a prefix are
    /// visited (`appsToPrune`). An app another writer holds is left for the next run
    /// (`SKIP LOCKED`): pruning never waits.
    func pruneActions(before cutoff: Int64, limit: Int) throws(ModerationError) -> Int {
        let apps = try connection.query(.appsToPrune, [.int(cutoff), .int(limit)])
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

    /// A group revision (guid, name, icon, description, type, metadata, tags, owner, created_at,
    /// updated_at, frozen, join_requests) from column `first` on.
    private func decodeRevision(_ rows: PGResult, _ row: Int, from first: Int) -> Group {
        Group(
            guid: rows.string(row, first), name: rows.string(row, first + 1), icon: rows.string(row, first + 2),
            description: rows.string(row, first + 3), type: StorageCodes.groupType(rows.int(row, first + 4)),
            metadata: RecordCoding.metadata(rows.strings(row, first + 5)), tags: rows.strings(row, first + 6),
            owner: rows.string(row, first + 7), createdAt: rows.int64(row, first + 8),
            updatedAt: rows.int64(row, first + 9), frozen: rows.bool(row, first + 10),
            joinRequests: rows.bool(row, first + 11))
    }

    /// An action's user from a `users` row at column `first` on (`decodeUser`): the app for its
    /// uid, only the uid for a user that is no longer live (NULL columns).
    private func resolvedUser(_ uid: String, _ rows: PGResult, _ row: Int, from first: Int) -> User {
        if uid == User.appUID { return .app }
        guard !rows.isNull(row, first) else { return User(uid: uid) }
        return decodeUser(rows, row, from: first).user
    }
}
