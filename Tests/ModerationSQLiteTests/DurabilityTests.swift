import Moderation
import ModerationSQLite
import StoreTestSupport
import TestSupport
import Testing

/// What is committed survives closing and reopening the store; the log goes on without a gap.
@Suite("Durability")
struct DurabilityTests {
    @Test("everything committed is there after a reopen", arguments: [SQLiteStoreOptions.Durability.full, .normal])
    func reopen(_ durability: SQLiteStoreOptions.Durability) throws {
        let harness = try ServiceHarness(durability: durability, backend: .sqlite)
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "p", "q"] { try app.createUser(uid, metadata: ["k": uid]) }
        try app.createGroup(
            NewGroup(
                guid: "g", name: "Group", type: .password, password: "pw", metadata: ["m": "1"], tags: ["t"], owner: "o"
            ))
        try app.addMembers("g", [MemberGrant(uid: "p", scope: .moderator)])
        try app.ban("g", "q", reason: "r", durationMs: 1_000_000)
        let before = try app.getGroup("g")
        let logBefore = try app.actions("g").actions
        try harness.reopen()
        let app2 = harness.client()
        #expect(try app2.getGroup("g") == before)
        #expect(try app2.getUser("p").metadata == ["k": "p"])
        #expect(try app2.actions("g").actions == logBefore)
        #expect(try app2.listBanned("g").items.map(\.reason) == ["r"])
        #expect(ModerationClient.code { try harness.client("q").join("g", password: "pw") } == .bannedGroupMember)
        try app2.unban("g", "q")
        try harness.client("q").join("g", password: "pw")
        #expect(
            try app2.actions("g").actions.map(\.seq) == Array(1...UInt64(logBefore.count + 2)),
            "seqs continue after the reopen")
        #expect(Invariants.violations(service: harness.service, store: harness.store, app: "app", guid: "g").isEmpty)
    }
}
