import Moderation
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// Password groups: argon2id hashes verified away from the writer, re-checked in the write.
@Suite("Password groups", .onEveryStore)
struct PasswordTests {
    @Test func hasher() throws {
        let hasher = PasswordHasher.fastForTests
        let hash = try hasher.hash("correct horse")
        #expect(hash.hasPrefix("$argon2id$"))
        #expect(hasher.verify("correct horse", against: hash))
        #expect(!hasher.verify("correct horsE", against: hash))
        #expect(try hasher.hash("correct horse") != hash, "salted")
        #expect(PasswordHasher.standard.verify("correct horse", against: hash), "the cost lives in the hash string")
        #expect(!hasher.verify("x", against: "not a hash"))
    }

    @Test func joinWithPassword() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "x", "y"] { try app.createUser(uid) }
        try app.createGroup("g", type: .password, password: "s3cret", owner: "o")
        let x = harness.client("x")
        #expect(ModerationClient.code { try x.join("g") } == .emptyGroupPass)
        #expect(ModerationClient.code { try x.join("g", password: "S3cret") } == .wrongGroupPass)
        try x.join("g", password: "s3cret")
        try harness.client("o").updateGroup(GroupUpdate(guid: "g", password: "n3w"))
        #expect(ModerationClient.code { try harness.client("y").join("g", password: "s3cret") } == .wrongGroupPass)
        try harness.client("y").join("g", password: "n3w")
        try harness.client("o").updateGroup(GroupUpdate(guid: "g", type: .public))
        try harness.client("o").kick("g", "y")
        try harness.client("y").join("g", password: "anything")
    }

    /// A service allowing `limit` wrong passwords a minute, with users "o", "x", "y" and the
    /// password group "g" owned by "o".
    private static func limitedHarness(limit: Int) throws -> ServiceHarness {
        let harness = try ServiceHarness(
            configuration: ModerationService.Configuration(
                passwordHasher: .fastForTests, wrongPasswordLimit: limit, wrongPasswordWindowMs: 60_000))
        let app = harness.client()
        for uid in ["o", "x", "y"] { try app.createUser(uid) }
        try app.createGroup("g", type: .password, password: "s3cret", owner: "o")
        return harness
    }

    @Test("too many wrong passwords from one user refuse that user's joins to that group for a while")
    func wrongPasswordLimit() throws {
        let harness = try Self.limitedHarness(limit: 3)
        defer { harness.tearDown() }
        try harness.client().createGroup("h", type: .password, password: "s3cret", owner: "o")
        let x = harness.client("x")
        for _ in 0..<3 { #expect(ModerationClient.code { try x.join("g", password: "guess") } == .wrongGroupPass) }
        // Refused now, even with the right password, before any hash is checked.
        let refused = Result { try x.join("g", password: "s3cret") }
        let error = try #require(
            refused.failure as? ModerationError, "a join after too many wrong passwords must be refused")
        #expect(error.code == .rateLimited)
        #expect(error.message.contains("g") && error.message.contains("x"))
        #expect(Int(error.details["retry_after_ms"] ?? "") ?? 0 > 0)
        // Other users, and this user's other groups, are not affected.
        try harness.client("y").join("g", password: "s3cret")
        try x.join("h", password: "s3cret")
        // After the window the user may try again.
        harness.clock.advance(by: 61_000)
        try x.join("g", password: "s3cret")
    }

    @Test("over the limit, a join without a password is refused too, and the refusal is not replayed")
    func wrongPasswordLimitWithoutPassword() throws {
        let harness = try Self.limitedHarness(limit: 2)
        defer { harness.tearDown() }
        let x = harness.client("x")
        for _ in 0..<2 { #expect(ModerationClient.code { try x.join("g", password: "guess") } == .wrongGroupPass) }
        #expect(ModerationClient.code { try x.join("g") } == .rateLimited, "before the missing password")
        try harness.client("o").updateGroup(GroupUpdate(guid: "g", type: .public))
        let refused = Result { try x.withKey("k1").join("g") }
        let error = try #require(
            refused.failure as? ModerationError, "the group is public, the user still over the limit")
        #expect(error.code == .rateLimited)
        #expect(error.message.contains("g") && error.message.contains("x"))
        #expect(Int(error.details["retry_after_ms"] ?? "") ?? 0 > 0)
        try harness.client("y").join("g")
        harness.clock.advance(by: 61_000)
        // The refusal was not stored under the key: the retry runs, and joins.
        #expect(try x.withKey("k1").join("g").action.kind == .joined)
    }

    /// Joins race against password changes; each join must succeed exactly when its password was
    /// the group's at the time the join was written (the last change before it in the log).
    @Test func joinsRacingPasswordChanges() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        let joiners = (0..<40).map { "j\($0)" }
        for uid in ["o"] + joiners { try app.createUser(uid) }
        try app.createGroup("g", type: .password, password: "pw-0", owner: "o")
        let outcomes = Mutex<[String: Bool]>([:])
        let changer = WorkerThread(name: "changer") {
            for round in 1...30 {
                _ = try? harness.client("o").updateGroup(GroupUpdate(guid: "g", password: "pw-\(round % 2)"))
            }
        }
        let workers = (0..<4).map { worker in
            WorkerThread(name: "joiner") {
                for index in stride(from: worker, to: joiners.count, by: 4) {
                    let uid = joiners[index]
                    let ok = (try? harness.client(uid).join("g", password: "pw-0")) != nil
                    outcomes.withLock { $0[uid] = ok }
                }
            }
        }
        changer.join()
        for worker in workers { worker.join() }
        // Replay the log: the password in force is pw-0 at first, then alternates with each update.
        let log =
            try app.actions("g", ListActionsOptions(limit: 100)).actions
            + app.actions("g", ListActionsOptions(afterSeq: 100, limit: 100)).actions
        var updates = 0
        var joinedWhileCorrect: Set<String> = []
        for action in log {
            if action.kind == .updated { updates += 1 }
            if action.kind == .joined, let uid = action.actionOn?.uid {
                #expect(updates % 2 == 0, "\(uid) joined while the password was pw-1")
                joinedWhileCorrect.insert(uid)
            }
        }
        let succeeded = Set(outcomes.withLock { $0 }.filter(\.value).keys)
        #expect(succeeded == joinedWhileCorrect)
    }
}

extension Result {
    /// The error, when this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
