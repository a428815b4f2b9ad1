extension ModerationService {
    /// Reports a member to the group's admins and moderators (`ReportMember`): any member, about
    /// another member.
    ///
    /// Order: arguments (the app cannot report; a category; text ≤ 1000) → group visible →
    /// actor member → target exists → not self → target member (`ERR_NOT_A_MEMBER`) → no open
    /// report by the same reporter about the target (`ERR_ALREADY_REPORTED`) → at most
    /// `maxReportsPerHour` per reporter (`ERR_RATE_LIMITED`).
    public func reportMember(
        _ caller: Caller, guid: String, uid: String, category: Report.Category, text: String = "",
        replay: @escaping ReplayEncoder<ReportResult>,
        completion: @escaping @Sendable (MutationResult<ReportResult>) -> Void
    ) {
        let limit = configuration.maxReportsPerHour
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<ReportResult> in
            let actor = try ValidatedCaller(caller).requireUser()
            let guid = try Validation.identifier(guid, field: "guid")
            let uid = try Validation.identifier(uid, field: "uid")
            try Validation.text(text, field: "text", max: Validation.maxReportText)
            return { (context: inout WriteContext) throws(ModerationError) -> ReportResult in
                try context.reportMember(
                    guid: guid, uid: uid, reporter: actor, category: category, text: text, hourlyLimit: limit)
            }
        }
    }

    /// Resolves an open report as dismissed or actioned (`ResolveReport`): admins and moderators.
    ///
    /// Order: arguments (note ≤ 512) → group visible → actor member → actor admin/moderator →
    /// the report exists in the group (`ERR_INVALID_ARGUMENT`) → open
    /// (`ERR_REPORT_ALREADY_RESOLVED`).
    public func resolveReport(
        _ caller: Caller, guid: String, reportID: UInt64, resolution: Report.Resolution, note: String = "",
        replay: @escaping ReplayEncoder<ReportResult>,
        completion: @escaping @Sendable (MutationResult<ReportResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<ReportResult> in
            let guid = try Validation.identifier(guid, field: "guid")
            guard reportID > 0 else { throw .invalid("report_id", "is required") }
            try Validation.text(note, field: "note", max: Validation.maxReason)
            return { (context: inout WriteContext) throws(ModerationError) -> ReportResult in
                try context.resolveReport(guid: guid, id: reportID, resolution: resolution, note: note)
            }
        }
    }

    /// Lists a group's open or resolved reports, oldest first, with how many of that status the
    /// group has per target (`ListReports`): admins and moderators.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator.
    public func listReports(_ caller: Caller, guid: String, open: Bool, limit: Int = 0, cursor: String = "")
        throws(ModerationError) -> ReportPage
    {
        let guid = try Validation.identifier(guid, field: "guid")
        let limit = try Validation.limit(limit)
        let after = try Cursor.reportID(cursor)
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> ReportPage in
            let access = try context.moderatorAccess(guid, toDo: "list reports")
            let rows = try context.snapshot.reports(
                groupID: access.groupID, query: ReportPageQuery(open: open, afterID: after, limit: limit + 1))
            var page = Page(rows: rows, limit: limit) { Cursor.encode(reportID: $0.id) }
            // A moderator never reads the reports about themselves (the page may be short).
            let reader = context.caller.actor
            page.items.removeAll { $0.target == reader }
            var counts = try context.snapshot.reportCounts(groupID: access.groupID, open: open)
            if let reader { counts[reader] = nil }
            return ReportPage(page: page, counts: counts)
        }
    }
}
