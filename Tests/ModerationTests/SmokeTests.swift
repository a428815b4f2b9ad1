import Moderation
import StoreTestSupport
import TestSupport
import Testing

@Suite("Smoke", .onEveryStore)
struct SmokeTests {
    @Test func kickThenRejoin() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("owner")
        try app.createUser("bob")
        try app.createGroup("g1", owner: "owner", members: [MemberGrant(uid: "bob")])
        let owner = harness.client("owner")
        let kicked = try owner.kick("g1", "bob")
        #expect(kicked.kind == .kicked)
        #expect(kicked.group.membersCount == 1)
        let bob = harness.client("bob")
        let joined = try bob.join("g1")
        #expect(joined.group.group.membersCount == 2)
        #expect(Invariants.violations(service: harness.service, store: harness.store, app: "app", guid: "g1").isEmpty)
        let log = try owner.actions("g1")
        #expect(log.actions.map(\.kind) == [.created, .added, .kicked, .joined])
        #expect(log.actions.map(\.seq) == [1, 2, 3, 4])
    }
}
