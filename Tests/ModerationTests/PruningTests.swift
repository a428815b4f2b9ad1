import StoreTestSupport
import TestSupport
import Testing

@testable import Moderation

/// Retention across apps, on every store: maintenance prunes each app's log on its own, and only
/// the apps whose log begins before the cutoff lose anything. The stores find those apps in one
/// statement (`appsToPrune`) instead of looking into every app's log, so the cost of a pass
/// follows the apps with something to prune, not all the apps there are.
@Suite("Pruning across apps", .onEveryStore)
struct PruningTests {
    @Test("only the apps whose log begins before the cutoff are pruned, each through its own prefix")
    func prunesEachAppsPrefix() throws {
        let clock = ManualWallClock(ticking: false)
        let retention: Int64 = 60_000
        // A batch smaller than the work: the run takes several passes, each resuming where the
        // last stopped.
        let configuration = ModerationService.Configuration(
            passwordHasher: .fastForTests, actionRetentionMs: retention, maintenanceBatchSize: 2)
        let harness = try ServiceHarness(clock: clock, configuration: configuration)
        defer { harness.tearDown() }
        let apps = (
            old: harness.client(app: "old"), stale: harness.client(app: "stale"),
            recent: harness.client(app: "recent"), quiet: harness.client(app: "quiet")
        )
        for app in [apps.old, apps.stale] {
            try app.createUser("o")
            try app.createGroup("g", owner: "o") // seq 1
            try app.updateGroup(GroupUpdate(guid: "g", name: "second")) // 2
            try app.updateGroup(GroupUpdate(guid: "g", name: "third")) // 3
        }
        try apps.quiet.createUser("o")
        clock.advance(by: retention + 1)
        try apps.old.updateGroup(GroupUpdate(guid: "g", name: "fourth")) // 4, recent
        try apps.recent.createUser("o")
        try apps.recent.createGroup("g", owner: "o") // 1
        try apps.recent.updateGroup(GroupUpdate(guid: "g", name: "second")) // 2

        let quietBefore = try StoreProbe.bounds(harness.store, app: "quiet")
        #expect(try harness.service.runMaintenanceAndWait().prunedActions == 6)

        let old = try StoreProbe.bounds(harness.store, app: "old")
        #expect(old.headSeq == 4 && old.prunedThrough == 3, "\(old)")
        #expect(try apps.old.actions("g").actions.map(\.seq) == [4])
        let stale = try StoreProbe.bounds(harness.store, app: "stale")
        #expect(stale.headSeq == 3 && stale.prunedThrough == 3, "\(stale)")
        #expect(try apps.stale.actions("g").actions.isEmpty)
        let recent = try StoreProbe.bounds(harness.store, app: "recent")
        #expect(recent.headSeq == 2 && recent.prunedThrough == 0, "\(recent)")
        #expect(try apps.recent.actions("g").actions.map(\.seq) == [1, 2])
        let quiet = try StoreProbe.bounds(harness.store, app: "quiet")
        #expect(quiet.headSeq == quietBefore.headSeq && quiet.prunedThrough == quietBefore.prunedThrough)

        #expect(try harness.service.runMaintenanceAndWait().prunedActions == 0, "nothing left to prune")
        try apps.stale.updateGroup(GroupUpdate(guid: "g", name: "after")) // 4
        #expect(try apps.stale.actions("g").actions.map(\.seq) == [4], "the log goes on after its whole prefix went")
    }

    @Test("the maintenance loop sweeps every step and prunes once its interval has passed")
    func loopPrunesOnItsInterval() throws {
        let clock = ManualWallClock(ticking: false)
        let configuration = ModerationService.Configuration(
            passwordHasher: .fastForTests, actionRetentionMs: 60_000, pruneIntervalMs: 600_000)
        let harness = try ServiceHarness(clock: clock, configuration: configuration)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o") // seq 1
        harness.service.runScheduledMaintenanceAndWait() // the first step prunes: nothing is old yet
        clock.advance(by: 60_001)
        try app.updateGroup(GroupUpdate(guid: "g", name: "second")) // 2
        harness.service.runScheduledMaintenanceAndWait()
        #expect(try StoreProbe.bounds(harness.store, app: "app").prunedThrough == 0, "seq 1 is old, but not due")
        clock.advance(by: 600_000)
        harness.service.runScheduledMaintenanceAndWait()
        let bounds = try StoreProbe.bounds(harness.store, app: "app")
        #expect(bounds.headSeq == 2 && bounds.prunedThrough == 2, "\(bounds)")
    }
}
