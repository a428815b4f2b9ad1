import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Apps are tenants: nothing of app A is visible to, or changeable by, app B — not even its
/// existence (the same "not found" errors as for data that does not exist).
@Suite("Tenancy", .onEveryStore)
struct TenancyTests {
    @Test func appsAreIsolated() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let appA = harness.client(app: "a")
        let appB = harness.client(app: "b")
        for uid in ["owner", "p"] { try appA.createUser(uid) }
        try appA.createGroup("shared-name", owner: "owner", members: [MemberGrant(uid: "p")])
        try appB.createUser("stranger")
        // B sees none of A's users, groups or actions, with the same errors as for missing ones.
        #expect(ModerationClient.code { try appB.getUser("owner") } == .uidNotFound)
        #expect(ModerationClient.code { try appB.getGroup("shared-name") } == .groupNotFound)
        #expect(ModerationClient.code { try appB.listMembers("shared-name") } == .groupNotFound)
        #expect(ModerationClient.code { try appB.kick("shared-name", "p") } == .groupNotFound)
        #expect(ModerationClient.code { try appB.actions("shared-name") } == .groupNotFound)
        #expect(try appB.listGroups().items.isEmpty)
        let bOwner = harness.client("owner", app: "b")
        #expect(
            ModerationClient.code { try bOwner.getGroup("shared-name") } == .groupNotFound, "A's uid means nothing in B"
        )
        #expect(ModerationClient.code { try appB.createGroup("x", owner: "owner") } == .uidNotFound)
        // The same uid and guid in B are independent, with their own log starting at seq 1.
        try appB.createUser("owner")
        let created = try appB.createGroup("shared-name", owner: "owner")
        #expect(created.group.group.membersCount == 1)
        #expect(try appB.actions("shared-name").actions.map(\.seq) == [1])
        #expect(try appA.actions("shared-name").actions.map(\.seq) == [1, 2])
        #expect(try appA.getGroup("shared-name").group.membersCount == 2)
        let logB = try harness.service.withActionLog(app: "b") { (log: ActionLogSnapshot) throws(ModerationError) in
            (try log.headSeq(), try log.actions(afterSeq: 0, limit: 10).map(\.app))
        }
        #expect(logB.0 == 1 && logB.1 == ["b"])
        #expect(
            try harness.service.withActionLog(app: "nobody") { (log: ActionLogSnapshot) throws(ModerationError) in
                try log.headSeq()
            } == 0)
    }
}
