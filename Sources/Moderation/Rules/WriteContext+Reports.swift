/// The writer's part of reports. A report changes no membership, so recording one (or its
/// resolution) leaves the group's version alone.
extension WriteContext {
    /// Files the acting user's report about `uid` (`ReportMember`).
    ///
    /// Steps 2–8: the group visible, the actor a member, the target exists, not the actor
    /// (`ERR_GROUP_NO_SELF_ACTION`), a member (`ERR_NOT_A_MEMBER`); then no open report by the
    /// same reporter about the same member (`ERR_ALREADY_REPORTED`) and fewer than `hourlyLimit`
    /// reports by the reporter in the app within the last hour (`ERR_RATE_LIMITED`).
    mutating func reportMember(
        guid: String, uid: String, reporter: String, category: Report.Category, text: String, hourlyLimit: Int
    ) throws(ModerationError) -> ReportResult {
        let access = try access(guid)
        try access.requireVisible()
        try access.requireMember()
        let target = try requireUser(uid)
        try access.requireNotSelf(uid)
        guard try tx.membership(groupID: access.groupID, uid: uid) != nil else { throw .notAMember(uid, guid) }
        if try tx.openReport(groupID: access.groupID, reporter: reporter, target: uid) != nil {
            throw ModerationError(
                .alreadyReported, "\(reporter) already has an open report about \(uid) in group \(guid)")
        }
        guard let appID = try appID() else { throw .groupNotFound(guid) }
        let filed = try tx.reportsFiled(appID: appID, reporter: reporter, since: now - Self.reportWindowMs)
        guard filed < hourlyLimit else {
            throw ModerationError(
                .rateLimited, "\(reporter) filed \(filed) reports in the last hour, the most allowed; retry later",
                details: ["max_reports_per_hour": String(hourlyLimit)])
        }
        var report = Report(reporter: reporter, target: uid, category: category, text: text, createdAt: now)
        report.id = try tx.insertReport(appID: appID, groupID: access.groupID, report)
        let action = try record(
            .reported, on: target.user, group: access.stored, reason: category.rawValue, reportID: report.id)
        return ReportResult(report: report, action: action)
    }

    /// Resolves report `id` (`ResolveReport`): steps 2–4 (the group visible, the actor a member,
    /// an admin or moderator), then the report exists in the group (`ERR_INVALID_ARGUMENT`
    /// naming the id) and is open (`ERR_REPORT_ALREADY_RESOLVED`). `reportResolved` is recorded
    /// on the reporter, to whom the outcome is addressed.
    mutating func resolveReport(guid: String, id: UInt64, resolution: Report.Resolution, note: String)
        throws(ModerationError) -> ReportResult
    {
        let access = try moderatorAccess(guid, toDo: "resolve reports")
        guard var report = try tx.report(groupID: access.groupID, id: id) else {
            throw .invalid("report_id", "group \(guid) has no report \(id)")
        }
        guard report.isOpen else {
            throw ModerationError(
                .reportAlreadyResolved,
                "report \(id) in group \(guid) is already resolved (\(report.resolution?.rawValue ?? ""))")
        }
        report.resolution = resolution
        report.note = note
        report.resolvedAt = now
        report.resolvedBy = caller.actionUID
        try tx.resolveReport(groupID: access.groupID, report)
        var reporter = User(uid: report.reporter)
        if let appID = try appID(), let stored = try tx.user(appID: appID, uid: report.reporter) {
            reporter = stored.user
        }
        let action = try record(
            .reportResolved, on: reporter, group: access.stored, reason: resolution.rawValue, reportID: report.id)
        return ReportResult(report: report, action: action)
    }

    /// The window of the per-reporter limit: one hour.
    static let reportWindowMs: Int64 = 3_600_000
}
