import Moderation
import ModerationPostgres
import StoreTestSupport
import TestSupport
import Testing

/// The same data in both stores answers every list and search the same: substring of the uid
/// (guid) or folded name, `%`, `_` and `\` taken literally, order and paging by byte order of the
/// uid (not the database's collation).
@Suite("Search and paging: PostgreSQL answers as SQLite does")
struct SearchParityTests {
    static let users: [(uid: String, name: String)] = [
        ("o", "Owner"), ("a-b", "Anna Bell"), ("a_b", "ANNA_BELL"), ("ab", "Zoë Ab"), ("a0", "100% Real"),
        ("zz", "Über Zed"), ("x_1", "back\\slash"), ("mid", "Ωmega café"), ("b-1", "Bob"), ("b_2", "bob"),
    ]
    static let keywords = [
        "", "a", "ab", "a_", "_", "%", "100%", "\\", "back\\s", "zoë", "über", "ωmega", "café", "bob", "b", "-", "zz",
        "nothing-matches", "e",
    ]

    /// Builds the same groups, members and bans through `harness`'s service.
    static func populate(_ harness: ServiceHarness) throws {
        let app = harness.client()
        for user in users { try app.createUser(user.uid, name: user.name) }
        let members = users.map(\.uid).filter { $0 != "o" }
        try app.createGroup("g", owner: "o", members: members.map { MemberGrant(uid: $0) })
        try app.createGroup(NewGroup(guid: "g-2", name: "Second_Group 100%", owner: "o"))
        try app.createGroup(
            NewGroup(guid: "g_3", name: "Third Zoë", type: .private, owner: "o", members: [MemberGrant(uid: "ab")]))
        try app.createGroup(NewGroup(guid: "g0", name: "Café Ωmega", owner: "o"))
        for uid in ["b-1", "b_2", "x_1", "a0"] { _ = try harness.client("o").ban("g", uid) }
    }

    /// Every page of a list, `limit` at a time, by following the cursors.
    static func pages<Item>(_ page: (String) throws(ModerationError) -> Page<Item>) throws -> [[Item]] {
        var cursor = ""
        var all: [[Item]] = []
        repeat {
            let next = try page(cursor)
            all.append(next.items)
            cursor = next.nextCursor
        } while !cursor.isEmpty && all.count < 100
        return all
    }

    /// What each list answers, as text, for every keyword.
    static func answers(_ harness: ServiceHarness) throws -> [String] {
        var lines: [String] = []
        let owner = harness.client("o")
        let viewer = harness.client("ab")
        for keyword in keywords {
            let members = try pages { cursor throws(ModerationError) in
                try owner.listMembers("g", ListMembersOptions(limit: 3, cursor: cursor, search: keyword))
            }
            lines.append("members \(keyword): \(members.map { $0.map(\.uid) })")
            let bans = try pages { cursor throws(ModerationError) in
                try owner.listBanned("g", ListBannedOptions(limit: 2, cursor: cursor, search: keyword))
            }
            lines.append("bans \(keyword): \(bans.map { $0.map(\.uid) })")
            for (name, client) in [("app", harness.client()), ("ab", viewer)] {
                let groups = try pages { cursor throws(ModerationError) in
                    try client.listGroups(ListGroupsOptions(limit: 2, cursor: cursor, search: keyword))
                }
                lines.append("groups of \(name) \(keyword): \(groups.map { $0.map(\.group.guid) })")
            }
            let joined = try pages { cursor throws(ModerationError) in
                try viewer.listGroups(ListGroupsOptions(limit: 2, cursor: cursor, search: keyword, joinedOnly: true))
            }
            lines.append("joined \(keyword): \(joined.map { $0.map(\.group.guid) })")
        }
        return lines
    }

    @Test("members, bans and groups: every keyword, every page, the same on both stores")
    func parity() throws {
        let postgres = try ServiceHarness(
            clock: ManualWallClock(ticking: false), backend: .postgres(url: try PostgresCluster.shared().url))
        defer { postgres.tearDown() }
        let sqlite = try ServiceHarness(clock: ManualWallClock(ticking: false), backend: .sqlite)
        defer { sqlite.tearDown() }
        try Self.populate(postgres)
        try Self.populate(sqlite)
        let expected = try Self.answers(sqlite)
        let answered = try Self.answers(postgres)
        #expect(answered.count == expected.count)
        for (got, want) in zip(answered, expected) { #expect(got == want) }
        // `_`, `%` and `\` are literal (in LIKE they would match anything), and byte order puts
        // "a-b" before "a_b" before "ab" (most collations would not).
        for line in [
            "members _: [[\"a_b\"]]", "bans %: [[\"a0\"]]", "bans \\: [[\"x_1\"]]", "members zoë: [[\"ab\"]]",
            "members : [[\"a-b\", \"a_b\", \"ab\"], [\"mid\", \"o\", \"zz\"]]",
        ] {
            #expect(answered.contains(line), "\(line)")
        }
    }
}
