import ModerationMessages
import RPCCore
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Keyset paging over the wire: rows added or removed between pages never make another row repeat
    /// or vanish; `next_cursor` is empty exactly when nothing is left; limits and cursors are checked.
    @Suite("Paging over the wire", .onEveryStore)
    struct PagingWireTests {
        /// A cast whose group "g" also has `members` added members (one AddMembers call per 50, so many
        /// share a joined_at) and `bans` banned users (one BulkBan per 50, sharing a banned_at).
        static func populated(members: Int, bans: Int) throws -> Cast {
            let cast = try Cast()
            let app = cast.app
            for index in 0..<members { try app.createUser("m\(index)", name: "Member \(index)") }
            for index in 0..<bans { try app.createUser("b\(index)", name: "Banned \(index)") }
            for start in stride(from: 0, to: members, by: 50) {
                let added = try app.addMembers("g", (start..<min(members, start + 50)).map { ("m\($0)", .participant) })
                #expect(added.results.values.allSatisfy { $0.ok })
            }
            for start in stride(from: 0, to: bans, by: 50) {
                let banned = try app.bulkBan("g", (start..<min(bans, start + 50)).map { "b\($0)" })
                #expect(banned.values.allSatisfy { $0.changed })
            }
            return cast
        }

        @Test("ListMembers under churn: every member present throughout appears exactly once")
        func membersUnderChurn() throws {
            let cast = try Self.populated(members: 80, bans: 0)
            defer { cast.tearDown() }
            let app = cast.app
            let owner = try cast.user("owner")
            for index in 0..<30 { try app.createUser("late\(index)") }
            let initial = try app.allMembers("g").map(\.uid)
            #expect(initial.count == 84)
            var removed: Set<String> = []
            var seen: [GroupMember] = []
            var cursor = ""
            var page = 0
            var lateJoiners = 0
            repeat {
                let response = try owner.members("g", limit: 7, cursor: cursor)
                seen += response.members
                cursor = response.nextCursor
                page += 1
                // Churn between pages: remove one member already seen and one not seen yet, and let
                // a new user join (they sort last, after every existing member).
                if let seenVictim = seen.map(\.uid).first(where: { $0.hasPrefix("m") && !removed.contains($0) }) {
                    try owner.kick("g", seenVictim)
                    removed.insert(seenVictim)
                }
                let seenUIDs = Set(seen.map(\.uid))
                if let unseenVictim = initial.last(where: {
                    $0.hasPrefix("m") && !seenUIDs.contains($0) && !removed.contains($0)
                }) {
                    try owner.ban("g", unseenVictim)
                    removed.insert(unseenVictim)
                }
                if lateJoiners < 30 {
                    try cast.user("late\(lateJoiners)").join("g")
                    lateJoiners += 1
                }
            } while !cursor.isEmpty && page < 100
            #expect(cursor.isEmpty, "the walk ended")
            let rows = seen.map { "\($0.uid)@\($0.joinedAt)" }
            #expect(Set(rows).count == rows.count, "no row repeats: \(rows)")
            for uid in initial where !removed.contains(uid) {
                #expect(
                    seen.filter { $0.uid == uid }.count == 1,
                    "\(uid) was a member throughout but appears \(seen.filter { $0.uid == uid }.count) times")
            }
            let ordered = seen.sorted { ($0.joinedAt, $0.uid) < ($1.joinedAt, $1.uid) }
            #expect(seen.map(\.uid) == ordered.map(\.uid), "pages follow (joined_at, uid)")
            cast.checkInvariants()
        }

        @Test("ListBannedMembers under churn: every ban present throughout appears exactly once")
        func bansUnderChurn() throws {
            let cast = try Self.populated(members: 0, bans: 90)
            defer { cast.tearDown() }
            let app = cast.app
            let alice = try cast.user("alice")
            for index in 0..<30 { try app.createUser("new\(index)") }
            let initial = try alice.allBanned("g").map(\.uid)
            #expect(initial.count == 90)
            var lifted: Set<String> = []
            var seen: [BannedMember] = []
            var cursor = ""
            var page = 0
            repeat {
                let response = try alice.banned("g", limit: 8, cursor: cursor)
                seen += response.bannedMembers
                cursor = response.nextCursor
                // Churn: lift a ban already seen and one not seen yet; ban someone new (newest first,
                // so before the walk's position).
                if let seenVictim = seen.map(\.uid).first(where: { !lifted.contains($0) && $0.hasPrefix("b") }) {
                    try alice.unban("g", seenVictim)
                    lifted.insert(seenVictim)
                }
                let seenUIDs = Set(seen.map(\.uid))
                if let unseenVictim = initial.last(where: { !seenUIDs.contains($0) && !lifted.contains($0) }) {
                    try alice.unban("g", unseenVictim)
                    lifted.insert(unseenVictim)
                }
                if page < 30 { try alice.ban("g", "new\(page)") }
                page += 1
            } while !cursor.isEmpty && page < 100
            #expect(cursor.isEmpty, "the walk ended")
            let rows = seen.map { "\($0.uid)@\($0.bannedAt)" }
            #expect(Set(rows).count == rows.count, "no row repeats")
            for uid in initial where !lifted.contains(uid) {
                #expect(
                    seen.filter { $0.uid == uid }.count == 1,
                    "\(uid) was banned throughout but appears \(seen.filter { $0.uid == uid }.count) times")
            }
            let ordered = seen.sorted { ($0.bannedAt, $1.uid) > ($1.bannedAt, $0.uid) }
            #expect(seen.map(\.uid) == ordered.map(\.uid), "pages follow (banned_at descending, uid)")
            cast.checkInvariants()
        }

        @Test("next_cursor is empty exactly when nothing is left", arguments: [6, 7, 13, 14, 15])
        func lastPage(extraMembers: Int) throws {
            // The cast has 4 members; with `extraMembers` more and pages of 6 the last page may be full.
            let cast = try Self.populated(members: extraMembers, bans: extraMembers)
            defer { cast.tearDown() }
            let owner = try cast.user("owner")
            func walk(_ fetch: (String) throws -> ([String], String)) throws -> [Int] {
                var sizes: [Int] = []
                var cursor = ""
                repeat {
                    let (items, next) = try fetch(cursor)
                    sizes.append(items.count)
                    cursor = next
                } while !cursor.isEmpty && sizes.count < 50
                return sizes
            }
            func expected(_ total: Int) -> [Int] {
                Array(repeating: 6, count: total / 6) + (total % 6 == 0 ? [] : [total % 6])
            }
            let memberPages = try walk { cursor in
                let page = try owner.members("g", limit: 6, cursor: cursor)
                return (page.members.map(\.uid), page.nextCursor)
            }
            #expect(memberPages == expected(4 + extraMembers), "no empty last page, no missing one")
            let banPages = try walk { cursor in
                let page = try owner.banned("g", limit: 6, cursor: cursor)
                return (page.bannedMembers.map(\.uid), page.nextCursor)
            }
            #expect(banPages == expected(extraMembers))
        }

        enum ListKind: String, CaseIterable, Sendable {
            case members, banned, actions
        }

        @Test(
            "limit 0 means 30, 100 is the most, 101 and garbage cursors are INVALID_ARGUMENT",
            arguments: ListKind.allCases)
        func limitsAndCursors(_ kind: ListKind) throws {
            let cast = try Self.populated(members: 40, bans: 40)
            defer { cast.tearDown() }
            let owner = try cast.user("owner")
            func list(limit: UInt32, cursor: String = "") throws -> (count: Int, next: String) {
                switch kind {
                case .members:
                    let page = try owner.members("g", limit: limit, cursor: cursor)
                    return (page.members.count, page.nextCursor)
                case .banned:
                    let page = try owner.banned("g", limit: limit, cursor: cursor)
                    return (page.bannedMembers.count, page.nextCursor)
                case .actions:
                    let page = try owner.actions("g", limit: limit, cursor: cursor)
                    return (page.actions.count, page.nextCursor)
                }
            }
            let byDefault = try list(limit: 0)
            #expect(byDefault.count == 30 && !byDefault.next.isEmpty)
            let most = try list(limit: 100)
            #expect(most.count > 30 && most.count <= 100 && most.next.isEmpty)
            expectFailure(failure { try list(limit: 101) }, .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "limit")
            for garbage in ["garbage", "!!!", String(repeating: "A", count: 300), "eyJ4IjoxfQ"] {
                expectFailure(
                    failure { try list(limit: 10, cursor: garbage) }, .invalidArgument, "ERR_INVALID_ARGUMENT",
                    mentions: "cursor")
            }
            // A cursor of another list is not a cursor of this one.
            let foreign =
                kind == .members
                ? try owner.banned("g", limit: 5).nextCursor : try owner.members("g", limit: 5).nextCursor
            expectFailure(
                failure { try list(limit: 10, cursor: foreign) }, .invalidArgument, "ERR_INVALID_ARGUMENT",
                mentions: "cursor")
        }
    }
}
