import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Bans from the whole app (docs/SERVICE.md): who may make them, every error code, what a ban and a
/// shadow ban do to a user's calls and to CheckPost, exact expiry and the sweeper, memberships
/// kept, the action log and idempotency keys.
@Suite("App-wide bans", .onEveryStore)
struct AppBanTests {
    /// Users o (owner), u (moderator of "g"), p (participant), x (outside) and "gone" (deleted);
    /// group "g" public, "priv" private with o and u.
    static func setUp(_ clock: ManualWallClock = ManualWallClock()) throws -> ServiceHarness {
        let harness = try ServiceHarness(clock: clock)
        let app = harness.client()
        for uid in ["o", "u", "p", "x", "gone"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o", members: [MemberGrant(uid: "u", scope: .moderator), MemberGrant(uid: "p")])
        try app.createGroup("priv", type: .private, owner: "o", members: [MemberGrant(uid: "u")])
        try app.deleteUser("gone")
        return harness
    }

    // MARK: Who may call, and each error code

    /// One call of the three RPCs and the code it must fail with (nil: success).
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: ErrorCode?
        let run: @Sendable (ServiceHarness) throws -> Void

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "the app bans a user", expected: nil) { try $0.client().banFromApp("p", reason: "spam") },
        Case(name: "a user may not ban", expected: .permissionDenied) { try $0.client("o").banFromApp("p") },
        Case(name: "not even themselves", expected: .permissionDenied) { try $0.client("p").banFromApp("p") },
        Case(name: "an unknown uid", expected: .uidNotFound) { try $0.client().banFromApp("ghost") },
        Case(name: "a deleted user", expected: .uidNotFound) { try $0.client().banFromApp("gone") },
        Case(name: "an invalid uid", expected: .invalidArgument) { try $0.client().banFromApp("Not Valid!") },
        Case(name: "a reason over 512", expected: .invalidArgument) {
            try $0.client().banFromApp("p", reason: String(repeating: "r", count: 513))
        },
        Case(name: "a negative duration", expected: .invalidArgument) {
            try $0.client().banFromApp("p", durationMs: -1)
        },
        Case(name: "already banned", expected: .alreadyBanned) {
            try $0.client().banFromApp("p")
            try $0.client().banFromApp("p", shadow: true)
        },
        Case(name: "already shadow-banned", expected: .alreadyBanned) {
            try $0.client().banFromApp("p", shadow: true)
            try $0.client().banFromApp("p")
        },
        Case(name: "a banned user asks: the ban first", expected: .userBannedFromApp) {
            try $0.client().banFromApp("o")
            try $0.client("o").banFromApp("p")
        },
        Case(name: "the app unbans", expected: nil) {
            try $0.client().banFromApp("p")
            try $0.client().unbanFromApp("p")
        },
        Case(name: "a user may not unban", expected: .permissionDenied) {
            try $0.client().banFromApp("p")
            try $0.client("o").unbanFromApp("p")
        },
        Case(name: "unban of a user not banned", expected: .userNotBanned) { try $0.client().unbanFromApp("p") },
        Case(name: "unban of an unknown uid", expected: .uidNotFound) { try $0.client().unbanFromApp("ghost") },
        Case(name: "the banned user unbans themselves", expected: .userBannedFromApp) {
            try $0.client().banFromApp("p")
            try $0.client("p").unbanFromApp("p")
        },
        Case(name: "the app lists", expected: nil) { _ = try $0.client().listAppBans() },
        Case(name: "a user may not list", expected: .permissionDenied) { _ = try $0.client("o").listAppBans() },
        Case(name: "a limit over 100", expected: .invalidArgument) {
            _ = try $0.client().listAppBans(ListBannedOptions(limit: 101))
        },
        Case(name: "a cursor of another list", expected: .invalidArgument) {
            try $0.client().ban("g", "x")
            try $0.client().ban("g", "p")
            let cursor = try $0.client().listBanned("g", ListBannedOptions(limit: 1)).nextCursor
            _ = try $0.client().listAppBans(ListBannedOptions(cursor: cursor))
        },
        Case(name: "a search over 100", expected: .invalidArgument) {
            _ = try $0.client().listAppBans(ListBannedOptions(search: String(repeating: "s", count: 101)))
        },
    ]

    @Test("who may ban, unban and list, and every error code", arguments: cases)
    func rules(_ testCase: Case) throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        #expect(ModerationClient.code { try testCase.run(harness) } == testCase.expected)
    }

    @Test("the messages name the user")
    func messages() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.banFromApp("p")
        func message(_ body: () throws -> Any) -> String {
            do {
                _ = try body()
                return ""
            } catch {
                return (error as? ModerationError)?.message ?? "\(error)"
            }
        }
        #expect(message { try app.banFromApp("p") }.contains("p is already banned from the app"))
        #expect(message { try app.unbanFromApp("x") }.contains("x is not banned from the app"))
        #expect(message { try harness.client("p").getGroup("g") }.contains("user p is banned from the app"))
        #expect(message { try harness.client("o").banFromApp("x") }.contains("o may not ban users from the app"))
    }

    // MARK: What a ban and a shadow ban do to the user's calls

    /// How the acting user "u" stands with the app.
    enum Standing: String, CaseIterable, Sendable {
        case none, banned, shadowBanned
    }

    /// A call on behalf of "u" (moderator of "g", member of "priv"), and its outcome when u is
    /// not banned (a shadow ban changes nothing); a ban makes every one `ERR_USER_BANNED_FROM_APP`.
    struct UserCall: Sendable, CustomTestStringConvertible {
        let name: String
        var unbanned: ErrorCode? = nil
        let run: @Sendable (ModerationClient) throws -> Void

        var testDescription: String { name }
    }

    static let userCalls: [UserCall] = [
        UserCall(name: "GetUser") { _ = try $0.getUser("p") },
        UserCall(name: "UpdateUser") { try $0.updateUser(UserUpdate(uid: "u", name: "U")) },
        UserCall(name: "GetGroup") { _ = try $0.getGroup("g") },
        UserCall(name: "ListGroups") { _ = try $0.listGroups() },
        UserCall(name: "ListMembers") { _ = try $0.listMembers("g") },
        UserCall(name: "GetMemberState") { _ = try $0.memberState("g") },
        UserCall(name: "CreateGroup") { try $0.createGroup("mine", owner: "u") },
        UserCall(name: "JoinGroup") { try $0.join("open") },
        UserCall(name: "LeaveGroup") { try $0.leave("priv") },
        UserCall(name: "KickMember") { try $0.kick("g", "p") },
        UserCall(name: "MuteMember") { try $0.mute("g", "p") },
        UserCall(name: "BanMember") { try $0.ban("g", "x") },
        UserCall(name: "InviteMembers") { _ = try $0.invite("g", "x") },
        UserCall(name: "ListMyInvites") { _ = try $0.listMyInvites() },
        UserCall(name: "ReportMember") { try $0.report("g", "p") },
        UserCall(name: "ListGroupActions") { _ = try $0.actions("g") },
        UserCall(name: "CheckPost about themselves") { _ = try $0.checkPost("g") },
        UserCall(name: "CheckPost about another user", unbanned: .permissionDenied) { _ = try $0.checkPost("g", "p") },
        UserCall(name: "DeleteUser of another user", unbanned: .permissionDenied) { try $0.deleteUser("p") },
        UserCall(name: "BanUserFromApp", unbanned: .permissionDenied) { try $0.banFromApp("p") },
        UserCall(name: "ListAppBans", unbanned: .permissionDenied) { _ = try $0.listAppBans() },
    ]

    @Test("a ban refuses every call of the user, a shadow ban none", arguments: userCalls, Standing.allCases)
    func calls(_ call: UserCall, _ standing: Standing) throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createGroup("open", owner: "o")
        switch standing {
        case .none: break
        case .banned: try app.banFromApp("u", reason: "abuse")
        case .shadowBanned: try app.banFromApp("u", shadow: true)
        }
        let expected: ErrorCode? = standing == .banned ? .userBannedFromApp : call.unbanned
        #expect(ModerationClient.code { try call.run(harness.client("u")) } == expected)
        // Another user's calls, and the app's about u, are not affected.
        #expect(try harness.client("p").getGroup("g").group.guid == "g")
        #expect(try app.memberState("g", "u").scope == .moderator)
    }

    @Test("a banned user may still delete themselves; the ban goes with them")
    func deleteThemselves() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.banFromApp("x", reason: "abuse")
        let deleted = try harness.client("x").deleteUser("x")
        #expect(deleted.lastSeq > 0)
        #expect(try app.listAppBans().items.isEmpty)
        let log = try Self.log(harness)
        let dropped = try #require(log.last)
        #expect(dropped.kind == .appUnbanned && dropped.reason == "userDeleted" && dropped.actionOn?.uid == "x")
        #expect(dropped.actionBy.uid == "x" && dropped.seq == deleted.lastSeq)
        #expect(ModerationClient.code { try app.banFromApp("x") } == .uidNotFound, "a deleted user is banned no more")
    }

    @Test("the app acts on a banned user as before; a banned owner keeps the group")
    func othersActOnTheBannedUser() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.banFromApp("o")
        try app.banFromApp("p")
        #expect(try app.getGroup("g").group.owner == "o", "the owner owns the group still")
        #expect(ModerationClient.code { try harness.client("o").deleteGroup("g") } == .userBannedFromApp)
        try harness.client("u").mute("g", "p", reason: "and muted")
        try app.addMembers("priv", [MemberGrant(uid: "p")])
        try app.transfer("g", to: "u")
        #expect(try app.memberState("g", "p").mute?.reason == "and muted")
        #expect(try app.memberState("priv", "p").isMember)
        #expect(ModerationClient.code { try harness.client("o").leave("g") } == .userBannedFromApp)
        try harness.client("u").kick("g", "o")
        #expect(try app.memberState("g", "o").isMember == false)
    }

    // MARK: CheckPost

    @Test("CheckPost: the user's standing first, then the ban from the app; a shadow ban allows, marked")
    func checkPostOrder() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["m", "f", "b", "s", "sm"] { try app.createUser(uid) }
        try app.createGroup(
            "frozen", owner: "o", members: [MemberGrant(uid: "f"), MemberGrant(uid: "m", scope: .moderator)])
        try app.freeze("frozen")
        try app.addMembers("g", [MemberGrant(uid: "m"), MemberGrant(uid: "s"), MemberGrant(uid: "sm")])
        try app.mute("g", "m", durationMs: 60_000)
        try app.mute("g", "sm")
        try app.ban("g", "b")
        for uid in ["u", "m", "f", "b", "x"] { try app.banFromApp(uid) }
        for uid in ["s", "sm"] { try app.banFromApp(uid, shadow: true) }
        let cases: [(PostCheck, PostVerdict)] = [
            (PostCheck(guid: "g", uid: "u"), PostVerdict(refusal: .userBannedFromApp)),
            (PostCheck(guid: "priv", uid: "u"), PostVerdict(refusal: .userBannedFromApp)),
            (PostCheck(guid: "g", uid: "m"), PostVerdict(refusal: .memberMuted, mutedUntil: clock.peek + 60_000)),
            (PostCheck(guid: "frozen", uid: "f"), PostVerdict(refusal: .groupFrozen)),
            (PostCheck(guid: "frozen", uid: "m"), PostVerdict(refusal: .userBannedFromApp)),
            (PostCheck(guid: "g", uid: "b"), PostVerdict(refusal: .bannedGroupMember)),
            (PostCheck(guid: "g", uid: "x"), PostVerdict(refusal: .groupNotJoined)),
            (PostCheck(guid: "priv", uid: "x"), PostVerdict(refusal: .groupNotFound)),
            (PostCheck(guid: "nope", uid: "u"), PostVerdict(refusal: .groupNotFound)),
            (PostCheck(guid: "g", uid: "s"), .shadowed),
            (PostCheck(guid: "priv", uid: "s"), PostVerdict(refusal: .groupNotFound)),
            (PostCheck(guid: "g", uid: "sm"), PostVerdict(refusal: .memberMuted, mutedUntil: -1)),
            (PostCheck(guid: "g", uid: "p"), .allowed),
        ]
        #expect(try app.checkPost(cases.map(\.0)) == cases.map(\.1), "the app asks for everyone at once")
        #expect(try harness.client("s").checkPost("g") == .shadowed, "a shadow-banned user gets the same answer")
        #expect(ModerationClient.code { try harness.client("u").checkPost("g") } == .userBannedFromApp)
        try app.unbanFromApp("u")
        try app.unbanFromApp("s")
        #expect(
            try app.checkPost([PostCheck(guid: "g", uid: "u"), PostCheck(guid: "g", uid: "s")]) == [.allowed, .allowed])
    }

    // MARK: Expiry

    @Test("a ban applies until expires_at, exactly, on every read", arguments: [false, true])
    func exactExpiry(_ shadow: Bool) throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let app = harness.client()
        let u = harness.client("u")
        let ban = try app.banFromApp("u", reason: "cool down", durationMs: 10_000, shadow: shadow).ban
        #expect(ban.expiresAt == ban.bannedAt + 10_000 && ban.shadow == shadow && ban.bannedBy == User.appUID)
        clock.advance(by: 9_999)
        #expect(ModerationClient.code { try u.getGroup("g") } == (shadow ? nil : .userBannedFromApp))
        #expect(try app.checkPost("g", "u") == (shadow ? .shadowed : PostVerdict(refusal: .userBannedFromApp)))
        #expect(try app.listAppBans().items.map(\.uid) == ["u"])
        #expect(ModerationClient.code { try app.banFromApp("u") } == .alreadyBanned)
        clock.advance(by: 1)
        #expect(try u.getGroup("g").group.guid == "g")
        #expect(try app.checkPost("g", "u") == .allowed)
        #expect(try app.listAppBans().items.isEmpty)
        #expect(ModerationClient.code { try app.unbanFromApp("u") } == .userNotBanned, "left for the sweeper")
        // A new ban meets the expired row: its expiry is recorded first.
        let again = try app.banFromApp("u", reason: "again")
        let last = try Self.log(harness).suffix(2)
        #expect(last.map(\.kind) == [.appUnbanned, .appBanned])
        #expect(last.first?.reason == "expired" && last.first?.actionBy.uid == User.appUID)
        #expect(last.first?.shadow == shadow && last.last?.seq == again.action.seq)
    }

    @Test("the sweeper records each expired ban once, as appUnbanned with reason expired")
    func sweeper() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.banFromApp("u", durationMs: 1_000)
        try app.banFromApp("p", durationMs: 2_000, shadow: true)
        try app.banFromApp("x")
        clock.advance(by: 1_999)
        #expect(try harness.service.sweepExpiredAppBansAndWait() == 1)
        clock.advance(by: 1)
        let report = try harness.service.runMaintenanceAndWait()
        #expect(report.expiredAppBans == 1 && report.expiredBans == 0)
        #expect(try harness.service.sweepExpiredAppBansAndWait() == 0, "swept once")
        #expect(harness.service.expiredAppBansSweptCount == 2)
        let expiries = try Self.log(harness).filter { $0.kind == .appUnbanned }
        #expect(expiries.map { $0.actionOn?.uid } == ["u", "p"])
        #expect(
            expiries.allSatisfy { $0.reason == "expired" && $0.actionBy.uid == User.appUID && $0.group.guid.isEmpty })
        #expect(expiries.map(\.shadow) == [false, true])
        #expect(try app.listAppBans().items.map(\.uid) == ["x"])
    }

    // MARK: Memberships, the log, paging, idempotency

    @Test("memberships, scopes and mutes are kept; unbanning restores everything")
    func membershipsKept() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.mute("priv", "u", reason: "hush")
        let before = try ["g", "priv"].map { try app.memberState($0, "u") }
        let versions = try ["g", "priv"].map { try app.getGroup($0).group.version }
        try app.banFromApp("u")
        #expect(try ["g", "priv"].map { try app.memberState($0, "u") } == before)
        #expect(try ["g", "priv"].map { try app.getGroup($0).group.version } == versions, "no group changed")
        try app.unbanFromApp("u")
        #expect(try ["g", "priv"].map { try app.memberState($0, "u") } == before)
        try harness.client("u").kick("g", "p")
        #expect(try harness.client("u").checkPost("priv") == PostVerdict(refusal: .memberMuted, mutedUntil: -1))
    }

    @Test("the actions belong to no group: in the app's log, with reason, expiry and shadow")
    func actions() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let banned = try app.banFromApp("u", reason: "spam", durationMs: 5_000, shadow: true)
        let lifted = try app.unbanFromApp("u")
        #expect(banned.action.kind == .appBanned && banned.action.isAppWide && banned.action.group == .appWide)
        #expect(banned.action.reason == "spam" && banned.action.expiresAt == banned.ban.expiresAt)
        #expect(banned.action.shadow && banned.action.actionBy.uid == User.appUID)
        #expect(banned.action.actionOn?.uid == "u" && banned.action.actionOn?.name == "User u")
        #expect(lifted.kind == .appUnbanned && lifted.shadow && lifted.seq == banned.action.seq + 1)
        #expect(Array(try Self.log(harness).suffix(2)) == [banned.action, lifted], "read back as recorded")
        #expect(try app.actions("g").actions.allSatisfy { !$0.isAppWide }, "no group's log shows them")
        #expect(try harness.client("u").actions("g").actions.allSatisfy { !$0.isAppWide })
    }

    @Test("ListAppBans: newest first, keyset pages, search, no expired ban")
    func paging() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let app = harness.client()
        for (index, uid) in ["b1", "b2", "b3", "b4", "zed"].enumerated() {
            try app.createUser(uid, name: uid == "zed" ? "Zoë Zed" : "Banned \(index)")
            try app.banFromApp(uid, reason: "r\(index)", durationMs: uid == "b1" ? 500 : 0, shadow: index % 2 == 1)
            clock.advance(by: 100)
        }
        clock.advance(by: 100)
        let first = try app.listAppBans(ListBannedOptions(limit: 2))
        #expect(first.items.map(\.uid) == ["zed", "b4"] && !first.nextCursor.isEmpty)
        #expect(first.items.map(\.shadow) == [false, true] && first.items[0].name == "Zoë Zed")
        try app.unbanFromApp("b3")
        let second = try app.listAppBans(ListBannedOptions(limit: 2, cursor: first.nextCursor))
        #expect(second.items.map(\.uid) == ["b2"] && second.nextCursor.isEmpty, "b3 unbanned, b1 expired")
        #expect(try app.listAppBans(ListBannedOptions(search: "ZOË")).items.map(\.uid) == ["zed"])
        #expect(try app.listAppBans(ListBannedOptions(search: "B2")).items.map(\.uid) == ["b2"])
        #expect(try app.listAppBans(ListBannedOptions(search: "nobody")).items.isEmpty)
    }

    @Test("idempotency keys: a retry replays the first reply, a refusal included")
    func idempotency() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        func ban(_ key: String) -> MutationResult<AppBanResult> {
            MutationWaiter.wait { done in
                harness.service.banUserFromApp(
                    Caller(app: "app", idempotencyKey: key), uid: "u", reason: "once", replay: MutationWaiter.describe,
                    completion: done)
            }
        }
        guard case .done(.success(let first), let recorded?) = ban("k1") else {
            Issue.record("the first ban did not run")
            return
        }
        try harness.client().unbanFromApp("u")
        guard case .replayed(let bytes) = ban("k1") else {
            Issue.record("the retry ran again")
            return
        }
        #expect(bytes == recorded)
        #expect(try harness.client().listAppBans().items.isEmpty, "the retry banned nobody")
        #expect(try Self.log(harness).filter { $0.kind == .appBanned }.map(\.seq) == [first.action.seq])
        // A banned user's call with a key: refused, and the refusal is what a retry gets.
        try harness.client().banFromApp("u")
        func kick() -> MutationResult<ActionRecord> {
            MutationWaiter.wait { done in
                harness.service.kickMember(
                    Caller(app: "app", actor: "u", idempotencyKey: "k2"), guid: "g", uid: "p",
                    replay: MutationWaiter.describe, completion: done)
            }
        }
        guard case .done(.failure(let refusal), _) = kick() else {
            Issue.record("a banned user's kick ran")
            return
        }
        #expect(refusal.code == .userBannedFromApp)
        try harness.client().unbanFromApp("u")
        guard case .replayed(let refused) = kick() else {
            Issue.record("the retry ran again")
            return
        }
        #expect(String(decoding: refused, as: UTF8.self).contains("ERR_USER_BANNED_FROM_APP"))
        #expect(try harness.client().memberState("g", "p").isMember, "the retry changed nothing")
    }

    /// The app's whole log.
    static func log(_ harness: ServiceHarness) throws -> [ActionRecord] {
        try harness.service.withActionLog(app: "app") { (log: ActionLogSnapshot) throws(ModerationError) in
            try log.actions(afterSeq: 0, limit: 500)
        }
    }
}
