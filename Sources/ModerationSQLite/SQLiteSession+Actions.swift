internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    private struct RevisionKey: Hashable {
        let groupID: Int64
        let revision: UInt64
    }

    func appendAction(_ action: inout ActionRecord, appID: Int64, group: StoredGroup) throws(ModerationError) {
        let seq = try headSeq(appID: appID) + 1
        guard seq <= ActionID.maxSeq, appID <= ActionID.maxApp else {
            throw .storage("the action log of app \(appID) is full")
        }
        let value = action
        try connection.execute(
            .insertAction, ActionID.id(appID: appID, seq: seq), group.id, group.revision, StorageCodes.code(value.kind),
            value.actionBy.uid, value.actionOn?.uid, value.group.membersCount, value.group.version,
            value.oldScope.map { Int64(StorageCodes.code($0)) }, value.newScope.map { Int64(StorageCodes.code($0)) },
            value.reason, value.expiresAt, value.timestamp, value.idempotencyKey, value.requestID, value.reportID,
            value.shadow, value.rulesAdded, value.rulesRemoved)
        writer.heads[appID] = seq
        writer.dirtyHeads.insert(appID)
        action.seq = seq
        batchActions.append(action)
    }

    func logBounds(appID: Int64) throws(ModerationError) -> LogBounds {
        let stored =
            try connection.row(.appLog, appID) { LogBounds(headSeq: $0.uint64(1), prunedThrough: $0.uint64(2)) }
            ?? LogBounds(headSeq: 0, prunedThrough: 0)
        guard let head = writer.heads[appID] else { return stored }
        return LogBounds(headSeq: head, prunedThrough: stored.prunedThrough)
    }

    func hasActions(groupID: Int64, on uid: String) throws(ModerationError) -> Bool {
        try connection.row(.hasActionsOn, groupID, uid) { _ in true } ?? false
    }

    func actions(appID: Int64, query: ActionLogQuery) throws(ModerationError) -> [ActionRecord] {
        let appName = try connection.row(.appLog, appID) { $0.string(0) } ?? ""
        let statementQuery: Query = query.groupID == nil ? .actionsOfApp : .actionsOfGroup
        let rows = try connection.run(statementQuery) { (statement) throws(ModerationError) -> [StoredAction] in
            statement.bind(
                from: 1, ActionID.id(appID: appID, seq: min(query.afterSeq, ActionID.maxSeq)),
                ActionID.id(appID: appID, seq: min(query.throughSeq ?? ActionID.maxSeq, ActionID.maxSeq)),
                StorageCodes.mask(query.kinds), query.actor, query.target, query.limit)
            if let groupID = query.groupID { statement.bind(7, groupID) }
            return try statement.rows { statement in
                StoredAction(
                    seq: ActionID.seq(statement.int64(0)), groupID: statement.int64(1), revision: statement.uint64(2),
                    kind: StorageCodes.kind(statement.int(3)), by: statement.string(4), on: statement.optionalString(5),
                    membersCount: statement.int(6), version: statement.uint64(7),
                    oldScope: statement.optionalInt(8).flatMap(StorageCodes.scope),
                    newScope: statement.optionalInt(9).flatMap(StorageCodes.scope), reason: statement.string(10),
                    expiresAt: statement.int64(11), timestamp: statement.int64(12),
                    idempotencyKey: statement.string(13),
                    requestID: statement.string(14), reportID: statement.uint64(15), shadow: statement.int(16) != 0,
                    rulesAdded: statement.int(17), rulesRemoved: statement.int(18))
            }
        }
        var users: [String: User] = [User.appUID: .app]
        var revisions: [RevisionKey: Group] = [:]
        var records: [ActionRecord] = []
        records.reserveCapacity(rows.count)
        for row in rows {
            let group =
                row.isOfGroup
                ? try revision(RevisionKey(groupID: row.groupID, revision: row.revision), cache: &revisions) : nil
            let by = try resolveUser(row.by, appID: appID, cache: &users)
            let on = try row.on.map { (uid: String) throws(ModerationError) -> User in
                try resolveUser(uid, appID: appID, cache: &users)
            }
            records.append(row.record(app: appName, revision: group, by: by, on: on))
        }
        return records
    }

    func pruneActions(before cutoff: Int64, limit: Int) throws(ModerationError) -> Int {
        let apps = try connection.rows(.appsToPrune, cutoff, limit) { ($0.int64(0), $0.uint64(1)) }
        var removed = 0
        for (appID, pruned) in apps where removed < limit {
            let budget = limit - removed
            let oldest = try connection.rows(
                .pruneScan, ActionID.id(appID: appID, seq: pruned), ActionID.id(appID: appID, seq: ActionID.maxSeq),
                budget
            ) { (ActionID.seq($0.int64(0)), $0.int64(1)) }
            let expired = oldest.prefix { $0.1 < cutoff }
            guard let last = expired.last?.0 else { continue }
            try connection.execute(
                .pruneDelete, ActionID.id(appID: appID, seq: pruned), ActionID.id(appID: appID, seq: last))
            try connection.execute(.setPrunedThrough, appID, last)
            removed += expired.count
        }
        try pruneRevisions(before: cutoff, limit: limit)
        return removed
    }

    /// Deletes superseded revisions that no retained action can show: within a group, actions
    /// refer to nondecreasing revisions, so everything below the first retained action's
    /// revision is unreachable.
    private func pruneRevisions(before cutoff: Int64, limit: Int) throws(ModerationError) {
        let candidates = try connection.rows(.supersededRevisions, cutoff, limit) { ($0.int64(0), $0.uint64(1)) }
        var firstRetained: [Int64: UInt64?] = [:]
        for (groupID, revision) in candidates {
            let minimum: UInt64?
            if let known = firstRetained[groupID] {
                minimum = known
            } else {
                minimum = try connection.row(.firstRetainedRevision, groupID) { $0.uint64(0) }
                firstRetained[groupID] = minimum
            }
            if let minimum, revision >= minimum { continue }
            try connection.execute(.deleteRevision, groupID, revision)
        }
    }

    private func headSeq(appID: Int64) throws(ModerationError) -> UInt64 {
        if let head = writer.heads[appID] { return head }
        let head = try logBounds(appID: appID).headSeq
        writer.heads[appID] = head
        return head
    }

    private func revision(_ key: RevisionKey, cache: inout [RevisionKey: Group]) throws(ModerationError) -> Group {
        if let known = cache[key] { return known }
        let found = try connection.row(.revision, key.groupID, key.revision) { (statement) throws(ModerationError) in
            Group(
                guid: statement.string(0), name: statement.string(1), icon: statement.string(2),
                description: statement.string(3),
                type: StorageCodes.groupType(statement.int(4)), metadata: try RecordCoding.metadata(statement.blob(5)),
                tags: try RecordCoding.strings(statement.blob(6)), owner: statement.string(7),
                createdAt: statement.int64(8),
                updatedAt: statement.int64(9), frozen: statement.int(10) != 0, joinRequests: statement.int(11) != 0)
        }
        guard let group = found else { throw .storage("group revision \(key.groupID)/\(key.revision) is missing") }
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
