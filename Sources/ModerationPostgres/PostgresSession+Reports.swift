internal import Moderation
internal import ModerationStoreSupport

/// Reports: read straight from their table (the writer caches none).
extension PostgresSession {
    func report(groupID: Int64, id: UInt64) throws(ModerationError) -> Report? {
        let rows = try connection.query(.report, [.int(groupID), .int(Int64(clamping: id))])
        return rows.rowCount > 0 ? decodeReport(rows, 0) : nil
    }

    func openReport(groupID: Int64, reporter: String, target: String) throws(ModerationError) -> Report? {
        let rows = try connection.query(.openReport, [.int(groupID), .text(reporter), .text(target)])
        return rows.rowCount > 0 ? decodeReport(rows, 0) : nil
    }

    func reports(groupID: Int64, query: ReportPageQuery) throws(ModerationError) -> [Report] {
        let rows = try connection.query(
            .reportsPage,
            [.int(groupID), .bool(query.open), .int(Int64(clamping: query.afterID ?? 0)), .int(query.limit)])
        return (0..<rows.rowCount).map { decodeReport(rows, $0) }
    }

    func reportCounts(groupID: Int64, open: Bool) throws(ModerationError) -> [String: Int] {
        let rows = try connection.query(.reportCounts, [.int(groupID), .bool(open)])
        var counts: [String: Int] = [:]
        for row in 0..<rows.rowCount { counts[rows.string(row, 0)] = rows.int(row, 1) }
        return counts
    }

    func reportsFiled(appID: Int64, reporter: String, since: Int64) throws(ModerationError) -> Int {
        try connection.query(.reportsFiled, [.int(appID), .text(reporter), .int(since)]).int(0, 0)
    }

    func insertReport(appID: Int64, groupID: Int64, _ report: Report) throws(ModerationError) -> UInt64 {
        let rows = try connection.query(
            .insertReport,
            [
                .int(appID), .int(groupID), .text(report.reporter), .text(report.target),
                .int(StorageCodes.code(report.category)), .text(report.text), .int(report.createdAt),
            ])
        return rows.uint64(0, 0)
    }

    func resolveReport(groupID: Int64, _ report: Report) throws(ModerationError) {
        try connection.send(
            .resolveReport,
            [
                .int(groupID), .int(Int64(clamping: report.id)), .int(report.resolution.map(StorageCodes.code) ?? 0),
                .text(report.note), .int(report.resolvedAt), .text(report.resolvedBy),
            ])
    }

    /// A report row in the order of `Statement.reportColumns`.
    private func decodeReport(_ rows: PGResult, _ row: Int) -> Report {
        Report(
            id: rows.uint64(row, 0), reporter: rows.string(row, 1), target: rows.string(row, 2),
            category: StorageCodes.reportCategory(rows.int(row, 3)), text: rows.string(row, 4),
            resolution: StorageCodes.reportResolution(rows.int(row, 5)), note: rows.string(row, 6),
            createdAt: rows.int64(row, 7), resolvedAt: rows.int64(row, 8), resolvedBy: rows.string(row, 9))
    }
}
