import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Join requests ("knock", docs/SERVICE.md): a group that takes them lets a non-member ask;
/// admins and moderators approve (the user becomes a participant) or reject; the requester may
/// cancel. A private group with requests off does not exist for the asker.
@Suite("Join requests", .onEveryStore)
struct JoinRequestTests {
    /// Public group "g" and private group "h", owned by o with admin a, moderator m, participant
    /// p; x, y, z exist outside.
    static func setUp(
        _ clock: ManualWallClock = ManualWallClock(ticking: false),
        configuration: ModerationService.Configuration? = nil
    ) throws -> ServiceHarness {
        let harness =
            try configuration.map { try ServiceHarness(clock: clock, configuration: $0) }
            ?? ServiceHarness(clock: clock)
        let app = harness.client()
        for uid in ["o", "a", "m", "p", "x", "y", "z"] { try app.createUser(uid) }
        let members = [
            MemberGrant(uid: "a", scope: .admin), MemberGrant(uid: "m", scope: .moderator), MemberGrant(uid: "p"),
        ]
        try app.createGroup("g", owner: "o", members: members)
        try app.createGroup("h", type: .private, owner: "o", members: members)
        return harness
    }

    @Test("a knock approved: the requester becomes a participant, and the request is gone")
    func approved() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let admin = harness.client("a")
        #expect(ModerationClient.code { try harness.client("x").requestToJoin("h") } == .groupNotFound)
        #expect(ModerationClient.code { try harness.client("m").setJoinRequests("h", true) } == .permissionDenied)
        let turnedOn = try admin.setJoinRequests("h", true)
        #expect(turnedOn.group.joinRequests)
        let versionBefore = turnedOn.group.version
        let requested = try harness.client("x").requestToJoin("h", message: "let me in")
        #expect(requested.kind == .joinRequested && requested.actionOn?.uid == "x" && requested.actionBy.uid == "x")
        #expect(requested.reason.isEmpty, "the message stays with the request")
        #expect(requested.group.version == versionBefore, "a request is no membership")
        #expect(ModerationClient.code { try harness.client("x").requestToJoin("h") } == .alreadyRequested)
        clock.advance(by: 1)
        try harness.client("y").requestToJoin("h")
        let pending = try harness.client("m").listJoinRequests("h")
        #expect(pending.items.map(\.uid) == ["x", "y"], "oldest first")
        #expect(pending.items[0].message == "let me in" && pending.items[0].name == "User x")
        #expect(ModerationClient.code { try harness.client("p").listJoinRequests("h") } == .permissionDenied)
        #expect(ModerationClient.code { try harness.client("x").getGroup("h") } == .groupNotFound, "still private")

