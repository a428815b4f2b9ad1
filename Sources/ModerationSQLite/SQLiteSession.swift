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
    /// True for the writer's session, whose reads may see its own uncommitted writes.
    let isWriter: Bool
    /// App keys a reader has seen (apps are never deleted, so they stay right).
    var readerAppIDs: [String: Int64] = [:]
    var writer = WriterState()
    var cache = WriterCache()
    /// Counts every change a write makes (rows, cached counters), so the writer can tell whether
    /// a write that failed changed anything.
    private(set) var writeCount = 0
    var batchActions: [ActionRecord] = []
    private var savepoints: [(state: WriterState, cacheMark: Int)] = []
    private var savepointSQL: [(begin: String, release: String, rollback: String)] = []

    init(connection: SQLiteConnection, options: SQLiteStoreOptions, isWriter: Bool) {
        self.connection = connection
        self.options = options
        self.isWriter = isWriter
    }

    // MARK: Reader transactions

    /// The writer's commit count when this reader's open read transaction began; nil when none
    /// is open.
    private(set) var readGeneration: UInt64?

    /// Makes sure a read transaction is open that sees every commit up to `generation`.
    ///
    /// A transaction opened at the same generation is reused: no commit has been published since
    /// it began, so its snapshot is still the latest acknowledged state, and taking a new one
    /// (WAL read locks, shared-memory traffic) would only cost time. The writer publishes a new
    /// generation after every commit, before reporting any of its writes done.
    func beginRead(generation: UInt64) throws(ModerationError) {
        if let open = readGeneration {
            if open == generation { return }
            endRead()
        }
        try connection.execute(.beginDeferred)
        readGeneration = generation
    }

    /// Ends the open read transaction, if any (it also lets checkpoints pass its snapshot).
    func endRead() {
        guard readGeneration != nil else { return }
        try? connection.execute(.rollback)
        readGeneration = nil
    }

    // MARK: Writer transactions

    func beginWrite() throws(ModerationError) {
        try connection.execute(.beginImmediate)
        batchActions.removeAll(keepingCapacity: true)
    }

    /// Writes the counters of the groups changed in the batch and the apps' new head seqs, then
    /// commits; on failure the transaction is rolled back and the writer's cached state forgotten.
    func commitWrite() throws(ModerationError) {
        do {
            for key in cache.dirty {
                guard let group = cache.group(key) else { continue }
                try writeCounters(group)
            }
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
            cache.committed()
        } catch {
            abandonWrite()
            throw error
        }
    }

    /// Rolls back whatever is open and forgets cached state that may describe it.
    func abandonWrite() {
        if connection.inTransaction { try? connection.execute(.rollback) }
        writer = WriterState()
        cache = WriterCache()
        batchActions.removeAll()
        savepoints.removeAll()
    }

    /// The actions the committed batch appended, in seq order.
    func takeBatchActions() -> [ActionRecord] {
        defer { batchActions.removeAll(keepingCapacity: true) }
        return batchActions
    }

    // MARK: Write isolation without savepoints

    /// What to restore when a write that changed nothing fails.
    struct WriteMark {
        fileprivate let state: WriterState
        fileprivate let cacheMark: Int
        fileprivate let writeCount: Int
    }

    func noteWrite() {
        writeCount &+= 1
    }

    /// Where the writer's state stands before a write runs.
    func mark() -> WriteMark {
        WriteMark(state: writer, cacheMark: cache.mark, writeCount: writeCount)
    }

    /// After a write failed: true when it changed nothing, in which case the in-memory state is
    /// put back as it was and the batch goes on; false when the batch must be rolled back.
    func restoreIfUnchanged(_ mark: WriteMark) -> Bool {
        guard writeCount == mark.writeCount, connection.inTransaction else { return false }
        writer = mark.state
        cache.rollback(to: mark.cacheMark)
        return true
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
        savepoints.append((writer, cache.mark))
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
                cache.rollback(to: saved.cacheMark)
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

