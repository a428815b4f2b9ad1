import Moderation
import ModerationPostgres
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// Group commit on PostgreSQL: queued writes share one transaction, each atomic on its own; a
/// write is finished after its COMMIT returned; reads never wait for the writer.
@Suite("PostgreSQL group commit")
struct GroupCommitTests {
    /// Runs `body` with a single-writer instance on a fresh schema, where user "o" owns group "g".
    static func withGroup(_ body: (Instance) throws -> Void) throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualWallClock(), writers: 1)
        defer { instance.close() }
        try instance.client().createUser("o")
        try instance.client().createGroup("g", owner: "o")
        try body(instance)
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
        try Self.withGroup { (instance) throws in
            let refused = ModerationError(.permissionDenied, "refused after writing")
            let writes = [
                Self.addUser("w1"), Self.addUser("w2", thenFail: refused), Self.addUser("w3"),
                ClosureWrite { _ throws(ModerationError) in throw ModerationError(.notAMember, "refused before writing")
                },
                Self.addUser("w4"),
            ]
            let commitsBefore = instance.store.commitCount
            ClosureWrite.submitAsOneBatch(writes, to: instance.store)
            #expect(writes.map { $0.wait()?.code } == [nil, .permissionDenied, nil, .notAMember, nil])
            #expect(instance.store.commitCount - commitsBefore <= 2, "the writes shared a transaction")
            #expect(try StoreProbe.user(instance.store, app: "app", uid: "w2") == nil, "the failing write left nothing")
            for uid in ["w1", "w3", "w4"] { #expect(try StoreProbe.user(instance.store, app: "app", uid: uid) != nil) }
            let log = try StoreProbe.log(instance.store, app: "app")
            #expect(log.map(\.seq) == Array(1...UInt64(log.count)), "no gap where the failing write's action was")
            #expect(log.suffix(3).compactMap { $0.actionOn?.uid } == ["w1", "w3", "w4"])
            #expect(try StoreProbe.bounds(instance.store, app: "app").headSeq == UInt64(log.count))
        }
    }

    /// The seqs a write saw in the log.
    final class SeenSeqs: Sendable {
        private let seqs = Mutex<[UInt64]>([])
        func set(_ value: [UInt64]) { seqs.withLock { $0 = value } }
        var all: [UInt64] { seqs.withLock { $0 } }
    }

    /// A write that records an update of group "g" by the app (and nothing else), then throws
    /// `thenFail` if given; with `saw`, it first reads the app's log and keeps the seqs there.
    static func recordUpdate(thenFail: ModerationError? = nil, saw: SeenSeqs? = nil) -> ClosureWrite {
        ClosureWrite { (tx) throws(ModerationError) in
            let appID = try tx.createApp(named: "app")
            guard let group = try tx.groupForUpdate(appID: appID, guid: "g") else {
                throw ModerationError(.groupNotFound, "no group g")
            }
            var action = ActionRecord(
                app: "app", kind: .updated, actionBy: .app, actionOn: nil, group: group.group, timestamp: 1)
            try tx.appendAction(&action, appID: appID, group: group)
            if let saw {
                saw.set(try tx.actions(appID: appID, query: ActionLogQuery(afterSeq: 0, limit: 1_000)).map(\.seq))
            }
            if let thenFail { throw thenFail }
        }
    }

    @Test(
        "a batch's actions wait in memory for COMMIT: a write that fails after recording one is undone without a rollback; the log read in the transaction shows them"
    )
    func actionsInsertedAtCommit() throws {
        try Self.withGroup { (instance) throws in
            let head = try StoreProbe.bounds(instance.store, app: "app").headSeq
            let refused = ModerationError(.permissionDenied, "refused after recording")
            let saw = SeenSeqs()
            let writes = [
                Self.recordUpdate(), Self.recordUpdate(thenFail: refused), Self.recordUpdate(),
                Self.recordUpdate(saw: saw), Self.recordUpdate(),
            ]
            let retriesBefore = instance.store.statistics.retries
            ClosureWrite.submitAsOneBatch(writes, to: instance.store)
            #expect(writes.map { $0.wait()?.code } == [nil, ErrorCode.permissionDenied, nil, nil, nil])
            #expect(instance.store.statistics.retries == retriesBefore, "the failed write was undone in memory")
            #expect(saw.all.suffix(3) == [head + 1, head + 2, head + 3], "the log read saw the batch's actions")
            let log = try StoreProbe.log(instance.store, app: "app")
            #expect(log.map(\.seq) == Array(1...(head + 4)), "gapless: the failed write's seq went to the next")
        }
    }

    @Test("a change that fails on the server (sent without waiting) fails the write that sent it, only")
    func pipelinedFailureIsBlamed() throws {
        try Self.withGroup { (instance) throws in
            // A membership in a group that does not exist: the foreign key refuses it when the
            // statement runs, which the write that queued it does not wait for.
            let broken = ClosureWrite { (tx) throws(ModerationError) in
                let appID = try tx.createApp(named: "app")
                let user = try tx.insertUser(appID: appID, User(uid: "ghost"))
                try tx.insertMember(
                    groupID: 987_654_321, user: user, membership: Membership(scope: .participant, joinedAt: 1))
            }
            let writes = [Self.addUser("before"), broken, Self.addUser("after")]
            ClosureWrite.submitAsOneBatch(writes, to: instance.store)
            let outcomes = writes.map { $0.wait() }
            #expect(outcomes[0] == nil && outcomes[2] == nil, "\(outcomes)")
            #expect(outcomes[1]?.code == .internal && outcomes[1]?.message.contains("23503") == true, "\(outcomes)")
            #expect(try StoreProbe.user(instance.store, app: "app", uid: "ghost") == nil)
            for uid in ["before", "after"] { #expect(try StoreProbe.user(instance.store, app: "app", uid: uid) != nil) }
            #expect(instance.store.statistics.retries >= 1)
        }
    }

    /// A user's row, membership and ban in group `g`, as a write reads them: the group first, so
    /// the writer reads the three in one statement (`PostgresSession.standing`).
    struct Standing: Equatable {
        var user: StoredUser?
        var membership: Membership?
        var ban: Ban?
    }

    static func standing(_ tx: any StoreTransaction, _ uid: String) throws(ModerationError) -> Standing {
        guard let appID = try tx.appID(named: "app"), let group = try tx.groupForUpdate(appID: appID, guid: "g")
        else { throw ModerationError(.groupNotFound, "no group g") }
        let user = try tx.user(appID: appID, uid: uid)
        return Standing(
            user: user, membership: try tx.membership(groupID: group.id, uid: uid),
            ban: try tx.ban(groupID: group.id, uid: uid))
    }

    /// With `readAhead`, the writes declare their footprints, so the writer reads every standing
    /// for the batch in one statement before they run (`PostgresSession.prefetch`); without, each
    /// write reads its own in the middle.
    @Test(
        "a user's standing read in one statement, or ahead for the whole batch, is what a reader's statements one by one say, this batch's own changes included",
        arguments: [false, true]
    )
    func standingInOneStatement(readAhead: Bool) throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualWallClock(), writers: 1)
        defer { instance.close() }
        let client = instance.client()
        let uids = ["member", "muted", "banned", "outsider", "moved", "missing"]
        for uid in ["o"] + uids.dropLast() { _ = try client.createUser(uid) }
        _ = try client.createGroup("g", owner: "o")
        _ = try client.addMembers(
            "g", [MemberGrant(uid: "member", scope: .moderator), MemberGrant(uid: "muted"), MemberGrant(uid: "moved")])
        let owner = client.acting(as: "o")
        _ = try owner.mute("g", "muted", reason: "loud", durationMs: 60_000)
        _ = try owner.ban("g", "banned", reason: "spam")

        let expected = try instance.store.read { (snapshot) throws(ModerationError) -> [String: Standing] in
            guard let appID = try snapshot.appID(named: "app"), let group = try snapshot.group(appID: appID, guid: "g")
            else { throw ModerationError(.groupNotFound, "no group g") }
            var standings: [String: Standing] = [:]
            for uid in uids {
                standings[uid] = Standing(
                    user: try snapshot.user(appID: appID, uid: uid),
                    membership: try snapshot.membership(groupID: group.id, uid: uid),
                    ban: try snapshot.ban(groupID: group.id, uid: uid))
            }
            return standings
        }
        #expect(expected["muted"]?.membership?.mute?.reason == "loud" && expected["banned"]?.ban?.reason == "spam")
        #expect(expected["missing"]?.user == nil)

        let seen = Mutex<[String: Standing]>([:])
        let ban = Ban(
            uid: "moved", name: "User moved", scopeBefore: .participant, joinedAt: 1, bannedAt: 2, bannedBy: "o",
            reason: "x",
            expiresAt: 0)
        func footprint(_ uids: [String], guid: String = "g", app: String = "app") -> WriteFootprint? {
            readAhead ? WriteFootprint(app: app, guid: guid, uids: uids) : nil
        }
        var writes = uids.map { uid in
            ClosureWrite(footprint: footprint([uid])) { (tx) throws(ModerationError) in
                let standing = try Self.standing(tx, uid)
                seen.withLock { $0[uid] = standing }
            }
        }
        writes += [
            // Footprints naming what does not exist are read ahead as nothing.
            ClosureWrite(footprint: footprint(["member"], guid: "nope")) { _ throws(ModerationError) in },
            ClosureWrite(footprint: footprint(["member"], app: "no-app")) { _ throws(ModerationError) in },
            // A write that reads a standing and fails before writing: what it read is put back.
            ClosureWrite(footprint: footprint(["outsider", "o"])) { (tx) throws(ModerationError) in
                _ = try Self.standing(tx, "outsider")
                throw ModerationError(.permissionDenied, "refused before writing")
            },
            // This batch moves "moved" from member to banned; the next write reads that.
            ClosureWrite(footprint: footprint(["moved"])) { (tx) throws(ModerationError) in
                guard let appID = try tx.appID(named: "app"),
                    let group = try tx.groupForUpdate(appID: appID, guid: "g"),
                    let user = try tx.user(appID: appID, uid: "moved")
                else { throw ModerationError(.uidNotFound, "no user moved") }
                try tx.deleteMember(groupID: group.id, uid: "moved")
                try tx.insertBan(groupID: group.id, user: user, ban: ban)
            },
            ClosureWrite(footprint: footprint(["moved"])) { (tx) throws(ModerationError) in
                let standing = try Self.standing(tx, "moved")
                seen.withLock { $0["moved after"] = standing }
            },
        ]
        let prefetchedBefore = instance.store.statistics.prefetchedStandings
        let readAheadBefore = instance.store.statistics.readAheadSeconds
        ClosureWrite.submitAsOneBatch(writes, to: instance.store)
        #expect(
            writes.map { $0.wait()?.code }
                == Array(repeating: nil, count: uids.count) + [nil, nil, .permissionDenied, nil, nil])
        // Every live user named with group g, once: the five of `uids` but "missing", and "o".
        #expect(instance.store.statistics.prefetchedStandings - prefetchedBefore == (readAhead ? 6 : 0))
        // Its time is counted (`moderation_store_read_ahead_seconds_total`) when there was one.
        #expect((instance.store.statistics.readAheadSeconds > readAheadBefore) == readAhead)
        let standings = seen.withLock { $0 }
        for uid in uids { #expect(standings[uid] == expected[uid], "\(uid)") }
        let moved = standings["moved after"]
        #expect(moved?.user == expected["moved"]?.user && moved?.membership == nil && moved?.ban == ban)
    }

    @Test("reads never wait for the writer, and a read sees one snapshot")
    func readsDoNotWait() throws {
        try Self.withGroup { (instance) throws in
            let store = instance.store
            let (holder, release) = ClosureWrite.holdPendingUser(in: store)
            #expect(
                try StoreProbe.user(store, app: "app", uid: "pending") == nil, "the uncommitted user is not visible")
            #expect(
                try instance.client().getGroup("g").group.membersCount == 1,
                "a read completes while the writer holds locks"
            )
            let seen = try StoreProbe.userAroundCommit(store, uid: "pending", release: release, holder: holder)
            #expect(seen.0 == nil && seen.1 == nil, "one read, one snapshot")
            #expect(try StoreProbe.user(store, app: "app", uid: "pending") != nil, "a new read sees the commit")
        }
    }

    @Test("after close, writes and reads fail with ERR_INTERNAL")
    func closed() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualWallClock())
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
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualWallClock(), writers: 3)
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
