import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// DeleteUser (docs/SERVICE.md): refused while the user owns a group; otherwise the user leaves every
/// group (`left`, reason `userDeleted`), their bans go with them (`userDeleted`), the profile is
/// erased and the uid kept as a tombstone: never reused, and everywhere else as unknown.
@Suite("DeleteUser", .onEveryStore)
struct DeleteUserTests {
    @Test("a user who owns groups is refused, naming up to 10 of them; nothing changes")
    func ownerRefused() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "p"] { try app.createUser(uid) }
        let guids = (0..<12).map { $0 < 10 ? "g0\($0)" : "g\($0)" }
        for guid in guids { try app.createGroup(guid, owner: "o", members: [MemberGrant(uid: "p")]) }
        try app.createGroup("other", owner: "p", members: [MemberGrant(uid: "o")])
        let head = try app.actions("g00").lastSeq
        do {
            try harness.client("o").deleteUser("o")
            Issue.record("an owner was deleted")
        } catch {
            #expect(error.code == .userOwnsGroups && error.code.status == .failedPrecondition)
            #expect(error.message.contains("g00") && error.message.contains("g09") && !error.message.contains("g10"))
            #expect(error.message.contains("2 more"), "\(error.message)")
            #expect(error.details["guids"] == guids.prefix(10).joined(separator: ","))
            #expect(error.details["owned_groups"] == "12")
        }
        #expect(try app.getUser("o").name == "User o")
        #expect(try app.memberState("other", "o").isMember, "a refused deletion leaves nothing")
        #expect(try app.actions("g00").lastSeq == head)
    }

    @Test("a user who owns nothing leaves every group, loses their bans, and the uid is never reused")
    func deletes() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try ServiceHarness(clock: clock)
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "d", "p"] { try app.createUser(uid, name: "Name \(uid)", avatar: "https://a/\(uid)") }
        try app.createGroup(
            "a", owner: "o", members: [MemberGrant(uid: "d", scope: .moderator), MemberGrant(uid: "p")])
        try app.createGroup("b", type: .private, owner: "o", members: [MemberGrant(uid: "d")])
        try app.createGroup("c", owner: "o", bans: ["d"])
        try app.createGroup("e", owner: "o")
        try app.ban("e", "d", durationMs: 1_000)
        try app.mute("a", "d", reason: "quiet")
        clock.advance(by: 2_000)
        let deleted = try harness.client("d").deleteUser("d")
        #expect(deleted.groupsLeft == 2 && deleted.bansDropped == 1)
        let log = try harness.service.withActionLog(app: "app") {
            (log: ActionLogSnapshot) throws(ModerationError) -> [ActionRecord] in
            try log.actions(afterSeq: 0, limit: 500)
        }
        let mine = log.suffix(4)
        #expect(
            mine.map { "\($0.kind.rawValue) \($0.group.guid) \($0.reason)" } == [
                "left a userDeleted", "left b userDeleted", "userDeleted c ", "unbanned e expired",
            ])
        #expect(mine.last?.seq == deleted.lastSeq)
        #expect(mine.prefix(3).allSatisfy { $0.actionBy.uid == "d" && $0.actionOn?.uid == "d" })
        #expect(mine.first?.oldScope == .moderator && Array(mine)[2].oldScope == nil)
        // The uid is gone for every call but CreateUser, which refuses it forever.
        #expect(ModerationClient.code { try app.getUser("d") } == .uidNotFound)
        #expect(ModerationClient.code { try app.updateUser(UserUpdate(uid: "d", name: "Back")) } == .uidNotFound)
        #expect(ModerationClient.code { try app.deleteUser("d") } == .uidNotFound)
        #expect(ModerationClient.code { try app.createUser("d") } == .uidAlreadyExists)
        #expect(try app.addMembers("a", [MemberGrant(uid: "d")]).results["d"]?.error?.code == .uidNotFound)
        #expect(ModerationClient.code { try app.ban("a", "d") } == .uidNotFound)
        #expect(ModerationClient.code { try app.memberState("a", "d") } == .uidNotFound)
        // As an actor the deleted uid is an unknown user: a non-member everywhere.
        let ghost = harness.client("d")
        #expect(ModerationClient.code { try ghost.join("a") } == .uidNotFound)
        #expect(ModerationClient.code { try ghost.getGroup("b") } == .groupNotFound)
        #expect(ModerationClient.code { try ghost.listMembers("a") } == .groupNotJoined)
        #expect(try ghost.checkPost("a") == PostVerdict(refusal: .groupNotJoined))
        #expect(try app.listBanned("c").items.isEmpty && app.listBanned("e").items.isEmpty)
        // The log keeps the uid; the profile it shows is erased.
        let readBack = try app.actions("a", ListActionsOptions(target: "d")).actions
        #expect(!readBack.isEmpty && readBack.allSatisfy { $0.actionOn == User(uid: "d") })
        for guid in ["a", "b", "c", "e"] {
            #expect(Invariants.violations(store: harness.store, app: "app", guid: guid).isEmpty, "\(guid)")
        }
        try harness.reopen()
        #expect(ModerationClient.code { try harness.client().createUser("d") } == .uidAlreadyExists)
        #expect(ModerationClient.code { try harness.client().getUser("d") } == .uidNotFound)
    }

    @Test("the app deletes any user; a user only themselves; a deletion with a key replays")
    func rightsAndIdempotency() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "p", "q"] { try app.createUser(uid) }
        try app.createGroup("g", owner: "o", members: [MemberGrant(uid: "p"), MemberGrant(uid: "q")])
        #expect(ModerationClient.code { try harness.client("p").deleteUser("q") } == .permissionDenied)
        #expect(ModerationClient.code { try app.deleteUser("Not Valid") } == .invalidArgument)
        let keyed = app.withKey("delete-q")
        let first = MutationWaiter.wait { done in
            harness.service.deleteUser(keyed.caller, uid: "q", replay: MutationWaiter.describe, completion: done)
        }
        let second = MutationWaiter.wait { done in
            harness.service.deleteUser(keyed.caller, uid: "q", replay: MutationWaiter.describe, completion: done)
        }
        guard case .done(.success(let result), _) = first, case .replayed(let bytes) = second else {
            Issue.record("expected a deletion, then its replay: \(first), \(second)")
            return
        }
        #expect(result.groupsLeft == 1)
        #expect(bytes == MutationWaiter.describe(Result<DeleteUserResult, ModerationError>.success(result)))
        #expect(try app.getGroup("g").group.membersCount == 2)
    }

}
