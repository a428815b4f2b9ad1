import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Step 1: arguments. UIDs and GUIDs are lower-cased, then 1–100 characters of [a-z0-9_-];
/// field lengths follow the proto comments; the message names the field.
@Suite("Validation", .onEveryStore)
struct ValidationTests {
    static let long = String(repeating: "x", count: 100)

    @Test(
        "identifiers",
        arguments: [
            ("alice", "alice"), ("ALICE", "alice"), ("a_b-c9", "a_b-c9"), (long, long),
            ("", nil), (long + "x", nil), ("a b", nil), ("a.b", nil), ("ä", nil), ("a\u{0}b", nil), ("tab\t", nil),
            ("@app", nil),
        ] as [(String, String?)])
    func identifiers(_ raw: String, _ stored: String?) throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        if let stored {
            #expect(try app.createUser(raw, name: "n").uid == stored)
            #expect(try app.getUser(stored.uppercased()).uid == stored)
        } else {
            var error: ModerationError?
            do { try app.createUser(raw, name: "n") } catch let caught { error = caught }
            #expect(
                error?.code == .invalidArgument && error?.message.hasPrefix("uid:") == true,
                "\(String(describing: error))")
            #expect(ModerationClient.code { try app.getGroup(raw) } == .invalidArgument)
        }
    }

    @Test func fieldLimits() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("o")
        func code(_ group: NewGroup) -> ErrorCode? { ModerationClient.code { try app.createGroup(group) } }
        #expect(
            code(NewGroup(guid: "g1", name: String(repeating: "é", count: 100), owner: "o")) == nil,
            "100 characters, 200 bytes")
        #expect(code(NewGroup(guid: "g2", name: String(repeating: "é", count: 101), owner: "o")) == .invalidArgument)
        #expect(code(NewGroup(guid: "g3", name: "", owner: "o")) == .invalidArgument)
        #expect(
            code(NewGroup(guid: "g4", name: "n", icon: String(repeating: "i", count: 3001), owner: "o"))
                == .invalidArgument)
        #expect(
            code(NewGroup(guid: "g5", name: "n", description: String(repeating: "d", count: 256), owner: "o"))
                == .invalidArgument)
        #expect(
            code(NewGroup(guid: "g6", name: "n", metadata: ["k": String(repeating: "v", count: 5 * 1024)], owner: "o"))
                == .invalidArgument)
        #expect(
            code(
                NewGroup(
                    guid: "g7", name: "n", metadata: ["k": String(repeating: "v", count: 5 * 1024 - 1)], owner: "o"))
                == nil)
        #expect(code(NewGroup(guid: "g8", name: "n", tags: (0..<26).map { "t\($0)" }, owner: "o")) == .invalidArgument)
        #expect(
            code(NewGroup(guid: "g9", name: "n", tags: [String(repeating: "t", count: 101)], owner: "o"))
                == .invalidArgument)
        #expect(code(NewGroup(guid: "g10", name: "n", tags: ["a", "a"], owner: "o")) == .invalidArgument)
        #expect(
            code(NewGroup(guid: "g11", name: "n", owner: "o", members: (0..<101).map { MemberGrant(uid: "u\($0)") }))
                == .invalidArgument)
        #expect(
            ModerationClient.code { try app.createUser("u", name: String(repeating: "n", count: 101)) }
                == .invalidArgument)
        #expect(
            ModerationClient.code { try app.createUser("u", avatar: String(repeating: "a", count: 3001)) }
                == .invalidArgument)
        #expect(
            ModerationClient.code { try app.ban("g1", "o", reason: String(repeating: "r", count: 513)) }
                == .invalidArgument)
        #expect(ModerationClient.code { try app.ban("g1", "o", durationMs: -1) } == .invalidArgument)
        #expect(
            ModerationClient.code {
                try app.listMembers("g1", ListMembersOptions(search: String(repeating: "s", count: 101)))
            } == .invalidArgument)
        let badActor = ModerationClient(service: harness.service, caller: Caller(app: "app", actor: "Not Valid"))
        #expect(ModerationClient.code { try badActor.getGroup("g1") } == .invalidArgument)
        #expect(
            ModerationClient.code {
                try ModerationClient(service: harness.service, caller: Caller(app: "")).getGroup("g1")
            } == .invalidArgument)
    }
}
