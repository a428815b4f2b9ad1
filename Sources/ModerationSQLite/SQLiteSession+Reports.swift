internal import Moderation
internal import ModerationStoreSupport

/// Reports: read straight from their table (the writer caches none).
extension SQLiteSession {
    func report(groupID: Int64, id: UInt64) throws(ModerationError) -> Report? {
        try connection.row(.report, groupID, id, decode: decodeReport)
    }

    func openReport(groupID: Int64, reporter: String, target: String) throws(ModerationError) -> Report? {
        try connection.row(.openReport, groupID, reporter, target, decode: decodeReport)
    }

    func reports(groupID: Int64, query: ReportPageQuery) throws(ModerationError) -> [Report] {
        try connection.rows(.reportsPage, groupID, query.open, query.afterID ?? 0, query.limit, decode: decodeReport)
    }

    func reportCounts(groupID: Int64, open: Bool) throws(ModerationError) -> [String: Int] {
        let rows = try connection.rows(.reportCounts, groupID, open) { ($0.string(0), $0.int(1)) }
        return Dictionary(rows, uniquingKeysWith: { $1 })
    }

    func reportsFiled(appID: Int64, reporter: String, since: Int64) throws(ModerationError) -> Int {
        try connection.row(.reportsFiled, appID, reporter, since) { $0.int(0) } ?? 0
    }

    func insertReport(appID: Int64, groupID: Int64, _ report: Report) throws(ModerationError) -> UInt64 {
        try connection.execute(
            .insertReport, appID, groupID, report.reporter, report.target, StorageCodes.code(report.category),
            report.text, report.createdAt)
        return UInt64(connection.lastInsertedRowID)
    }

    func resolveReport(groupID: Int64, _ report: Report) throws(ModerationError) {
        try connection.execute(
            .resolveReport, groupID, report.id, report.resolution.map(StorageCodes.code) ?? 0, report.note,
            report.resolvedAt, report.resolvedBy)
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
