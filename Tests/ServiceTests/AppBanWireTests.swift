import ModerationMessages
import RPCCore
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Bans from the whole app over real sockets: a ban ends the user's open streams with
    /// `ERR_USER_BANNED_FROM_APP` and refuses their calls, CheckPost answers it, the app's
    /// whole-app stream sees `appBanned` and `appUnbanned`; a shadow ban leaves everything
    /// working and marks CheckPost's answer `shadowed`.
    @Suite("App-wide bans over the wire", .onEveryStore)
    struct AppBanWireTests {
        @Test("a banned user's open Subscribe ends with ERR_USER_BANNED_FROM_APP; the whole-app stream sees it all")
        func subscriptionsEnd() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let carol = try cast.user("carol")
            let whole = cast.app.subscribe(SubscribeRequest(wholeApp: true))
            let own = carol.subscribe(SubscribeRequest())
            let groups = carol.subscribe(SubscribeRequest(guids: ["g"]))
            let followed = cast.app.subscribe(SubscribeRequest(userUID: "carol"))
            let others = try cast.user("bob").subscribe(SubscribeRequest())
            defer { for stream in [whole, own, groups, followed, others] { stream.cancel() } }
            for stream in [whole, own, groups, followed, others] { try stream.waitForStart() }

            let banned = try cast.app.banFromApp("carol", reason: "abuse", durationMs: 3_600_000)
            let ban = try #require(banned.action)
            #expect(ban.action == .appBanned && ban.actionFor == nil && ban.actionOn?.uid == "carol")
            #expect(ban.reason == "abuse" && ban.expiresAt == banned.ban?.expiresAt && !ban.shadow)
            let ownEnd = try own.waitForEnd()
            expectFailure(ownEnd, .permissionDenied, "ERR_USER_BANNED_FROM_APP", mentions: "carol")
            #expect(ownEnd?.details["last_seq"] == String(ban.seq), "it ended after sending the ban")
            #expect(own.actions.map(\.action) == [.appBanned])
            expectFailure(try groups.waitForEnd(), .permissionDenied, "ERR_USER_BANNED_FROM_APP", mentions: "carol")
            #expect(groups.actions.isEmpty)

            // Every call of hers is refused now, a new stream too; CheckPost answers for her.
            expectFailure(
                failure { try carol.getGroup("g") }, .permissionDenied, "ERR_USER_BANNED_FROM_APP", mentions: "carol")
            let refused = carol.subscribe(SubscribeRequest())
            expectFailure(try refused.waitForEnd(), .permissionDenied, "ERR_USER_BANNED_FROM_APP", mentions: "carol")
            let verdict = try cast.app.checkPost("g", "carol")
            #expect(!verdict.allowed && verdict.errorCode == "ERR_USER_BANNED_FROM_APP" && !verdict.shadowed)
            let listed = try cast.app.appBans()
            #expect(listed.appBans.map(\.uid) == ["carol"] && listed.appBans.first?.reason == "abuse")
            expectFailure(failure { try carol.appBans() }, .permissionDenied, "ERR_USER_BANNED_FROM_APP")
            expectFailure(failure { try cast.user("bob").appBans() }, .permissionDenied, "ERR_PERMISSION_DENIED")

            let lifted = try cast.app.unbanFromApp("carol")
            #expect(lifted.action == .appUnbanned && lifted.actionFor == nil && lifted.seq == ban.seq + 1)
            #expect(whole.waitForSeq(lifted.seq) && followed.waitForSeq(lifted.seq))
            #expect(whole.actions.map(\.action) == [.appBanned, .appUnbanned])
            #expect(followed.actions.map(\.action) == [.appBanned, .appUnbanned] && !followed.hasEnded)
            #expect(others.actions.isEmpty && !others.hasEnded, "another user's stream is not concerned")
            #expect(try carol.checkPost("g").allowed, "unbanned, she posts as before")
            #expect(try carol.memberState("g").scope == .participant, "her membership was kept")
            cast.checkInvariants()
        }

        @Test("a shadow ban: the user's calls and streams go on; CheckPost allows, shadowed")
        func shadowBan() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let carol = try cast.user("carol")
            let own = carol.subscribe(SubscribeRequest())
            defer { own.cancel() }
            try own.waitForStart()
            let banned = try cast.app.banFromApp("carol", shadow: true)
            #expect(banned.action?.shadow == true && banned.ban?.shadow == true)
            #expect(own.waitForSeq(banned.action?.seq ?? 0) && own.actions.first?.shadow == true)
            let verdict = try carol.checkPost("g")
            #expect(verdict.allowed && verdict.shadowed && verdict.errorCode.isEmpty)
            #expect(try cast.app.checkPost("g", "carol") == verdict, "the app gets the same answer")
            let kicked = try cast.user("alice").kick("g", "carol")
            #expect(own.waitForSeq(kicked.seq) && !own.hasEnded)
            try carol.join("g")
            #expect(try cast.app.appBans().appBans.map(\.shadow) == [true])
            cast.checkInvariants()
        }
    }
}
