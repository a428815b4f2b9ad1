import Moderation
import SeededRandom
import StoreTestSupport
import TestSupport
import Testing

/// The cached first member page always equals what a service without the cache reads from the
/// same store, through joins, kicks, bans, scope changes, transfers and profile changes.
@Suite("Member page cache", .onEveryStore)
struct MemberPageCacheTests {
    @Test func cachedPagesMatchUncachedReads() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let uncached = ModerationService(
            store: harness.store, now: harness.clock.function,
            configuration: ModerationService.Configuration(passwordHasher: .fastForTests, memberPageCacheGroups: 0))
        let app = harness.client()
        let users = (0..<12).map { "u\($0)" }
        for uid in users { try app.createUser(uid) }
        try app.createGroup("g", owner: "u0", members: users[1..<6].map { MemberGrant(uid: $0) })
        var random = SplitMix64(seed: 9)
        for step in 0..<150 {
            let target = users[Int(random.next() % 12)]
            switch random.next() % 7 {
            case 0: _ = try? harness.client(target).join("g")
            case 1: _ = try? app.kick("g", target)
            case 2: _ = try? app.ban("g", target)
            case 3: _ = try? app.unban("g", target)
            case 4:
                _ = try? app.changeScope("g", target, to: [.admin, .moderator, .participant][Int(random.next() % 3)])
            case 5: _ = try? app.transfer("g", to: target)
            default: _ = try? app.updateUser(UserUpdate(uid: target, name: "Name \(step)", avatar: "https://a/\(step)"))
            }
            for limit in [3, 30, 3, 30] {
                let options = ListMembersOptions(limit: limit)
                let cached = try harness.service.listMembers(Caller(app: "app"), guid: "g", options: options)
                let fresh = try uncached.listMembers(Caller(app: "app"), guid: "g", options: options)
                #expect(cached == fresh, "step \(step), limit \(limit)")
            }
        }
    }
}
