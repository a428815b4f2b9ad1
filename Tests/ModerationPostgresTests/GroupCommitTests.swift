import Moderation
import ModerationPostgres
import TestSupport
import Testing
import ThreadSupport

/// Group commit on PostgreSQL: queued writes share one transaction, each atomic on its own; a
/// write is finished after its COMMIT returned; reads never wait for the writer.
@Suite("PostgreSQL group commit")
struct GroupCommitTests {
    /// Fills one batch of the store's (single) writer behind a gate: every write submitted while
    /// the gate holds the writer is committed in the next batch, together.
    static func batch(_ store: PostgresStore, _ writes: [ClosureWrite]) {
        let release = BlockingSemaphore()
        let entered = BlockingSemaphore()
        let gate = ClosureWrite { _ throws(ModerationError) in
            entered.signal()
            release.wait()
        }
        store.submit(gate)
        entered.wait()
        for write in writes { store.submit(write) }
        release.signal()
        _ = gate.wait()
    }

    static func addUser(_ uid: String, thenFail: ModerationError? = nil) -> ClosureWrite {
        ClosureWrite { (tx) throws(ModerationError) in
            let appID = try tx.createApp(named: "app")
            let user = try tx.insertUser(appID: appID, User(uid: uid, name: uid))
            if let group = try tx.groupForUpdate(appID: appID, guid: "g") {
                var action = ActionRecord(
                    app: "app", kind: .updated, actionBy: .app, actionOn: user.user, group: group.group, timestamp: 1)
                try tx.appendAction(&action, appID: appID, group: group)
            }
            if let thenFail { throw thenFail }
        }
    }

    @Test("one failing write in a batch rolls back alone, and its seqs are handed out again")
    func isolation() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualClock(), writers: 1)
        defer { instance.close() }
        try instance.client().createUser("o")
        try instance.client().createGroup("g", owner: "o")
        let refused = ModerationError(.permissionDenied, "refused after writing")
        let writes = [
            Self.addUser("w1"), Self.addUser("w2", thenFail: refused), Self.addUser("w3"),
            ClosureWrite { _ throws(ModerationError) in throw ModerationError(.notAMember, "refused before writing") },
            Self.addUser("w4"),
        ]
        let commitsBefore = instance.store.commitCount
        Self.batch(instance.store, writes)
        #expect(writes.map { $0.wait()?.code } == [nil, .permissionDenied, nil, .notAMember, nil])
        #expect(instance.store.commitCount - commitsBefore <= 2, "the writes shared a transaction")
        #expect(try StoreProbe.user(instance.store, app: "app", uid: "w2") == nil, "the failing write left nothing")
        for uid in ["w1", "w3", "w4"] { #expect(try StoreProbe.user(instance.store, app: "app", uid: uid) != nil) }
        let log = try StoreProbe.log(instance.store, app: "app")
        #expect(log.map(\.seq) == Array(1...UInt64(log.count)), "no gap where the failing write's action was")
        #expect(log.suffix(3).compactMap { $0.actionOn?.uid } == ["w1", "w3", "w4"])
        #expect(try StoreProbe.bounds(instance.store, app: "app").headSeq == UInt64(log.count))
    }

    @Test("a change that fails on the server (sent without waiting) fails the write that sent it, only")
    func pipelinedFailureIsBlamed() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualClock(), writers: 1)
        defer { instance.close() }
        try instance.client().createUser("o")
        try instance.client().createGroup("g", owner: "o")
        // A membership in a group that does not exist: the foreign key refuses it when the
        // statement runs, which the write that queued it does not wait for.
        let broken = ClosureWrite { (tx) throws(ModerationError) in
            let appID = try tx.createApp(named: "app")
            let user = try tx.insertUser(appID: appID, User(uid: "ghost"))
            try tx.insertMember(
                groupID: 987_654_321, user: user, membership: Membership(scope: .participant, joinedAt: 1))
        }
        let writes = [Self.addUser("before"), broken, Self.addUser("after")]
        Self.batch(instance.store, writes)
        let outcomes = writes.map { $0.wait() }
        #expect(outcomes[0] == nil && outcomes[2] == nil, "\(outcomes)")
        #expect(outcomes[1]?.code == .internal && outcomes[1]?.message.contains("23503") == true, "\(outcomes)")
        #expect(try StoreProbe.user(instance.store, app: "app", uid: "ghost") == nil)
        for uid in ["before", "after"] { #expect(try StoreProbe.user(instance.store, app: "app", uid: uid) != nil) }
        #expect(instance.store.statistics.retries >= 1)
    }

    @Test("reads never wait for the writer, and a read sees one snapshot")
    func readsDoNotWait() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualClock(), writers: 1)
        defer { instance.close() }
        try instance.client().createUser("o")
        try instance.client().createGroup("g", owner: "o")
        let store = instance.store
        let release = BlockingSemaphore()
        let entered = BlockingSemaphore()
        let holder = ClosureWrite { (tx) throws(ModerationError) in
            let appID = try tx.createApp(named: "app")
            _ = try tx.insertUser(appID: appID, User(uid: "pending"))
            _ = try tx.groupForUpdate(appID: appID, guid: "g")
            entered.signal()
            release.wait()
        }
        store.submit(holder)
        entered.wait()
        #expect(try StoreProbe.user(store, app: "app", uid: "pending") == nil, "the uncommitted user is not visible")
        #expect(
            try instance.client().getGroup("g").group.membersCount == 1, "a read completes while the writer holds locks"
        )
        let seen = try store.read {
            (snapshot: any StoreSnapshot) throws(ModerationError) -> (StoredUser?, StoredUser?) in
            let appID = try snapshot.appID(named: "app")!
            let before = try snapshot.user(appID: appID, uid: "pending")
            release.signal()
            _ = holder.wait()
            return (before, try snapshot.user(appID: appID, uid: "pending"))
        }
        #expect(seen.0 == nil && seen.1 == nil, "one read, one snapshot")
        #expect(try StoreProbe.user(store, app: "app", uid: "pending") != nil, "a new read sees the commit")
    }

    @Test("after close, writes and reads fail with ERR_INTERNAL")
    func closed() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualClock())
        instance.close()
        let write = ClosureWrite { _ throws(ModerationError) in }
        instance.store.submit(write)
        #expect(write.wait()?.code == .internal)
        #expect(ModerationClient.code { try instance.client().getUser("x") } == .internal)
    }

    @Test("many writers, many readers: every completed write is visible to the next read")
    func readYourWrites() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualClock(), writers: 3)
        defer { instance.close() }
        let app = instance.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        for index in 0..<40 {
            try app.createUser("u\(index)")
            try app.addMembers("g", [MemberGrant(uid: "u\(index)")])
            #expect(try app.getGroup("g").group.membersCount == index + 2)
        }
    }
}
