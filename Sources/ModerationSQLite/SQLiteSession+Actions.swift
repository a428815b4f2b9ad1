internal import CSQLite
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
        try connection.run(.insertAction) { (statement) throws(ModerationError) in
            statement.bind(1, ActionID.id(appID: appID, seq: seq))
            statement.bind(2, group.id)
            statement.bind(3, group.revision)
            statement.bind(4, StorageCodes.code(value.kind))
            statement.bind(5, value.actionBy.uid)
            statement.bind(6, value.actionOn?.uid)
            statement.bind(7, value.group.membersCount)
            statement.bind(8, value.group.version)
            statement.bind(9, value.oldScope.map { Int64(StorageCodes.code($0)) })
            statement.bind(10, value.newScope.map { Int64(StorageCodes.code($0)) })
            statement.bind(11, value.reason)
            statement.bind(12, value.expiresAt)
            statement.bind(13, value.timestamp)
            statement.bind(14, value.idempotencyKey)
            statement.bind(15, value.requestID)
            statement.bind(16, value.reportID)
            statement.bind(17, value.shadow ? 1 : 0)
            statement.bind(18, value.rulesAdded)
            statement.bind(19, value.rulesRemoved)
            try statement.execute()
        }
        writer.heads[appID] = seq
        writer.dirtyHeads.insert(appID)
        action.seq = seq
        batchActions.append(action)
    }

    func logBounds(appID: Int64) throws(ModerationError) -> LogBounds {
        let stored = try connection.run(.appLog) { (statement) throws(ModerationError) -> LogBounds in
            statement.bind(1, appID)
            guard try statement.step() else { return LogBounds(headSeq: 0, prunedThrough: 0) }
            return LogBounds(headSeq: statement.uint64(1), prunedThrough: statement.uint64(2))
        }
        guard let head = writer.heads[appID] else { return stored }
        return LogBounds(headSeq: head, prunedThrough: stored.prunedThrough)
    }

    func hasActions(groupID: Int64, on uid: String) throws(ModerationError) -> Bool {
        try connection.run(.hasActionsOn) { (statement) throws(ModerationError) -> Bool in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            return try statement.step()
        }
    }

    func actions(appID: Int64, query: ActionLogQuery) throws(ModerationError) -> [ActionRecord] {
        let appName = try connection.run(.appLog) { (statement) throws(ModerationError) -> String in
            statement.bind(1, appID)
            return try statement.step() ? statement.string(0) : ""
        }
        let statementQuery: Query = query.groupID == nil ? .actionsOfApp : .actionsOfGroup
        let rows = try connection.run(statementQuery) { (statement) throws(ModerationError) -> [StoredAction] in
            statement.bind(1, ActionID.id(appID: appID, seq: min(query.afterSeq, ActionID.maxSeq)))
            statement.bind(2, ActionID.id(appID: appID, seq: min(query.throughSeq ?? ActionID.maxSeq, ActionID.maxSeq)))
            if let groupID = query.groupID { statement.bind(7, groupID) }
            statement.bind(3, StorageCodes.mask(query.kinds))
            statement.bind(4, query.actor)
            statement.bind(5, query.target)
            statement.bind(6, query.limit)
            var rows: [StoredAction] = []
            while try statement.step() {
                rows.append(
                    StoredAction(
                        seq: ActionID.seq(statement.int64(0)), groupID: statement.int64(1),
                        revision: statement.uint64(2),
                        kind: StorageCodes.kind(statement.int(3)), by: statement.string(4),
                        on: statement.optionalString(5),
                        membersCount: statement.int(6), version: statement.uint64(7),
                        oldScope: statement.optionalInt(8).flatMap(StorageCodes.scope),
                        newScope: statement.optionalInt(9).flatMap(StorageCodes.scope), reason: statement.string(10),
                        expiresAt: statement.int64(11), timestamp: statement.int64(12),
                        idempotencyKey: statement.string(13),
                        requestID: statement.string(14), reportID: statement.uint64(15), shadow: statement.int(16) != 0,
                        rulesAdded: statement.int(17), rulesRemoved: statement.int(18))
                )
            }
            return rows
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
        let apps = try connection.run(.appsToPrune) { (statement) throws(ModerationError) -> [(Int64, UInt64)] in
            statement.bind(1, cutoff)
            statement.bind(2, limit)
            var apps: [(Int64, UInt64)] = []
            while try statement.step() { apps.append((statement.int64(0), statement.uint64(1))) }
            return apps
        }
        var removed = 0
        for (appID, pruned) in apps where removed < limit {
            let budget = limit - removed
            let oldest = try connection.run(.pruneScan) { (statement) throws(ModerationError) -> [(UInt64, Int64)] in
                statement.bind(1, ActionID.id(appID: appID, seq: pruned))
                statement.bind(2, ActionID.id(appID: appID, seq: ActionID.maxSeq))
                statement.bind(3, budget)
                var rows: [(UInt64, Int64)] = []
                while try statement.step() { rows.append((ActionID.seq(statement.int64(0)), statement.int64(1))) }
                return rows
            }
            let expired = oldest.prefix { $0.1 < cutoff }
            guard let last = expired.last?.0 else { continue }
            try connection.run(.pruneDelete) { (statement) throws(ModerationError) in
                statement.bind(1, ActionID.id(appID: appID, seq: pruned))
                statement.bind(2, ActionID.id(appID: appID, seq: last))
                try statement.execute()
            }
            try connection.run(.setPrunedThrough) { (statement) throws(ModerationError) in
                statement.bind(1, appID)
                statement.bind(2, last)
                try statement.execute()
            }
            removed += expired.count
        }
        try pruneRevisions(before: cutoff, limit: limit)
        return removed
    }

    /// Deletes superseded revisions that no retained action can show: within a group, actions
    /// refer to nondecreasing revisions, so everything below the first retained action's
    /// revision is unreachable.
    private func pruneRevisions(before cutoff: Int64, limit: Int) throws(ModerationError) {
        let candidates = try connection.run(.supersededRevisions) {
            (statement) throws(ModerationError) -> [(Int64, UInt64)] in
            statement.bind(1, cutoff)
            statement.bind(2, limit)
            var rows: [(Int64, UInt64)] = []
            while try statement.step() { rows.append((statement.int64(0), statement.uint64(1))) }
            return rows
        }
        var firstRetained: [Int64: UInt64?] = [:]
        for (groupID, revision) in candidates {
            let minimum: UInt64?
            if let known = firstRetained[groupID] {
                minimum = known
            } else {
                minimum = try connection.run(.firstRetainedRevision) { (statement) throws(ModerationError) -> UInt64? in
                    statement.bind(1, groupID)
                    return try statement.step() ? statement.uint64(0) : nil
                }
                firstRetained[groupID] = minimum
            }
            if let minimum, revision >= minimum { continue }
            try connection.run(.deleteRevision) { (statement) throws(ModerationError) in
                statement.bind(1, groupID)
                statement.bind(2, revision)
                try statement.execute()
            }
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
        let group = try connection.run(.revision) { (statement) throws(ModerationError) -> Group in
            statement.bind(1, key.groupID)
            statement.bind(2, key.revision)
            guard try statement.step() else {
                throw .storage("group revision \(key.groupID)/\(key.revision) is missing")
            }
            return Group(
                guid: statement.string(0), name: statement.string(1), icon: statement.string(2),
                description: statement.string(3),
                type: StorageCodes.groupType(statement.int(4)), metadata: try RecordCoding.metadata(statement.blob(5)),
                tags: try RecordCoding.strings(statement.blob(6)), owner: statement.string(7),
                createdAt: statement.int64(8),
                updatedAt: statement.int64(9), frozen: statement.int(10) != 0, joinRequests: statement.int(11) != 0)
        }
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
