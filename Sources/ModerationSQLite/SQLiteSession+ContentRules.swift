internal import CSQLite
internal import Moderation
internal import ModerationStoreSupport

/// Content rules: read straight from their table (the writer caches none). A set is keyed by
/// app and guid ('' for the app's), so the app's set and a group's share one table.
extension SQLiteSession {
    func contentRules(appID: Int64, guid: String, afterID: UInt64, limit: Int) throws(ModerationError)
        -> [ContentRule]
    {
        try connection.run(.contentRulesPage) { (statement) throws(ModerationError) -> [ContentRule] in
            statement.bind(1, appID)
            statement.bind(2, guid)
            statement.bind(3, afterID)
            statement.bind(4, limit)
            var rules: [ContentRule] = []
            while try statement.step() { rules.append(decodeContentRule(statement)) }
            return rules
        }
    }

    func contentRuleCount(appID: Int64, guid: String) throws(ModerationError) -> Int {
        try connection.run(.contentRuleCount) { (statement) throws(ModerationError) -> Int in
            statement.bind(1, appID)
            statement.bind(2, guid)
            return try statement.step() ? statement.int(0) : 0
        }
    }

    func contentRule(appID: Int64, guid: String, id: UInt64) throws(ModerationError) -> ContentRule? {
        try connection.run(.contentRuleByID) { (statement) throws(ModerationError) -> ContentRule? in
            statement.bind(1, appID)
            statement.bind(2, guid)
            statement.bind(3, id)
            return try statement.step() ? decodeContentRule(statement) : nil
        }
    }

    func contentRule(appID: Int64, guid: String, kind: ContentRuleKind, pattern: String) throws(ModerationError)
        -> ContentRule?
    {
        try connection.run(.contentRuleByPattern) { (statement) throws(ModerationError) -> ContentRule? in
            statement.bind(1, appID)
            statement.bind(2, guid)
            statement.bind(3, StorageCodes.code(kind))
            statement.bind(4, pattern)
            return try statement.step() ? decodeContentRule(statement) : nil
        }
    }

    func contentRuleSetVersions() throws(ModerationError) -> [ContentRuleSetVersion] {
        try connection.run(.contentRuleSetVersions) { (statement) throws(ModerationError) -> [ContentRuleSetVersion] in
            var versions: [ContentRuleSetVersion] = []
            while try statement.step() {
                versions.append(
                    ContentRuleSetVersion(
                        appID: statement.int64(0), guid: statement.string(1), version: statement.uint64(2)))
            }
            return versions
        }
    }

    func insertContentRule(appID: Int64, _ rule: ContentRule) throws(ModerationError) -> UInt64 {
        try connection.run(.insertContentRule) { (statement) throws(ModerationError) in
            statement.bind(1, appID)
            statement.bind(2, rule.guid)
            statement.bind(3, StorageCodes.code(rule.kind))
            statement.bind(4, rule.pattern)
            statement.bind(5, StorageCodes.code(rule.action))
            statement.bind(6, rule.description)
            statement.bind(7, rule.createdAt)
            statement.bind(8, rule.createdBy)
            try statement.execute()
        }
        return UInt64(sqlite3_last_insert_rowid(connection.handle))
    }

    func deleteContentRule(appID: Int64, id: UInt64) throws(ModerationError) {
        try connection.run(.deleteContentRule) { (statement) throws(ModerationError) in
            statement.bind(1, appID)
            statement.bind(2, id)
            try statement.execute()
        }
    }

    func setContentRuleSetVersion(appID: Int64, guid: String, version: UInt64) throws(ModerationError) {
        try connection.run(.setContentRuleSetVersion) { (statement) throws(ModerationError) in
            statement.bind(1, appID)
            statement.bind(2, guid)
            statement.bind(3, version)
            try statement.execute()
        }
    }

    func deleteContentRuleSet(appID: Int64, guid: String) throws(ModerationError) {
        for query in [Query.deleteContentRulesOfSet, .deleteContentRuleSet] {
            try connection.run(query) { (statement) throws(ModerationError) in
                statement.bind(1, appID)
                statement.bind(2, guid)
                try statement.execute()
            }
        }
    }

    /// A content rule row in the order of `Query.contentRuleColumns`.
    private func decodeContentRule(_ statement: SQLiteStatement) -> ContentRule {
        ContentRule(
            id: statement.uint64(0), guid: statement.string(1), kind: StorageCodes.contentRuleKind(statement.int(2)),
            pattern: statement.string(3), action: StorageCodes.contentAction(statement.int(4)),
            description: statement.string(5), createdAt: statement.int64(6), createdBy: statement.string(7))
    }
}
