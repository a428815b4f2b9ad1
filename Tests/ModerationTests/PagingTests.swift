import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Keyset paging: limits, cursors, and no row repeating or vanishing when other rows are added
/// or removed between pages.
@Suite("Paging", .onEveryStore)
struct PagingTests {
    @Test(
        "limits: 0 is 30, 1–100 allowed, anything else refused",
        arguments: [(0, true), (1, true), (100, true), (101, false), (-1, false)])
    func limits(_ limit: Int, _ allowed: Bool) throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        let code = ModerationClient.code { try app.listMembers("g", ListMembersOptions(limit: limit)) }
        #expect(code == (allowed ? nil : .invalidArgument))
        #expect(ModerationClient.code { try app.listBanned("g", ListBannedOptions(limit: limit)) } == code)
        #expect(ModerationClient.code { try app.listGroups(ListGroupsOptions(limit: limit)) } == code)
        #expect(ModerationClient.code { try app.actions("g", ListActionsOptions(limit: limit)) } == code)
    }

    @Test func badCursors() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "a", "b", "c"] { try app.createUser(uid) }
        try app.createGroup("g", owner: "o", members: ["a", "b", "c"].map { MemberGrant(uid: $0) })
        let page = try app.listMembers("g", ListMembersOptions(limit: 2))
        #expect(!page.nextCursor.isEmpty)
        for cursor in ["garbage!", "AAAA", String(page.nextCursor.dropLast()), page.nextCursor + "A"] {
            #expect(
                ModerationClient.code { try app.listMembers("g", ListMembersOptions(cursor: cursor)) }
                    == .invalidArgument, "\(cursor)")
        }
        #expect(
            ModerationClient.code { try app.listBanned("g", ListBannedOptions(cursor: page.nextCursor)) }
                == .invalidArgument,
            "a cursor of another list")
        #expect(
            ModerationClient.code { try app.listGroups(ListGroupsOptions(cursor: page.nextCursor)) } == .invalidArgument
        )
        #expect(
            ModerationClient.code { try app.actions("g", ListActionsOptions(cursor: page.nextCursor)) }
                == .invalidArgument)
    }

    @Test("next_cursor is empty exactly when nothing is left")
    func emptyCursorAtTheEnd() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        for index in 0..<6 { try app.createUser("u\(index)") }
        try app.createGroup("g", owner: "u0", members: (1..<6).map { MemberGrant(uid: "u\($0)") })
        let first = try app.listMembers("g", ListMembersOptions(limit: 3))
        #expect(first.items.count == 3 && !first.nextCursor.isEmpty)
        let second = try app.listMembers("g", ListMembersOptions(limit: 3, cursor: first.nextCursor))
        #expect(second.items.count == 3 && second.nextCursor.isEmpty, "exactly a page left: no cursor")
        let whole = try app.listMembers("g", ListMembersOptions(limit: 6))
        #expect(whole.items.count == 6 && whole.nextCursor.isEmpty)
    }

    @Test("members: rows present throughout appear exactly once despite joins and leaves between pages")
    func membersUnderChurn() throws {
        let clock = ManualWallClock()
        let harness = try ServiceHarness(clock: clock)
        defer { harness.tearDown() }
        let app = harness.client()
        for index in 0..<80 { try app.createUser("u\(index)") }
        try app.createGroup("g", owner: "u0", members: (1..<50).map { MemberGrant(uid: "u\($0)") })
        let stayers = Set((0..<50).filter { $0 % 4 != 1 }.map { "u\($0)" })
        var seen: [String] = []
        var cursor = ""
        var step = 0
        repeat {
            let page = try app.listMembers("g", ListMembersOptions(limit: 7, cursor: cursor))
            seen += page.items.map(\.uid)
            cursor = page.nextCursor
            // Between pages: some members leave (one already listed, one not yet), others join.
            for uid in ["u\(1 + 4 * step)", "u\(45 - 4 * step)"] { _ = try? app.kick("g", uid) }
            try harness.client("u\(50 + step)").join("g")
            step += 1
        } while !cursor.isEmpty
        #expect(seen.count == Set(seen).count, "a row repeated: \(seen)")
        #expect(stayers.isSubset(of: Set(seen)), "rows vanished: \(stayers.subtracting(seen))")
    }

    @Test("bans: newest first, stable under bans and unbans between pages")
    func bansUnderChurn() throws {
        let harness = try ServiceHarness(clock: ManualWallClock())
        defer { harness.tearDown() }
        let app = harness.client()
        for index in 0..<70 { try app.createUser("u\(index)") }
        try app.createGroup("g", owner: "u0")
        for index in 1..<41 { try app.ban("g", "u\(index)") }
        try app.bulkBan("g", (41..<51).map { "u\($0)" }) // ten bans with the same banned_at
        let stayers = Set((1..<51).filter { $0 % 5 != 0 }.map { "u\($0)" })
        var seen: [Ban] = []
        var cursor = ""
        var step = 0
        repeat {
            let page = try app.listBanned("g", ListBannedOptions(limit: 6, cursor: cursor))
            seen += page.items
            cursor = page.nextCursor
            for uid in ["u\(5 + 5 * step)", "u\(50 - 5 * step)"] { _ = try? app.unban("g", uid) }
            try app.ban("g", "u\(51 + step)")
            step += 1
        } while !cursor.isEmpty
        let uids = seen.map(\.uid)
        #expect(uids.count == Set(uids).count)
        #expect(stayers.isSubset(of: Set(uids)), "vanished: \(stayers.subtracting(uids))")
        let keys = seen.map { ($0.bannedAt, $0.uid) }
        #expect(
            zip(keys, keys.dropFirst()).allSatisfy { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) },
            "order is (banned_at desc, uid)")
    }

    @Test("groups: sorted by creation, filters apply before the limit")
    func groups() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "viewer", "stranger"] { try app.createUser(uid) }
        for index in 0..<25 {
            let type: GroupType = index % 5 == 0 ? .private : (index % 5 == 1 ? .password : .public)
            try app.createGroup(
                "g\(index)", type: type, password: type == .password ? "pw" : "", owner: "o",
                tags: index % 2 == 0 ? ["even"] : ["odd"])
        }
        try app.addMembers("g0", [MemberGrant(uid: "viewer")])
        try app.addMembers("g3", [MemberGrant(uid: "viewer")])
        try app.ban("g4", "viewer")
        let viewer = harness.client("viewer")
        var seen: [String] = []
        var cursor = ""
        repeat {
            let page = try viewer.listGroups(ListGroupsOptions(limit: 4, cursor: cursor))
            seen += page.items.map(\.group.guid)
            cursor = page.nextCursor
        } while !cursor.isEmpty
        let expected = (0..<25).filter { ($0 % 5 != 0 || $0 == 0) && $0 != 4 }.map { "g\($0)" }
        #expect(seen == expected, "public and password groups, private ones joined, none banned from")
        #expect(try viewer.listGroups(ListGroupsOptions(joinedOnly: true)).items.map(\.group.guid) == ["g0", "g3"])
        let joined = try viewer.listGroups(ListGroupsOptions(joinedOnly: true)).items
        #expect(joined.allSatisfy { $0.hasJoined && $0.scope == .participant })
        #expect(
            try viewer.listGroups(ListGroupsOptions(types: [.password])).items.map(\.group.guid) == [
                "g1", "g6", "g11", "g16", "g21",
            ])
        #expect(
            try viewer.listGroups(ListGroupsOptions(limit: 2, tags: ["odd"])).items.map(\.group.guid) == ["g1", "g3"])
        #expect(
            try viewer.listGroups(ListGroupsOptions(search: "G1")).items.map(\.group.guid) == [
                "g1", "g11", "g12", "g13", "g14", "g16", "g17", "g18", "g19",
            ])
        #expect(
            try harness.client("stranger").listGroups(ListGroupsOptions(search: "g0")).items.isEmpty,
            "a private group stays hidden")
        #expect(try app.listGroups(ListGroupsOptions(limit: 100)).items.count == 25, "the app sees everything")
    }

    @Test("actions: after_seq, cursor, filters and the non-member view")
    func actions() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "a", "b", "c"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o", members: [MemberGrant(uid: "a", scope: .moderator), MemberGrant(uid: "b")])
        let moderator = harness.client("a")
        try moderator.kick("g", "b")
        try harness.client("b").join("g")
        try moderator.ban("g", "b", reason: "again")
        try moderator.ban("g", "c")
        let all = try moderator.actions("g", ListActionsOptions(limit: 100))
        #expect(all.actions.map(\.kind) == [.created, .added, .added, .kicked, .joined, .banned, .banned])
        #expect(all.actions.map(\.seq) == Array(1...7) && all.lastSeq == 7 && all.nextCursor.isEmpty)
        let paged = try moderator.actions("g", ListActionsOptions(limit: 3))
        #expect(paged.actions.map(\.seq) == [1, 2, 3] && !paged.nextCursor.isEmpty)
        let next = try moderator.actions("g", ListActionsOptions(afterSeq: 1, limit: 3, cursor: paged.nextCursor))
        #expect(next.actions.map(\.seq) == [4, 5, 6], "the cursor replaces after_seq")
        #expect(try moderator.actions("g", ListActionsOptions(afterSeq: 5)).actions.map(\.seq) == [6, 7])
        #expect(try moderator.actions("g", ListActionsOptions(afterSeq: 99)).lastSeq == 99)
        #expect(
            try moderator.actions("g", ListActionsOptions(kinds: [.banned, .kicked])).actions.map(\.seq) == [4, 6, 7])
        #expect(try moderator.actions("g", ListActionsOptions(actor: "a")).actions.map(\.seq) == [4, 6, 7])
        #expect(try moderator.actions("g", ListActionsOptions(actor: "@app")).actions.map(\.seq) == [1, 2, 3])
        #expect(try moderator.actions("g", ListActionsOptions(target: "b")).actions.map(\.seq) == [3, 4, 5, 6])
        // b is banned, so not a member: b sees only what was done to b.
        let banned = try harness.client("b").actions("g")
        #expect(banned.actions.map(\.seq) == [3, 4, 5, 6])
        #expect(try harness.client("b").actions("g", ListActionsOptions(target: "a")).actions.isEmpty)
        #expect(try harness.client("o").actions("g", ListActionsOptions(target: "zz")).actions.isEmpty)
    }

    @Test("a filtered read looks through a bounded window; paging on still finds every match once")
    func filteredWindow() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        let crowd = (0..<100).map { "c\($0)" }
        for uid in ["o", "target"] + crowd { try app.createUser(uid) }
        try app.createGroup("g", owner: "o", members: [MemberGrant(uid: "target")])
        try app.kick("g", "target") // an early action on target
        for _ in 0..<60 { // 12 000 actions on others
            try app.bulkBan("g", crowd)
            try app.bulkUnban("g", crowd)
        }
        try app.ban("g", "target") // a late one
        let viewer = harness.client("target")
        var found: [UInt64] = []
        var cursor = ""
        var calls = 0
        repeat {
            let page = try viewer.actions("g", ListActionsOptions(limit: 10, cursor: cursor))
            found += page.actions.map(\.seq)
            #expect(page.actions.allSatisfy { $0.actionOn?.uid == "target" })
            #expect(page.lastSeq >= (page.actions.last?.seq ?? 0))
            cursor = page.nextCursor
            calls += 1
        } while !cursor.isEmpty
        #expect(found.count == 3, "added, kicked, and the ban at the end: found \(found)")
        #expect(found == found.sorted() && Set(found).count == found.count)
        #expect(calls >= 2, "the scan was split into windows")
        let kinds = try app.actions("g", ListActionsOptions(limit: 100, kinds: [.kicked]))
        #expect(
            kinds.actions.count == 1 && !kinds.nextCursor.isEmpty, "a short page with a cursor to the end of the window"
        )
    }
}
