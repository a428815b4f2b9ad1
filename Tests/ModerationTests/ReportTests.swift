import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Reports (docs/SERVICE.md): any member reports another; admins and moderators list and resolve
/// them. Reports are private: their actions are listed only to the group's admins and
/// moderators, the app and the reporter — never to the reported member or other members.
@Suite("Reports", .onEveryStore)
struct ReportTests {
    /// Group "g" owned by o with admin a, moderator m, participants p, q, r.
    static func setUp(configuration: ModerationService.Configuration? = nil) throws -> ServiceHarness {
        let clock = ManualWallClock(ticking: false)
        let harness =
            try configuration.map { try ServiceHarness(clock: clock, configuration: $0) }
            ?? ServiceHarness(clock: clock)
        let app = harness.client()
        for uid in ["o", "a", "m", "p", "q", "r", "x"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o",
            members: [
                MemberGrant(uid: "a", scope: .admin), MemberGrant(uid: "m", scope: .moderator), MemberGrant(uid: "p"),
                MemberGrant(uid: "q"), MemberGrant(uid: "r"),
            ])
        return harness
    }

    @Test("a report filed and resolved: moderators see it, the reporter sees its actions, the reported member does not")
    func privacy() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let filed = try harness.client("p").report("g", "q", category: .harassment, text: "rude")
        #expect(
            filed.report.id > 0 && filed.report.isOpen && filed.report.reporter == "p" && filed.report.target == "q")
        #expect(filed.action.kind == .reported && filed.action.reason == "harassment")
        #expect(filed.action.reportID == filed.report.id && filed.action.actionOn?.uid == "q")
        let versionBefore = filed.action.group.version
        #expect(ModerationClient.code { try harness.client("p").report("g", "q") } == .alreadyReported)
        try harness.client("r").report("g", "q", category: .spam)

        let listed = try harness.client("m").listReports("g")
        #expect(listed.page.items.map(\.reporter) == ["p", "r"] && listed.counts == ["q": 2])
        #expect(listed.page.items[0].text == "rude")
        #expect(ModerationClient.code { try harness.client("p").listReports("g") } == .permissionDenied)

        let resolved = try harness.client("m").resolveReport("g", filed.report.id, .actioned, note: "warned")
        #expect(resolved.report.resolution == .actioned && resolved.report.resolvedBy == "m")
        #expect(resolved.action.kind == .reportResolved && resolved.action.actionOn?.uid == "p")
        #expect(resolved.action.reason == "actioned" && resolved.action.group.version == versionBefore)
        #expect(
            ModerationClient.code { try harness.client("a").resolveReport("g", filed.report.id, .dismissed) }
                == .reportAlreadyResolved)
        #expect(try harness.client("a").listReports("g", open: false).page.items.map(\.id) == [filed.report.id])
        #expect(try harness.client("a").listReports("g").counts == ["q": 1])
        try harness.client("p").report("g", "q", category: .other) // the first one is resolved: a new one may open

        let kinds: Set<ActionKind> = [.reported, .reportResolved]
        func seen(_ uid: String?) throws -> [ActionKind] {
            try harness.client(uid).actions("g").actions.map(\.kind).filter { kinds.contains($0) }
        }
        #expect(try seen("m") == [.reported, .reported, .reportResolved, .reported])
        #expect(try seen("a") == [.reported, .reported, .reportResolved, .reported])
        #expect(try seen(nil) == [.reported, .reported, .reportResolved, .reported], "the app")
        #expect(try seen("p") == [.reported, .reportResolved, .reported], "the reporter: their own")
        #expect(try seen("r") == [.reported], "another reporter: their own only")
        #expect(try seen("q").isEmpty, "the reported member sees none")
        #expect(try seen("x").isEmpty, "a non-member sees none")
    }

    @Test("rules: self, non-members, the hourly limit per reporter, arguments")
    func rules() throws {
        let configuration = ModerationService.Configuration(passwordHasher: .fastForTests, maxReportsPerHour: 2)
        let harness = try Self.setUp(configuration: configuration)
        defer { harness.tearDown() }
        let p = harness.client("p")
        #expect(ModerationClient.code { try p.report("g", "p") } == .groupNoSelfAction)
        #expect(ModerationClient.code { try p.report("g", "x") } == .notAMember)
        #expect(ModerationClient.code { try p.report("g", "nobody") } == .uidNotFound)
        #expect(ModerationClient.code { try harness.client("x").report("g", "p") } == .groupNotJoined)
        #expect(ModerationClient.code { try harness.client().report("g", "p") } == .invalidArgument)
        let long = String(repeating: "y", count: 1001)
        #expect(ModerationClient.code { try p.report("g", "q", text: long) } == .invalidArgument)
        try p.report("g", "q")
        try p.report("g", "o")
        #expect(ModerationClient.code { try p.report("g", "r") } == .rateLimited)
        harness.clock.advance(by: 3_600_001)
        try p.report("g", "r")
        #expect(
            ModerationClient.code { try harness.client("m").resolveReport("g", 999, .dismissed) } == .invalidArgument)
        #expect(
            ModerationClient.code { try harness.client("p").resolveReport("g", 1, .dismissed) } == .permissionDenied)
        #expect(ModerationClient.code { try harness.client("m").listReports("g", cursor: "zz") } == .invalidArgument)
    }

    @Test("a moderator who is reported does not see that report; paging is oldest first")
    func reportedModeratorAndPaging() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        for uid in ["p", "q", "r"] { try harness.client(uid).report("g", "m") }
        try harness.client("p").report("g", "a")
        let asModerator = try harness.client("m").listReports("g")
        #expect(asModerator.page.items.map(\.target) == ["a"] && asModerator.counts == ["a": 1])
        #expect(try harness.client("m").actions("g").actions.filter { $0.kind == .reported }.count == 1)
        let first = try harness.client("o").listReports("g", limit: 3)
        #expect(first.page.items.map(\.reporter) == ["p", "q", "r"] && !first.page.nextCursor.isEmpty)
        let rest = try harness.client("o").listReports("g", limit: 3, cursor: first.page.nextCursor)
        #expect(rest.page.items.map(\.target) == ["a"] && rest.page.nextCursor.isEmpty)
        #expect(first.counts == ["m": 3, "a": 1])
    }

    @Test("open reports by a deleted user stay; reports survive a restart")
    func deletedReporter() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        try harness.client("p").report("g", "q", text: "kept")
        try harness.client().deleteUser("p")
        try harness.reopen()
        let open = try harness.client("o").listReports("g").page.items
        #expect(open.map(\.reporter) == ["p"] && open[0].text == "kept" && open[0].isOpen)
        #expect(try harness.client("o").resolveReport("g", open[0].id, .dismissed).report.resolution == .dismissed)
    }
}
