import ModerationMessages
import RPCCore
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// DeleteUser with invites, join requests and reports over real sockets: the user's pending invites and
    /// join requests go with them; the open reports they filed stay for the moderators.
    @Suite("DeleteUser with invites, join requests and reports over the wire", .onEveryStore)
    struct DeleteUserPhase2WireTests {
        @Test("deleting a user: pending invites and join requests go, open reports by them stay")
        func deletion() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice")
            let carol = try cast.user("carol")
            try cast.app.createGroup("p", type: .private, owner: "owner", members: [("alice", .admin)])
            try cast.app.createGroup("h", owner: "owner", members: [("alice", .admin)])
            try alice.setJoinRequests("h", true)
            try alice.invite("p", [("carol", .participant)])
            try carol.requestToJoin("h", message: "me too")
            let report = try #require(try carol.report("g", "bob", category: .spam, text: "kept").report)
            #expect(try carol.myInvites().invites.map(\.guid) == ["p"])

            let deleted = try carol.deleteUser("carol")
            #expect(deleted.groupsLeft == 1)
            #expect(try alice.invites("p").invites.isEmpty, "the pending invite went with her")
            #expect(try alice.joinRequests("h").joinRequests.isEmpty, "the pending join request too")
            let open = try alice.reports("g").reports
            #expect(open.map(\.reportID) == [report.reportID] && open.first?.reporter == "carol")
            #expect(open.first?.text == "kept", "her open report stays")
            #expect(try alice.resolveReport("g", report.reportID, .dismissed).report?.status == .resolved)
            // No action records the dropped invite or request: only "left" in g.
            let tail = try cast.app.allActions("h").map(\.action)
            #expect(tail.last == .joinRequested)
            for guid in ["g", "p", "h"] { cast.checkInvariants(guid) }
        }
    }
}
