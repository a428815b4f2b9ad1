public import Moderation
public import TestSupport
import Testing

/// What the migration tests check on a store rebuilt from an `UpgradeFixture` and opened (so
/// upgraded) by this build, the same on both stores: the release's data reads as it was written,
/// its idempotent replies still replay, writes go on without a gap in the log, and the new
/// features (mutes, freezes, CheckPost, DeleteUser, the mute sweeper; invites, join requests,
/// reports; bans from the app; webhooks) work on its rows.
public enum UpgradedStoreChecks {
    /// What the fixture's store held, read from it before the upgrade.
    public struct Log: Sendable {
        /// The head seq of the fixture's app.
        public let headSeq: UInt64
        /// How many actions group "lobby" has.
        public let lobbyActions: Int
        /// The stored reply of the idempotent KickMember (key "fixture-kick", by olga).
        public let kickReply: [UInt8]

        /// - Parameter kickReplyHex: the reply as hex digits (either case).
        public init(headSeq: UInt64, lobbyActions: Int, kickReplyHex: String) {
            self.headSeq = headSeq
            self.lobbyActions = lobbyActions
            let digits = Array(kickReplyHex.utf8).compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
                default: nil
                }
            }
            kickReply = stride(from: 0, to: digits.count - 1, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
        }
    }

    /// Runs the checks against `service` over the upgraded `store`; `clock` is the service's,
    /// set inside the fixture's idempotency window (it is moved forward here).
    public static func run(
        service: ModerationService, store: some ModerationStore, clock: ManualWallClock, app: String, fixture: Log
    ) throws {
        let admin = ModerationClient(service: service, caller: Caller(app: app), store: store)
        func user(_ uid: String) -> ModerationClient {
            ModerationClient(service: service, caller: Caller(app: app, actor: uid), store: store)
        }

        // The release's data reads as it was written.
        let olga = try admin.getUser("olga")
        #expect(olga.name == "Olga Ørn" && olga.avatar == "https://example.com/olga.png")
        #expect(olga.metadata == ["team": "blue"])
        let lobby = try admin.getGroup("lobby").group
        #expect(lobby.description == "Say hello" && lobby.tags == ["general"] && lobby.metadata == ["topic": "hello"])
        #expect(lobby.owner == "olga" && lobby.membersCount == 4 && !lobby.frozen && lobby.frozenReason.isEmpty)
        let members = try admin.listMembers("lobby").items
        #expect(members.map(\.uid).sorted() == ["amir", "mona", "olga", "pia"])
        #expect(members.first { $0.uid == "mona" }?.scope == .moderator && members.allSatisfy { $0.mute == nil })
        #expect(try admin.listBanned("lobby").items.map(\.uid) == ["tess", "bert"])
        let vault = try admin.getGroup("vault").group
        #expect(vault.type == .private && vault.owner == "vic")
        #expect(try admin.listBanned("vault").items.map(\.uid) == ["zoe"])
        #expect(try admin.getGroup("club").group.type == .password)
        #expect(ModerationClient.code { try admin.getGroup("gone") } == .groupNotFound)
        #expect(try admin.actions("lobby", ListActionsOptions(limit: 100)).actions.count == fixture.lobbyActions)
        let log = try service.withActionLog(app: app) { (log: ActionLogSnapshot) throws(ModerationError) in
            try log.actions(afterSeq: 0, limit: 500)
        }
        #expect(log.map(\.seq) == Array(1...fixture.headSeq), "the release's log, whole and in order")
        #expect(log.contains { $0.kind == .deleted && $0.group.guid == "gone" })
        #expect(log.allSatisfy { !$0.group.frozen || $0.group.guid == "quiet" })
        if try admin.listGroups().items.contains(where: { $0.group.guid == "quiet" }) {
            // A release with mutes, freezes and deleted users: its mute, freeze and deleted user read back.
            let quiet = try admin.getGroup("quiet").group
            #expect(quiet.frozen && quiet.frozenReason == "maintenance" && quiet.membersCount == 2)
            #expect(try admin.memberState("quiet", "amir").mute?.reason == "calm down")
            #expect(ModerationClient.code { try admin.getUser("dora") } == .uidNotFound)
            #expect(ModerationClient.code { try admin.createUser("dora") } == .uidAlreadyExists)
        }

        // The release's idempotent replies still replay, byte for byte.
        let retried = MutationWaiter.wait { done in
            service.kickMember(
                Caller(app: app, actor: "olga", idempotencyKey: "fixture-kick"), guid: "lobby", uid: "pete",
                replay: MutationWaiter.describe, completion: done)
        }
        if case .replayed(let bytes) = retried {
            #expect(bytes == fixture.kickReply)
        } else {
            Issue.record("the release's idempotent kick was run again: \(retried)")
        }

        // Writes go on after the release's last seq; the new features work on its rows.
        let muted = try user("mona").mute("lobby", "pia", reason: "upgraded", durationMs: 10_000)
        #expect(muted.action?.seq == fixture.headSeq + 1, "no gap after the release's log")
        #expect(
            try user("pia").checkPost("lobby") == PostVerdict(refusal: .memberMuted, mutedUntil: clock.peek + 10_000))
        #expect(try admin.listMembers("lobby", ListMembersOptions(mutedOnly: true)).items.map(\.uid) == ["pia"])
        try user("amir").freeze("lobby", reason: "upgraded")
        #expect(try admin.checkPost("lobby", "amir") == .allowed)
        #expect(try admin.getGroup("lobby").group.frozenReason == "upgraded")
        try user("zoe").join("club", password: "s3cret")
        let deleted = try admin.deleteUser("bert")
        #expect(deleted.groupsLeft == 0 && deleted.bansDropped == 1)
        #expect(ModerationClient.code { try admin.getUser("bert") } == .uidNotFound)
        #expect(ModerationClient.code { try admin.createUser("bert") } == .uidAlreadyExists)

        // The release's expiring ban (an hour) and the new mute expire; the sweeper records both.
        clock.advance(by: 3_600_000)
        let report = try service.runMaintenanceAndWait()
        #expect(report.expiredBans == 1 && report.expiredMutes == 1)
        #expect(try admin.listBanned("lobby").items.isEmpty)

        // Invites, join requests and reports on the release's rows: an invite into its private group, a
        // knock on its public one, a report that the reported member does not see.
        try user("vic").invite("vault", "nick", scope: .moderator)
        #expect(try user("nick").getGroup("vault").group.guid == "vault")
        #expect(try user("nick").acceptInvite("vault").group.scope == .moderator)
        try user("amir").setJoinRequests("lobby", true)
        try user("vic").requestToJoin("lobby", message: "hi")
        #expect(try user("mona").approveJoinRequest("lobby", "vic").action.newScope == .participant)
        let filed = try user("mona").report("lobby", "pia", category: .spam)
        #expect(try user("olga").listReports("lobby").page.items.map(\.id) == [filed.report.id])
        #expect(try user("pia").actions("lobby").actions.allSatisfy { !$0.isPrivate })
        // Bans from the app on the release's users: a ban refuses their calls and CheckPost, a
        // shadow ban marks their posts, both are listed, and lifting one restores everything.
        try admin.banFromApp("amir", reason: "upgraded")
        try admin.banFromApp("mona", shadow: true)
        #expect(ModerationClient.code { try user("amir").getGroup("lobby") } == .userBannedFromApp)
        #expect(try admin.checkPost("lobby", "amir") == PostVerdict(refusal: .userBannedFromApp))
        #expect(try user("mona").checkPost("lobby") == .shadowed)
        #expect(try admin.listAppBans().items.map(\.uid).sorted() == ["amir", "mona"])
        try admin.unbanFromApp("amir")
        #expect(try user("amir").checkPost("lobby") == .allowed)
        // Webhooks on the release's app: created at the log's head (past the release's, which
        // the checks above wrote after), listed, and given to delivery.
        let hook = try admin.createWebhook().webhook
        #expect(hook.status.lastDeliveredSeq > fixture.headSeq)
        #expect(try admin.listWebhooks() == [hook])
        #expect(try service.enabledWebhooks().map(\.webhook.id) == [hook.id])
        for guid in ["lobby", "club", "vault"] {
            Invariants.expectHeld(store: store, app: app, guid: guid, after: "the upgrade")
        }
    }
}
