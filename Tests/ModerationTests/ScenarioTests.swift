import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// The seed scenarios: kick then rejoin; ban, refused rejoin, unban, rejoin; the banned list;
/// scope changes; ownership transfer; leave; delete. Invariants are checked after every step.
@Suite("Scenarios", .onEveryStore)
struct ScenarioTests {
    /// A harness with users owner, alice, bob, carol, dave and public group "g" owned by owner
    /// with alice (admin), bob (moderator), carol (participant).
    static func setUp() throws -> ServiceHarness {
        let harness = try ServiceHarness()
        let app = harness.client()
        for uid in ["owner", "alice", "bob", "carol", "dave"] {
            try app.createUser(uid, name: uid.prefix(1).uppercased() + uid.dropFirst())
        }
        try app.createGroup(
            "g", owner: "owner",
            members: [
                MemberGrant(uid: "alice", scope: .admin), MemberGrant(uid: "bob", scope: .moderator),
                MemberGrant(uid: "carol"),
            ])
        return harness
    }

    static func check(
        _ harness: ServiceHarness, _ guid: String = "g", sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let broken = Invariants.violations(service: harness.service, store: harness.store, app: "app", guid: guid)
        #expect(broken.isEmpty, "\(broken)", sourceLocation: sourceLocation)
    }

