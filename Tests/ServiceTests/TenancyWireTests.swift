import ModerationMessages
import RPCCore
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Two apps on one server: app B can neither see nor change anything of app A — users, groups,
    /// actions, events — and gets the same "not found" errors as for things that do not exist; the
    /// same uids and guids in both apps are different things.
    @Suite("Tenancy over the wire", .onEveryStore)
    struct TenancyWireTests {
        /// A server where app 1 has the cast (group "g", users owner…dave) and a private group "p".
        static func setUp() throws -> (Cast, ModerationWireClient) {
            let cast = try Cast()
            try cast.app.createGroup("p", type: .private, owner: "alice")
            return (cast, try cast.server.client(app: .two))
        }

        /// A call app B makes about something of app A, and the same call about nothing at all.
        struct Probe: Sendable, CustomTestStringConvertible {
            let name: String
            let call: @Sendable (ModerationWireClient, _ existing: Bool) throws -> Any

            var testDescription: String { name }
        }

        static let probes: [Probe] = [
            Probe(name: "GetUser") { b, existing in try b.getUser(existing ? "alice" : "zed") },
            Probe(name: "GetGroup") { b, existing in try b.getGroup(existing ? "g" : "nowhere") },
            Probe(name: "GetGroup private") { b, existing in try b.getGroup(existing ? "p" : "nowhere") },
            Probe(name: "ListMembers") { b, existing in try b.members(existing ? "g" : "nowhere") },
            Probe(name: "ListBannedMembers") { b, existing in try b.banned(existing ? "g" : "nowhere") },
            Probe(name: "ListGroupActions") { b, existing in try b.actions(existing ? "g" : "nowhere") },
            Probe(name: "JoinGroup") { b, existing in try b.acting(as: "carol").join(existing ? "g" : "nowhere") },
            Probe(name: "KickMember") { b, existing in try b.kick(existing ? "g" : "nowhere", "carol") },
            Probe(name: "BanMember") { b, existing in try b.ban(existing ? "g" : "nowhere", "carol") },
            Probe(name: "UpdateGroup") { b, existing in
                try b.updateGroup(UpdateGroupRequest(guid: existing ? "g" : "nowhere", name: "Mine"))
            },
            Probe(name: "DeleteGroup") { b, existing in try b.deleteGroup(existing ? "g" : "nowhere") },
            Probe(name: "AddMembers") { b, existing in
                try b.addMembers(existing ? "g" : "nowhere", [("carol", .participant)])
            },
            Probe(name: "GetMemberState") { b, existing in try b.memberState(existing ? "g" : "nowhere", "carol") },
            Probe(name: "Subscribe to groups") { b, existing in
                try b.subscribe(SubscribeRequest(guids: [existing ? "g" : "nowhere"], start: .afterSeq(0))).waitForEnd()
                    as Any
            },
            Probe(name: "Subscribe to a user") { b, existing in
                try b.subscribe(SubscribeRequest(userUID: existing ? "alice" : "zed", start: .afterSeq(0))).waitForEnd()
                    as Any
            },
        ]

        @Test("app B gets the same not-found errors for app A's things as for nothing", arguments: probes)
        func notVisible(_ probe: Probe) throws {
            let (cast, b) = try Self.setUp()
            defer { cast.tearDown() }
            let before = try cast.app.markHead(owner: "owner")
            let onA = Self.error { try probe.call(b, true) }
            let onNothing = Self.error { try probe.call(b, false) }
            #expect(onA != nil, "app B reached app A's data")
            #expect(
                onA?.code == onNothing?.code && onA?.errorCode == onNothing?.errorCode,
                "app A's thing: \(String(describing: onA)); nothing: \(String(describing: onNothing))")
            #expect(onA?.code == .notFound, "\(String(describing: onA))")
            // Nothing of app A changed.
            #expect(try cast.app.markHead(owner: "owner") == before + 1, "app A's log has no new action but the mark")
            #expect(try cast.app.getGroup("g").name == "Group g")
            cast.checkInvariants()
        }

        /// The error of a call whose result may be a stream's end (nil) or a thrown error.
        static func error(_ body: () throws -> Any) -> RPCError? {
            do {
                let result = try body()
                return result as? RPCError
            } catch let error as RPCError {
                return error
            } catch {
                return RPCError(code: .unknown, errorCode: "NOT_AN_RPC_ERROR", message: "\(error)")
            }
        }

        @Test("the same uids and guids in two apps do not collide; each app's log and events are its own")
        func sameNamesBothApps() throws {
            let (cast, b) = try Self.setUp()
            defer { cast.tearDown() }
            let wholeA = cast.app.subscribe(after: try cast.app.markHead(owner: "owner"))
            let wholeB = b.subscribe(after: 0)
            defer {
                wholeA.cancel()
                wholeB.cancel()
            }

            for uid in ["alice", "carol"] { try b.createUser(uid, name: "B's \(uid)") }
            let created = try b.createGroup("g", owner: "carol", members: [("alice", .moderator)], name: "B's g")
            #expect(created.group?.owner == "carol" && created.group?.membersCount == 2)
            let kicked = try b.acting(as: "carol").kick("g", "alice")
            #expect(kicked.seq == 3, "app B's log starts at 1 (created, added, kicked)")
            let bannedInA = try cast.user("owner").ban("g", "carol").action?.seq ?? 0

            // Each app sees its own.
            #expect(try b.getUser("alice").name == "B's alice" && cast.app.getUser("alice").name == "Alice")
            #expect(try b.getGroup("g").owner == "carol" && cast.app.getGroup("g").owner == "owner")
            #expect(try b.allMembers("g").map(\.uid) == ["carol"])
            #expect(Set(try cast.app.allMembers("g").map(\.uid)) == ["owner", "alice", "bob"])
            #expect(try b.allBanned("g").isEmpty && cast.app.allBanned("g").map(\.uid) == ["carol"])
            #expect(try b.actions("g").actions.map(\.action) == [.created, .added, .kicked])
            expectFailure(failure { try b.getGroup("p") }, .notFound, "ERR_GROUP_NOT_FOUND", mentions: "p")
            let listed = try b.call(ModerationMethods.listGroups, ListGroupsRequest(limit: 100))
            #expect(listed.groups.map(\.guid) == ["g"] && listed.groups.first?.name == "B's g")

            // And only its own events.
            #expect(wholeB.waitForSeq(kicked.seq) && wholeA.waitForSeq(bannedInA))
            #expect(
                wholeB.actions.map(\.seq) == [1, 2, 3] && wholeB.actions.allSatisfy { $0.actionFor?.name == "B's g" })
            #expect(wholeA.actions.map(\.seq) == [bannedInA] && wholeA.actions.first?.actionOn?.name == "Carol")
            cast.checkInvariants()
            #expect(WireInvariants.violations(b, guid: "g").isEmpty)
        }
    }
}
