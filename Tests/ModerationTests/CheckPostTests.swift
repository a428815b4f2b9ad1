import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// CheckPost (the decision call, docs/SERVICE.md): per (group, user) pair, allowed or the reason why
/// not; a refusal is an answer, the call fails only on its own arguments and rights.
@Suite("CheckPost", .onEveryStore)
struct CheckPostTests {
    /// Public "pub" and private "priv", both owned by o with moderator m, participants p and q;
    /// b banned from both, t banned from "pub" until `banEnds`; x exists outside.
    static func setUp(_ clock: ManualWallClock) throws -> ServiceHarness {
        let harness = try ServiceHarness(clock: clock)
        let app = harness.client()
        for uid in ["o", "m", "p", "q", "b", "t", "x"] { try app.createUser(uid) }
        for (guid, type) in [("pub", GroupType.public), ("priv", .private)] {
            try app.createGroup(
                guid, type: type, owner: "o",
                members: [MemberGrant(uid: "m", scope: .moderator), MemberGrant(uid: "p"), MemberGrant(uid: "q")],
                bans: ["b"])
        }
        try app.ban("pub", "t", durationMs: 5_000)
        return harness
    }

    @Test("every verdict, in the order of the checks, and the same whoever asks")
    func verdicts() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.mute("pub", "q", reason: "hush", durationMs: 60_000)
        try app.freeze("priv", reason: "closed")
        try app.mute("priv", "m")
        let cases: [(PostCheck, PostVerdict)] = [
            (PostCheck(guid: "pub", uid: "o"), .allowed),
            (PostCheck(guid: "pub", uid: "p"), .allowed),
            (PostCheck(guid: "pub", uid: "q"), PostVerdict(refusal: .memberMuted, mutedUntil: clock.peek + 60_000)),
            (PostCheck(guid: "pub", uid: "x"), PostVerdict(refusal: .groupNotJoined)),
            (PostCheck(guid: "pub", uid: "b"), PostVerdict(refusal: .bannedGroupMember)),
            (PostCheck(guid: "pub", uid: "t"), PostVerdict(refusal: .bannedGroupMember)),
            (PostCheck(guid: "pub", uid: "ghost"), PostVerdict(refusal: .groupNotJoined)),
            (PostCheck(guid: "nope", uid: "p"), PostVerdict(refusal: .groupNotFound)),
            (PostCheck(guid: "priv", uid: "o"), .allowed),
            (PostCheck(guid: "priv", uid: "p"), PostVerdict(refusal: .groupFrozen)),
            (PostCheck(guid: "priv", uid: "m"), PostVerdict(refusal: .memberMuted, mutedUntil: -1)),
            (PostCheck(guid: "priv", uid: "x"), PostVerdict(refusal: .groupNotFound)),
            (PostCheck(guid: "priv", uid: "b"), PostVerdict(refusal: .bannedGroupMember)),
        ]
        #expect(try app.checkPost(cases.map(\.0)) == cases.map(\.1), "the app asks for everyone at once")
        for (check, verdict) in cases where check.uid != "ghost" {
            #expect(try harness.client(check.uid).checkPost(check.guid) == verdict, "\(check) asked by the user")
        }
        clock.advance(by: 5_000)
        #expect(try app.checkPost("pub", "t").refusal == .groupNotJoined, "an expired ban stops applying at once")
        try app.deleteGroup("pub")
        #expect(try app.checkPost("pub", "p").refusal == .groupNotFound)
        #expect(try harness.client(app: "other").checkPost("priv", "o").refusal == .groupNotFound, "apps are apart")
    }

    @Test("an answer follows every change at once, however often the pair was asked before")
    func followsChanges() throws {
        let harness = try Self.setUp(ManualWallClock())
        defer { harness.tearDown() }
        let app = harness.client()
        let owner = harness.client("o")
        // Asked again after each step: a store keeping answers (the SQLite readers' cache by group
        // version) must never serve one from before the change.
        func expect(_ refusal: ErrorCode?, after step: String, sourceLocation: SourceLocation = #_sourceLocation) throws
        {
            for _ in 0..<3 {
                #expect(
                    try app.checkPost("pub", "q").refusal == refusal, "after \(step)", sourceLocation: sourceLocation)
                #expect(try harness.client("q").checkPost("pub").refusal == refusal, "after \(step)")
            }
        }
        try expect(nil, after: "nothing")
        try owner.mute("pub", "q")
        try expect(.memberMuted, after: "a mute")
        try owner.unmute("pub", "q")
        try expect(nil, after: "an unmute")
        try owner.changeScope("pub", "q", to: .moderator)
        try owner.freeze("pub")
        try expect(nil, after: "a freeze, as a moderator")
        try owner.changeScope("pub", "q", to: .participant)
        try expect(.groupFrozen, after: "a demotion while frozen")
        try owner.unfreeze("pub")
        try owner.kick("pub", "q")
        try expect(.groupNotJoined, after: "a kick")
        try owner.ban("pub", "q")
        try expect(.bannedGroupMember, after: "a ban")
        try owner.unban("pub", "q")
        try harness.client("q").join("pub")
        try expect(nil, after: "an unban and a join")
        try owner.updateGroup(GroupUpdate(guid: "pub", type: .private))
        try harness.client("q").leave("pub")
        try expect(.groupNotFound, after: "leaving a group made private")
        try owner.deleteGroup("pub")
        try app.createGroup("pub", owner: "o", members: [MemberGrant(uid: "q")])
        try expect(nil, after: "the guid made again")
    }

    @Test("100 checks in one call, answered in order; the call's own refusals")
    func batchAndArguments() throws {
        let harness = try Self.setUp(ManualWallClock())
        defer { harness.tearDown() }
        let app = harness.client()
        let checks = (0..<100).map { index in
            PostCheck(guid: index % 2 == 0 ? "pub" : "nope", uid: index % 3 == 0 ? "p" : "X")
        }
        let verdicts = try app.checkPost(checks)
        #expect(verdicts.count == 100)
        for (index, verdict) in verdicts.enumerated() {
            let expected: ErrorCode? = index % 2 == 1 ? .groupNotFound : index % 3 == 0 ? nil : .groupNotJoined
            #expect(verdict.refusal == expected, "check \(index)")
        }
        #expect(ModerationClient.code { try app.checkPost([]) } == .invalidArgument)
        #expect(
            ModerationClient.code { try app.checkPost(checks + [PostCheck(guid: "pub", uid: "p")]) } == .invalidArgument
        )
        #expect(ModerationClient.code { try app.checkPost("pub") } == .invalidArgument, "the app names the user")
        #expect(ModerationClient.code { try app.checkPost("Bad Guid", "p") } == .invalidArgument)
        let p = harness.client("p")
        #expect(try p.checkPost([PostCheck(guid: "pub"), PostCheck(guid: "pub", uid: "P")]) == [.allowed, .allowed])
        do {
            _ = try p.checkPost([PostCheck(guid: "pub"), PostCheck(guid: "pub", uid: "q")])
            Issue.record("p asked about q")
        } catch {
            #expect(error.code == .permissionDenied && error.message.contains("q"), "\(error)")
        }
    }
}
