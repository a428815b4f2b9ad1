import Moderation
import ModerationPostgres
import TestSupport
import Testing

/// The wrong-password limit counts in the database: instances on one schema allow the limit
/// together, not once each.
@Suite("PostgreSQL wrong-password limit across instances")
struct PasswordLimitTests {
    /// The default configuration's limit (`Instance` uses it).
    static let limit = ModerationService.Configuration().wrongPasswordLimit

    @Test("wrong passwords through two instances add up; a third opened later sees them too")
    func attemptsAddUp() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { second.close() }
        for uid in ["o", "x", "y"] { try first.client().createUser(uid) }
        try first.client().createGroup("g", type: .password, password: "s3cret", owner: "o")
        for attempt in 0..<Self.limit {
            let instance = attempt % 2 == 0 ? first : second
            #expect(ModerationClient.code { try instance.client("x").join("g", password: "guess") } == .wrongGroupPass)
        }
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

    @Test("a successful join through one instance clears the count the other one sees")
    func successClearsEverywhere() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { second.close() }
        for uid in ["o", "x"] { try first.client().createUser(uid) }
        try first.client().createGroup("g", type: .password, password: "s3cret", owner: "o")
        for _ in 1..<Self.limit {
            #expect(ModerationClient.code { try first.client("x").join("g", password: "guess") } == .wrongGroupPass)
        }
        #expect(try schema.value("SELECT cardinality(failures) FROM password_attempts") == "\(Self.limit - 1)")
        try second.client("x").join("g", password: "s3cret")
        #expect(try schema.value("SELECT count(*) FROM password_attempts") == "0", "the join cleared the record")
        _ = try first.client("x").leave("g")
        for _ in 0..<Self.limit {
            #expect(ModerationClient.code { try first.client("x").join("g", password: "guess") } == .wrongGroupPass)
        }
        #expect(ModerationClient.code { try second.client("x").join("g", password: "guess") } == .rateLimited)
    }

    @Test("a join without a password checks the shared count in its write: read ahead with the batch, or queried")
    func joinWithoutPasswordChecksInTheWrite() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { second.close() }
        for uid in ["o", "x"] { try first.client().createUser(uid) }
        try first.client().createGroup("g", type: .password, password: "s3cret", owner: "o")
        for _ in 0..<Self.limit {
            #expect(ModerationClient.code { try first.client("x").join("g", password: "guess") } == .wrongGroupPass)
        }
        try first.client("o").updateGroup(GroupUpdate(guid: "g", type: .public))
        // The group exists: the writer read the count ahead with the group.
        #expect(ModerationClient.code { try second.client("x").join("g") } == .rateLimited)
        // The group is gone, so nothing was read ahead: the write queries the count.
        _ = try first.client("o").deleteGroup("g")
        #expect(ModerationClient.code { try second.client("x").join("g") } == .rateLimited)
        clock.advance(by: ModerationService.Configuration().wrongPasswordWindowMs + 1_000)
        #expect(ModerationClient.code { try second.client("x").join("g") } == .groupNotFound)
    }
}
