import Moderation
import ModerationSQLite
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// The group-commit writer: many writes per transaction, each atomic on its own, completions
/// only after the commit, and reads that never wait for the writer.
@Suite("Group commit")
struct GroupCommitTests {
    @Test("one failing write in a batch rolls back alone, and its seqs are handed out again")
    func isolation() throws {
        let harness = try ServiceHarness(backend: .sqlite)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        let store = harness.sqliteStore
        func addUser(_ uid: String, thenFail: ModerationError? = nil, withAction: Bool = true) -> ClosureWrite {
            ClosureWrite { (tx) throws(ModerationError) in
                let appID = try tx.createApp(named: "app")
                let user = try tx.insertUser(appID: appID, User(uid: uid, name: uid))
                if withAction, let group = try tx.groupForUpdate(appID: appID, guid: "g") {
                    var action = ActionRecord(
                        app: "app", kind: .updated, actionBy: .app, actionOn: user.user, group: group.group,
                        timestamp: 1)
                    try tx.appendAction(&action, appID: appID, group: group)
                }
                if let thenFail { throw thenFail }
            }
        }
        let refused = ModerationError(.permissionDenied, "refused after writing")
        let writes = [
            addUser("w1"), addUser("w2", thenFail: refused), addUser("w3"),
            ClosureWrite { _ throws(ModerationError) in throw ModerationError(.notAMember, "refused before writing") },
            addUser("w4"),
        ]
        let commitsBefore = store.commitCount
        ClosureWrite.submitAsOneBatch(writes, to: store)
        let outcomes = writes.map { $0.wait() }
        #expect(outcomes.map { $0?.code } == [nil, .permissionDenied, nil, .notAMember, nil])
        #expect(
            store.commitCount - commitsBefore <= 3,
            "the writes shared a transaction (the gate's, a rollback, the batch's)")
        #expect(try StoreProbe.user(store, app: "app", uid: "w2") == nil, "the failing write left nothing")
        for uid in ["w1", "w3", "w4"] { #expect(try StoreProbe.user(store, app: "app", uid: uid) != nil) }
        let log = try StoreProbe.log(store, app: "app")
        #expect(log.map(\.seq) == Array(1...UInt64(log.count)), "no gap where the failing write's action was")
        #expect(log.suffix(3).compactMap { $0.actionOn?.uid } == ["w1", "w3", "w4"])
    }

    @Test("a completion comes after the commit: a read started then sees the change")
    func readYourWrites() throws {
        let harness = try ServiceHarness(durability: .full, backend: .sqlite)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        for index in 0..<50 {
            try app.createUser("u\(index)")
            try app.addMembers("g", [MemberGrant(uid: "u\(index)")])
            #expect(try app.getGroup("g").group.membersCount == index + 2)
        }
    }

    @Test("reads never wait for the writer, and see one snapshot")
    func readsDoNotWait() throws {
        let harness = try ServiceHarness(backend: .sqlite)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        let store = harness.sqliteStore
        let (holder, release) = ClosureWrite.holdPendingUser(in: store)
        #expect(try StoreProbe.user(store, app: "app", uid: "pending") == nil, "the uncommitted user is not visible")
        #expect(try app.getGroup("g").group.membersCount == 1, "a read completes while the writer is busy")
        // One read closure sees one snapshot, even when a commit lands in the middle of it.
        let seen = try StoreProbe.userAroundCommit(store, uid: "pending", release: release, holder: holder)
        #expect(seen.0 == nil && seen.1 == nil)
        #expect(try StoreProbe.user(store, app: "app", uid: "pending") != nil, "a new read sees the commit")
    }

    @Test("writes after close fail with ERR_INTERNAL; reads too")
    func closed() throws {
        let harness = try ServiceHarness(backend: .sqlite)
        defer { harness.tearDown() }
        harness.store.close()
        let write = ClosureWrite { _ throws(ModerationError) in }
        harness.store.submit(write)
        #expect(write.wait()?.code == .internal)
        #expect(ModerationClient.code { try harness.client().getUser("x") } == .internal)
    }

    @Test("many threads reading while others write: every read is consistent")
    func concurrentReadsAndWrites() throws {
        let harness = try ServiceHarness(backend: .sqlite)
        defer { harness.tearDown() }
        let app = harness.client()
        for index in 0..<40 { try app.createUser("u\(index)") }
        try app.createGroup("g", owner: "u0")
        let stop = Atomic<Bool>(false)
        let problems = Atomic<Int>(0)
        let reads = Atomic<Int>(0)
        let readers = (0..<3).map { _ in
            WorkerThread(name: "reader") {
                while !stop.load(ordering: .relaxed) {
                    let consistent = try? harness.store.read {
                        (snapshot: any StoreSnapshot) throws(ModerationError) -> Bool in
                        let appID = try snapshot.appID(named: "app")!
                        let group = try snapshot.group(appID: appID, guid: "g")!
                        let members = try snapshot.members(groupID: group.id, query: MemberPageQuery(limit: 100))
                        return members.count == group.group.membersCount
                    }
                    if consistent != true { problems.wrappingAdd(1, ordering: .relaxed) }
                    reads.wrappingAdd(1, ordering: .relaxed)
                }
            }
        }
        let writers = (0..<2).map { writer in
            WorkerThread(name: "writer") {
                for round in 0..<60 {
                    let uid = "u\(1 + (round * 2 + writer) % 39)"
                    if (try? harness.client(uid).join("g")) == nil { _ = try? harness.client("u0").kick("g", uid) }
                }
            }
        }
        for writer in writers { writer.join() }
        stop.store(true, ordering: .relaxed)
        for reader in readers { reader.join() }
        #expect(problems.load(ordering: .relaxed) == 0)
        #expect(reads.load(ordering: .relaxed) > 0)
    }

    @Test("the commit handler is called at the same stack depth after thousands of commits")
    func commitHandlerDoesNotNest() throws {
        // The completer reads the handler out of its Mutex once per round. Read with an inout
        // write-back, a closure stored in a generic Mutex was re-wrapped in two reabstraction
        // thunks every round: calls went through ever more frames, and releasing a chain of
        // ~100 000 (a ten-minute soak) overflowed the stack when the server shut down.
        let harness = try ServiceHarness(backend: .sqlite)
        defer { harness.tearDown() }
        let app = harness.client()
        try app.createUser("o")
        try app.createUser("u")
        try app.createGroup("g", owner: "o")
        let depths = Mutex<[UInt]>([])
        harness.service.addCommitListener { _ in
            var marker = 0
            let address = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
            depths.withLock { $0.append(address) }
        }
        for _ in 0..<1_500 {
            _ = try app.addMembers("g", [MemberGrant(uid: "u")])
            _ = try app.kick("g", "u")
        }
        let recorded = depths.withLock { $0 }
        let first = try #require(recorded.first)
        let last = try #require(recorded.last)
        #expect(recorded.count >= 3_000)
        // Same thread, same path: the same depth, give or take a frame.
        #expect(
            first >= last && first - last < 4096,
            "the handler ran \(Int(first) - Int(last)) bytes deeper after \(recorded.count) commits")
    }
}
