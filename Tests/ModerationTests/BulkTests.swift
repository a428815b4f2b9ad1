import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Bulk kick, ban and unban: steps 1–4 fail the whole call, steps 5–10 give a result per user,
/// one action per affected user.
@Suite("Bulk operations", .onEveryStore)
struct BulkTests {
    static func setUp() throws -> ServiceHarness {
        let harness = try ServiceHarness()
        let app = harness.client()
        for uid in ["o", "adm", "mod", "p1", "p2", "p3", "out"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o",
            members: [MemberGrant(uid: "adm", scope: .admin), MemberGrant(uid: "mod", scope: .moderator)]
                + ["p1", "p2", "p3"].map { MemberGrant(uid: $0) })
        return harness
    }

    @Test func bulkKick() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let moderator = harness.client("mod")
        let head = try moderator.actions("g").lastSeq
        let results = try moderator.bulkKick("g", ["P1", "p2", "adm", "o", "out", "ghost", "mod"])
        #expect(results["p1"]?.changed == true && results["p2"]?.changed == true)
        #expect(results["adm"]?.error?.code == .permissionDenied)
        #expect(results["o"]?.error?.code == .cannotKickOwner)
        #expect(results["out"]?.error?.code == .notAMember)
        #expect(results["ghost"]?.error?.code == .uidNotFound)
        #expect(results["mod"]?.error?.code == .groupNoSelfAction)
        let actions = try moderator.actions("g", ListActionsOptions(afterSeq: head)).actions
        #expect(actions.map(\.kind) == [.kicked, .kicked])
        #expect(actions.map(\.seq) == [results["p1"]!.seq, results["p2"]!.seq])
        #expect(actions.map(\.group.membersCount) == [5, 4], "each action shows the group right after its user")
        #expect(try moderator.getGroup("g").group.membersCount == 4)
        #expect(Invariants.violations(service: harness.service, store: harness.store, app: "app", guid: "g").isEmpty)
    }

    @Test(
        "steps 1–4 fail the whole call",
        arguments: [
            (["p1", "p1"], "mod", ErrorCode.invalidArgument), ([], "mod", .invalidArgument),
            ((0..<101).map { "u\($0)" }, "mod", .invalidArgument), (["p1", "bad uid"], "mod", .invalidArgument),
            (["p1"], "p2", .permissionDenied), (["p1"], "out", .groupNotJoined),
        ])
    func wholeCallFailures(_ uids: [String], _ actor: String, _ code: ErrorCode) throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let client = harness.client(actor)
        #expect(ModerationClient.code { try client.bulkKick("g", uids) } == code)
        #expect(ModerationClient.code { try client.bulkBan("g", uids) } == code)
        #expect(ModerationClient.code { try client.bulkUnban("g", uids) } == code)
        #expect(ModerationClient.code { try client.bulkKick("missing", ["p1"]) } == .groupNotFound)
    }

    @Test func bulkBanAndUnban() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let admin = harness.client("adm")
        try admin.ban("g", "p3")
        let banned = try admin.bulkBan("g", ["p1", "out", "p3", "o", "mod"], reason: "raid", durationMs: 60_000)
        #expect(banned["p1"]?.changed == true && banned["out"]?.changed == true && banned["mod"]?.changed == true)
        #expect(banned["p3"]?.error?.code == .alreadyBanned && banned["o"]?.error?.code == .cannotBanOwner)
        let again = try admin.bulkBan("g", ["p1", "p3", "p2"], ifNotBanned: true)
        #expect(
            again["p1"] == UserResult(ok: true, changed: false) && again["p3"]?.changed == false
                && again["p2"]?.changed == true)
        let list = try admin.listBanned("g", ListBannedOptions(limit: 100)).items
        #expect(Set(list.map(\.uid)) == ["p1", "p2", "p3", "out", "mod"])
        #expect(list.first { $0.uid == "p1" }?.reason == "raid")
        let unbanned = try admin.bulkUnban("g", ["p1", "p2", "o", "ghost"])
        #expect(unbanned["p1"]?.changed == true && unbanned["p2"]?.changed == true)
        #expect(unbanned["o"]?.error?.code == .userNotBanned && unbanned["ghost"]?.error?.code == .uidNotFound)
        let lenient = try admin.bulkUnban("g", ["p1", "out"], onlyIfBanned: true)
        #expect(lenient["p1"]?.changed == false && lenient["p1"]?.ok == true && lenient["out"]?.changed == true)
        #expect(
            ModerationClient.code { try harness.client("mod").getGroup("g") } == .bannedGroupMember,
            "an admin outranks a moderator")
        #expect(Invariants.violations(service: harness.service, store: harness.store, app: "app", guid: "g").isEmpty)
    }
}
