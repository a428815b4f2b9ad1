import Moderation
import ModerationSQLite
import StoreTestSupport
import TestSupport
import Testing

/// Action log retention: maintenance prunes a prefix of each app's log older than the retention,
/// keeps every group snapshot a retained action needs, and an older resume point is expired.
@Suite("Retention")
struct RetentionTests {
    @Test func pruning() throws {
        let clock = ManualWallClock(ticking: false)
        let retention: Int64 = 60_000
        let configuration = ModerationService.Configuration(
            passwordHasher: .fastForTests, actionRetentionMs: retention, maintenanceBatchSize: 3)
        let harness = try ServiceHarness(clock: clock, configuration: configuration, backend: .sqlite)
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "p", "q"] { try app.createUser(uid) }
        try app.createGroup("g", owner: "o", members: [MemberGrant(uid: "p")]) // seqs 1, 2
        try app.updateGroup(GroupUpdate(guid: "g", name: "Second name")) // 3
        try app.createGroup("doomed", owner: "o") // 4
        try app.deleteGroup("doomed") // 5
        clock.advance(by: retention + 1)
        try app.kick("g", "p") // 6, recent
        try app.updateGroup(GroupUpdate(guid: "g", name: "Third name")) // 7
        let report = try harness.service.runMaintenanceAndWait()
        #expect(report.prunedActions == 5)
        let bounds = try StoreProbe.bounds(harness.store, app: "app")
        #expect(bounds.headSeq == 7 && bounds.prunedThrough == 5 && bounds.oldestRetainedSeq == 6)
        let log = try app.actions("g")
        #expect(log.actions.map(\.seq) == [6, 7])
        #expect(log.actions.first?.group.name == "Second name", "the snapshot a retained action needs is kept")
        #expect(ModerationClient.code { try app.actions("g", ListActionsOptions(afterSeq: 4)) } == .cursorExpired)
        #expect(
            try app.actions("g", ListActionsOptions(afterSeq: 5)).actions.map(\.seq) == [6, 7],
            "resuming right after the pruned prefix is fine")
        #expect(
            try app.actions("g", ListActionsOptions(afterSeq: 0)).actions.map(\.seq) == [6, 7],
            "0 starts at the oldest retained")
        let stream = try harness.service.withActionLog(app: "app") { (log: ActionLogSnapshot) throws(ModerationError) in
            (try log.oldestRetainedSeq(), try log.actions(afterSeq: 0, limit: 10).map(\.seq))
        }
        #expect(stream.0 == 6 && stream.1 == [6, 7])
        // Revisions nothing can show any more are gone: the deleted group's, and g's first two.
        let revisions = try MigrationTests.rows(
            harness.storeOptions.databasePath, "SELECT count(*) FROM group_revisions")
        #expect(revisions.first?.first == "2")
        clock.advance(by: retention + 1)
        #expect(try harness.service.runMaintenanceAndWait().prunedActions == 2)
        #expect(try app.actions("g").actions.isEmpty)
        let revisionsLeft = try MigrationTests.rows(
            harness.storeOptions.databasePath, "SELECT count(*) FROM group_revisions")
        #expect(revisionsLeft.first?.first == "1", "only the current revision of g is left")
        try app.updateGroup(GroupUpdate(guid: "g", name: "Fourth name"))
        #expect(try app.actions("g").actions.map(\.seq) == [8], "the log goes on after everything was pruned")
    }
}
