import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Invites (docs/SERVICE.md): admins and moderators invite users with a scope; the invitee accepts
/// (becoming a member whatever the group's type), declines, or lets it lapse; an admin revokes
/// it. A live invite shows the private group to its invitee; an expired one is "not found" at
/// its expiry exactly, and maintenance only reclaims its row.
@Suite("Invites", .onEveryStore)
struct InviteTests {
    /// Private group "g" owned by o with admin a, moderator m, participant p; x, y, z exist
    /// outside.
    static func setUp(_ clock: ManualWallClock = ManualWallClock(ticking: false)) throws -> ServiceHarness {
        let harness = try ServiceHarness(clock: clock)
        let app = harness.client()
        for uid in ["o", "a", "m", "p", "x", "y", "z"] { try app.createUser(uid) }
        try app.createGroup(
            "g", type: .private, owner: "o",
            members: [
                MemberGrant(uid: "a", scope: .admin), MemberGrant(uid: "m", scope: .moderator), MemberGrant(uid: "p"),
            ])
        return harness
    }

    @Test("an invite into a private group: the invitee sees the group, accepts, and is a member with the scope")
    func acceptedIntoPrivateGroup() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let admin = harness.client("a")
        let invitee = harness.client("x")
        #expect(ModerationClient.code { try invitee.getGroup("g") } == .groupNotFound, "private before the invite")
        #expect(ModerationClient.code { try invitee.acceptInvite("g") } == .groupNotFound, "existence never leaks")
        let countBefore = try admin.getGroup("g").group.membersCount
        let results = try admin.invite("g", [MemberGrant(uid: "x", scope: .moderator)])
        #expect(results["x"]?.changed == true)
        let invited = try #require(try admin.actions("g").actions.last)
        #expect(invited.kind == .invited && invited.actionOn?.uid == "x" && invited.newScope == .moderator)
        #expect(invited.expiresAt == clock.now() + ModerationService.defaultInviteLifetimeMs)
        #expect(invited.group.membersCount == countBefore, "an invite is no membership")

        let seen = try invitee.getGroup("g")
        #expect(seen.group.guid == "g" && !seen.hasJoined, "a live invite shows the private group")
        let mine = try invitee.listMyInvites()
        #expect(mine.items.map(\.invite.uid) == ["x"] && mine.items[0].group.group.guid == "g")
        #expect(mine.items[0].invite.scope == .moderator && mine.items[0].invite.invitedBy == "a")
        #expect(try admin.listInvites("g").items.map(\.uid) == ["x"])
        #expect(try harness.client("p").listMembers("g").items.count == countBefore)

