import Moderation
import StoreTestSupport
import TestSupport
import Testing
import ThreadSupport

@testable import ModerationPostgres

/// Bans from the app across instances on one database: each instance answers the per-call check
/// from memory (`AppBanSets`), kept for the version of the app's bans it read, so a ban made
/// through one instance applies on another as soon as that instance's reads and writes must show
/// it; the sweepers of several instances record each expiry once.
@Suite("PostgreSQL store: bans from the app across instances")
struct AppBanInstancesTests {
    @Test("a ban through one instance refuses the next call through another, which had the bans in memory")
    func banAppliesEverywhere() throws {
        try Instance.withPair { _, _, first, second in
            let app = first.client()
            for uid in ["o", "u", "p", "x"] { try app.createUser(uid) }
            try app.createGroup(
                "g", owner: "o", members: [MemberGrant(uid: "u", scope: .moderator), MemberGrant(uid: "p")])
            try app.banFromApp("x")
            // The second instance reads the app's bans (one ban) into memory, for reads and writes.
            let u = second.client("u")
            #expect(try u.getGroup("g").group.guid == "g")
            try u.mute("g", "p")
            #expect(ModerationClient.code { try second.client("x").getGroup("g") } == .userBannedFromApp)

            let ban = try app.banFromApp("u", reason: "abuse")
            #expect(ModerationClient.code { try u.getGroup("g") } == .userBannedFromApp, "a read")
            #expect(ModerationClient.code { try u.unmute("g", "p") } == .userBannedFromApp, "a write")
            #expect(try second.client().checkPost("g", "u") == PostVerdict(refusal: .userBannedFromApp))
            #expect(try second.client().listAppBans().items.map(\.uid) == ["u", "x"])
            #expect(first.delivered.all.contains(ban.action))

            try second.client().unbanFromApp("u")
            #expect(try first.client("u").getGroup("g").group.guid == "g", "the unban applies on the first too")
            try first.client("u").unmute("g", "p")
            try second.client().banFromApp("u", shadow: true)
            #expect(try first.client("u").checkPost("g") == .shadowed)
            #expect(try first.client("u").getGroup("g").group.guid == "g", "a shadow ban refuses nothing")
        }
    }

    @Test("a read that arrived after a ban was acknowledged sees it, though the instance kept the older bans")
    func readsSeeOtherInstancesBans() throws {
        try Instance.withPair { _, _, first, second in
            let app = first.client()
            for uid in ["o", "u"] { try app.createUser(uid) }
            try app.createGroup("g", owner: "o", members: [MemberGrant(uid: "u")])
            let arrived = monotonicNanoseconds()
            var early = second.client("u")
            early.caller.receivedAt = arrived
            #expect(try early.getGroup("g").group.guid == "g")
            #expect(try early.getGroup("g").group.guid == "g", "answered at the version checked for both")
            try app.banFromApp("u")
            // Arrived before the ban was acknowledged: may be answered at the version it checked.
            #expect(try early.getGroup("g").group.guid == "g")
            // Arrives now, after the OK: checks again, and sees the ban.
            #expect(ModerationClient.code { try second.client("u").getGroup("g") } == .userBannedFromApp)
        }
    }

    @Test("expired bans from the app swept by several instances at once: one appUnbanned (expired) action each")
    func sweepOnce() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let instances = try (0..<3).map { _ in try Instance(url: schema.url, schema: schema.name, clock: clock) }
        defer { for instance in instances { instance.close() } }
        let users = (0..<30).map { "b\($0)" }
        for uid in users { try instances[0].client().createUser(uid) }
        for (index, uid) in users.enumerated() {
            _ = try instances[index % 3].client().banFromApp(uid, durationMs: 1_000, shadow: index % 2 == 0)
        }
        clock.advance(by: 5_000)
        let threads = instances.enumerated().map { index, instance in
            WorkerThread(name: "sweep-app-bans-\(index)") {
                for _ in 0..<3 { _ = try? instance.service.sweepExpiredAppBansAndWait() }
            }
        }
        for thread in threads { thread.join() }
        let expired = try StoreProbe.log(instances[0].store, app: "app").filter {
            $0.kind == .appUnbanned && $0.reason == "expired"
        }
        #expect(expired.count == users.count, "\(expired.count) expiries recorded for \(users.count) bans")
        #expect(Set(expired.compactMap { $0.actionOn?.uid }) == Set(users))
        #expect(instances.map(\.service.expiredAppBansSweptCount).reduce(0, +) >= UInt64(users.count))
        for instance in instances { #expect(try instance.client().listAppBans().items.isEmpty) }
    }
}
