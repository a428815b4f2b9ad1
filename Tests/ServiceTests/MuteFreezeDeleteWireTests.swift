import ModerationMessages
import RPCCore
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Mutes (one that expires while the member waits), freezes, the decision call and user
    /// deletion over real sockets — each step a call on the wire, checked
    /// against the reply, the actions recorded and delivered, and the state read back.
    @Suite("Mutes, freezes, CheckPost and DeleteUser over the wire", .onEveryStore)
    struct MuteFreezeDeleteWireTests {
        @Test("a mute that expires while the member waits: refused until muted_until, then allowed; swept once")
        func muteExpiresWhileWaiting() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let bob = try cast.user("bob")
            let carol = try cast.user("carol")
            let stream = carol.subscribe(after: cast.headSeq)
            defer { stream.cancel() }
            let muted = try bob.mute("g", "carol", reason: "slow down", durationMs: 60_000)
            let action = try #require(muted.action)
            #expect(muted.changed && action.action == .muted && action.actionOn?.uid == "carol")
            #expect(
                action.reason == "slow down" && action.expiresAt > 0 && muted.member?.mutedUntil == action.expiresAt)
            let refused = try carol.checkPost("g")
            #expect(
                !refused.allowed && refused.errorCode == "ERR_MEMBER_MUTED" && refused.mutedUntil == action.expiresAt)
            let own = try carol.memberState("g")
            #expect(own.isMember && own.mutedUntil == action.expiresAt && own.muteReason.isEmpty)
            #expect(try bob.memberState("g", "carol").muteReason == "slow down")
            #expect(try bob.members("g", mutedOnly: true).members.map(\.uid) == ["carol"])
            let listed = try carol.allMembers("g").first { $0.uid == "carol" }
            #expect(
                listed?.mutedUntil == action.expiresAt && listed?.muteReason == "", "a participant sees when, not why")
            cast.checkInvariants()

            // Carol waits; the clock passes the expiry: reads stop applying the mute at once.
            cast.server.clock.advance(by: 59_000)
            #expect(try carol.checkPost("g").errorCode == "ERR_MEMBER_MUTED")
            cast.server.clock.advance(by: 1_001)
            let allowed = try carol.checkPost("g")
            #expect(allowed.allowed && allowed.errorCode.isEmpty && allowed.mutedUntil == 0)
            #expect(try carol.memberState("g").mutedUntil == 0 && bob.members("g", mutedOnly: true).members.isEmpty)
            #expect(try cast.server.runMaintenance().expiredMutes == 1)
            let expired = try #require(try cast.app.actions("g", kinds: [.unmuted]).actions.last)
            #expect(expired.reason == "expired" && expired.actionBy?.uid == "@app" && expired.actionOn?.uid == "carol")
            #expect(stream.waitForSeq(expired.seq))
            #expect(stream.actions.map(\.action) == [.muted, .unmuted] && stream.actions.last == expired)
            #expect(try cast.server.runMaintenance().expiredMutes == 0, "swept once")
            expectFailure(
                failure { try bob.unmute("g", "carol") }, .failedPrecondition, "ERR_USER_NOT_MUTED", mentions: "carol")
            cast.checkInvariants()
        }

        @Test("mute rules on the wire: the owner, a non-member, already muted, flags, bulk, kick ends it")
        func muteRules() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice")
            let bob = try cast.user("bob")
            expectFailure(
                failure { try alice.mute("g", "owner") }, .permissionDenied, "ERR_CANNOT_MUTE_OWNER", mentions: "owner")
            expectFailure(
                failure { try alice.mute("g", "dave") }, .failedPrecondition, "ERR_NOT_A_MEMBER", mentions: "dave")
            expectFailure(
                failure { try bob.mute("g", "alice") }, .permissionDenied, "ERR_PERMISSION_DENIED", mentions: "alice")
            try alice.mute("g", "bob")
            #expect(try bob.checkPost("g").mutedUntil == -1, "until unmuted")
            expectFailure(failure { try alice.mute("g", "bob") }, .alreadyExists, "ERR_ALREADY_MUTED", mentions: "bob")
            #expect(try alice.mute("g", "bob", ifNotMuted: true).changed == false)
            #expect(try alice.unmute("g", "carol", onlyIfMuted: true).changed == false)
            let bulk = try alice.bulkMute("g", ["bob", "carol", "dave"], reason: "raid", durationMs: 10_000)
            #expect(bulk["bob"]?.errorCode == "ERR_ALREADY_MUTED" && bulk["carol"]?.changed == true)
            #expect(bulk["dave"]?.errorCode == "ERR_NOT_A_MEMBER")
            try alice.kick("g", "carol")
            try cast.user("carol").join("g")
            #expect(try cast.user("carol").checkPost("g").allowed, "a kick ended the mute, without an unmuted action")
            let unmuted = try alice.bulkUnmute("g", ["bob", "carol"])
            #expect(unmuted["bob"]?.changed == true && unmuted["carol"]?.errorCode == "ERR_USER_NOT_MUTED")
            let kinds = try cast.app.allActions("g", afterSeq: cast.headSeq).map(\.action)
            #expect(kinds == [.muted, .muted, .kicked, .joined, .unmuted])
            cast.checkInvariants()
        }

        @Test("a freeze: participants are refused, moderators and above are not; everything else works")
        func freeze() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice")
            let carol = try cast.user("carol")
            let watcher = cast.app.subscribe(after: cast.headSeq)
            defer { watcher.cancel() }
            expectFailure(
                failure { try cast.user("bob").freeze("g") }, .permissionDenied, "ERR_PERMISSION_DENIED", mentions: "g")
            let frozen = try alice.freeze("g", reason: "incident review")
            #expect(frozen.action?.action == .frozen && frozen.action?.reason == "incident review")
            #expect(frozen.action?.actionFor?.frozen == true && frozen.action?.actionFor?.frozenReason == "")
            #expect(frozen.group?.frozen == true && frozen.group?.frozenReason == "incident review")
            let everyone = ["owner", "alice", "bob", "carol", "dave"]
            let answers = try cast.app.checkPost(everyone.map { ("g", $0) })
            #expect(answers.map(\.errorCode) == ["", "", "", "ERR_GROUP_FROZEN", "ERR_GROUP_NOT_JOINED"])
            #expect(answers.map(\.allowed) == [true, true, true, false, false])
            let seen = try carol.getGroup("g")
            #expect(seen.frozen && seen.frozenReason.isEmpty, "a participant sees the freeze, not why")
            #expect(try cast.user("bob").getGroup("g").frozenReason == "incident review")
            expectFailure(failure { try alice.freeze("g") }, .failedPrecondition, "ERR_ALREADY_FROZEN", mentions: "g")
            try carol.leave("g")
            try carol.join("g")
            try cast.user("dave").join("g")
            try alice.kick("g", "dave")
            let thawed = try alice.unfreeze("g")
            #expect(thawed.action?.action == .unfrozen && thawed.group?.frozen == false)
            #expect(try carol.checkPost("g").allowed)
            expectFailure(
                failure { try alice.unfreeze("g") }, .failedPrecondition, "ERR_GROUP_NOT_FROZEN", mentions: "g")
            #expect(watcher.waitForSeq(thawed.action?.seq ?? 0))
            #expect(
                watcher.actions.map(\.action) == [.frozen, .left, .joined, .joined, .kicked, .unfrozen],
                "the freeze and everything done while frozen reach the app's stream")
            cast.checkInvariants()
        }

        @Test("CheckPost: 100 pairs in one call; a refusal is an answer; a user asks only about itself")
        func checkPost() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            try cast.app.createGroup("secret", type: .private, owner: "owner", members: [("carol", .participant)])
            try cast.user("owner").ban("g", "dave")
            let pairs = (0..<100).map { index in
                [("g", "carol"), ("g", "dave"), ("secret", "bob"), ("missing", "bob"), ("secret", "carol")][index % 5]
            }
            let answers = try cast.app.checkPost(pairs)
            #expect(answers.count == 100)
            let expected = ["", "ERR_BANNED_GROUPMEMBER", "ERR_GROUP_NOT_FOUND", "ERR_GROUP_NOT_FOUND", ""]
            #expect(answers.map(\.errorCode) == (0..<100).map { expected[$0 % 5] }, "existence never leaks")
            let bob = try cast.user("bob")
            #expect(try bob.checkPost("secret").errorCode == "ERR_GROUP_NOT_FOUND")
            expectFailure(
                failure { try bob.checkPost("g", "carol") }, .permissionDenied, "ERR_PERMISSION_DENIED",
                mentions: "carol")
            expectFailure(
                failure { try cast.app.checkPost(Array(repeating: ("g", "carol"), count: 101)) }, .invalidArgument,
                "ERR_INVALID_ARGUMENT", mentions: "checks")
            expectFailure(
                failure { try cast.app.checkPost("g") }, .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "uid")
        }

        @Test("DeleteUser: an owner is refused; a non-owner leaves everything, and the uid is never reusable")
        func deleteUser() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let owner = try cast.user("owner")
            try cast.app.createGroup("h", owner: "owner", members: [("carol", .moderator)])
            try cast.app.createGroup("k", owner: "alice", bans: ["carol"])
            let refused = failure { try owner.deleteUser("owner") }
            expectFailure(refused, .failedPrecondition, "ERR_USER_OWNS_GROUPS", mentions: "g, h")
            #expect(refused?.details["guids"] == "g,h" && refused?.details["owned_groups"] == "2")
            expectFailure(
                failure { try cast.user("dave").deleteUser("carol") }, .permissionDenied, "ERR_PERMISSION_DENIED",
                mentions: "carol")
            let watcher = cast.app.subscribe(after: try cast.app.markHead(owner: "owner"))
            defer { watcher.cancel() }
            let deleted = try cast.user("carol").deleteUser("carol")
            #expect(deleted.groupsLeft == 2 && deleted.bansDropped == 1)
            #expect(watcher.waitForSeq(deleted.lastSeq))
            let recorded = watcher.actions.filter { $0.actionOn?.uid == "carol" }
            #expect(
                recorded.map { "\($0.action) \($0.actionFor?.guid ?? "") \($0.reason)" } == [
                    "left g userDeleted", "left h userDeleted", "userDeleted k ",
                ])
            #expect(recorded.last?.seq == deleted.lastSeq)
            expectFailure(failure { try cast.app.getUser("carol") }, .notFound, "ERR_UID_NOT_FOUND", mentions: "carol")
            expectFailure(
                failure { try cast.app.createUser("carol") }, .alreadyExists, "ERR_UID_ALREADY_EXISTS",
                mentions: "carol")
            expectFailure(
                failure { try cast.user("alice").ban("g", "carol") }, .notFound, "ERR_UID_NOT_FOUND", mentions: "carol")
            expectFailure(
                failure { try cast.user("carol").join("g") }, .notFound, "ERR_UID_NOT_FOUND", mentions: "carol")
            #expect(try cast.app.checkPost("g", "carol").errorCode == "ERR_GROUP_NOT_JOINED")
            #expect(try cast.app.allBanned("k").isEmpty)
            for guid in ["g", "h", "k"] { cast.checkInvariants(guid) }
            let restarted = try cast.server.restart()
            defer { restarted.tearDown() }
            expectFailure(
                failure { try restarted.client().createUser("carol") }, .alreadyExists, "ERR_UID_ALREADY_EXISTS",
                mentions: "carol")
        }
    }
}
