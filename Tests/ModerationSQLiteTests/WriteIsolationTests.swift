import Moderation
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

@testable import ModerationSQLite

/// A write that fails leaves no trace, whatever its store methods forgot to do: the writer learns
/// what a write changed from SQLite and from its own undo log, not from the methods themselves.
@Suite("Write isolation")
struct WriteIsolationTests {
    static let refused = ModerationError(.permissionDenied, "refused after writing")

    /// A well-behaved write beside the failing one: adds a user and an action on group "g";
    /// counts how often it ran and records the members count it saw.
    final class Neighbour: @unchecked Sendable {
        // Invariant: `runs` and `seenCount` are written on the writer thread and read after the
        // write's `finish`, which the store calls after its last run.
        var runs = 0
        var seenCount: Int?
        private(set) lazy var write = ClosureWrite { [unowned self] (tx) throws(ModerationError) in
            self.runs += 1
            let appID = try tx.createApp(named: "app")
            let user = try tx.insertUser(appID: appID, User(uid: self.uid, name: self.uid))
            guard let group = try tx.groupForUpdate(appID: appID, guid: "g") else {
                throw .storage("group g is missing")
            }
            self.seenCount = group.group.membersCount
            var action = ActionRecord(
                app: "app", kind: .updated, actionBy: .app, actionOn: user.user, group: group.group, timestamp: 1)
            try tx.appendAction(&action, appID: appID, group: group)
        }
        let uid: String

        init(_ uid: String) {
            self.uid = uid
        }
    }

    /// A harness with user "o" (named "Olive") owning group "g".
    static func harness() throws -> ServiceHarness {
        let harness = try ServiceHarness(backend: .sqlite)
        let app = harness.client()
        try app.createUser("o", name: "Olive")
        try app.createGroup("g", owner: "o")
        return harness
    }

    /// Runs `failing` between two neighbours in one batch and checks that they committed, that it
    /// failed, and that the log has no gap.
    static func runBetweenNeighbours(_ harness: ServiceHarness, _ failing: ClosureWrite) throws -> (
        Neighbour, Neighbour
    ) {
        let first = Neighbour("w1")
        let second = Neighbour("w2")
        ClosureWrite.submitAsOneBatch([first.write, failing, second.write], to: harness.sqliteStore)
        #expect([first.write, failing, second.write].map { $0.wait()?.code } == [nil, .permissionDenied, nil])
        for uid in ["w1", "w2"] { #expect(try StoreProbe.user(harness.store, app: "app", uid: uid) != nil) }
        let log = try StoreProbe.log(harness.store, app: "app")
        #expect(log.map(\.seq) == Array(1...UInt64(log.count)), "no gap in the log")
        #expect(try StoreProbe.bounds(harness.store, app: "app").headSeq == UInt64(log.count))
        #expect(log.suffix(2).compactMap { $0.actionOn?.uid } == ["w1", "w2"])
        return (first, second)
    }

    static func session(_ tx: any StoreTransaction) throws(ModerationError) -> SQLiteSession {
        guard let session = tx as? SQLiteSession else { throw .storage("not the SQLite store") }
        return session
    }

    @Test("a mutation that changes a row without telling the writer, then fails, leaves no trace")
    func forgottenRowChange() throws {
        let harness = try Self.harness()
        defer { harness.tearDown() }
        let forgetful = ClosureWrite { (tx) throws(ModerationError) in
            try Self.session(tx).renameUserUnannounced(uid: "o", to: "leaked")
            throw Self.refused
        }
        _ = try Self.runBetweenNeighbours(harness, forgetful)
        #expect(
            try StoreProbe.user(harness.store, app: "app", uid: "o")?.user.name == "Olive", "the rename was rolled back"
        )
    }

    @Test("a mutation that leaves its statement running, then fails, leaves no trace")
    func forgottenRunningStatement() throws {
        let harness = try Self.harness()
        defer { harness.tearDown() }
        let forgetful = ClosureWrite { (tx) throws(ModerationError) in
            let sql = "UPDATE users SET name = 'leaked' WHERE uid = 'o' RETURNING name"
            _ = try Self.session(tx).connection.statement(sql: sql).step()
            throw Self.refused
        }
        _ = try Self.runBetweenNeighbours(harness, forgetful)
        #expect(
            try StoreProbe.user(harness.store, app: "app", uid: "o")?.user.name == "Olive", "the rename was rolled back"
        )
    }

    @Test("changes held only in the writer's memory are undone without running the batch again")
    func inMemoryChanges() throws {
        let harness = try Self.harness()
        defer { harness.tearDown() }
        let forgetful = ClosureWrite { (tx) throws(ModerationError) in
            let session = try Self.session(tx)
            let appID = try tx.createApp(named: "app")
            guard var group = try tx.groupForUpdate(appID: appID, guid: "g") else {
                throw .storage("group g is missing")
            }
            // Counters are written when the batch commits: for now the change is in the cache.
            group.group.membersCount = 99
            try tx.updateGroup(&group, descriptive: false)
            // The head seq is written when the batch commits too.
            session.writer.heads[appID, default: 0] += 10
            session.writer.dirtyHeads.insert(appID)
            throw Self.refused
        }
        let (first, second) = try Self.runBetweenNeighbours(harness, forgetful)
        #expect(first.runs == 1 && second.runs == 1, "nothing was written to the database, so nothing ran again")
        #expect(second.seenCount == 1, "the cached counters were put back")
        let group = try harness.client().getGroup("g").group
        #expect(group.membersCount == 1)
    }
}

extension SQLiteSession {
    /// A store mutation written as a new one might be by mistake: it changes a row and does
    /// nothing else the writer could notice.
    fileprivate func renameUserUnannounced(uid: String, to name: String) throws(ModerationError) {
        let statement = try connection.statement(sql: "UPDATE users SET name = ?2 WHERE uid = ?1")
        defer { statement.reset() }
        statement.bind(1, uid)
        statement.bind(2, name)
        try statement.execute()
    }
}
