import ModerationMessages
import RPCCore
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Reports over real sockets: delivered live to a moderator's streams (user and group
    /// subscriptions alike) and to the reporter, never to the reported member's stream nor
    /// another member's; ListGroupActions leaves them out the same way.
    @Suite("Reports over the wire", .onEveryStore)
    struct ReportWireTests {
        @Test("a report: visible to a moderator, invisible to the reported user's stream")
        func privacy() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let carol = try cast.user("carol")
            let bob = try cast.user("bob")
            try cast.app.createUser("erin")
            try cast.app.addMembers("g", [("dave", .participant), ("erin", .participant)])
            let dave = try cast.user("dave")
            let start = try cast.app.actions("g").lastSeq
            let moderatorStream = bob.subscribe(after: start)
            let moderatorGroups = bob.subscribe(SubscribeRequest(guids: ["g"], start: .afterSeq(start)))
            let reportedStream = dave.subscribe(after: start)
            let memberGroups = try cast.user("erin").subscribe(
                SubscribeRequest(guids: ["g"], start: .afterSeq(start)))
            let reporterStream = carol.subscribe(after: start)
            defer {
                for stream in [moderatorStream, moderatorGroups, reportedStream, memberGroups, reporterStream] {
                    stream.cancel()
                }
            }
            let filed = try carol.report("g", "dave", category: .harassment, text: "insults")
            let report = try #require(filed.report)
            #expect(report.status == .open && report.target == "dave" && filed.action?.reportID == report.reportID)
            expectFailure(
                failure { try carol.report("g", "dave") }, .alreadyExists, "ERR_ALREADY_REPORTED", mentions: "dave")
            let listed = try bob.reports("g")
            #expect(listed.reports.map(\.reportID) == [report.reportID] && listed.counts == ["dave": 1])
            expectFailure(failure { try dave.reports("g") }, .permissionDenied, "ERR_PERMISSION_DENIED")
            let resolved = try bob.resolveReport("g", report.reportID, .actioned, note: "warned")
            #expect(resolved.report?.status == .resolved && resolved.action?.actionOn?.uid == "carol")
            expectFailure(
                failure { try bob.resolveReport("g", report.reportID, .dismissed) }, .failedPrecondition,
                "ERR_REPORT_ALREADY_RESOLVED", mentions: "\(report.reportID)")
            // A marker every stream gets, so that each has seen everything up to it.
            let marker = try cast.app.updateGroup(UpdateGroupRequest(guid: "g", description: "after the report"))
            let markerSeq = try cast.app.actions("g", kinds: [.updated]).actions.last?.seq ?? 0
            #expect(marker.description == "after the report")
            for stream in [moderatorStream, moderatorGroups, reportedStream, memberGroups, reporterStream] {
                #expect(stream.waitForSeq(markerSeq))
            }
            let reportKinds: Set<ActionType> = [.reported, .reportResolved]
            func kinds(_ stream: EventRecorder) -> [ActionType] {
                stream.actions.map(\.action).filter(reportKinds.contains)
            }
            #expect(kinds(moderatorStream) == [.reported, .reportResolved], "a moderator's user stream")
            #expect(kinds(moderatorGroups) == [.reported, .reportResolved], "a moderator's group stream")
            #expect(kinds(reporterStream) == [.reported, .reportResolved], "the reporter")
            #expect(kinds(reportedStream).isEmpty, "the reported member never hears of it")
            #expect(kinds(memberGroups).isEmpty, "another member's group stream")
            #expect(try dave.allActions("g").filter { reportKinds.contains($0.action) }.isEmpty)
            #expect(try bob.allActions("g").filter { reportKinds.contains($0.action) }.count == 2)
            cast.checkInvariants()
        }
    }
}
