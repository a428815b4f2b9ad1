import ModerationMessages
import RPCCore
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Who gets which event over `Subscribe`: a user subscription gets the actions of the groups its
    /// user belongs to at the time, the actions done to them and their own; group and whole-app
    /// subscriptions, their permissions and kind filters.
    @Suite("Event delivery", .onEveryStore)
    struct EventDeliveryTests {
        @Test("every seed event reaches the group's members, the affected user and the actor — and nobody else")
        func seedEvents() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let start = cast.headSeq
            let everyone = Cast.users
            var streams: [String: EventRecorder] = [:]
            for uid in everyone { streams[uid] = try cast.user(uid).subscribe(after: start) }
            let wholeApp = cast.app.subscribe(after: start)
            let groupStream = cast.app.subscribe(SubscribeRequest(guids: ["g"], start: .afterSeq(start)))
            defer { for stream in Array(streams.values) + [wholeApp, groupStream] { stream.cancel() } }
            let owner = try cast.user("owner")
            let alice = try cast.user("alice")
            let bob = try cast.user("bob")
            let carol = try cast.user("carol")
            let dave = try cast.user("dave")

            try alice.updateGroup(UpdateGroupRequest(guid: "g", name: "The G")) // updated
            try owner.changeScope("g", "carol", to: .moderator) // scopeChanged
            try alice.addMembers("g", [("dave", .participant)]) // added
            try bob.kick("g", "dave") // kicked
            try dave.join("g") // joined
            try dave.leave("g") // left
            try alice.ban("g", "dave", reason: "pre-emptive") // banned (not a member)
            try alice.unban("g", "dave") // unbanned
            try owner.transfer("g", to: "alice") // ownershipTransferred
            try cast.app.createGroup("h", owner: "dave", members: [("carol", .participant)]) // created, added
            try alice.kick("g", "carol") // carol leaves g's audience
            try alice.updateGroup(UpdateGroupRequest(guid: "g", description: "after carol")) // carol must not get this
            try carol.leave("h") // left h
            let last = try dave.deleteGroup("h").seq // deleted

            let log = try cast.app.replayLog(after: 0, through: last)
            let kinds = Set(log.filter { $0.seq > start }.map(\.action))
            #expect(
                kinds == [
                    .updated, .scopeChanged, .added, .kicked, .joined, .left, .banned, .unbanned, .ownershipTransferred,
                    .created, .deleted,
                ])

            // What each subscription must have received, from the log and the membership it implies.
            var model = LogModel()
            var expected: [String: [UInt64]] = [:]
            for action in log {
                if action.seq > start {
                    for uid in everyone where model.delivers(action, to: uid) {
                        expected[uid, default: []].append(action.seq)
                    }
                }
                model.apply(action)
            }
            #expect(model.contradictions.isEmpty, "\(model.contradictions)")
            for uid in everyone {
                let stream = try #require(streams[uid])
                let want = expected[uid] ?? []
                stream.waitForSeq(want.last ?? 0)
                #expect(stream.seqs == want, "\(uid) got \(stream.seqs), expected \(want)")
            }
            #expect(wholeApp.waitForSeq(last) && wholeApp.seqs == log.filter { $0.seq > start }.map(\.seq))
            let inG = log.filter { $0.seq > start && $0.actionFor?.guid == "g" }.map(\.seq)
            #expect(groupStream.waitForSeq(inG.last ?? 0) && groupStream.seqs == inG)

            // The facts the model encodes, spelled out.
            let daveGot = try #require(streams["dave"]).actions
            #expect(
                daveGot.contains { $0.action == .kicked && $0.actionOn?.uid == "dave" },
                "the kicked user gets their own kick")
            #expect(
                daveGot.contains { $0.action == .banned && $0.actionOn?.uid == "dave" },
                "the banned user gets their own ban")
            #expect(
                !daveGot.contains { $0.action == .scopeChanged }, "dave was not a member when carol's scope changed")
            #expect(!daveGot.contains { $0.action == .ownershipTransferred }, "nor when ownership moved")
            let carolGot = try #require(streams["carol"]).actions
            #expect(carolGot.contains { $0.action == .kicked && $0.actionOn?.uid == "carol" })
            #expect(
                !carolGot.contains { $0.action == .updated && $0.actionFor?.description == "after carol" },
                "a kicked user no longer gets the group's events")
            #expect(
                !carolGot.contains { $0.action == .created && $0.actionFor?.guid == "h" },
                "h's creation precedes carol's membership")
            #expect(
                carolGot.contains { $0.action == .added && $0.actionFor?.guid == "h" && $0.actionOn?.uid == "carol" },
                "carol was added to h at its creation")
            #expect(carolGot.contains { $0.action == .deleted } == false, "carol had left h before it was deleted")
            #expect(
                try #require(streams["bob"]).actions.contains { $0.action == .joined && $0.actionOn?.uid == "dave" })
            #expect(
                !(try #require(streams["bob"]).actions.contains { $0.actionFor?.guid == "h" }),
                "bob has nothing to do with h")
        }

        @Test("the stream's first message says it is live: every action committed after it arrives, none before")
        func startedMessage() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice")
            // Live only, with no resume point to fall back on: the started message is all the
            // client has to know when its stream is live.
            for round in 0..<20 {
                let stream = try cast.user("carol").subscribe(SubscribeRequest())
                defer { stream.cancel() }
                let started = try stream.waitForStart()
                #expect(started.headSeq == started.afterSeq, "live only: delivery begins at the head")
                let seq = try alice.updateGroup(UpdateGroupRequest(guid: "g", description: "round \(round)")).version
                let last = try cast.app.markHead(owner: "carol")
                #expect(stream.waitForSeq(last), "round \(round): the update after started did not arrive")
                #expect(stream.seqs.allSatisfy { $0 > started.afterSeq }, "nothing at or before after_seq")
                #expect(stream.actions.contains { $0.action == .updated && $0.actionFor?.version == seq })
                #expect(stream.undecodable == 0 && stream.misplacedStarts == 0)
            }
            // A resume: delivery begins after the seq asked for, the replay runs through the head.
            let head = try cast.app.markHead(owner: "alice")
            let resumed = cast.app.subscribe(after: 2)
            defer { resumed.cancel() }
            let started = try resumed.waitForStart()
            #expect(started.afterSeq == 2 && started.headSeq == head, "\(started)")
            #expect(resumed.waitForSeq(head))
            #expect(resumed.seqs == Array(3...head), "the replay after the started message, gapless")
            // A start point past the head is live from there.
            let ahead = cast.app.subscribe(after: head + 1_000)
            defer { ahead.cancel() }
            let aheadStarted = try ahead.waitForStart()
            #expect(aheadStarted.afterSeq == head + 1_000 && aheadStarted.headSeq == head, "\(aheadStarted)")
        }

        @Test("a user subscription follows joins and leaves: nothing of a group while outside it")
        func followsMembership() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let dave = try cast.user("dave")
            let alice = try cast.user("alice")
            let stream = dave.subscribe(after: cast.headSeq)
            defer { stream.cancel() }
            try alice.updateGroup(UpdateGroupRequest(guid: "g", description: "before"))
            let joined = try dave.join("g").action?.seq ?? 0
            let inside = try alice.updateGroup(UpdateGroupRequest(guid: "g", description: "inside")).version
            let left = try dave.leave("g").seq
            try alice.updateGroup(UpdateGroupRequest(guid: "g", description: "after"))
            let rejoined = try dave.join("g").action?.seq ?? 0
            let last = try alice.kick("g", "carol").seq
            #expect(stream.waitForSeq(last))
            let got = stream.actions
            #expect(got.map(\.action) == [.joined, .updated, .left, .joined, .kicked])
            #expect(
                got.map(\.seq).first == joined && got.map(\.seq).contains(left) && got.map(\.seq).contains(rejoined))
            #expect(got.first { $0.action == .updated }?.actionFor?.version == inside)
        }

        @Test("group subscriptions: members only; unknown and private groups are not found")
        func groupSubscriptions() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            try cast.app.createGroup("priv", type: .private, owner: "owner")
            let dave = try cast.user("dave")
            let carol = try cast.user("carol")
            func refusal(_ client: ModerationWireClient, _ guids: [String]) throws -> RPCError? {
                try client.subscribe(SubscribeRequest(guids: guids, start: .afterSeq(cast.headSeq))).waitForEnd()
            }
            expectFailure(try refusal(dave, ["g"]), .permissionDenied, "ERR_GROUP_NOT_JOINED", mentions: "g")
            expectFailure(try refusal(dave, ["nowhere"]), .notFound, "ERR_GROUP_NOT_FOUND", mentions: "nowhere")
            expectFailure(try refusal(dave, ["priv"]), .notFound, "ERR_GROUP_NOT_FOUND", mentions: "priv")
            expectFailure(try refusal(carol, ["g", "priv"]), .notFound, "ERR_GROUP_NOT_FOUND", mentions: "priv")

            let stream = carol.subscribe(SubscribeRequest(guids: ["g"], start: .afterSeq(cast.headSeq)))
            defer { stream.cancel() }
            try cast.app.createGroup("other", owner: "carol")
            try cast.user("owner").kick("g", "bob")
            let last = try cast.user("alice").updateGroup(UpdateGroupRequest(guid: "g", name: "G")).version
            #expect(stream.waitForCount(2))
            #expect(
                stream.actions.map(\.action) == [.kicked, .updated] && stream.actions.last?.actionFor?.version == last)
            #expect(!stream.hasEnded)
        }

        @Test("whole-app subscriptions are for the app; a user subscribes only for themselves")
        func wholeAppAndUserTargets() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let carol = try cast.user("carol")
            expectFailure(
                try carol.subscribe(SubscribeRequest(wholeApp: true)).waitForEnd(), .permissionDenied,
                "ERR_PERMISSION_DENIED", mentions: "carol")
            expectFailure(
                try carol.subscribe(SubscribeRequest(userUID: "bob")).waitForEnd(), .permissionDenied,
                "ERR_PERMISSION_DENIED", mentions: "bob")
            expectFailure(
                try cast.app.subscribe(SubscribeRequest(userUID: "ghost")).waitForEnd(), .notFound, "ERR_UID_NOT_FOUND",
                mentions: "ghost")
            expectFailure(
                try cast.app.subscribe(SubscribeRequest(userUID: "carol", wholeApp: true)).waitForEnd(),
                .invalidArgument, "ERR_INVALID_ARGUMENT")
            expectFailure(
                try cast.app.subscribe(SubscribeRequest()).waitForEnd(), .invalidArgument, "ERR_INVALID_ARGUMENT")

            // The app may follow any user; it gets what that user would.
            let forCarol = cast.app.subscribe(SubscribeRequest(userUID: "carol", start: .afterSeq(cast.headSeq)))
            let asCarol = carol.subscribe(SubscribeRequest(userUID: "carol", start: .afterSeq(cast.headSeq)))
            defer {
                forCarol.cancel()
                asCarol.cancel()
            }
            try cast.app.createGroup("elsewhere", owner: "dave")
            let last = try cast.user("bob").kick("g", "carol").seq
            #expect(forCarol.waitForSeq(last) && asCarol.waitForSeq(last))
            #expect(forCarol.seqs == [last] && asCarol.seqs == [last])
        }

        @Test(
            "kind filters deliver only the kinds asked for",
            arguments: [
                [ActionType.kicked], [.banned, .unbanned], [.joined, .left, .added],
            ])
        func kindFilter(_ kinds: [ActionType]) throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let alice = try cast.user("alice")
            let dave = try cast.user("dave")
            let filtered = cast.app.subscribe(after: cast.headSeq, kinds: kinds)
            let asMember = try cast.user("bob").subscribe(after: cast.headSeq, kinds: kinds)
            defer {
                filtered.cancel()
                asMember.cancel()
            }
            try dave.join("g")
            try alice.kick("g", "dave")
            try alice.ban("g", "dave")
            try alice.unban("g", "dave")
            try dave.join("g")
            try dave.leave("g")
            try alice.addMembers("g", [("dave", .participant)])
            let last = try alice.kick("g", "dave").seq
            let log = try cast.app.replayLog(after: cast.headSeq, through: last)
            let want = log.filter { kinds.contains($0.action) }.map(\.seq)
            #expect(!want.isEmpty)
            #expect(filtered.waitForSeq(want.last!) && asMember.waitForSeq(want.last!))
            #expect(filtered.seqs == want && asMember.seqs == want)
        }

        @Test(
            "a ban that expires: reads stop applying it at once; the sweeper's unbanned (reason expired, by @app) reaches the user"
        )
        func expiredBan() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let carol = try cast.user("carol")
            let alice = try cast.user("alice")
            let stream = carol.subscribe(after: cast.headSeq)
            defer { stream.cancel() }
            let banned = try alice.ban("g", "carol", reason: "cool off", durationMs: 60_000)
            let ban = try #require(banned.ban)
            #expect(ban.expiresAt == ban.bannedAt + 60_000 && banned.action?.expiresAt == ban.expiresAt)
            expectFailure(
                failure { try carol.join("g") }, .permissionDenied, "ERR_BANNED_GROUPMEMBER", mentions: "carol")
            cast.server.clock.advance(by: 61_000)
            #expect(
                try alice.memberState("g", "carol").isBanned == false,
                "an expired ban stops applying on reads, before the sweeper runs")
            #expect(try alice.banned("g").bannedMembers.isEmpty)
            #expect(try cast.server.runMaintenance().expiredBans == 1)
            let expired = try #require(try cast.app.actions("g", kinds: [.unbanned]).actions.last)
            #expect(expired.reason == "expired" && expired.actionBy?.uid == "@app" && expired.actionOn?.uid == "carol")
            #expect(stream.waitForSeq(expired.seq))
            #expect(stream.actions.map(\.action) == [.banned, .unbanned] && stream.actions.last == expired)
            #expect(try cast.server.runMaintenance().expiredBans == 0, "swept once")
            try carol.join("g")
            cast.checkInvariants()
        }
    }
}
