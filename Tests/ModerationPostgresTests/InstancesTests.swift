import Glibc
import Moderation
import ModerationPostgres
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// Several store instances on one schema, as several servers on one database: one log per app
/// (gapless, in commit order), writes of an app put off rather than deadlocked, idempotency keys
/// and expiring bans that hold across instances.
@Suite("PostgreSQL store instances sharing a database")
struct InstancesTests {
    /// Takes `app`'s lock in a write on `instance` and keeps its transaction open until `release`
    /// is signalled; returns once the lock is held.
    static func holdLock(of app: String, on instance: Instance) -> (holder: ClosureWrite, release: BlockingSemaphore) {
        let release = BlockingSemaphore()
        let holding = BlockingSemaphore()
        let holder = ClosureWrite(affinity: app) { (tx) throws(ModerationError) in
            _ = try tx.appID(named: app)
            holding.signal()
            release.wait()
        }
        instance.store.submit(holder)
        holding.wait()
        return (holder, release)
    }

    @Test("concurrent writes through two instances: seqs gapless; each commit handler sees 1, 2, 3, … once")
    func gaplessAcrossInstances() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { second.close() }
        let users = (0..<12).map { "u\($0)" }
        for uid in users { try first.client().createUser(uid) }
        for guid in ["g0", "g1", "g2"] { try second.client().createGroup(guid, owner: "u0") }
        let errors = Mutex<[String]>([])
        let threads = (0..<6).map { index in
            WorkerThread(name: "writer-\(index)") {
                let instance = index % 2 == 0 ? first : second
                var random = SystemRandomNumberGenerator()
                for round in 0..<40 {
                    let uid = users[1 + (index * 7 + round) % (users.count - 1)]
                    let guid = "g\(round % 3)"
                    let client = instance.client(uid)
                    do throws(ModerationError) {
                        if Bool.random(using: &random) {
                            _ = try client.join(guid)
                        } else {
                            _ = try client.leave(guid)
                        }
                    } catch  where error.code == .alreadyJoined || error.code == .groupNotJoined {
                    } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for thread in threads { thread.join() }
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 })")
        let log = try StoreProbe.log(first.store, app: "app")
        #expect(!log.isEmpty)
        #expect(log.map(\.seq) == Array(1...UInt64(log.count)), "the app's log is gapless across instances")
        #expect(try StoreProbe.bounds(second.store, app: "app").headSeq == UInt64(log.count))
        // One more write through each, so each has caught up with the other's last commits.
        for (index, instance) in [first, second].enumerated() {
            _ = try instance.client("u0").updateGroup(GroupUpdate(guid: "g0", description: "round \(index)"))
        }
        for (name, instance) in [("first", first), ("second", second)] {
            let seen = instance.delivered.all.map(\.seq)
            #expect(
                seen == Array(1...UInt64(seen.count)),
                "\(name): the handler saw \(seen.count) actions out of order or twice")
            #expect(seen.count >= log.count + 1, "\(name): saw \(seen.count) of \(log.count + 2)")
        }
        for guid in ["g0", "g1", "g2"] {
            #expect(Invariants.violations(service: first.service, store: first.store, app: "app", guid: guid).isEmpty)
        }
    }

    @Test("a write whose app another instance holds is put off to the next batch, not deadlocked")
    func deferredWhileHeld() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock, writers: 1)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock, writers: 1)
        defer { second.close() }
        for app in ["a1", "a2"] {
            _ = try ModerationClient(service: first.service, caller: Caller(app: app)).createUser("o")
        }
        // The second instance holds app a2's lock in an open transaction.
        let (holder, release) = Self.holdLock(of: "a2", on: second)
        // The first instance's batch: a1 (locked first, so the transaction holds a lock), then a2.
        let entered = BlockingSemaphore()
        let go = BlockingSemaphore()
        let gate = ClosureWrite(affinity: "a1") { (tx) throws(ModerationError) in
            _ = try tx.appID(named: "a1")
            entered.signal()
            go.wait()
        }
        first.store.submit(gate)
        entered.wait()
        let toA1 = ClosureWrite(affinity: "a1") { (tx) throws(ModerationError) in
            _ = try tx.insertUser(appID: try tx.createApp(named: "a1"), User(uid: "one"))
        }
        let toA2 = ClosureWrite(affinity: "a2") { (tx) throws(ModerationError) in
            _ = try tx.insertUser(appID: try tx.createApp(named: "a2"), User(uid: "two"))
        }
        first.store.submit(toA1)
        first.store.submit(toA2)
        go.signal()
        #expect(gate.wait() == nil)
        #expect(toA1.wait() == nil, "a1's write committed while a2 was held")
        #expect(first.store.statistics.deferredWrites >= 1)
        release.signal()
        #expect(holder.wait() == nil)
        #expect(toA2.wait() == nil, "a2's write ran once the lock was free")
        #expect(try StoreProbe.user(first.store, app: "a2", uid: "two") != nil)
    }

    @Test("writes queued while a batch waits for its app's lock join that batch: one commit, not one wait each")
    func queuedWritesJoinWaitingBatch() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let application = "joining-\(schema.name)"
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock, writers: 1) {
            $0.applicationName = application
        }
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock, writers: 1)
        defer { second.close() }
        try first.client().createUser("o")
        try first.client().createGroup("g", owner: "o")
        // The second instance holds the app's lock in an open transaction.
        let (holder, release) = Self.holdLock(of: "app", on: second)
        let before = first.store.statistics
        func insert(_ uid: String) -> ClosureWrite {
            ClosureWrite(affinity: "app", footprint: WriteFootprint(app: "app", guid: "g", uids: [uid])) {
                (tx) throws(ModerationError) in
                _ = try tx.insertUser(appID: try tx.createApp(named: "app"), User(uid: uid))
            }
        }
        let waiting = insert("w0")
        first.store.submit(waiting)
        // The first instance's batch waits for the lock; five more writes queue meanwhile.
        #expect(
            waitUntil {
                let sql = """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE application_name = '\(application)' AND wait_event_type = 'Lock'
                    """
                return (try? PostgresCluster.value(sql, url: schema.url)) == "1"
            }, "the batch did not wait for the lock")
        let queued = (1...5).map { insert("w\($0)") }
        for write in queued { first.store.submit(write) }
        usleep(50_000)
        release.signal()
        #expect(holder.wait() == nil)
        for write in [waiting] + queued { #expect(write.wait() == nil) }
        let after = first.store.statistics
        #expect(after.commits - before.commits == 1, "the six writes committed together")
        #expect(after.joinedWhileLocking - before.joinedWhileLocking == 5)
        #expect(after.appLockWaitSeconds - before.appLockWaitSeconds >= 0.04)
        for index in 0...5 { #expect(try StoreProbe.user(first.store, app: "app", uid: "w\(index)") != nil) }
    }

    @Test("a group or user the read-ahead did not find is missing to the batch's writes, until one of them creates it")
    func missingRowsInOneBatch() throws {
        try Instance.withPair(writers: 1) { _, _, first, second in
            try first.client().createUser("o")
            try first.client().createGroup("g", owner: "o")
            let (holder, release) = Self.holdLock(of: "app", on: second)
            let before = first.store.statistics
            typealias Body = @Sendable (any StoreTransaction, _ appID: Int64) throws(ModerationError) -> Void
            func write(on guid: String, user: String = "o", _ body: @escaping Body) -> ClosureWrite {
                ClosureWrite(affinity: "app", footprint: WriteFootprint(app: "app", guid: guid, uids: [user])) {
                    (tx) throws(ModerationError) in
                    try body(tx, try tx.createApp(named: "app"))
                }
            }
            let writes = [
                write(on: "g") { tx, app throws(ModerationError) in
                    if try tx.groupForUpdate(appID: app, guid: "g") == nil { throw .storage("g not found") }
                },
                write(on: "absent") { tx, app throws(ModerationError) in
                    if try tx.groupForUpdate(appID: app, guid: "absent") != nil { throw .storage("absent found") }
                },
                write(on: "new") { tx, app throws(ModerationError) in
                    let group = Group(guid: "new", name: "New", type: .public, owner: "o")
                    _ = try tx.insertGroup(appID: app, group, passwordHash: nil)
                },
                write(on: "new") { tx, app throws(ModerationError) in
                    if try tx.groupForUpdate(appID: app, guid: "new") == nil { throw .storage("new not found") }
                },
                write(on: "g", user: "ghost") { tx, app throws(ModerationError) in
                    if try tx.user(appID: app, uid: "ghost") != nil { throw .storage("ghost found") }
                },
                write(on: "g", user: "newbie") { tx, app throws(ModerationError) in
                    _ = try tx.insertUser(appID: app, User(uid: "newbie"))
                },
                write(on: "g", user: "newbie") { tx, app throws(ModerationError) in
                    if try tx.user(appID: app, uid: "newbie") == nil { throw .storage("newbie not found") }
                },
            ]
            // The first write waits for the lock; the rest queue meanwhile and join its batch.
            first.store.submit(writes[0])
            usleep(50_000)
            for write in writes.dropFirst() { first.store.submit(write) }
            usleep(50_000)
            release.signal()
            #expect(holder.wait() == nil)
            for write in writes { #expect(write.wait() == nil) }
            #expect(first.store.statistics.commits - before.commits == 1, "the writes ran in one batch")
            #expect(try first.client("o").getGroup("new").group.guid == "new")
            #expect(try first.client().getUser("newbie").uid == "newbie")
        }
    }

    @Test("a retry with the same key on another instance replays the stored reply")
    func idempotencyAcrossInstances() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { second.close() }
        for uid in ["o", "p"] { try first.client().createUser(uid) }
        try first.client().createGroup("g", owner: "o", members: [MemberGrant(uid: "p")])
        func kick(_ instance: Instance) -> MutationResult<ActionRecord> {
            MutationWaiter.wait { completion in
                instance.service.kickMember(
                    Caller(app: "app", actor: "o", idempotencyKey: "k"), guid: "g", uid: "p",
                    replay: { MutationWaiter.describe($0) }, completion: completion)
            }
        }
        guard case .done(.success(let action), _) = kick(first) else {
            Issue.record("the first call failed")
            return
        }
        try second.client("p").join("g")
        guard case .replayed(let bytes) = kick(second) else {
            Issue.record("the retry on the other instance was not replayed")
            return
        }
        #expect(bytes == MutationWaiter.describe(Result<ActionRecord, ModerationError>.success(action)))
        #expect(try second.client().memberState("g", "p").isMember, "the retry changed nothing")
    }

    @Test("expired bans swept by several instances at once: one unbanned (expired) action each")
    func sweepOnce() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let instances = try (0..<3).map { _ in try Instance(url: schema.url, schema: schema.name, clock: clock) }
        defer { for instance in instances { instance.close() } }
        let users = (0..<30).map { "b\($0)" }
        try instances[0].client().createUser("o")
        for uid in users { try instances[0].client().createUser(uid) }
        for guid in ["g0", "g1"] { try instances[1].client().createGroup(guid, owner: "o") }
        for (index, uid) in users.enumerated() {
            _ = try instances[index % 3].client("o").ban("g\(index % 2)", uid, durationMs: 1_000)
        }
        clock.advance(by: 5_000)
        let threads = instances.enumerated().map { index, instance in
            WorkerThread(name: "sweep-\(index)") {
                for _ in 0..<3 { _ = try? instance.service.runMaintenanceAndWait() }
            }
        }
        for thread in threads { thread.join() }
        let expired = try StoreProbe.log(instances[0].store, app: "app").filter {
            $0.kind == .unbanned && $0.reason == "expired"
        }
        #expect(expired.count == users.count, "\(expired.count) expiries recorded for \(users.count) bans")
        #expect(Set(expired.compactMap { $0.actionOn?.uid }) == Set(users))
        let swept = instances.map(\.service.expiredBansSweptCount).reduce(0, +)
        #expect(swept >= UInt64(users.count))
    }

    @Test("expired mutes swept by several instances at once: one unmuted (expired) action each")
    func sweepMutesOnce() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let instances = try (0..<3).map { _ in try Instance(url: schema.url, schema: schema.name, clock: clock) }
        defer { for instance in instances { instance.close() } }
        let users = (0..<30).map { "m\($0)" }
        try instances[0].client().createUser("o")
        for uid in users { try instances[0].client().createUser(uid) }
        for (index, guid) in ["g0", "g1"].enumerated() {
            let members = users.enumerated().filter { $0.offset % 2 == index }.map { MemberGrant(uid: $0.element) }
            try instances[1].client().createGroup(guid, owner: "o", members: members)
        }
        for (index, uid) in users.enumerated() {
            _ = try instances[index % 3].client("o").mute("g\(index % 2)", uid, durationMs: 1_000)
        }
        clock.advance(by: 5_000)
        let threads = instances.enumerated().map { index, instance in
            WorkerThread(name: "sweep-mutes-\(index)") {
                for _ in 0..<3 { _ = try? instance.service.sweepExpiredMutesAndWait() }
            }
        }
        for thread in threads { thread.join() }
        let expired = try StoreProbe.log(instances[0].store, app: "app").filter {
            $0.kind == .unmuted && $0.reason == "expired"
        }
        #expect(expired.count == users.count, "\(expired.count) expiries recorded for \(users.count) mutes")
        #expect(Set(expired.compactMap { $0.actionOn?.uid }) == Set(users))
        #expect(instances.map(\.service.expiredMutesSweptCount).reduce(0, +) >= UInt64(users.count))
        for guid in ["g0", "g1"] {
            #expect(Invariants.violations(store: instances[0].store, app: "app", guid: guid).isEmpty)
        }
    }
}