    @Test func kickThenRejoin() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let bob = harness.client("bob")
        let carol = harness.client("carol")
        let kicked = try bob.kick("g", "carol")
        #expect(kicked.kind == .kicked && kicked.actionBy.uid == "bob" && kicked.actionOn?.uid == "carol")
        #expect(kicked.oldScope == .participant && kicked.group.membersCount == 3)
        Self.check(harness)
        #expect(ModerationClient.code { try carol.listMembers("g") } == .groupNotJoined)
        let rejoined = try carol.join("g")
        #expect(
            rejoined.group.hasJoined && rejoined.group.scope == .participant && rejoined.group.group.membersCount == 4)
        Self.check(harness)
        #expect(try harness.client("owner").listBanned("g").items.isEmpty, "a kick never shows in the banned list")
    }

    @Test func banRefusedRejoinUnbanRejoin() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let alice = harness.client("alice")
        let carol = harness.client("carol")
        let banned = try alice.ban("g", "carol", reason: "spam")
        #expect(
            banned.changed && banned.ban.scopeBefore == .participant && banned.ban.reason == "spam"
                && banned.ban.bannedBy == "alice")
        #expect(banned.action?.kind == .banned && banned.action?.group.membersCount == 3)
        Self.check(harness)
        #expect(ModerationClient.code { try carol.join("g") } == .bannedGroupMember)
        #expect(ModerationClient.code { try carol.getGroup("g") } == .bannedGroupMember)
        #expect(ModerationClient.code { try alice.ban("g", "carol") } == .alreadyBanned)
        let again = try alice.ban("g", "carol", reason: "other", ifNotBanned: true)
        #expect(
            !again.changed && again.action == nil && again.ban.reason == "spam" && again.ban.name == "Carol",
            "the ban in force")
        let state = try alice.memberState("g", "carol")
        #expect(!state.isMember && state.isBanned && state.ban?.reason == "spam")
        let added = try alice.addMembers("g", [MemberGrant(uid: "carol")])
        #expect(added.results["carol"]?.error?.code == .bannedGroupMember, "adding never unbans")
        let unbanned = try alice.unban("g", "carol")
        #expect(unbanned.changed && unbanned.action?.kind == .unbanned && unbanned.action?.oldScope == .participant)
        #expect(try alice.memberState("g", "carol").isMember == false, "unbanning does not re-add")
        Self.check(harness)
        try carol.join("g")
        Self.check(harness)
        #expect(try alice.listBanned("g").items.isEmpty)
    }

    @Test func bannedListWithLimitAndSearch() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        for index in 0..<12 {
            try app.createUser("spammer-\(index)", name: index % 3 == 0 ? "Loud Spammer \(index)" : "Quiet \(index)")
        }
        let owner = harness.client("owner")
        for index in 0..<12 { try owner.ban("g", "spammer-\(index)") }
        Self.check(harness)
        let first = try owner.listBanned("g", ListBannedOptions(limit: 5))
        #expect(first.items.count == 5 && !first.nextCursor.isEmpty)
        #expect(first.items.first?.uid == "spammer-11", "newest ban first")
        var all = first.items
        var cursor = first.nextCursor
        while !cursor.isEmpty {
            let page = try owner.listBanned("g", ListBannedOptions(limit: 5, cursor: cursor))
            all += page.items
            cursor = page.nextCursor
        }
        #expect(all.map(\.uid) == (0..<12).reversed().map { "spammer-\($0)" })
        let loud = try owner.listBanned("g", ListBannedOptions(search: "LOUD"))
        #expect(Set(loud.items.map(\.uid)) == ["spammer-0", "spammer-3", "spammer-6", "spammer-9"])
        let byUID = try owner.listBanned("g", ListBannedOptions(search: "er-1"))
        #expect(Set(byUID.items.map(\.uid)) == ["spammer-1", "spammer-10", "spammer-11"])
        #expect(try owner.listBanned("g", ListBannedOptions(search: "nobody")).items.isEmpty)
        #expect(ModerationClient.code { try harness.client("carol").listBanned("g") } == .permissionDenied)
    }

    @Test func scopeChanges() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("owner")
        let alice = harness.client("alice")
        let bob = harness.client("bob")
        let promoted = try owner.changeScope("g", "carol", to: .moderator)
        #expect(
            promoted.member.scope == .moderator && promoted.action.oldScope == .participant
                && promoted.action.newScope == .moderator)
        Self.check(harness)
        #expect(
            ModerationClient.code { try bob.kick("g", "carol") } == .permissionDenied,
            "a moderator cannot kick a moderator")
        #expect(
            ModerationClient.code { try bob.changeScope("g", "carol", to: .participant) } == .permissionDenied,
            "moderators cannot change scopes")
        try alice.changeScope("g", "carol", to: .participant)
        #expect(
            ModerationClient.code { try alice.changeScope("g", "carol", to: .admin) } == .permissionDenied,
            "only the owner grants admin")
        try owner.changeScope("g", "carol", to: .admin)
        #expect(
            ModerationClient.code { try alice.changeScope("g", "carol", to: .moderator) } == .permissionDenied,
            "an admin does not outrank an admin")
        try owner.changeScope("g", "alice", to: .participant)
        Self.check(harness)
        #expect(try owner.memberState("g", "alice").scope == .participant)
        #expect(ModerationClient.code { try harness.client("alice").kick("g", "bob") } == .permissionDenied)
    }

    @Test func ownershipTransfer() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("owner")
        let carol = harness.client("carol")
        #expect(ModerationClient.code { try owner.transfer("g", to: "dave") } == .notAMember)
        let transferred = try owner.transfer("g", to: "carol")
        #expect(transferred.group.group.owner == "carol" && transferred.action.kind == .ownershipTransferred)
        #expect(transferred.action.oldScope == .participant && transferred.action.newScope == .admin)
        Self.check(harness)
        #expect(try carol.memberState("g", "owner").scope == .admin, "the old owner stays an admin")
        #expect(try carol.memberState("g", "carol").isOwner)
        #expect(ModerationClient.code { try carol.leave("g") } == .ownerCannotLeave)
        #expect(
            ModerationClient.code { try owner.transfer("g", to: "alice") } == .permissionDenied,
            "the old owner lost the right")
        try owner.leave("g")
        Self.check(harness)
        try harness.client().transfer("g", to: "alice")
        #expect(try harness.client().getGroup("g").group.owner == "alice")
        Self.check(harness)
    }

    @Test func leave() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let bob = harness.client("bob")
        let left = try bob.leave("g")
        #expect(
            left.kind == .left && left.actionOn?.uid == "bob" && left.oldScope == .moderator
                && left.group.membersCount == 3)
        #expect(ModerationClient.code { try bob.leave("g") } == .groupNotJoined)
        #expect(ModerationClient.code { try harness.client().leave("g") } == .invalidArgument)
        Self.check(harness)
    }

    @Test func delete() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("owner")
        try owner.ban("g", "dave")
        let before = try owner.getGroup("g").group
        #expect(ModerationClient.code { try harness.client("alice").deleteGroup("g") } == .permissionDenied)
        let deleted = try owner.deleteGroup("g")
        #expect(deleted.kind == .deleted && deleted.actionOn == nil)
        #expect(deleted.group == before, "the snapshot is the group as it was before deletion")
        #expect(ModerationClient.code { try owner.getGroup("g") } == .groupNotFound)
        #expect(try harness.client().listGroups().items.isEmpty)
        // The actions stay in the app's log; the guid can be used again, by a fresh group.
        let logged = try harness.service.withActionLog(app: "app") { (log: ActionLogSnapshot) throws(ModerationError) in
            try log.actions(afterSeq: 0, limit: 100)
        }
        #expect(logged.last?.kind == .deleted && logged.last?.group.guid == "g")
        #expect(
            try harness.service.withActionLog(app: "app") { (log: ActionLogSnapshot) throws(ModerationError) in
                try log.groups(of: "carol")
            }.isEmpty)
        try harness.client().createGroup("g", owner: "dave")
        #expect(try harness.client("dave").getGroup("g").group.membersCount == 1)
        #expect(
            try harness.client("dave").actions("g").actions.map(\.kind) == [.created],
            "the old group's log is not the new one's")
        Self.check(harness)
    }

    @Test func preemptiveBan() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let bob = harness.client("bob")
        let banned = try bob.ban("g", "dave", durationMs: 60_000)
        #expect(banned.ban.scopeBefore == nil && banned.ban.joinedAt == 0 && banned.action?.oldScope == nil)
        #expect(banned.ban.expiresAt == banned.ban.bannedAt + 60_000)
        #expect(try bob.getGroup("g").group.membersCount == 4, "a non-member's ban removes nobody")
        #expect(ModerationClient.code { try harness.client("dave").join("g") } == .bannedGroupMember)
        #expect(ModerationClient.code { try bob.ban("g", "ghost") } == .uidNotFound, "the target must exist")
        // Unban of a pre-emptive ban: rank against a non-member always passes.
        try bob.unban("g", "dave")
        try harness.client("dave").join("g")
        Self.check(harness)
    }

    @Test func addMembersGrants() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["u1", "u2", "u3", "u4"] { try app.createUser(uid) }
        let bob = harness.client("bob")
        let byModerator = try bob.addMembers(
            "g",
            [
                MemberGrant(uid: "u1"), MemberGrant(uid: "u2", scope: .moderator), MemberGrant(uid: "ghost"),
                MemberGrant(uid: "carol"),
            ])
        #expect(byModerator.results["u1"]?.changed == true && byModerator.results["u1"]?.seq ?? 0 > 0)
        #expect(byModerator.results["u2"]?.error?.code == .permissionDenied)
        #expect(byModerator.results["ghost"]?.error?.code == .uidNotFound)
        #expect(byModerator.results["carol"]?.error?.code == .alreadyJoined)
        #expect(byModerator.group.group.membersCount == 5)
        let byAdmin = try harness.client("alice").addMembers(
            "g", [MemberGrant(uid: "u2", scope: .moderator), MemberGrant(uid: "u3", scope: .admin)])
        #expect(byAdmin.results["u2"]?.ok == true && byAdmin.results["u3"]?.error?.code == .permissionDenied)
        let byOwner = try harness.client("owner").addMembers("g", [MemberGrant(uid: "U3", scope: .admin)])
        #expect(byOwner.results["u3"]?.ok == true, "uids are lower-cased, results keyed by the lower-cased uid")
        #expect(
            ModerationClient.code { try harness.client("carol").addMembers("g", [MemberGrant(uid: "u4")]) }
                == .permissionDenied)
        #expect(ModerationClient.code { try bob.addMembers("g", []) } == .invalidArgument)
        #expect(
            ModerationClient.code { try bob.addMembers("g", [MemberGrant(uid: "u4"), MemberGrant(uid: "U4")]) }
                == .invalidArgument)
        let log = try bob.actions("g", ListActionsOptions(kinds: [.added]))
        #expect(log.actions.suffix(3).map { $0.actionOn?.uid } == ["u1", "u2", "u3"])
        Self.check(harness)
    }

    @Test func createGroupRules() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let dave = harness.client("dave")
        let created = try dave.createGroup(
            "mine",
            members: [MemberGrant(uid: "alice", scope: .admin), MemberGrant(uid: "dave"), MemberGrant(uid: "ghost")],
            bans: ["carol", "nobody"])
        #expect(created.group.hasJoined && created.group.scope == .admin && created.group.group.owner == "dave")
        #expect(created.results["alice"]?.changed == true && created.results["dave"]?.error?.code == .alreadyJoined)
        #expect(
            created.results["ghost"]?.error?.code == .uidNotFound
                && created.results["nobody"]?.error?.code == .uidNotFound)
        #expect(created.results["carol"]?.changed == true && created.group.group.membersCount == 2)
        let log = try dave.actions("mine")
        #expect(log.actions.map(\.kind) == [.created, .added, .banned])
        #expect(log.actions[0].actionOn?.uid == "dave" && log.actions[0].newScope == .admin)
        Self.check(harness, "mine")
        #expect(ModerationClient.code { try dave.createGroup("other", owner: "alice") } == .permissionDenied)
        #expect(
            ModerationClient.code { try app.createGroup("other") } == .invalidArgument, "the app must name the owner")
        #expect(ModerationClient.code { try app.createGroup("other", owner: "ghost") } == .uidNotFound)
        #expect(
            ModerationClient.code {
                try app.createGroup("other", owner: "dave", members: [MemberGrant(uid: "bob")], bans: ["bob"])
            }
                == .invalidArgument)
        #expect(
            ModerationClient.code { try app.createGroup("other", owner: "dave", bans: ["dave"]) } == .invalidArgument)
        #expect(
            ModerationClient.code { try app.createGroup("other", type: .password, owner: "dave") } == .invalidArgument)
        #expect(
            ModerationClient.code { try app.createGroup("other", password: "x", owner: "dave") } == .invalidArgument)
        #expect(
            ModerationClient.code { try harness.client("ghost").createGroup("other") } == .uidNotFound,
            "a missing creator is a missing owner")
        let byApp = try app.createGroup("other", owner: "dave")
        #expect(!byApp.group.hasJoined, "the app is not a member")
        #expect(try app.actions("other").actions.first?.actionBy.uid == User.appUID)
    }

    @Test func updateGroupRules() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let bob = harness.client("bob")
        let alice = harness.client("alice")
        let version = try bob.getGroup("g").group.version
        let renamed = try bob.updateGroup(
            GroupUpdate(guid: "g", name: "Renamed", description: "About", metadata: ["k": "v"], tags: ["a", "b"]))
        #expect(
            renamed.group.name == "Renamed" && renamed.group.tags == ["a", "b"] && renamed.group.version == version + 1)
        let same = try bob.updateGroup(GroupUpdate(guid: "g", name: "Renamed"))
        #expect(same.group.version == version + 1, "a change to the same values changes nothing")
        #expect(try bob.actions("g", ListActionsOptions(kinds: [.updated])).actions.count == 1)
        #expect(
            ModerationClient.code { try bob.updateGroup(GroupUpdate(guid: "g", type: .private)) } == .permissionDenied)
        #expect(
            ModerationClient.code { try alice.updateGroup(GroupUpdate(guid: "g", type: .password)) }
                == .invalidArgument,
            "switching to password needs a password")
        #expect(
            ModerationClient.code { try alice.updateGroup(GroupUpdate(guid: "g", name: "x", ifVersion: version)) }
                == .versionConflict)
        try alice.updateGroup(GroupUpdate(guid: "g", type: .password, password: "pw", ifVersion: version + 1))
        #expect(ModerationClient.code { try harness.client("dave").join("g", password: "nope") } == .wrongGroupPass)
        try harness.client("dave").join("g", password: "pw")
        #expect(ModerationClient.code { try alice.updateGroup(GroupUpdate(guid: "g")) } == .invalidArgument)
        #expect(ModerationClient.code { try alice.updateGroup(GroupUpdate(guid: "g", name: "")) } == .invalidArgument)
        let updated = try alice.actions("g", ListActionsOptions(kinds: [.updated])).actions
        #expect(updated.allSatisfy { $0.actionOn == nil })
        #expect(updated.last?.group.type == .password)
        Self.check(harness)
    }

    @Test func usersAndViews() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let carol = harness.client("carol")
        let user = try carol.updateUser(UserUpdate(uid: "carol", name: "Caroline", metadata: ["lang": "fr"]))
        #expect(user.name == "Caroline" && user.metadata == ["lang": "fr"])
        #expect(try harness.client().getUser("CAROL").name == "Caroline")
        #expect(ModerationClient.code { try carol.updateUser(UserUpdate(uid: "dave", name: "x")) } == .permissionDenied)
        #expect(
            ModerationClient.code { try harness.client().updateUser(UserUpdate(uid: "ghost", name: "x")) }
                == .uidNotFound)
        try harness.client().updateUser(UserUpdate(uid: "dave", avatar: "https://example.com/d.png"))
        let view = try carol.getGroup("g")
        #expect(view.hasJoined && view.scope == .participant && view.joinedAt > 0 && !view.isBanned)
        let outsider = try harness.client("dave").getGroup("g")
        #expect(!outsider.hasJoined && outsider.scope == nil && outsider.joinedAt == 0)
        let members = try carol.listMembers("g", ListMembersOptions(search: "caro"))
        #expect(members.items.map(\.name) == ["Caroline"], "members show the current profile")
        let ghost = harness.client("ghost")
        #expect(try ghost.getGroup("g").hasJoined == false, "a missing acting user is a non-member")
        #expect(ModerationClient.code { try ghost.listMembers("g") } == .groupNotJoined)
        #expect(ModerationClient.code { try ghost.join("g") } == .uidNotFound)
    }
}
