import ModerationMessages
import RPCCore
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Invites over real sockets: one accepted into a private group, one revoked, one expired —
    /// each step a call on the wire, checked against the reply, the actions recorded and
    /// delivered to the invitee's own subscription, and the state read back.
    @Suite("Invites over the wire", .onEveryStore)
    struct InviteWireTests {
        /// The cast plus private group "p" owned by owner with alice (admin) and bob (moderator).
        static func privateGroup(_ cast: Cast) throws {
            try cast.app.createGroup(
                "p", type: .private, owner: "owner", members: [("alice", .admin), ("bob", .moderator)])
        }

        @Test("an invite into a private group, accepted: the invitee sees it, joins with the scope, and is told")
        func acceptedIntoPrivateGroup() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            try Self.privateGroup(cast)
            let alice = try cast.user("alice")
            let dave = try cast.user("dave")
            let stream = dave.subscribe(after: cast.headSeq)
            defer { stream.cancel() }
            expectFailure(failure { try dave.getGroup("p") }, .notFound, "ERR_GROUP_NOT_FOUND", mentions: "p")
            expectFailure(failure { try dave.acceptInvite("p") }, .notFound, "ERR_GROUP_NOT_FOUND", mentions: "p")
            let results = try alice.invite("p", [("dave", .moderator)])
            #expect(results["dave"]?.ok == true && results["dave"]?.changed == true)
            #expect(try dave.getGroup("p").guid == "p", "a live invite shows the private group")
            let mine = try dave.myInvites().invites
            #expect(mine.map(\.guid) == ["p"] && mine.first?.scope == .moderator && mine.first?.invitedBy == "alice")
            #expect(mine.first?.group?.type == .private && mine.first?.group?.hasJoined == false)
            let listed = try alice.invites("p").invites
            #expect(listed.map(\.uid) == ["dave"] && listed.first?.name == "Dave" && listed.first?.group == nil)
            cast.checkInvariants("p")

            let accepted = try dave.acceptInvite("p")
            let action = try #require(accepted.action)
            #expect(action.action == .inviteAccepted && action.actionOn?.uid == "dave" && action.newScope == .moderator)
            #expect(accepted.group?.hasJoined == true && accepted.group?.scope == .moderator)
            #expect(accepted.group?.membersCount == 4)
            #expect(try dave.memberState("p").scope == .moderator)
            #expect(try alice.invites("p").invites.isEmpty && dave.myInvites().invites.isEmpty)
            #expect(stream.waitForSeq(action.seq))
            #expect(stream.actions.map(\.action) == [.invited, .inviteAccepted], "the invitee hears of both")
            cast.checkInvariants("p")
            // The log, replayed, makes dave a member from the acceptance on.
            var model = LogModel()
            model.apply(try cast.app.allActions("p"))
            #expect(model.contradictions.isEmpty, "\(model.contradictions)")
            #expect(model.isMember("dave", of: "p"))
        }

        @Test("a revoked invite: gone for the invitee; a moderator revokes participant invites only")
        func revoked() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            try Self.privateGroup(cast)
            let bob = try cast.user("bob")
            let dave = try cast.user("dave")
            try bob.invite("p", [("dave", .participant)])
            try cast.user("alice").invite("p", [("carol", .moderator)])
            expectFailure(
                failure { try bob.revokeInvite("p", "carol") }, .permissionDenied, "ERR_PERMISSION_DENIED",
                mentions: "bob")
            let revoked = try bob.revokeInvite("p", "dave")
            #expect(
                revoked.action == .inviteRevoked && revoked.actionOn?.uid == "dave" && revoked.oldScope == .participant)
            expectFailure(
                failure { try bob.revokeInvite("p", "dave") }, .notFound, "ERR_INVITE_NOT_FOUND", mentions: "dave")
            expectFailure(failure { try dave.getGroup("p") }, .notFound, "ERR_GROUP_NOT_FOUND")
            expectFailure(failure { try dave.acceptInvite("p") }, .notFound, "ERR_GROUP_NOT_FOUND")
            #expect(try dave.myInvites().invites.isEmpty)
            // The invitee reads the actions aimed at them, as for any target.
            let seen = try dave.actions("p").actions.map(\.action)
            #expect(seen == [.invited, .inviteRevoked])
            cast.checkInvariants("p")
        }

        @Test("an expired invite: live until expires_at, then not found; maintenance purges the row")
        func expired() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            try Self.privateGroup(cast)
            let dave = try cast.user("dave")
            try cast.user("alice").invite("p", [("dave", .participant)], expiresInMs: 60_000)
            try cast.user("alice").invite("g", [("dave", .participant)], expiresInMs: 60_000)
            cast.server.clock.advance(by: 59_000)
            #expect(try dave.myInvites().invites.count == 2)
            cast.server.clock.advance(by: 1_001)
            expectFailure(failure { try dave.getGroup("p") }, .notFound, "ERR_GROUP_NOT_FOUND")
            expectFailure(failure { try dave.acceptInvite("p") }, .notFound, "ERR_GROUP_NOT_FOUND")
            expectFailure(failure { try dave.acceptInvite("g") }, .notFound, "ERR_INVITE_NOT_FOUND", mentions: "dave")
            expectFailure(failure { try dave.declineInvite("g") }, .notFound, "ERR_INVITE_NOT_FOUND")
            #expect(try dave.myInvites().invites.isEmpty && cast.app.invites("p").invites.isEmpty)
            #expect(try cast.server.runMaintenance().purgedInvites == 2)
            expectFailure(
                failure { try cast.app.invite("g", [("dave", .participant)], expiresInMs: 31 * 86_400_000) },
                .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "expires_in_ms")
            cast.checkInvariants("p")
            cast.checkInvariants()
        }
    }
}
