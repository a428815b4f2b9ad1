internal import Moderation
internal import ModerationStoreSupport

/// Content rules: read straight from their table (the writer caches none). A set is keyed by
/// app and guid ('' for the app's), so the app's set and a group's share one table.
extension SQLiteSession {
    func contentRules(appID: Int64, guid: String, afterID: UInt64, limit: Int) throws(ModerationError)
        -> [ContentRule]
    {
        try connection.rows(.contentRulesPage, appID, guid, afterID, limit, decode: decodeContentRule)
    }

    func contentRuleCount(appID: Int64, guid: String) throws(ModerationError) -> Int {
        try connection.row(.contentRuleCount, appID, guid) { $0.int(0) } ?? 0
    }

    func contentRule(appID: Int64, guid: String, id: UInt64) throws(ModerationError) -> ContentRule? {
        try connection.row(.contentRuleByID, appID, guid, id, decode: decodeContentRule)
    }

    func contentRule(appID: Int64, guid: String, kind: ContentRuleKind, pattern: String) throws(ModerationError)
        -> ContentRule?
    {
        try connection.row(
            .contentRuleByPattern, appID, guid, StorageCodes.code(kind), pattern, decode: decodeContentRule)
    }

    func contentRuleSetVersions() throws(ModerationError) -> [ContentRuleSetVersion] {
        try connection.rows(.contentRuleSetVersions) { statement in
            ContentRuleSetVersion(appID: statement.int64(0), guid: statement.string(1), version: statement.uint64(2))
        }
    }

    func insertContentRule(appID: Int64, _ rule: ContentRule) throws(ModerationError) -> UInt64 {
        try connection.execute(
            .insertContentRule, appID, rule.guid, StorageCodes.code(rule.kind), rule.pattern,
            StorageCodes.code(rule.action), rule.description, rule.createdAt, rule.createdBy)
        return UInt64(connection.lastInsertedRowID)
    }

    func deleteContentRule(appID: Int64, id: UInt64) throws(ModerationError) {
        try connection.execute(.deleteContentRule, appID, id)
    }

    func setContentRuleSetVersion(appID: Int64, guid: String, version: UInt64) throws(ModerationError) {
        try connection.execute(.setContentRuleSetVersion, appID, guid, version)
    }

    func deleteContentRuleSet(appID: Int64, guid: String) throws(ModerationError) {
        try connection.execute(.deleteContentRulesOfSet, appID, guid)
        try connection.execute(.deleteContentRuleSet, appID, guid)
    }

    /// A content rule row in the order of `Query.contentRuleColumns`.
    private func decodeContentRule(_ statement: SQLiteStatement) -> ContentRule {
        ContentRule(
            id: statement.uint64(0), guid: statement.string(1), kind: StorageCodes.contentRuleKind(statement.int(2)),
            pattern: statement.string(3), action: StorageCodes.contentAction(statement.int(4)),
            description: statement.string(5), createdAt: statement.int64(6), createdBy: statement.string(7))
    }
}
