import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Mutes (docs/SERVICE.md): a muted member stays a member but may not post; a mute ends at its
/// expiry exactly, on every read, and the sweeper records it; leaving, a kick or a ban ends it
/// without an `unmuted` action; its reason is for admins, moderators and the app.
@Suite("Mutes", .onEveryStore)
struct MuteTests {
    /// Group "g" owned by o with admin a, moderator m, participants p and q; x exists outside.
    static func setUp(
        _ clock: ManualWallClock = ManualWallClock(ticking: false),
        configuration: ModerationService.Configuration? = nil
    )
        throws -> ServiceHarness
    {
        let harness =
            try configuration.map { try ServiceHarness(clock: clock, configuration: $0) }
            ?? ServiceHarness(clock: clock)
        let app = harness.client()
        for uid in ["o", "a", "m", "p", "q", "x"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o",
            members: [
                MemberGrant(uid: "a", scope: .admin), MemberGrant(uid: "m", scope: .moderator), MemberGrant(uid: "p"),
                MemberGrant(uid: "q"),
            ])
        return harness
    }

    @Test("a timed mute applies until muted_until exactly, on every read, then stops")
    func exactExpiry() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let moderator = harness.client("m")
        let p = harness.client("p")
        let start = clock.peek
        let muted = try moderator.mute("g", "p", reason: "flooding", durationMs: 10_000)
        let action = try #require(muted.action)
        #expect(muted.changed && action.kind == .muted && action.actionOn?.uid == "p" && action.actionBy.uid == "m")
        #expect(action.reason == "flooding" && action.expiresAt == start + 10_000)
        #expect(muted.member.mute == Mute(expiresAt: start + 10_000, reason: "flooding"))
        #expect(try p.checkPost("g") == PostVerdict(refusal: .memberMuted, mutedUntil: start + 10_000))
        #expect(try moderator.memberState("g", "p").mute?.mutedUntil == start + 10_000)
        #expect(try moderator.listMembers("g", ListMembersOptions(mutedOnly: true)).items.map(\.uid) == ["p"])
        clock.advance(by: 9_999)
        #expect(try p.checkPost("g").refusal == .memberMuted)
        clock.advance(by: 1)
        #expect(try p.checkPost("g") == .allowed)
        #expect(try moderator.memberState("g", "p").mute == nil)
        #expect(try moderator.listMembers("g", ListMembersOptions(mutedOnly: true)).items.isEmpty)
        #expect(try moderator.listMembers("g").items.first { $0.uid == "p" }?.mute == nil)
        #expect(ModerationClient.code { try moderator.unmute("g", "p") } == .userNotMuted)
    }

    @Test("muting again after an expiry records the expiry first; the log replays to one mute")
    func expiredThenMutedAgain() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let admin = harness.client("a")
        try admin.mute("g", "p", durationMs: 1_000)
        clock.advance(by: 1_000)
        let again = try admin.mute("g", "p", reason: "again")
        let log = try admin.actions("g").actions.suffix(3)
        #expect(log.map(\.kind) == [.muted, .unmuted, .muted])
        let expiry = Array(log)[1]
        #expect(expiry.reason == "expired" && expiry.actionBy.uid == User.appUID && expiry.actionOn?.uid == "p")
        #expect(again.action?.seq == expiry.seq + 1 && again.member.mute?.mutedUntil == Mute.untilUnmuted)
    }

    @Test("until unmuted: muted_until -1; unmute lifts it; if_not_muted and only_if_muted")
    func untilUnmutedAndFlags() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("o")
        try owner.mute("g", "q", reason: "wait")
        #expect(try harness.client("q").checkPost("g") == PostVerdict(refusal: .memberMuted, mutedUntil: -1))
        #expect(ModerationClient.code { try owner.mute("g", "q") } == .alreadyMuted)
        let unchanged = try owner.mute("g", "q", reason: "other", ifNotMuted: true)
        #expect(!unchanged.changed && unchanged.action == nil && unchanged.member.mute?.reason == "wait")
        let head = try owner.actions("g").lastSeq
        let unmuted = try owner.unmute("g", "q")
        #expect(unmuted.changed && unmuted.action?.kind == .unmuted && unmuted.action?.seq == head + 1)
        #expect(try harness.client("q").checkPost("g") == .allowed)
        #expect(ModerationClient.code { try owner.unmute("g", "q") } == .userNotMuted)
        let noOp = try owner.unmute("g", "q", onlyIfMuted: true)
        #expect(!noOp.changed && noOp.action == nil)
        #expect(try owner.actions("g").lastSeq == head + 1, "the flags record nothing")
    }

    @Test("leaving, a kick or a ban ends a mute without an unmuted action")
    func membershipEndsTheMute() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("o")
        try owner.bulkMute("g", ["p", "q", "m"], reason: "quiet")
        try harness.client("p").leave("g")
        try owner.kick("g", "q")
        try owner.ban("g", "m")
        try owner.unban("g", "m")
        for uid in ["p", "q", "m"] {
            try harness.client(uid).join("g")
            #expect(try harness.client(uid).checkPost("g") == .allowed, "\(uid) rejoined unmuted")
        }
        #expect(try owner.actions("g", ListActionsOptions(kinds: [.unmuted])).actions.isEmpty)
        #expect(try owner.listMembers("g", ListMembersOptions(mutedOnly: true)).items.isEmpty)
    }

    /// Steps bounded by count (two a step) and by time (none: one expiry a step).
    @Test(
        "the sweeper records each expired mute once as unmuted (expired, by @app), in bounded steps",
        arguments: [(2, 10), (500, 0)] as [(Int, Int64)])
    func sweeper(batch: Int, stepMs: Int64) throws {
        let clock = ManualWallClock(ticking: false)
        let configuration = ModerationService.Configuration(
            passwordHasher: .fastForTests, maintenanceBatchSize: batch, maintenanceStepMs: stepMs)
        let harness = try Self.setUp(clock, configuration: configuration)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createGroup("h", owner: "o", members: [MemberGrant(uid: "p"), MemberGrant(uid: "x")])
        try app.mute("g", "p", durationMs: 100)
        try app.mute("g", "q", durationMs: 200)
        try app.mute("g", "m", durationMs: 50_000)
        try app.mute("h", "x", durationMs: 100)
        try app.mute("h", "p")
        let versionBefore = try app.getGroup("g").group.version
        clock.advance(by: 1_000)
        #expect(try harness.service.sweepExpiredMutesAndWait() == 3, "three expired mutes, swept in steps")
        #expect(harness.service.expiredMutesSweptCount == 3)
        let expiries =
            try app.actions("g", ListActionsOptions(kinds: [.unmuted])).actions
            + app.actions("h", ListActionsOptions(kinds: [.unmuted])).actions
        #expect(expiries.map { "\($0.group.guid)/\($0.actionOn?.uid ?? "")" }.sorted() == ["g/p", "g/q", "h/x"])
        #expect(expiries.allSatisfy { $0.reason == "expired" && $0.actionBy.uid == User.appUID })
        #expect(try app.getGroup("g").group.version == versionBefore + 2)
        #expect(try app.listMembers("g", ListMembersOptions(mutedOnly: true)).items.map(\.uid) == ["m"])
        #expect(try app.listMembers("h", ListMembersOptions(mutedOnly: true)).items.map(\.uid) == ["p"])
        #expect(try harness.service.sweepExpiredMutesAndWait() == 0, "swept once")
        for guid in ["g", "h"] {
            #expect(Invariants.violations(store: harness.store, app: "app", guid: guid).isEmpty)
        }
    }

    @Test("muted_until shows to every member; the reason to admins, moderators and the app only")
    func reasonVisibility() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        try harness.client("m").mute("g", "p", reason: "spam links")
        for (reader, seesReason) in [("o", true), ("a", true), ("m", true), ("q", false), ("p", false)] {
            let client = harness.client(reader)
            let listed = try #require(try client.listMembers("g").items.first { $0.uid == "p" })
            #expect(listed.mute?.mutedUntil == -1, "\(reader) sees the mute")
            #expect(listed.mute?.reason == (seesReason ? "spam links" : ""), "\(reader)")
        }
        #expect(try harness.client().listMembers("g").items.first { $0.uid == "p" }?.mute?.reason == "spam links")
        let own = try harness.client("p").memberState("g")
        #expect(own.mute == Mute(expiresAt: 0, reason: ""), "the muted member sees until when, not why")
        #expect(try harness.client("a").memberState("g", "p").mute?.reason == "spam links")
    }

    @Test("a transfer to a muted member ends the mute first: the owner is never muted")
    func transferEndsTheMute() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("o")
        try owner.mute("g", "p", reason: "x")
        let transferred = try owner.transfer("g", to: "p")
        let log = try owner.actions("g").actions.suffix(2)
        #expect(log.map(\.kind) == [.unmuted, .ownershipTransferred])
        #expect(log.first?.reason == "ownershipTransferred" && log.first?.actionBy.uid == "o")
        #expect(transferred.group.group.owner == "p")
        #expect(try harness.client("p").checkPost("g") == .allowed)
        #expect(ModerationClient.code { try harness.client("a").mute("g", "p") } == .cannotMuteOwner)
    }

    @Test("bulk mute and unmute: a result per uid, the call's own checks first")
    func bulk() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let moderator = harness.client("m")
        try moderator.mute("g", "q")
        let results = try moderator.bulkMute(
            "g", ["p", "q", "o", "a", "x", "ghost"], reason: "raid", durationMs: 60_000)
        #expect(results["p"]?.changed == true && results["p"]?.seq ?? 0 > 0)
        #expect(results["q"]?.error?.code == .alreadyMuted)
        #expect(results["o"]?.error?.code == .cannotMuteOwner)
        #expect(results["a"]?.error?.code == .permissionDenied)
        #expect(results["x"]?.error?.code == .notAMember)
        #expect(results["ghost"]?.error?.code == .uidNotFound)
        let lenient = try moderator.bulkMute("g", ["p", "q"], ifNotMuted: true)
        #expect(lenient.values.allSatisfy { $0.ok && !$0.changed })
        #expect(ModerationClient.code { try harness.client("p").bulkMute("g", ["q"]) } == .permissionDenied)
        #expect(ModerationClient.code { try moderator.bulkMute("g", ["p", "P"]) } == .invalidArgument)
        let unmuted = try moderator.bulkUnmute("g", ["p", "q", "x"])
        #expect(unmuted["p"]?.changed == true && unmuted["q"]?.changed == true)
        #expect(unmuted["x"]?.error?.code == .notAMember)
        #expect(try moderator.bulkUnmute("g", ["p"], onlyIfMuted: true)["p"] == UserResult(ok: true, changed: false))
        #expect(try moderator.bulkUnmute("g", ["p"])["p"]?.error?.code == .userNotMuted)
    }

    @Test("arguments: reason ≤ 512, duration 0 up to 100 years, identifiers")
    func arguments() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("o")
        let long = String(repeating: "r", count: 513)
        #expect(ModerationClient.code { try owner.mute("g", "p", reason: long) } == .invalidArgument)
        #expect(ModerationClient.code { try owner.mute("g", "p", durationMs: -1) } == .invalidArgument)
        #expect(
            ModerationClient.code { try owner.mute("g", "p", durationMs: 101 * 365 * 86_400_000) } == .invalidArgument)
        #expect(ModerationClient.code { try owner.mute("g!", "p") } == .invalidArgument)
        #expect(try owner.mute("g", "P", reason: String(repeating: "r", count: 512)).changed, "uids are lower-cased")
    }

    @Test("an idempotent mute replays its reply and records one action")
    func idempotent() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let keyed = harness.client("o").withKey("mute-once")
        let first = MutationWaiter.wait { done in
            harness.service.muteMember(
                keyed.caller, guid: "g", uid: "p", reason: "once", replay: MutationWaiter.describe, completion: done)
        }
        let second = MutationWaiter.wait { done in
            harness.service.muteMember(
                keyed.caller, guid: "g", uid: "p", reason: "once", replay: MutationWaiter.describe, completion: done)
        }
        guard case .done(.success(let result), _) = first, case .replayed(let bytes) = second else {
            Issue.record("expected a mute, then its replay: \(first), \(second)")
            return
        }
        #expect(bytes == MutationWaiter.describe(Result<MuteResult, ModerationError>.success(result)))
        #expect(try harness.client("o").actions("g", ListActionsOptions(kinds: [.muted])).actions.count == 1)
    }
}
