import Moderation
import StoreTestSupport
import TestSupport
import Testing
import ThreadSupport

/// Bans with a duration: they stop applying at `expires_at` exactly, on every read and in every
/// rule; a write that meets an expired ban records its expiry first; the sweeper records the rest.
@Suite("Expiring bans", .onEveryStore)
struct ExpiringBanTests {
    static func setUp(_ clock: ManualWallClock) throws -> ServiceHarness {
        let harness = try ServiceHarness(clock: clock)
        let app = harness.client()
        for uid in ["o", "m", "x", "y"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o", members: [MemberGrant(uid: "m", scope: .moderator), MemberGrant(uid: "x")])
        return harness
    }

    @Test("a ban applies until expires_at, exactly, on every read")
    func exactExpiry() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let moderator = harness.client("m")
        let x = harness.client("x")
        let ban = try moderator.ban("g", "x", reason: "cool down", durationMs: 10_000).ban
        #expect(ban.expiresAt == ban.bannedAt + 10_000)
        clock.advance(by: 9_999)
        #expect(ModerationClient.code { try x.getGroup("g") } == .bannedGroupMember)
        #expect(try moderator.listBanned("g").items.map(\.uid) == ["x"])
        #expect(try moderator.memberState("g", "x").isBanned)
        #expect(ModerationClient.code { try x.join("g") } == .bannedGroupMember)
        clock.advance(by: 1)
        #expect(try x.getGroup("g").isBanned == false)
        #expect(try moderator.listBanned("g").items.isEmpty)
        #expect(try moderator.memberState("g", "x").isBanned == false)
        #expect(ModerationClient.code { try moderator.unban("g", "x") } == .userNotBanned)
        #expect(try moderator.unban("g", "x", onlyIfBanned: true).changed == false)
    }

    @Test("a write that meets an expired ban records the expiry before its own action")
    func conversionOnWrite() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let moderator = harness.client("m")
        try moderator.ban("g", "x", durationMs: 1_000)
        clock.advance(by: 1_000)
        let joined = try harness.client("x").join("g")
        let log = try moderator.actions("g").actions.suffix(2)
        #expect(log.map(\.kind) == [.unbanned, .joined])
        let expiry = try #require(log.first)
        #expect(expiry.reason == "expired" && expiry.actionBy.uid == User.appUID && expiry.actionOn?.uid == "x")
        #expect(expiry.oldScope == .participant && joined.action.seq == expiry.seq + 1)
        #expect(joined.action.group.version == expiry.group.version + 1)
        #expect(Invariants.violations(service: harness.service, store: harness.store, app: "app", guid: "g").isEmpty)
    }

    @Test("a write that fails after meeting an expired ban changes nothing")
    func failedWriteLeavesTheBan() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let moderator = harness.client("m")
        try moderator.ban("g", "y", durationMs: 1_000)
        clock.advance(by: 5_000)
        let head = try moderator.actions("g").lastSeq
        // The moderator may not add an admin: the add fails and the expired ban stays for the sweeper.
        let result = try moderator.addMembers("g", [MemberGrant(uid: "y", scope: .admin)])
        #expect(result.results["y"]?.error?.code == .permissionDenied)
        #expect(try moderator.actions("g").lastSeq == head)
        let done = BlockingSemaphore()
        let swept = ResultBox()
        harness.service.sweepExpiredBans { result in
            swept.set(result)
            done.signal()
        }
        done.wait()
        #expect(swept.value == 1)
    }

    /// Steps bounded by count (two a step) and by time (none: one expiry a step).
    @Test(
        "the sweeper records every expired ban as unbanned, reason expired, by the app",
        arguments: [(2, 10), (500, 0)] as [(Int, Int64)])
    func sweeper(batch: Int, stepMs: Int64) throws {
        let clock = ManualWallClock(ticking: false)
        let configuration = ModerationService.Configuration(
            passwordHasher: .fastForTests, maintenanceBatchSize: batch, maintenanceStepMs: stepMs)
        let harness = try ServiceHarness(clock: clock, configuration: configuration)
        defer { harness.tearDown() }
        let app = harness.client()
        for index in 0..<6 { try app.createUser("u\(index)") }
        try app.createGroup("g", owner: "u0", members: (1..<3).map { MemberGrant(uid: "u\($0)") })
        try app.createGroup("h", owner: "u0")
        try app.ban("g", "u1", durationMs: 100)
        try app.ban("g", "u2", durationMs: 200)
        try app.ban("g", "u3", durationMs: 50_000)
        try app.ban("h", "u4", durationMs: 100)
        try app.ban("h", "u5")
        let versionBefore = try app.getGroup("g").group.version
        clock.advance(by: 1_000)
        let done = BlockingSemaphore()
        let box = ResultBox()
        harness.service.sweepExpiredBans { result in
            box.set(result)
            done.signal()
        }
        done.wait()
        #expect(box.value == 3, "three expired bans, swept in steps")
        let expiries =
            try app.actions("g", ListActionsOptions(kinds: [.unbanned])).actions
            + app.actions("h", ListActionsOptions(kinds: [.unbanned])).actions
        #expect(Set(expiries.compactMap { $0.actionOn?.uid }) == ["u1", "u2", "u4"])
        #expect(expiries.allSatisfy { $0.reason == "expired" && $0.actionBy.uid == User.appUID })
        #expect(try app.getGroup("g").group.version == versionBefore + 2)
        #expect(try app.listBanned("g").items.map(\.uid) == ["u3"])
        #expect(try app.listBanned("h").items.map(\.uid) == ["u5"])
        for guid in ["g", "h"] {
            #expect(
                Invariants.violations(service: harness.service, store: harness.store, app: "app", guid: guid).isEmpty)
        }
    }

    @Test("the maintenance loop sweeps on its own")
    func maintenanceLoop() throws {
        let clock = ManualWallClock(ticking: false)
        let configuration = ModerationService.Configuration(passwordHasher: .fastForTests, maintenanceIntervalMs: 20)
        let harness = try ServiceHarness(clock: clock, configuration: configuration)
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "x"] { try app.createUser(uid) }
        try app.createGroup("g", owner: "o")
        try app.ban("g", "x", durationMs: 10)
        clock.advance(by: 10)
        var swept = false
        for _ in 0..<200 where !swept {
            swept = try app.actions("g", ListActionsOptions(kinds: [.unbanned])).actions.first?.reason == "expired"
            if !swept { _ = BlockingSemaphore().wait(milliseconds: 10) }
        }
        #expect(swept, "the loop recorded the expiry within two seconds")
        harness.service.shutdown()
    }

    final class ResultBox: @unchecked Sendable {
        // Written by the completion before the semaphore is signalled, read after waiting on it.
        var value = -1
        func set(_ result: Result<Int, ModerationError>) {
            if case .success(let count) = result { value = count }
        }
    }
}
