internal import CSQLite
internal import Moderation
internal import ModerationStoreSupport

/// Reports: read straight from their table (the writer caches none).
extension SQLiteSession {
    func report(groupID: Int64, id: UInt64) throws(ModerationError) -> Report? {
        try connection.run(.report) { (statement) throws(ModerationError) -> Report? in
            statement.bind(1, groupID)
            statement.bind(2, id)
            return try statement.step() ? decodeReport(statement) : nil
        }
    }

    func openReport(groupID: Int64, reporter: String, target: String) throws(ModerationError) -> Report? {
        try connection.run(.openReport) { (statement) throws(ModerationError) -> Report? in
            statement.bind(1, groupID)
            statement.bind(2, reporter)
            statement.bind(3, target)
            return try statement.step() ? decodeReport(statement) : nil
        }
    }

    func reports(groupID: Int64, query: ReportPageQuery) throws(ModerationError) -> [Report] {
        try connection.run(.reportsPage) { (statement) throws(ModerationError) -> [Report] in
            statement.bind(1, groupID)
            statement.bind(2, query.open ? 1 : 0)
            statement.bind(3, query.afterID ?? 0)
            statement.bind(4, query.limit)
            var rows: [Report] = []
            while try statement.step() { rows.append(decodeReport(statement)) }
            return rows
        }
    }

    func reportCounts(groupID: Int64, open: Bool) throws(ModerationError) -> [String: Int] {
        try connection.run(.reportCounts) { (statement) throws(ModerationError) -> [String: Int] in
            statement.bind(1, groupID)
            statement.bind(2, open ? 1 : 0)
            var counts: [String: Int] = [:]
            while try statement.step() { counts[statement.string(0)] = statement.int(1) }
            return counts
        }
    }

    func reportsFiled(appID: Int64, reporter: String, since: Int64) throws(ModerationError) -> Int {
        try connection.run(.reportsFiled) { (statement) throws(ModerationError) -> Int in
            statement.bind(1, appID)
            statement.bind(2, reporter)
            statement.bind(3, since)
            return try statement.step() ? statement.int(0) : 0
        }
    }

    func insertReport(appID: Int64, groupID: Int64, _ report: Report) throws(ModerationError) -> UInt64 {
        try connection.run(.insertReport) { (statement) throws(ModerationError) in
            statement.bind(1, appID)
            statement.bind(2, groupID)
            statement.bind(3, report.reporter)
            statement.bind(4, report.target)
            statement.bind(5, StorageCodes.code(report.category))
            statement.bind(6, report.text)
            statement.bind(7, report.createdAt)
            try statement.execute()
        }
        return UInt64(sqlite3_last_insert_rowid(connection.handle))
    }

    func resolveReport(groupID: Int64, _ report: Report) throws(ModerationError) {
        try connection.run(.resolveReport) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, report.id)
            statement.bind(3, report.resolution.map(StorageCodes.code) ?? 0)
            statement.bind(4, report.note)
            statement.bind(5, report.resolvedAt)
            statement.bind(6, report.resolvedBy)
            try statement.execute()
        }
    }

    /// A report row in the order of `Query.reportColumns`.
    private func decodeReport(_ statement: SQLiteStatement) -> Report {
        Report(
            id: statement.uint64(0), reporter: statement.string(1), target: statement.string(2),
            category: StorageCodes.reportCategory(statement.int(3)), text: statement.string(4),
            resolution: StorageCodes.reportResolution(statement.int(5)), note: statement.string(6),
            createdAt: statement.int64(7), resolvedAt: statement.int64(8), resolvedBy: statement.string(9))
    }
}
