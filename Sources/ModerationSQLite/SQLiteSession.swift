internal import Moderation
internal import ModerationStoreSupport
internal import Synchronization

/// One connection's view of the moderation data: implements `StoreSnapshot` for readers (each
/// read in its own read transaction) and `StoreTransaction` for the writer (every write of a
/// batch inside one transaction, without a savepoint each: see `WriterLoop.run`).
///
/// The writer keeps a little state beside the connection — each app's head seq in the open
/// transaction, app keys, the cache, the actions appended in the batch — and marks it before
/// every write and at every nested savepoint, so that a write rolled back leaves no trace there
/// either: a seq it took is handed out again, so no gap ever reaches the log.
final class SQLiteSession: @unchecked Sendable {
    // Invariant: used by one thread at a time. The writer's session lives on the writer thread;
    // a reader's session belongs to one `read` between checkout and checkin.

    struct WriterState {
        var heads: [Int64: UInt64] = [:]
        var dirtyHeads: Set<Int64> = []
        var appIDs: [String: Int64] = [:]
        /// Bans from the app the open transaction made (a standing) or lifted (nil), published
        /// to `appBans` once it commits.
        var appBanChanges: [AppBanKey: AppBanStanding?] = [:]
    }

    let connection: SQLiteConnection
    let options: SQLiteStoreOptions
    /// True for the writer's session, whose reads may see its own uncommitted writes.
    let isWriter: Bool
    /// CheckPost's answers by group version, shared by the store's readers (nil on the writer).
    let postingCache: PostingCache?
    /// Every app's bans from the app, shared by the store's sessions, and this session's copy.
    let appBans: AppBanMemory
    var appBanCopy = AppBanMemory.Copy()
    /// App keys a reader has seen (apps are never deleted, so they stay right).
    var readerAppIDs: [String: Int64] = [:]
    /// What CheckPost needs of the groups a reader has looked up in its open read transaction
    /// (nil: no such group), so that a group is read once per snapshot, not once per pair: exact
    /// for as long as the snapshot is, and emptied with it (`beginRead`, `endRead`).
    var postingGroups: [PostingGroupKey: PostingGroup?] = [:]
    // Invariant: `writer`, `cache` and `batchActions` are all the writer keeps in memory about
    // the open transaction, and `WriteMark` covers all three (a new piece of such state must
    // join them): that is what lets a failed write be undone without rolling back.
    var writer = WriterState()
    var cache = WriterCache()
    var batchActions: [ActionRecord] = []
    private var savepoints: [WriteMark] = []
    private var savepointSQL: [(begin: String, release: String, rollback: String)] = []

    init(
        connection: SQLiteConnection, options: SQLiteStoreOptions, isWriter: Bool, appBans: AppBanMemory,
        postingCache: PostingCache? = nil
    ) {
        self.connection = connection
        self.options = options
        self.isWriter = isWriter
        self.appBans = appBans
        self.postingCache = postingCache
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

    /// Ends the open read transaction, if any (it also lets checkpoints pass its snapshot), and
    /// forgets what was read in it.
    func endRead() {
        guard readGeneration != nil else { return }
        try? connection.execute(.rollback)
        readGeneration = nil
        postingGroups.removeAll(keepingCapacity: true)
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
            for appID in writer.dirtyHeads { try connection.execute(.setAppHead, appID, writer.heads[appID] ?? 0) }
            connection.finishRunningStatements()
            try connection.execute(.commit)
            writer.dirtyHeads.removeAll()
            cache.committed()
            // Before the commit is counted (`WriterLoop.run`): a read that starts after it sees it.
            appBans.publish(writer.appBanChanges)
            writer.appBanChanges.removeAll()
        } catch {
            abandonWrite()
            throw error
        }
    }

    /// Rolls back whatever is open and forgets cached state that may describe it.
    func abandonWrite() {
        connection.finishRunningStatements()
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

    /// Where the writer stands before a write runs: its in-memory state and SQLite's count of
    /// changed rows.
    struct WriteMark {
        fileprivate let state: WriterState
        fileprivate let cacheMark: Int
        fileprivate let actionCount: Int
        fileprivate let changes: Int64
    }

    func mark() -> WriteMark {
        WriteMark(
            state: writer, cacheMark: cache.mark, actionCount: batchActions.count, changes: connection.totalChanges)
    }

    /// After a write failed: true when it changed no row, in which case the in-memory state is
    /// put back as it was and the batch goes on; false when the transaction must be rolled back.
    ///
    /// Nothing here trusts the store methods the write called. SQLite counts the rows it changed
    /// (a statement left running is finished first, so that its rows count too); whatever it
    /// changed in memory — cached rows, group counters and head seqs not yet written, appended
    /// actions — is undone from the mark. The writer runs no DDL, which SQLite would not count.
    func restoreIfUnchanged(_ mark: WriteMark) -> Bool {
        connection.finishRunningStatements()
        guard connection.inTransaction, connection.totalChanges == mark.changes else { return false }
        restore(mark)
        return true
    }

    private func restore(_ mark: WriteMark) {
        writer = mark.state
        cache.rollback(to: mark.cacheMark)
        batchActions.removeSubrange(mark.actionCount...)
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
        savepoints.append(mark())
        do {
            let value = try body()
            savepoints.removeLast()
            try execute(sql.release)
            return value
        } catch {
            let saved = savepoints.removeLast()
            guard connection.inTransaction else { throw error }
            connection.finishRunningStatements()
            // Should the rollback itself fail, the body's rows are still there: its error must
            // not reach a caller that would go on and commit them.
            try execute(sql.rollback)
            try execute(sql.release)
            restore(saved)
            throw error
        }
    }

    private func execute(_ sql: String) throws(ModerationError) {
        let statement = try connection.statement(sql: sql)
        defer { statement.reset() }
        try statement.execute()
    }
}
