import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Freezes (docs/SERVICE.md): admins freeze and unfreeze a group; while it is frozen only its
/// moderators and admins may post, and nothing else changes; `frozen` shows to everyone who sees
/// the group, its reason to admins, moderators and the app only.
@Suite("Freezes", .onEveryStore)
struct FreezeTests {
    /// Public group "g" owned by o with admin a, moderator m, participant p; x exists outside.
    static func setUp() throws -> ServiceHarness {
        let harness = try ServiceHarness()
        let app = harness.client()
        for uid in ["o", "a", "m", "p", "x"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o",
            members: [
                MemberGrant(uid: "a", scope: .admin), MemberGrant(uid: "m", scope: .moderator), MemberGrant(uid: "p"),
            ])
        return harness
    }

    @Test("while frozen participants may not post and moderators and above may; unfreezing ends it")
    func posting() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let admin = harness.client("a")
        let before = try admin.getGroup("g").group
        let frozen = try admin.freeze("g", reason: "raid in progress")
        #expect(
            frozen.action.kind == .frozen && frozen.action.reason == "raid in progress" && frozen.action.actionOn == nil
        )
        #expect(frozen.action.group.frozen && frozen.action.group.frozenReason.isEmpty, "snapshots carry no reason")
        #expect(frozen.group.group.frozen && frozen.group.group.frozenReason == "raid in progress")
        #expect(frozen.group.group.version == before.version + 1)
        for (uid, verdict) in [
            ("o", PostVerdict.allowed), ("a", .allowed), ("m", .allowed), ("p", PostVerdict(refusal: .groupFrozen)),
        ] {
            #expect(try harness.client(uid).checkPost("g") == verdict, "\(uid)")
        }
        #expect(try harness.client().checkPost("g", "p").refusal == .groupFrozen)
        #expect(ModerationClient.code { try admin.freeze("g") } == .alreadyFrozen)
        let thawed = try admin.unfreeze("g")
        #expect(
            thawed.action.kind == .unfrozen && !thawed.group.group.frozen && thawed.group.group.frozenReason.isEmpty)
        #expect(try harness.client("p").checkPost("g") == .allowed)
        #expect(ModerationClient.code { try admin.unfreeze("g") } == .groupNotFrozen)
        let log = try admin.actions("g").actions.suffix(2)
        #expect(log.map(\.kind) == [.frozen, .unfrozen])
        #expect(Array(log) == [frozen.action, thawed.action], "the log reads back what was recorded")
    }

    @Test("nothing else changes while frozen: join, leave, moderation and updates work; updates keep the freeze")
    func everythingElseWorks() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let owner = harness.client("o")
        try owner.freeze("g", reason: "calm")
        try harness.client("x").join("g")
        try harness.client("x").leave("g")
        try owner.kick("g", "p")
        try harness.client("p").join("g")
        try owner.mute("g", "p")
        try owner.changeScope("g", "p", to: .moderator)
        #expect(try harness.client("p").checkPost("g").refusal == .memberMuted, "a mute comes before the freeze")
        try owner.unmute("g", "p")
        #expect(try harness.client("p").checkPost("g") == .allowed, "a moderator posts in a frozen group")
        let updated = try owner.updateGroup(GroupUpdate(guid: "g", name: "Renamed"))
        #expect(updated.group.frozen && updated.group.frozenReason == "calm", "an update keeps the freeze")
        try harness.reopen()
        let reopened = try harness.client("o").getGroup("g").group
        #expect(reopened.frozen && reopened.frozenReason == "calm" && reopened.name == "Renamed")
    }

    @Test("frozen shows to everyone who sees the group; its reason to admins, moderators and the app")
    func visibility() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        try harness.client("a").freeze("g", reason: "cleanup")
        for (reader, seesReason) in [("o", true), ("a", true), ("m", true), ("p", false), ("x", false)] {
            let group = try harness.client(reader).getGroup("g").group
            #expect(group.frozen, "\(reader) sees the freeze")
            #expect(group.frozenReason == (seesReason ? "cleanup" : ""), "\(reader)")
            let listed = try #require(try harness.client(reader).listGroups().items.first { $0.group.guid == "g" })
            #expect(listed.group.frozen && listed.group.frozenReason == (seesReason ? "cleanup" : ""), "\(reader)")
        }
        #expect(try harness.client().getGroup("g").group.frozenReason == "cleanup")
        let joined = try harness.client("x").join("g")
        #expect(joined.group.group.frozen && joined.group.group.frozenReason.isEmpty)
    }

    @Test("arguments: reason ≤ 512; moderators and participants may not freeze")
    func argumentsAndRights() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let long = String(repeating: "r", count: 513)
        #expect(ModerationClient.code { try harness.client("o").freeze("g", reason: long) } == .invalidArgument)
        #expect(ModerationClient.code { try harness.client("m").freeze("g") } == .permissionDenied)
        #expect(ModerationClient.code { try harness.client("x").freeze("g") } == .groupNotJoined)
        #expect(ModerationClient.code { try harness.client("o").freeze("nope") } == .groupNotFound)
    }
}
