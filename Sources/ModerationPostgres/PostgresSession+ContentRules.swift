internal import Moderation
internal import ModerationStoreSupport

/// Content rules: read straight from their table (the writer caches none). A set is keyed by
/// app and guid ('' for the app's); its changes are made under the app's lock, which the write
/// took when it looked the app up.
extension PostgresSession {
    func contentRules(appID: Int64, guid: String, afterID: UInt64, limit: Int) throws(ModerationError)
        -> [ContentRule]
    {
        let rows = try connection.query(.contentRulesPage, [.int(appID), .text(guid), .int(afterID), .int(limit)])
        return (0..<rows.rowCount).map { decodeContentRule(rows, $0) }
    }

    func contentRuleCount(appID: Int64, guid: String) throws(ModerationError) -> Int {
        try connection.query(.contentRuleCount, [.int(appID), .text(guid)]).int(0, 0)
    }

    func contentRule(appID: Int64, guid: String, id: UInt64) throws(ModerationError) -> ContentRule? {
        let rows = try connection.query(.contentRuleByID, [.int(appID), .text(guid), .int(id)])
        return rows.rowCount > 0 ? decodeContentRule(rows, 0) : nil
    }

    func contentRule(appID: Int64, guid: String, kind: ContentRuleKind, pattern: String) throws(ModerationError)
        -> ContentRule?
    {
        let rows = try connection.query(
            .contentRuleByPattern, [.int(appID), .text(guid), .int(StorageCodes.code(kind)), .text(pattern)])
        return rows.rowCount > 0 ? decodeContentRule(rows, 0) : nil
    }

    func contentRuleSetVersions() throws(ModerationError) -> [ContentRuleSetVersion] {
        let rows = try connection.query(.contentRuleSetVersions, [])
        return (0..<rows.rowCount).map {
            ContentRuleSetVersion(appID: rows.int64($0, 0), guid: rows.string($0, 1), version: rows.uint64($0, 2))
        }
    }

    func insertContentRule(appID: Int64, _ rule: ContentRule) throws(ModerationError) -> UInt64 {
        let rows = try connection.query(
            .insertContentRule,
            [
                .int(appID), .text(rule.guid), .int(StorageCodes.code(rule.kind)), .text(rule.pattern),
                .int(StorageCodes.code(rule.action)), .text(rule.description), .int(rule.createdAt),
                .text(rule.createdBy),
            ])
        return rows.uint64(0, 0)
    }

    func deleteContentRule(appID: Int64, id: UInt64) throws(ModerationError) {
        try connection.send(.deleteContentRule, [.int(appID), .int(id)])
    }

    func setContentRuleSetVersion(appID: Int64, guid: String, version: UInt64) throws(ModerationError) {
        try connection.send(.setContentRuleSetVersion, [.int(appID), .text(guid), .int(version)])
    }

    func deleteContentRuleSet(appID: Int64, guid: String) throws(ModerationError) {
        try connection.send(.deleteContentRulesOfSet, [.int(appID), .text(guid)])
        try connection.send(.deleteContentRuleSet, [.int(appID), .text(guid)])
    }

    /// A content rule row in the order of `Statement.contentRuleColumns`.
    private func decodeContentRule(_ rows: PGResult, _ row: Int) -> ContentRule {
        ContentRule(
            id: rows.uint64(row, 0), guid: rows.string(row, 1), kind: StorageCodes.contentRuleKind(rows.int(row, 2)),
            pattern: rows.string(row, 3), action: StorageCodes.contentAction(rows.int(row, 4)),
            description: rows.string(row, 5), createdAt: rows.int64(row, 6), createdBy: rows.string(row, 7))
    }
}
