import Moderation
import ModerationSQLite
import StoreTestSupport
import TestSupport
import Testing

/// Substring search over uid and name: through the trigram index or by scanning, with the same
/// results either way, case-insensitively, and kept up to date when names change.
@Suite("Search")
struct SearchTests {
    static let names = [
        "Alice Cooper", "ALICE Smith", "Bob Builder", "Ünal Özdemir", "Zoë Kravitz", "Carol \"Quote\" King",
        "Dave 100%", "Émile Zola",
    ]

    /// Users s0… with `names`, all members (and, for odd indexes, banned from group "b").
    static func setUp(candidateLimit: Int) throws -> ServiceHarness {
        let harness = try ServiceHarness { $0.searchCandidateLimit = candidateLimit }
        let app = harness.client()
        try app.createUser("owner")
        for (index, name) in names.enumerated() { try app.createUser("s\(index)", name: name) }
        try app.createGroup("g", owner: "owner", members: names.indices.map { MemberGrant(uid: "s\($0)") })
        try app.createGroup("b", owner: "owner")
        try app.bulkBan("b", names.indices.filter { $0 % 2 == 1 }.map { "s\($0)" })
        return harness
    }

    static let queries: [(String, Set<String>)] = [
        ("alice", ["s0", "s1"]), ("ALI", ["s0", "s1"]), ("ice c", ["s0"]), ("ünal", ["s3"]), ("ÖZDEM", ["s3"]),
        ("zoë", ["s4"]),
        ("\"quote\"", ["s5"]), ("100%", ["s6"]), ("s1", ["s1"]), ("er", ["s0", "s2"]), ("zz", []), ("nobody here", []),
        ("émile", ["s7"]), ("o", ["s0", "s2", "s4", "s5", "s7"]), ("ö", ["s3"]),
    ]

    @Test("the index and the scan find the same members", arguments: [0, 1000])
    func members(_ candidateLimit: Int) throws {
        let harness = try Self.setUp(candidateLimit: candidateLimit)
        defer { harness.tearDown() }
        let app = harness.client()
        for (keyword, expected) in Self.queries {
            let found = Set(try app.listMembers("g", ListMembersOptions(limit: 100, search: keyword)).items.map(\.uid))
            let owner: Set<String> = "owner".contains(keyword) ? ["owner"] : []
            #expect(found == expected.union(owner), "members matching \"\(keyword)\"")
            let banned = Set(try app.listBanned("b", ListBannedOptions(limit: 100, search: keyword)).items.map(\.uid))
            #expect(banned == expected.filter { Int($0.dropFirst())! % 2 == 1 }, "bans matching \"\(keyword)\"")
        }
    }

    @Test("renaming a user updates what finds them", arguments: [0, 1000])
    func rename(_ candidateLimit: Int) throws {
        let harness = try Self.setUp(candidateLimit: candidateLimit)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.updateUser(UserUpdate(uid: "s2", name: "Robert Builder"))
        #expect(try app.listMembers("g", ListMembersOptions(search: "bob")).items.isEmpty)
        #expect(try app.listMembers("g", ListMembersOptions(search: "robert")).items.map(\.uid) == ["s2"])
        #expect(try app.listMembers("g", ListMembersOptions(search: "builder")).items.map(\.uid) == ["s2"])
    }

    @Test("group search by guid and name, through the index or a scan", arguments: [0, 1000])
    func groups(_ candidateLimit: Int) throws {
        let harness = try ServiceHarness { $0.searchCandidateLimit = candidateLimit }
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("o")
        for (guid, name) in [
            ("cats", "Cat Lovers"), ("dogs", "Dog People"), ("catalog", "Library"), ("x1", "Concatenation"),
        ] {
            try app.createGroup(NewGroup(guid: guid, name: name, owner: "o"))
        }
        #expect(
            Set(try app.listGroups(ListGroupsOptions(search: "CAT")).items.map(\.group.guid)) == [
                "cats", "catalog", "x1",
            ])
        #expect(try app.listGroups(ListGroupsOptions(search: "people")).items.map(\.group.guid) == ["dogs"])
        try app.updateGroup(GroupUpdate(guid: "dogs", name: "Canine Club"))
        #expect(try app.listGroups(ListGroupsOptions(search: "people")).items.isEmpty)
        #expect(try app.listGroups(ListGroupsOptions(search: "canine")).items.map(\.group.guid) == ["dogs"])
        try app.deleteGroup("cats")
        #expect(Set(try app.listGroups(ListGroupsOptions(search: "cat")).items.map(\.group.guid)) == ["catalog", "x1"])
    }
}
