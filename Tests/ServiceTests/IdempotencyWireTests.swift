import ModerationMessages
import ProtoBridge
import RPCCore
import RPCMessages
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// A mutation retried with the same idempotency key returns byte for byte the REPLY payload of the
    /// first call (status and response, read from a raw socket) and records no second action — also
    /// across a server restart on the same data.
    @Suite("Idempotency over the wire", .onEveryStore)
    struct IdempotencyWireTests {
        /// One mutating call as raw bytes: who makes it, the method's path and the encoded request.
        struct Mutation: Sendable, CustomTestStringConvertible {
            let name: String
            let actor: String
            let path: String
            let body: [UInt8]
            /// Whether the first call records an action.
            let recordsAction: Bool

            init<Request, Response>(
                _ name: String, as actor: String, _ method: ProtoMethod<Request, Response>, _ request: Request,
                recordsAction: Bool = true
            ) {
                self.name = name
                self.actor = actor
                path = method.path
                body = request.serializedBytes()
                self.recordsAction = recordsAction
            }

            var testDescription: String { name }
        }

        static let mutations: [Mutation] = [
            Mutation(
                "KickMember", as: "alice", ModerationMethods.kickMember, KickMemberRequest(guid: "g", uid: "carol")),
            Mutation(
                "BanMember", as: "alice", ModerationMethods.banMember,
                BanMemberRequest(guid: "g", uid: "carol", reason: "spam", durationMs: 3_600_000)),
            Mutation(
                "UnbanMember", as: "owner", ModerationMethods.unbanMember, UnbanMemberRequest(guid: "g", uid: "eve")),
            Mutation("JoinGroup", as: "dave", ModerationMethods.joinGroup, JoinGroupRequest(guid: "g")),
            Mutation("LeaveGroup", as: "carol", ModerationMethods.leaveGroup, LeaveGroupRequest(guid: "g")),
            Mutation(
                "ChangeMemberScope", as: "owner", ModerationMethods.changeMemberScope,
                ChangeMemberScopeRequest(guid: "g", uid: "carol", scope: .moderator)),
            Mutation(
                "TransferOwnership", as: "owner", ModerationMethods.transferOwnership,
                TransferOwnershipRequest(guid: "g", uid: "alice")),
            Mutation(
                "AddMembers", as: "bob", ModerationMethods.addMembers,
                AddMembersRequest(guid: "g", members: [MemberToAdd(uid: "dave", scope: .participant)])),
            Mutation(
                "BulkBanMembers", as: "alice", ModerationMethods.bulkBanMembers,
                BulkBanMembersRequest(guid: "g", uids: ["carol", "dave"])),
            Mutation(
                "UpdateGroup", as: "alice", ModerationMethods.updateGroup,
                UpdateGroupRequest(guid: "g", description: "retried")),
            Mutation(
                "CreateGroup", as: "dave", ModerationMethods.createGroup,
                CreateGroupRequest(guid: "h", name: "H", type: .public)),
            Mutation("DeleteGroup", as: "owner", ModerationMethods.deleteGroup, DeleteGroupRequest(guid: "g")),
            Mutation(
                "CreateUser", as: "", ModerationMethods.createUser, CreateUserRequest(uid: "frank", name: "Frank"),
                recordsAction: false),
            // A call that fails: the retry answers the same failure, even once it would succeed.
            Mutation(
                "KickMember refused", as: "alice", ModerationMethods.kickMember,
                KickMemberRequest(guid: "g", uid: "dave"), recordsAction: false),
        ]

        /// The whole REPLY payload (status and response) of `mutation` made with `key` as stream
        /// `streamID` on a raw connection.
        static func reply(_ mutation: Mutation, key: String, on connection: RawConnection, streamID: UInt32) throws
            -> [UInt8]
        {
            let header = CallHeader(
                method: mutation.path, timeoutMs: 10_000, onBehalfOf: mutation.actor, idempotencyKey: key)
            let frame = Frames.call(streamID: streamID, headerBytes: header.serializedBytes(), body: mutation.body)
            return try connection.roundTrip(frame, streamID: streamID).payload
        }

        /// Whether a REPLY payload carries OK (an empty status).
        static func isOK(_ payload: [UInt8]) -> Bool { payload.starts(with: [0, 0, 0, 0]) }

        @Test("a retry returns the same bytes and records nothing, also after a restart", arguments: mutations)
        func retry(_ mutation: Mutation) throws {
            let cast = try Cast()
            let directory = cast.server.directory
            defer { directory.remove() }
            try cast.app.createUser("eve")
            try cast.user("owner").ban("g", "eve")
            let key = "retry-\(mutation.name)"
            let connection = try cast.server.rawOpen()

            let before = try cast.app.markHead(owner: "owner")
            let first = try Self.reply(mutation, key: key, on: connection, streamID: 1)
            let afterFirst = try cast.app.markHead(owner: "owner")
            #expect(afterFirst - before > 1 || !mutation.recordsAction, "the first call recorded an action")
            #expect(
                Self.isOK(first) == (mutation.name != "KickMember refused"),
                "the first call's status: \(first.prefix(64))")

            // Let the state move on so that running the call again would give another answer.
            if mutation.name == "KickMember refused" { try cast.user("dave").join("g") }
            if mutation.name == "KickMember" || mutation.name == "LeaveGroup" { try cast.user("carol").join("g") }

            let again = try Self.reply(mutation, key: key, on: connection, streamID: 3)
            #expect(again == first, "the retry's REPLY payload differs from the first")
            let afterRetry = try cast.app.markHead(owner: "owner")
            #expect(
                afterRetry - afterFirst == 1
                    + (["KickMember refused", "KickMember", "LeaveGroup"].contains(mutation.name) ? 1 : 0),
                "the retry recorded an action")

            // A clean restart on the same data: the key is remembered.
            cast.server.stop()
            let server = try ModerationTestServer(directory: directory)
            defer { server.stop() }
            let fresh = try server.rawOpen()
            let afterRestart = try Self.reply(mutation, key: key, on: fresh, streamID: 1)
            #expect(afterRestart == first, "the retry's REPLY payload after a restart differs from the first")
            let app = try server.client()
            let head = try app.markHead(owner: "owner")
            #expect(head == afterRetry + 1, "nothing recorded by the retry after the restart")
        }

        @Test("a key belongs to its app and acting user; the action records it")
        func keyScope() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice").withKey("shared-key")
            let bob = try cast.user("bob").withKey("shared-key")
            let kicked = try alice.kick("g", "carol")
            #expect(kicked.idempotencyKey == "shared-key")
            #expect(try cast.app.actions("g", afterSeq: kicked.seq - 1).actions.first?.idempotencyKey == "shared-key")
            // The same key from bob is bob's own first call, not alice's reply.
            try cast.user("carol").join("g")
            let again = try bob.kick("g", "carol")
            #expect(again.seq > kicked.seq && again.actionBy?.uid == "bob")
            // And in another app it is that app's own.
            let b = try cast.server.client(app: .two)
            try b.createUser("alice")
            try b.createUser("carol")
            try b.createGroup("g", owner: "alice", members: [("carol", .participant)])
            let inB = try b.acting(as: "alice").withKey("shared-key").kick("g", "carol")
            #expect(inB.seq == 3 && inB.actionFor?.membersCount == 1)
        }
    }
}
