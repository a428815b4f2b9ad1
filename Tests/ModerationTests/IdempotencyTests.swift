import Moderation
import ModerationSQLite
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// Idempotency keys: a retry with the same key (same app, same acting user, within 24 h) gets
/// the first call's reply bytes and changes nothing — also after a restart.
@Suite("Idempotency", .onEveryStore)
struct IdempotencyTests {
    /// Counts the calls of a replay encoder.
    final class Encoder: Sendable {
        let calls = Atomic<Int>(0)
        func encoder<T>() -> ReplayEncoder<T> {
            { result in
                self.calls.wrappingAdd(1, ordering: .relaxed)
                return MutationWaiter.describe(result)
            }
        }
    }

    static func kick(
        _ harness: ServiceHarness, key: String, actor: String = "o", uid: String = "p", encoder: Encoder = Encoder()
    ) -> MutationResult<ActionRecord> {
        MutationWaiter.wait { completion in
            harness.service.kickMember(
                Caller(app: "app", actor: actor, idempotencyKey: key, requestID: "req-\(key)"), guid: "g", uid: uid,
                replay: encoder.encoder(), completion: completion)
        }
    }

    static func setUp(clock: ManualWallClock = ManualWallClock()) throws -> ServiceHarness {
        let harness = try ServiceHarness(clock: clock)
        let app = harness.client()
        for uid in ["o", "a", "p", "q"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o",
            members: [MemberGrant(uid: "a", scope: .admin), MemberGrant(uid: "p"), MemberGrant(uid: "q")])
        return harness
    }

    static func logCount(_ harness: ServiceHarness) throws -> Int {
        try harness.client().actions("g", ListActionsOptions(limit: 100)).actions.count
    }

