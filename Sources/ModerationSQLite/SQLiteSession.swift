internal import Moderation
internal import Synchronization

/// One connection's view of the moderation data: implements `StoreSnapshot` for readers (each
/// read in its own read transaction) and `StoreTransaction` for the writer (every write of a
/// batch inside one transaction, each in a savepoint).
///
/// The writer keeps a little state beside the connection — each app's head seq in the open
/// transaction, app keys, the actions appended in the batch — and snapshots it at every
/// savepoint so that a rolled-back write leaves no trace there either: a seq it took is handed out
/// again, so no gap ever reaches the log.
final class SQLiteSession: @unchecked Sendable {
    // Invariant: used by one thread at a time. The writer's session lives on the writer thread;
    // a reader's session belongs to one `read` between checkout and checkin.

    struct WriterState {
        var heads: [Int64: UInt64] = [:]
        var dirtyHeads: Set<Int64> = []
        var appIDs: [String: Int64] = [:]
        var actionCount = 0
    }

    let connection: SQLiteConnection
    let options: SQLiteStoreOptions
    let sharedAppIDs: SharedAppIDs
    /// True for the writer's session: it caches app keys for itself (they may be uncommitted),
    /// never in the cache readers share.
    let isWriter: Bool
    var writer = WriterState()
    var batchActions: [ActionRecord] = []
    private var savepoints: [(state: WriterState, depth: Int)] = []
    private var savepointSQL: [(begin: String, release: String, rollback: String)] = []

    init(connection: SQLiteConnection, options: SQLiteStoreOptions, sharedAppIDs: SharedAppIDs, isWriter: Bool) {
        self.connection = connection
        self.options = options
        self.sharedAppIDs = sharedAppIDs
        self.isWriter = isWriter
    }

    // MARK: Reader transactions

    func beginRead() throws(ModerationError) {
        try connection.execute(.beginDeferred)
    }

    func endRead() {
        try? connection.execute(.rollback)
    }

    // MARK: Writer transactions

    func beginWrite() throws(ModerationError) {
        try connection.execute(.beginImmediate)
        batchActions.removeAll(keepingCapacity: true)
    }

    /// Writes the apps' new head seqs and commits; on failure the transaction is rolled back and
    /// the writer's cached state forgotten.
    func commitWrite() throws(ModerationError) {
        do {
            for appID in writer.dirtyHeads {
                try connection.run(.setAppHead) { (statement) throws(ModerationError) in
                    statement.bind(1, appID)
                    statement.bind(2, writer.heads[appID] ?? 0)
                    try statement.execute()
                }
            }
            try connection.execute(.commit)
            writer.dirtyHeads.removeAll()
            writer.actionCount = 0
        } catch {
            abandonWrite()
            throw error
        }
    }

    /// Rolls back whatever is open and forgets cached state that may describe it.
    func abandonWrite() {
        if connection.inTransaction { try? connection.execute(.rollback) }
        writer = WriterState()
        batchActions.removeAll()
        savepoints.removeAll()
    }

    /// The actions the committed batch appended, in seq order.
    func takeBatchActions() -> [ActionRecord] {
        defer { batchActions.removeAll(keepingCapacity: true) }
        return batchActions
    }

    // MARK: Savepoints

    func savepoint<T>(_ body: () throws(ModerationError) -> T) throws(ModerationError) -> T {
        let depth = savepoints.count
        while savepointSQL.count <= depth {
            let name = "w\(savepointSQL.count)"
            savepointSQL.append(("SAVEPOINT \(name)", "RELEASE \(name)", "ROLLBACK TO \(name)"))
        }
        let sql = savepointSQL[depth]
        try execute(sql.begin)
        savepoints.append((writer, depth))
        do {
            let value = try body()
            savepoints.removeLast()
            try execute(sql.release)
            return value
        } catch {
            let saved = savepoints.removeLast()
            if connection.inTransaction {
                try? execute(sql.rollback)
                try? execute(sql.release)
                writer = saved.state
                batchActions.removeSubrange(saved.state.actionCount...)
            }
            throw error
        }
    }

    private func execute(_ sql: String) throws(ModerationError) {
        let statement = try connection.statement(sql: sql)
        defer { statement.reset() }
        try statement.execute()
    }
}

/// App keys read from committed data, shared by the reader sessions (apps are never deleted, so
/// a key once seen stays right).
final class SharedAppIDs: Sendable {
    private let ids = Mutex<[String: Int64]>([:])

    func get(_ name: String) -> Int64? { ids.withLock { $0[name] } }
    func set(_ name: String, _ id: Int64) { ids.withLock { $0[name] = id } }
}
