import Moderation
import ModerationPostgres
import StoreTestSupport
import TestSupport
import Testing

/// The wrong-password limit counts in the database: instances on one schema allow the limit
/// together, not once each.
@Suite("PostgreSQL wrong-password limit across instances")
struct PasswordLimitTests {
    /// The default configuration's limit (`Instance` uses it).
    static let limit = ModerationService.Configuration().wrongPasswordLimit

    /// Two instances on a fresh schema, sharing a clock, with users "o" and "x" (and `more`) and
    /// the password group "g" owned by "o"; `body` runs between that and the cleanup.
    private static func withTwoInstances(
        more: [String] = [], _ body: (TestSchema, ManualWallClock, Instance, Instance) throws -> Void
    ) throws {
        try Instance.withPair { schema, clock, first, second in
            for uid in ["o", "x"] + more { try first.client().createUser(uid) }
            try first.client().createGroup("g", type: .password, password: "s3cret", owner: "o")
            try body(schema, clock, first, second)
        }
    }

    /// "x" tries a wrong password for "g" `times` times, through `instances` in turn.
    private static func guessWrong(_ times: Int, through instances: [Instance]) {
        for attempt in 0..<times {
            let instance = instances[attempt % instances.count]
            #expect(ModerationClient.code { try instance.client("x").join("g", password: "guess") } == .wrongGroupPass)
        }
    }

    @Test("wrong passwords through two instances add up; a third opened later sees them too")
    func attemptsAddUp() throws {
        try Self.withTwoInstances(more: ["y"]) { schema, clock, first, second in
            Self.guessWrong(Self.limit, through: [first, second])
            for instance in [first, second] {
                #expect(
                    ModerationClient.code { try instance.client("x").join("g", password: "s3cret") } == .rateLimited,
                    "the limit is shared: \(Self.limit) wrong passwords in all, half through each instance")
            }
            let third = try Instance(url: schema.url, schema: schema.name, clock: clock)
            defer { third.close() }
            #expect(ModerationClient.code { try third.client("x").join("g", password: "s3cret") } == .rateLimited)
            // Another user is not affected; after the window, the user may try again.
            try second.client("y").join("g", password: "s3cret")
            clock.advance(by: ModerationService.Configuration().wrongPasswordWindowMs + 1_000)
            try third.client("x").join("g", password: "s3cret")
        }
    }

    @Test("a successful join through one instance clears the count the other one sees")
    func successClearsEverywhere() throws {
        try Self.withTwoInstances { schema, _, first, second in
            Self.guessWrong(Self.limit - 1, through: [first])
            #expect(try schema.value("SELECT cardinality(failures) FROM password_attempts") == "\(Self.limit - 1)")
            try second.client("x").join("g", password: "s3cret")
            #expect(try schema.value("SELECT count(*) FROM password_attempts") == "0", "the join cleared the record")
            _ = try first.client("x").leave("g")
            Self.guessWrong(Self.limit, through: [first])
            #expect(ModerationClient.code { try second.client("x").join("g", password: "guess") } == .rateLimited)
        }
    }

    @Test("a join without a password checks the shared count in its write, read ahead with the batch's groups")
    func joinWithoutPasswordChecksInTheWrite() throws {
        try Self.withTwoInstances { _, clock, first, second in
            Self.guessWrong(Self.limit, through: [first])
            try first.client("o").updateGroup(GroupUpdate(guid: "g", type: .public))
            // The group exists: the writer read the count ahead with the group.
            #expect(ModerationClient.code { try second.client("x").join("g") } == .rateLimited)
            // The group is gone: the read-ahead reads the count of a pair it found no group for.
            _ = try first.client("o").deleteGroup("g")
            #expect(ModerationClient.code { try second.client("x").join("g") } == .rateLimited)
            clock.advance(by: ModerationService.Configuration().wrongPasswordWindowMs + 1_000)
            #expect(ModerationClient.code { try second.client("x").join("g") } == .groupNotFound)
        }
    }
}