    @Test("the same key replays the same bytes and records no second action")
    func replay() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let first = Self.kick(harness, key: "k1")
        guard case .done(.success(let action), let recorded) = first else {
            Issue.record("first call: \(first)")
            return
        }
        #expect(
            recorded == MutationWaiter.describe(Result<ActionRecord, ModerationError>.success(action)),
            "the call that ran hands over the reply it stored")
        #expect(action.idempotencyKey == "k1" && action.requestID == "req-k1")
        let count = try Self.logCount(harness)
        try harness.client("p").join("g") // the state changes, the retry still replays
        let second = Self.kick(harness, key: "k1")
        guard case .replayed(let bytes) = second else {
            Issue.record("second call: \(second)")
            return
        }
        #expect(bytes == MutationWaiter.describe(Result<ActionRecord, ModerationError>.success(action)))
        #expect(try Self.logCount(harness) == count + 1, "only the join was recorded")
        #expect(try harness.client().memberState("g", "p").isMember, "the retry changed nothing")
    }

    @Test("retries sent at once with the same key: the first runs, the other replays its reply")
    func retriesAtOnce() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let count = 20
        for index in 0..<count {
            try harness.client().createUser("m\(index)")
            try harness.client("m\(index)").join("g")
        }
        // Both calls of a key are queued before either is answered, so a store that batches
        // writes runs most pairs in one transaction.
        let results = Mutex<[Int: [MutationResult<ActionRecord>]]>([:])
        let answered = BlockingSemaphore()
        let encoder = Encoder()
        for index in 0..<count {
            for _ in 0..<2 {
                harness.service.kickMember(
                    Caller(app: "app", actor: "o", idempotencyKey: "k\(index)"), guid: "g", uid: "m\(index)",
                    replay: encoder.encoder()
                ) { result in
                    results.withLock { $0[index, default: []].append(result) }
                    answered.signal()
                }
            }
        }
        for _ in 0..<(2 * count) { answered.wait() }
        for (index, pair) in results.withLock({ $0 }) {
            var ran: ActionRecord?
            var replayed: [UInt8]?
            var recorded: [UInt8]?
            for result in pair {
                switch result {
                case .done(.success(let action), let reply):
                    ran = action
                    recorded = reply
                case .replayed(let bytes): replayed = bytes
                case .done(.failure(let error), _): Issue.record("key k\(index): \(error)")
                }
            }
            let action = try #require(ran, "key k\(index): one call ran")
            #expect(replayed == MutationWaiter.describe(Result<ActionRecord, ModerationError>.success(action)))
            #expect(recorded == replayed, "key k\(index): the call that ran sent the bytes the retry replayed")
        }
        #expect(encoder.calls.load(ordering: .relaxed) == count, "each key's reply was made once")
    }

    @Test("a failed first call is replayed as that failure")
    func failureIsStored() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let first = Self.kick(harness, key: "k2", uid: "ghost")
        guard case .done(.failure(let error), let recorded) = first else {
            Issue.record("\(first)")
            return
        }
        #expect(error.code == .uidNotFound)
        try harness.client().createUser("ghost")
        try harness.client().addMembers("g", [MemberGrant(uid: "ghost")])
        guard case .replayed(let bytes) = Self.kick(harness, key: "k2", uid: "ghost") else {
            Issue.record("not replayed")
            return
        }
        #expect(bytes == MutationWaiter.describe(Result<ActionRecord, ModerationError>.failure(error)))
        #expect(recorded == bytes, "the failed call sent the bytes its retry replays")
        #expect(try harness.client().memberState("g", "ghost").isMember)
        // Invalid arguments with a key are stored too; without a key they never reach the store.
        guard case .done(.failure(let invalid), _) = Self.kick(harness, key: "k3", uid: "Bad Uid") else {
            Issue.record("invalid")
            return
        }
        #expect(invalid.code == .invalidArgument)
        guard case .replayed = Self.kick(harness, key: "k3", uid: "p") else {
            Issue.record("invalid not replayed")
            return
        }
    }

    @Test("replies survive closing and reopening the store")
    func survivesRestart() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        guard case .done(.success, _) = Self.kick(harness, key: "durable") else {
            Issue.record("first")
            return
        }
        try harness.reopen()
        guard case .replayed = Self.kick(harness, key: "durable") else {
            Issue.record("not replayed after reopen")
            return
        }
        try harness.client("p").join("g")
        guard case .replayed = Self.kick(harness, key: "durable") else {
            Issue.record("not replayed")
            return
        }
        #expect(try harness.client().memberState("g", "p").isMember)
    }

    @Test("keys are per app and per acting user")
    func scopes() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        guard case .done(.success, _) = Self.kick(harness, key: "same", actor: "o", uid: "p") else {
            Issue.record("o")
            return
        }
        guard case .done(.success, _) = Self.kick(harness, key: "same", actor: "a", uid: "q") else {
            Issue.record("a ran again")
            return
        }
        let app = ModerationClient(service: harness.service, caller: Caller(app: "app", idempotencyKey: "same"))
        try app.createUser("z")
        let other = ModerationClient(service: harness.service, caller: Caller(app: "other-app", idempotencyKey: "same"))
        try other.createUser("z")
        #expect(try other.getUser("z").uid == "z")
    }

    @Test("a key is forgotten after 24 hours, and purged by maintenance")
    func window() throws {
        let clock = ManualWallClock()
        let harness = try Self.setUp(clock: clock)
        defer { harness.tearDown() }
        guard case .done(.success, _) = Self.kick(harness, key: "old") else {
            Issue.record("first")
            return
        }
        try harness.client("p").join("g")
        clock.advance(by: 24 * 3_600_000 + 1)
        guard case .done(.success, _) = Self.kick(harness, key: "old") else {
            Issue.record("the old key still replayed")
            return
        }
        clock.advance(by: 24 * 3_600_000 + 1)
        let done = BlockingSemaphore()
        let purged = Atomic<Int>(0)
        harness.service.runMaintenance { result in
            if case .success(let report) = result { purged.store(report.purgedReplies, ordering: .relaxed) }
            done.signal()
        }
        done.wait()
        #expect(purged.load(ordering: .relaxed) == 1)
    }

    @Test("without a key the encoder is never called")
    func keyless() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let encoder = Encoder()
        guard case .done(.success, reply: nil) = Self.kick(harness, key: "", encoder: encoder) else {
            Issue.record("kick")
            return
        }
        guard case .done(.failure, reply: nil) = Self.kick(harness, key: "", uid: "Bad Uid", encoder: encoder) else {
            Issue.record("bad")
            return
        }
        #expect(encoder.calls.load(ordering: .relaxed) == 0)
        let keyed = Encoder()
        _ = Self.kick(harness, key: "x", uid: "q", encoder: keyed)
        _ = Self.kick(harness, key: "x", uid: "q", encoder: keyed)
        #expect(keyed.calls.load(ordering: .relaxed) == 1, "called once, for the first call")
    }
}