        let approved = try harness.client("m").approveJoinRequest("h", "x")
        #expect(approved.action.kind == .joinRequestApproved && approved.action.actionOn?.uid == "x")
        #expect(approved.action.newScope == .participant && approved.action.actionBy.uid == "m")
        #expect(approved.group.group.membersCount == 5 && approved.group.group.version == versionBefore + 1)
        #expect(try harness.client("x").memberState("h").scope == .participant)
        #expect(try admin.listJoinRequests("h").items.map(\.uid) == ["y"])
        #expect(ModerationClient.code { try admin.approveJoinRequest("h", "x") } == .alreadyJoined)
        #expect(ModerationClient.code { try admin.approveJoinRequest("h", "z") } == .joinRequestNotFound)
        #expect(ModerationClient.code { try harness.client("x").requestToJoin("h") } == .alreadyJoined)
    }

    @Test("a knock rejected, one cancelled; requests off refuse new ones but keep the pending")
    func rejectedAndCancelled() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let admin = harness.client("a")
        #expect(ModerationClient.code { try harness.client("x").requestToJoin("g") } == .joinRequestsDisabled)
        try admin.setJoinRequests("g", true)
        try harness.client("x").requestToJoin("g")
        try harness.client("y").requestToJoin("g")
        let rejected = try harness.client("m").rejectJoinRequest("g", "x", reason: "not now")
        #expect(rejected.action.kind == .joinRequestRejected && rejected.action.reason == "not now")
        #expect(rejected.action.actionOn?.uid == "x" && rejected.group.group.membersCount == 4)
        #expect(ModerationClient.code { try harness.client("x").cancelJoinRequest("g") } == .joinRequestNotFound)
        try harness.client("x").requestToJoin("g")
        let cancelled = try harness.client("x").cancelJoinRequest("g")
        #expect(cancelled.kind == .joinRequestCancelled && cancelled.actionBy.uid == "x")
        try admin.setJoinRequests("g", false)
        #expect(ModerationClient.code { try harness.client("z").requestToJoin("g") } == .joinRequestsDisabled)
        #expect(try admin.listJoinRequests("g").items.map(\.uid) == ["y"], "turning requests off keeps the pending")
        try admin.approveJoinRequest("g", "y")
        // A private group: a pending request shows it to its requester for CancelJoinRequest only.
        try admin.setJoinRequests("h", true)
        try harness.client("z").requestToJoin("h")
        try admin.setJoinRequests("h", false)
        #expect(try harness.client("z").cancelJoinRequest("h").kind == .joinRequestCancelled)
        #expect(ModerationClient.code { try harness.client("z").cancelJoinRequest("h") } == .groupNotFound)
        #expect(ModerationClient.code { try harness.client("z").requestToJoin("h") } == .groupNotFound)
    }

    @Test("joining, being added, invited and accepting, or banned each end the request")
    func endings() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("o")
        try owner.setJoinRequests("g", true)
        for uid in ["x", "y", "z"] { try harness.client(uid).requestToJoin("g") }
        try harness.client("x").join("g")
        try owner.addMembers("g", [MemberGrant(uid: "y")])
        try owner.ban("g", "z")
        #expect(try owner.listJoinRequests("g").items.isEmpty)
        #expect(ModerationClient.code { try harness.client("z").requestToJoin("g") } == .bannedGroupMember)
        #expect(ModerationClient.code { try owner.approveJoinRequest("g", "z") } == .bannedGroupMember)
        try owner.unban("g", "z")
        try harness.client("z").requestToJoin("g")
        try owner.invite("g", "z")
        try harness.client("z").acceptInvite("g")
        #expect(try owner.listJoinRequests("g").items.isEmpty, "accepting an invite ends the request")
    }

    @Test("at most maxPendingJoinRequests per group: one more is ERR_RATE_LIMITED")
    func limit() throws {
        let configuration = ModerationService.Configuration(passwordHasher: .fastForTests, maxPendingJoinRequests: 2)
        let harness = try Self.setUp(configuration: configuration)
        defer { harness.tearDown() }
        try harness.client("o").setJoinRequests("g", true)
        try harness.client("x").requestToJoin("g")
        try harness.client("y").requestToJoin("g")
        let refused = ModerationClient.code { try harness.client("z").requestToJoin("g") }
        #expect(refused == .rateLimited)
        try harness.client("o").rejectJoinRequest("g", "x")
        try harness.client("z").requestToJoin("g")
    }

    @Test("arguments, paging oldest first, and the flag survives a restart")
    func argumentsAndPaging() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let owner = harness.client("o")
        try owner.setJoinRequests("g", true)
        let long = String(repeating: "x", count: 256)
        #expect(ModerationClient.code { try harness.client("x").requestToJoin("g", message: long) } == .invalidArgument)
        #expect(ModerationClient.code { try harness.client().requestToJoin("g") } == .invalidArgument)
        #expect(ModerationClient.code { try owner.listJoinRequests("g", cursor: "nope") } == .invalidArgument)
        for uid in ["z", "y", "x"] {
            try harness.client(uid).requestToJoin("g")
            clock.advance(by: 1)
        }
        let first = try owner.listJoinRequests("g", limit: 2)
        #expect(first.items.map(\.uid) == ["z", "y"] && !first.nextCursor.isEmpty)
        #expect(try owner.listJoinRequests("g", limit: 2, cursor: first.nextCursor).items.map(\.uid) == ["x"])
        try harness.reopen()
        #expect(try harness.client("o").getGroup("g").group.joinRequests)
        #expect(try harness.client("o").listJoinRequests("g").items.count == 3)
        let updated = try harness.client("o").actions("g", ListActionsOptions(kinds: [.updated])).actions
        #expect(updated.last?.group.joinRequests == true, "snapshots carry the flag")
    }
}
