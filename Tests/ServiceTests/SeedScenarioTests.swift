import ModerationMessages
import RPCCore
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// The seed scenarios end to end over real sockets: every step is a call on the wire, checked
    /// against the reply, the action it recorded and the state read back; invariants after each.
    @Suite("Seed scenarios over the wire", .onEveryStore)
    struct SeedScenarioTests {
        @Test("kick, then the kicked member rejoins")
        func kickThenRejoin() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let bob = try cast.user("bob")
            let carol = try cast.user("carol")
            let kicked = try bob.kick("g", "carol")
            #expect(kicked.action == .kicked && kicked.actionBy?.uid == "bob" && kicked.actionOn?.uid == "carol")
            #expect(kicked.oldScope == .participant && kicked.actionFor?.membersCount == 3 && kicked.seq > cast.headSeq)
            cast.checkInvariants()
            expectFailure(
                failure { try carol.members("g") }, .permissionDenied, "ERR_GROUP_NOT_JOINED", mentions: "carol")
            let rejoined = try carol.join("g")
            let group = try #require(rejoined.group)
            #expect(group.hasJoined && group.scope == .participant && group.membersCount == 4)
            #expect(rejoined.action?.action == .joined && rejoined.action?.actionOn?.uid == "carol")
            #expect(try cast.user("owner").banned("g").bannedMembers.isEmpty, "a kick never shows in the banned list")
            cast.checkInvariants()
        }

        @Test("ban, rejoin refused, unban, rejoin")
        func banUnbanRejoin() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice")
            let carol = try cast.user("carol")
            let banned = try alice.ban("g", "carol", reason: "spam")
            let ban = try #require(banned.ban)
            #expect(
                banned.changed && ban.scope == .participant && ban.reason == "spam" && ban.bannedBy == "alice"
                    && ban.expiresAt == 0)
            #expect(banned.action?.action == .banned && banned.action?.actionFor?.membersCount == 3)
            cast.checkInvariants()
            expectFailure(
                failure { try carol.join("g") }, .permissionDenied, "ERR_BANNED_GROUPMEMBER", mentions: "carol")
            expectFailure(
                failure { try carol.getGroup("g") }, .permissionDenied, "ERR_BANNED_GROUPMEMBER", mentions: "carol")
            let state = try alice.memberState("g", "carol")
            #expect(!state.isMember && state.isBanned && state.ban?.reason == "spam")
            let added = try alice.addMembers("g", [("carol", .participant)])
            #expect(
                added.results["carol"]?.ok == false && added.results["carol"]?.errorCode == "ERR_BANNED_GROUPMEMBER",
                "adding never unbans")

            let unbanned = try alice.unban("g", "carol")
            #expect(
                unbanned.changed && unbanned.action?.action == .unbanned && unbanned.action?.oldScope == .participant)
            #expect(try alice.memberState("g", "carol").isMember == false, "unbanning does not re-add")
            cast.checkInvariants()
            try carol.join("g")
            #expect(try alice.banned("g").bannedMembers.isEmpty)
            cast.checkInvariants()
        }

        @Test("the banned list: limit, search and cursor paging, newest first")
        func bannedList() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            for index in 0..<12 {
                try cast.app.createUser(
                    "spammer-\(index)", name: index % 3 == 0 ? "Loud Spammer \(index)" : "Quiet \(index)")
            }
            let owner = try cast.user("owner")
            for index in 0..<12 { try owner.ban("g", "spammer-\(index)", reason: "spam \(index)") }
            cast.checkInvariants()

            let first = try owner.banned("g", limit: 5)
            #expect(first.bannedMembers.count == 5 && !first.nextCursor.isEmpty)
            var all = first.bannedMembers
            var cursor = first.nextCursor
            while !cursor.isEmpty {
                let page = try owner.banned("g", limit: 5, cursor: cursor)
                all += page.bannedMembers
                cursor = page.nextCursor
            }
            // Newest ban first; bans made within the same millisecond by uid.
            let ordered = all.sorted { ($0.bannedAt, $1.uid) > ($1.bannedAt, $0.uid) }
            #expect(all.map(\.uid) == ordered.map(\.uid))
            #expect(Set(all.map(\.uid)) == Set((0..<12).map { "spammer-\($0)" }) && all.count == 12)
            #expect(all.allSatisfy { $0.bannedBy == "owner" && $0.reason == "spam \($0.uid.dropFirst(8))" })
            let loud = try owner.banned("g", search: "LOUD")
            #expect(
                Set(loud.bannedMembers.map(\.uid)) == ["spammer-0", "spammer-3", "spammer-6", "spammer-9"]
                    && loud.nextCursor.isEmpty)
            let matching = all.map(\.uid).filter { $0.hasPrefix("spammer-1") }
            let byUID = try owner.banned("g", limit: 2, search: "spammer-1")
            #expect(byUID.bannedMembers.map(\.uid) == Array(matching.prefix(2)) && !byUID.nextCursor.isEmpty)
            let rest = try owner.banned("g", limit: 2, cursor: byUID.nextCursor, search: "spammer-1")
            #expect(rest.bannedMembers.map(\.uid) == Array(matching.dropFirst(2)) && rest.nextCursor.isEmpty)
            expectFailure(
                failure { try cast.user("carol").banned("g") }, .permissionDenied, "ERR_PERMISSION_DENIED",
                mentions: "g")
            #expect(try cast.user("bob").banned("g").bannedMembers.count == 12, "moderators may read the banned list")
        }

        @Test("scope changes: who may grant what")
        func scopeChanges() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let owner = try cast.user("owner")
            let alice = try cast.user("alice")
            let bob = try cast.user("bob")
            let promoted = try alice.changeScope("g", "carol", to: .moderator)
            #expect(
                promoted.action?.action == .scopeChanged && promoted.action?.oldScope == .participant
                    && promoted.action?.newScope == .moderator)
            #expect(promoted.member?.uid == "carol" && promoted.member?.scope == .moderator)
            expectFailure(
                failure { try alice.changeScope("g", "carol", to: .admin) }, .permissionDenied, "ERR_PERMISSION_DENIED",
                mentions: "carol")
            expectFailure(
                failure { try bob.changeScope("g", "carol", to: .participant) }, .permissionDenied,
                "ERR_PERMISSION_DENIED", mentions: "g")
            try owner.changeScope("g", "carol", to: .admin)
            expectFailure(
                failure { try owner.changeScope("g", "carol", to: .admin) }, .failedPrecondition, "ERR_SAME_SCOPE",
                mentions: "carol")
            expectFailure(
                failure { try alice.changeScope("g", "owner", to: .moderator) }, .permissionDenied,
                "ERR_CANNOT_CHANGE_OWNER_SCOPE", mentions: "owner")
            expectFailure(
                failure { try alice.changeScope("g", "carol", to: .participant) }, .permissionDenied,
                "ERR_PERMISSION_DENIED", mentions: "carol")
            let admins = try owner.members("g", scopes: [.admin])
            #expect(Set(admins.members.map(\.uid)) == ["owner", "alice", "carol"])
            #expect(try owner.members("g", scopes: [.moderator]).members.map(\.uid) == ["bob"])
            cast.checkInvariants()
        }

        @Test("ownership transfer; the old owner stays an admin and may then leave")
        func ownershipTransfer() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let owner = try cast.user("owner")
            let carol = try cast.user("carol")
            expectFailure(
                failure { try cast.user("alice").transfer("g", to: "carol") }, .permissionDenied,
                "ERR_PERMISSION_DENIED", mentions: "g")
            expectFailure(
                failure { try owner.transfer("g", to: "dave") }, .failedPrecondition, "ERR_NOT_A_MEMBER",
                mentions: "dave")
            expectFailure(
                failure { try owner.transfer("g", to: "owner") }, .failedPrecondition, "ERR_GROUP_NO_SELF_ACTION",
                mentions: "owner")
            let transferred = try owner.transfer("g", to: "carol")
            #expect(transferred.action?.action == .ownershipTransferred && transferred.action?.actionOn?.uid == "carol")
            #expect(transferred.action?.oldScope == .participant && transferred.action?.newScope == .admin)
            #expect(transferred.group?.owner == "carol")
            let members = Dictionary(uniqueKeysWithValues: try cast.app.allMembers("g").map { ($0.uid, $0.scope) })
            #expect(members["carol"] == .admin && members["owner"] == .admin)
            #expect(try carol.memberState("g").isOwner)
            cast.checkInvariants()
            expectFailure(
                failure { try carol.leave("g") }, .failedPrecondition, "ERR_OWNER_CANNOT_LEAVE", mentions: "carol")
            try owner.leave("g")
            expectFailure(
                failure { try carol.kick("g", "owner") }, .failedPrecondition, "ERR_NOT_A_MEMBER", mentions: "owner")
            cast.checkInvariants()
        }

        @Test("leave: a member leaves; the owner cannot; leaving twice is refused")
        func leave() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let carol = try cast.user("carol")
            let left = try carol.leave("g")
            #expect(
                left.action == .left && left.actionBy?.uid == "carol" && left.actionOn?.uid == "carol"
                    && left.oldScope == .participant)
            #expect(left.actionFor?.membersCount == 3)
            expectFailure(
                failure { try carol.leave("g") }, .permissionDenied, "ERR_GROUP_NOT_JOINED", mentions: "carol")
            expectFailure(
                failure { try cast.user("owner").leave("g") }, .failedPrecondition, "ERR_OWNER_CANNOT_LEAVE",
                mentions: "owner")
            let kinds = try cast.app.allActions("g").map(\.action)
            #expect(kinds.filter { $0 == .left }.count == 1 && !kinds.contains(.kicked), "leaving is not kicking")
            cast.checkInvariants()
        }

        @Test("delete: the owner only; the group is gone with its members and bans")
        func delete() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let owner = try cast.user("owner")
            try owner.ban("g", "dave")
            expectFailure(
                failure { try cast.user("alice").deleteGroup("g") }, .permissionDenied, "ERR_PERMISSION_DENIED",
                mentions: "g")
            let deleted = try owner.deleteGroup("g")
            #expect(deleted.action == .deleted && deleted.actionBy?.uid == "owner" && deleted.actionOn == nil)
            expectFailure(failure { try cast.app.getGroup("g") }, .notFound, "ERR_GROUP_NOT_FOUND", mentions: "g")
            expectFailure(failure { try owner.members("g") }, .notFound, "ERR_GROUP_NOT_FOUND", mentions: "g")
            expectFailure(failure { try owner.deleteGroup("g") }, .notFound, "ERR_GROUP_NOT_FOUND", mentions: "g")
            // The guid is free again, with nobody in it and nobody banned.
            try cast.app.createGroup("g", owner: "alice")
            #expect(try cast.app.allMembers("g").map(\.uid) == ["alice"])
            try cast.user("dave").join("g")
            cast.checkInvariants()
        }

        enum JoinCase: String, CaseIterable, Sendable {
            case publicGroup, passwordEmpty, passwordWrong, passwordRight, privateGroup, alreadyMember, unknownGroup
        }

        @Test("join: public, password (empty, wrong, right), private", arguments: JoinCase.allCases)
        func join(_ kind: JoinCase) throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            try cast.app.createGroup("pw", type: .password, password: "open sesame", owner: "owner")
            try cast.app.createGroup("priv", type: .private, owner: "owner")
            let dave = try cast.user("dave")
            let (guid, password, expected): (String, String, (StatusCode, String)?) =
                switch kind {
                case .publicGroup: ("g", "", nil)
                case .passwordEmpty: ("pw", "", (.invalidArgument, "ERR_EMPTY_GROUP_PASS"))
                case .passwordWrong: ("pw", "open says me", (.permissionDenied, "ERR_WRONG_GROUP_PASS"))
                case .passwordRight: ("pw", "open sesame", nil)
                case .privateGroup: ("priv", "", (.permissionDenied, "ERR_GROUP_JOIN_NOT_ALLOWED"))
                case .alreadyMember: ("g", "", nil)
                case .unknownGroup: ("nowhere", "", (.notFound, "ERR_GROUP_NOT_FOUND"))
                }
            if kind == .alreadyMember {
                try dave.join("g")
                expectFailure(failure { try dave.join("g") }, .alreadyExists, "ERR_ALREADY_JOINED", mentions: "dave")
                return
            }
            let before = try cast.app.getGroup(guid == "nowhere" ? "g" : guid).membersCount
            let outcome = failure { try dave.join(guid, password: password) }
            if let (status, code) = expected {
                expectFailure(outcome, status, code, mentions: guid)
                #expect(
                    try cast.app.getGroup(guid == "nowhere" ? "g" : guid).membersCount == before,
                    "a refused join changes nothing")
            } else {
                #expect(outcome == nil, "\(String(describing: outcome))")
                #expect(try dave.getGroup(guid).hasJoined)
                #expect(try cast.app.getGroup(guid).membersCount == before + 1)
            }
            cast.checkInvariants(guid == "nowhere" ? "g" : guid)
        }
    }
}
