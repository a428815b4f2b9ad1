import ModerationMessages
import RPCCore
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Join requests ("knock") over real sockets: one approved, one rejected, and one on a private
    /// group with requests off, which answers exactly as a missing group does.
    @Suite("Join requests over the wire", .onEveryStore)
    struct JoinRequestWireTests {
        @Test("a knock approved: the requester is a participant and hears of it on their own stream")
        func approved() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice")
            let dave = try cast.user("dave")
            expectFailure(
                failure { try dave.requestToJoin("g") }, .failedPrecondition, "ERR_JOIN_REQUESTS_DISABLED",
                mentions: "g")
            #expect(try alice.setJoinRequests("g", true).joinRequests)
            let stream = dave.subscribe(after: cast.headSeq)
            defer { stream.cancel() }
            let requested = try dave.requestToJoin("g", message: "hello")
            #expect(requested.action == .joinRequested && requested.actionOn?.uid == "dave")
            expectFailure(
                failure { try dave.requestToJoin("g") }, .alreadyExists, "ERR_ALREADY_REQUESTED", mentions: "dave")
            let pending = try cast.user("bob").joinRequests("g").joinRequests
            #expect(
                pending.map(\.uid) == ["dave"] && pending.first?.message == "hello" && pending.first?.name == "Dave")
            cast.checkInvariants()
            let approved = try cast.user("bob").approveJoinRequest("g", "dave")
            let action = try #require(approved.action)
            #expect(action.action == .joinRequestApproved && action.newScope == .participant)
            #expect(approved.group?.membersCount == 5)
            #expect(try dave.memberState("g").isMember)
            #expect(try alice.joinRequests("g").joinRequests.isEmpty)
            #expect(stream.waitForSeq(action.seq))
            #expect(
                stream.actions.map(\.action) == [.joinRequested, .joinRequestApproved],
                "not the update: dave was no member")
            var model = LogModel()
            model.apply(try cast.app.allActions("g"))
            #expect(model.contradictions.isEmpty, "\(model.contradictions)")
            #expect(model.isMember("dave", of: "g"))
            cast.checkInvariants()
        }

        @Test("a knock rejected: the reason travels with the action; the request is gone")
        func rejected() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice")
            let dave = try cast.user("dave")
            try alice.setJoinRequests("g", true)
            try dave.requestToJoin("g")
            expectFailure(
                failure { try cast.user("carol").rejectJoinRequest("g", "dave") }, .permissionDenied,
                "ERR_PERMISSION_DENIED", mentions: "carol")
            let rejected = try alice.rejectJoinRequest("g", "dave", reason: "full")
            #expect(
                rejected.action == .joinRequestRejected && rejected.reason == "full" && rejected.actionOn?.uid == "dave"
            )
            expectFailure(
                failure { try alice.approveJoinRequest("g", "dave") }, .notFound, "ERR_JOIN_REQUEST_NOT_FOUND",
                mentions: "dave")
            expectFailure(failure { try dave.cancelJoinRequest("g") }, .notFound, "ERR_JOIN_REQUEST_NOT_FOUND")
            #expect(try dave.actions("g").actions.map(\.action).suffix(2) == [.joinRequested, .joinRequestRejected])
            #expect(try !dave.memberState("g").isMember)
            cast.checkInvariants()
        }

        @Test("a private group with requests off answers as a missing group does")
        func privateWithRequestsOff() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            try cast.app.createGroup("p", type: .private, owner: "owner", members: [("alice", .admin)])
            let dave = try cast.user("dave")
            let hidden = failure { try dave.requestToJoin("p") }
            let missing = failure { try dave.requestToJoin("no-such-group") }
            expectFailure(hidden, .notFound, "ERR_GROUP_NOT_FOUND", mentions: "p")
            expectFailure(missing, .notFound, "ERR_GROUP_NOT_FOUND", mentions: "no-such-group")
            #expect(
                hidden?.message.replacing("group p ", with: "group no-such-group ") == missing?.message,
                "the same words for both")
            expectFailure(failure { try dave.cancelJoinRequest("p") }, .notFound, "ERR_GROUP_NOT_FOUND")
            // Turned on, the private group takes the knock; approving adds a participant.
            try cast.user("alice").setJoinRequests("p", true)
            try dave.requestToJoin("p")
            expectFailure(failure { try dave.getGroup("p") }, .notFound, "ERR_GROUP_NOT_FOUND")
            try cast.user("alice").approveJoinRequest("p", "dave")
            #expect(try dave.getGroup("p").hasJoined)
            cast.checkInvariants("p")
        }
    }
}