        let accepted = try invitee.acceptInvite("g")
        #expect(accepted.action.kind == .inviteAccepted && accepted.action.actionOn?.uid == "x")
        #expect(
            accepted.action.newScope == .moderator && accepted.group.scope == .moderator && accepted.group.hasJoined)
        #expect(accepted.group.group.membersCount == countBefore + 1)
        #expect(try invitee.memberState("g").scope == .moderator)
        #expect(try admin.listInvites("g").items.isEmpty, "an accepted invite is gone")
        #expect(try invitee.listMyInvites().items.isEmpty)
        #expect(ModerationClient.code { try invitee.acceptInvite("g") } == .alreadyJoined)
        #expect(ModerationClient.code { try admin.invite("g", "x") } == .alreadyJoined, "a member is not invited")
    }

    @Test("a revoked invite is gone: the invitee can neither see nor accept the private group")
    func revoked() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let moderator = harness.client("m")
        try moderator.invite("g", "x")
        try harness.client("a").invite("g", "y", scope: .moderator)
        #expect(
            ModerationClient.code { try moderator.revokeInvite("g", "y") } == .permissionDenied,
            "a moderator revokes participant invites only")
        let revoked = try moderator.revokeInvite("g", "x")
        #expect(revoked.kind == .inviteRevoked && revoked.actionOn?.uid == "x" && revoked.oldScope == .participant)
        #expect(try harness.client("a").revokeInvite("g", "y").kind == .inviteRevoked)
        #expect(ModerationClient.code { try moderator.revokeInvite("g", "x") } == .inviteNotFound)
        #expect(ModerationClient.code { try harness.client("x").getGroup("g") } == .groupNotFound)
        #expect(ModerationClient.code { try harness.client("x").acceptInvite("g") } == .groupNotFound)
        #expect(try harness.client("x").listMyInvites().items.isEmpty)
        #expect(ModerationClient.code { try harness.client("p").revokeInvite("g", "x") } == .permissionDenied)
    }

    @Test("an invite expires at its expiry exactly; maintenance reclaims the row without an action")
    func expired() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let admin = harness.client("a")
        try admin.invite("g", "x", expiresInMs: 1_000)
        try admin.invite("g", "y", expiresInMs: 5_000)
        clock.advance(by: 999)
        #expect(try harness.client("x").getGroup("g").group.guid == "g", "live until its expiry")
        clock.advance(by: 1)
        #expect(ModerationClient.code { try harness.client("x").getGroup("g") } == .groupNotFound)
        #expect(ModerationClient.code { try harness.client("x").acceptInvite("g") } == .groupNotFound)
        #expect(ModerationClient.code { try harness.client("x").declineInvite("g") } == .groupNotFound)
        #expect(ModerationClient.code { try admin.revokeInvite("g", "x") } == .inviteNotFound)
        #expect(try admin.listInvites("g").items.map(\.uid) == ["y"])
        #expect(try harness.client("x").listMyInvites().items.isEmpty)
        let logBefore = try admin.actions("g").actions.count
        let report = try harness.service.runMaintenanceAndWait()
        #expect(report.purgedInvites == 1)
        #expect(try admin.actions("g").actions.count == logBefore, "an expiry records nothing")
        // On a public group, an expired invite is a missing invite (the group itself is visible).
        try harness.client().createGroup("pub", owner: "o")
        try harness.client("o").invite("pub", "z", expiresInMs: 10)
        clock.advance(by: 10)
        #expect(ModerationClient.code { try harness.client("z").acceptInvite("pub") } == .inviteNotFound)
        // Refreshing replaces scope and expiry.
        try harness.client("o").invite("pub", "z", scope: .participant, expiresInMs: 100)
        try harness.client("o").invite("pub", "z", scope: .admin, expiresInMs: 200)
        let refreshed = try harness.client("o").listInvites("pub").items
        #expect(refreshed.map(\.scope) == [.admin] && refreshed[0].expiresAt == clock.now() + 200)
        #expect(try harness.client("z").acceptInvite("pub").group.scope == .admin)
    }

    @Test("declining, joining, adding and banning each end the invite; inviting never unbans")
    func endings() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("o")
        try harness.client().createGroup("pub", owner: "o")
        try owner.invite("g", "x")
        let declined = try harness.client("x").declineInvite("g")
        #expect(declined.kind == .inviteDeclined && declined.actionOn?.uid == "x" && declined.actionBy.uid == "x")
        #expect(ModerationClient.code { try harness.client("x").declineInvite("g") } == .groupNotFound)
        try owner.invite("pub", "x")
        try harness.client("x").join("pub")
        try owner.invite("g", "y")
        try owner.addMembers("g", [MemberGrant(uid: "y")])
        try owner.invite("g", "z")
        try owner.ban("g", "z")
        #expect(try owner.listInvites("g").items.isEmpty && owner.listInvites("pub").items.isEmpty)
        #expect(ModerationClient.code { try owner.invite("g", "z") } == .bannedGroupMember, "inviting never unbans")
        #expect(ModerationClient.code { try harness.client("z").acceptInvite("g") } == .bannedGroupMember)
        let results = try owner.invite("g", [MemberGrant(uid: "nobody"), MemberGrant(uid: "p"), MemberGrant(uid: "x")])
        #expect(results["nobody"]?.error?.code == .uidNotFound && results["p"]?.error?.code == .alreadyJoined)
        #expect(results["x"]?.changed == true)
        try owner.deleteGroup("g")
        #expect(try harness.client("x").listMyInvites().items.isEmpty, "a deleted group's invites go with it")
    }

    @Test("arguments: expiry 0–30 days, 1–100 distinct uids, the app cannot accept; cursors page newest first")
    func argumentsAndPaging() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock)
        defer { harness.tearDown() }
        let owner = harness.client("o")
        #expect(ModerationClient.code { try owner.invite("g", "x", expiresInMs: -1) } == .invalidArgument)
        #expect(
            ModerationClient.code { try owner.invite("g", "x", expiresInMs: ModerationService.maxInviteLifetimeMs + 1) }
                == .invalidArgument)
        #expect(ModerationClient.code { try owner.invite("g", []) } == .invalidArgument)
        #expect(
            ModerationClient.code { try owner.invite("g", [MemberGrant(uid: "x"), MemberGrant(uid: "X")]) }
                == .invalidArgument)
        #expect(ModerationClient.code { try harness.client().acceptInvite("g") } == .invalidArgument)
        #expect(ModerationClient.code { try harness.client().listMyInvites() } == .invalidArgument)
        #expect(ModerationClient.code { try owner.listInvites("g", cursor: "bogus") } == .invalidArgument)
        try owner.invite("g", "x", expiresInMs: ModerationService.maxInviteLifetimeMs)
        for uid in ["y", "z"] {
            clock.advance(by: 1)
            try owner.invite("g", uid)
        }
        let first = try owner.listInvites("g", limit: 2)
        #expect(first.items.map(\.uid) == ["z", "y"] && !first.nextCursor.isEmpty)
        let second = try owner.listInvites("g", limit: 2, cursor: first.nextCursor)
        #expect(second.items.map(\.uid) == ["x"] && second.nextCursor.isEmpty)
        try harness.client().createGroup("h", type: .private, owner: "o")
        clock.advance(by: 1)
        try owner.invite("h", "x")
        let mine = try harness.client("x").listMyInvites(limit: 1)
        #expect(mine.items.map(\.group.group.guid) == ["h"] && !mine.nextCursor.isEmpty)
        let rest = try harness.client("x").listMyInvites(limit: 1, cursor: mine.nextCursor)
        #expect(rest.items.map(\.group.group.guid) == ["g"] && rest.nextCursor.isEmpty)
    }

    @Test("invites survive a restart of the store")
    func durable() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        try harness.client("a").invite("g", "x", scope: .moderator)
        try harness.reopen()
        let invites = try harness.client("o").listInvites("g").items
        #expect(invites.map(\.uid) == ["x"] && invites[0].scope == .moderator && invites[0].name == "User x")
        #expect(try harness.client("x").acceptInvite("g").group.scope == .moderator)
    }

}
