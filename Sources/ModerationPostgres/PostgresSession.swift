internal import Moderation
internal import ModerationStoreSupport

/// One connection's view of the moderation data: `StoreSnapshot` for readers (each read in a
/// `REPEATABLE READ READ ONLY` transaction of its own) and `StoreTransaction` for a writer (every
/// write of a batch inside one `READ COMMITTED` transaction, without a savepoint each: see
/// `PostgresWriter.run`).
///
/// **The app's lock.** A write's first step in an app — every write reaches its data through
/// `appID(named:)` or `createApp` — locks the app's row (`SELECT … FOR NO KEY UPDATE`), held to
/// COMMIT. So all writes of one app, on every writer of every instance, run one after another,
/// and while a transaction holds the lock nothing it read of the app can change under it: the
/// seq counter is read once and counted in memory (written back before COMMIT, so seqs are
/// gapless and in commit order), rows can be cached for the transaction, and a check made under
/// the lock (an idempotency key, a ban's expiry) stays true until COMMIT.
///
/// **No deadlock.** A transaction waits for a lock only while it holds none (its first write);
/// later writes take an app's lock with `SKIP LOCKED`, and one that finds it taken is refused
/// with a deferral (`isDeferred`): the writer runs it in its next batch, first. No other row is
/// locked explicitly: a group's row needs no lock of its own under its app's.
final class PostgresSession: @unchecked Sendable {
    // Invariant: used by one thread at a time. A writer's session lives on its writer thread; a
    // reader's belongs to one `read` between checkout and checkin.

    /// What a writer knows about the open transaction beside its cache.
    struct WriterState {
        /// Apps whose lock the transaction holds, with their head seq in it.
        var heads: [Int64: UInt64] = [:]
        /// Apps whose head changed in the transaction (written before COMMIT).
        var dirtyHeads: Set<Int64> = []
        /// App keys by name, of the apps locked (or created) in the transaction.
        var appIDs: [String: Int64] = [:]
        /// The group the running write last read: its users' memberships and bans are read with
        /// them (`user(appID:uid:)`). Cleared when a write starts.
        var focusGroup: Int64?
        /// The version of the bans from the app of each app locked, read under its lock and
        /// counted with the transaction's own changes (`apps.app_bans_version`).
        var appBansVersions: [Int64: UInt64] = [:]
        /// The bans from the app of each app whose bans the transaction changed, whole, as they
        /// will be committed (at `appBansVersions`); published to `appBanSets` after COMMIT.
        var appBanChanges: [Int64: AppBanSets.Bans] = [:]
    }

    let connection: PGConnection
    /// True for a writer's session, whose reads see its own uncommitted writes.
    let isWriter: Bool
    /// App keys a reader has seen.
    var readerAppIDs: [String: Int64] = [:]
    // Invariant: `writer`, `cache`, `batchActions` (with `actionRows` and `actionsSent`) are all a
    // writer keeps in memory about the open transaction, and `WriteMark` covers them all: that is
    // what lets a failed write be undone without rolling back.
    var writer = WriterState()
    var cache = WriterCache()
    var batchActions: [ActionRecord] = []
    /// What each of `batchActions` is stored with beside the record itself (same index).
    var actionRows: [ActionInsertRow] = []
    /// How many of `batchActions` have been inserted (`sendActions`); the rest are inserted
    /// together before COMMIT.
    var actionsSent = 0
    /// The transaction holds a lock (an app's row, or rows it changed): from now on it must not
    /// wait for another lock. Set on the first one and cleared only when the transaction ends —
    /// undoing a write in memory releases nothing on the server.
    var locksHeld = false
    /// The last write was refused because another writer holds its app's lock (see the type's
    /// comment); the writer runs it again in its next batch.
    var isDeferred = false
    private var transactionWrites = 0
    /// Wrong passwords per key as the batch's read-ahead found them (none: an empty list); only
    /// read, so no `WriteMark` needs them.
    var prefetchedPasswordFailures: [PasswordAttemptKey: [Int64]] = [:]
    /// Groups the batch's read-ahead looked for and did not find (`groupForUpdate` answers nil
    /// without asking again); only read, so no `WriteMark` needs them either.
    var missingGroups: Set<WriterCache.GroupKey> = []
    /// Stored replies of the batch's idempotency keys as the read-ahead found them (`.some(nil)`:
    /// none); an entry goes when this transaction stores a reply under its key, so no
    /// `WriteMark` needs them.
    var prefetchedReplies: [StoredReplyKey: StoredReply?] = [:]
    /// Users the read-ahead looked for and did not find alive, the same way (`user(appID:uid:)`).
    var missingUsers: Set<WriterCache.UserKey> = []
    /// Where a writer announces its commits to the other instances (nil: it does not).
    var notifier: CommitNotifier?
    /// The bans from the app the store keeps in memory, which a writer reads and publishes to
    /// (nil: a reader, which asks PostgreSQL, or `CachedRead` does).
    var appBanSets: AppBanSets?
    private var savepoints: [WriteMark] = []

    /// An idempotency key within an app, for `prefetchedReplies`.
    struct StoredReplyKey: Hashable {
        let appID: Int64
        let replay: ReplayKey
    }

    /// A stored reply and when it was stored.
    struct StoredReply {
        let createdAt: Int64
        let bytes: [UInt8]
    }

    init(connection: PGConnection, isWriter: Bool) {
        self.connection = connection
        self.isWriter = isWriter
    }

    /// True when waiting for a lock could deadlock: the transaction already holds one.
    var holdsLocks: Bool { locksHeld || connection.writesSent > transactionWrites }

    // MARK: Reader transactions

    /// Opens a read transaction (sent with the first statement of the read: no round trip of its
    /// own).
    func beginRead() throws(ModerationError) {
        connection.settle()
        connection.clearFailure()
        try connection.send(.beginRead, [])
    }

    /// Ends the read transaction without waiting: the COMMIT's answer is read before the
    /// connection's next use.
    func endRead() {
        guard !connection.isBroken else { return }
        try? connection.send(connection.failure == nil ? .commit : .rollback, [])
        connection.flush()
    }

    // MARK: Writer transactions

    /// Opens a write transaction (sent with its first statement).
    func beginWrite() throws(ModerationError) {
        connection.settle()
        connection.clearFailure()
        resetTransactionState()
        connection.tag = -1
        transactionWrites = connection.writesSent
        try connection.send(.beginWrite, [])
    }

    /// Writes the counters of the groups changed in the batch and the apps' new head seqs, then
    /// commits and notifies the other instances (`CommitNotifier`), in one round trip; returns the
    /// actions the batch appended, in seq order per app.
    /// On failure the transaction is rolled back and the writer's state forgotten
    /// (`connection.failure` says what failed, and whose statement it was).
    func commitWrite() throws(ModerationError) -> [ActionRecord] {
        connection.tag = -1
        do throws(ModerationError) {
            try sendActions()
            let changed = cache.dirty.compactMap { cache.group($0) }
            if !changed.isEmpty { try writeCounters(changed) }
            // Every app the batch wrote: its head, and its data version (see `ReadCache`).
            for (appID, head) in writer.heads {
                try connection.send(.setAppHead, [.int(appID), .int(head)])
            }
            try connection.send(.commit, [])
            if let notifier, !writer.dirtyHeads.isEmpty {
                // In the same round trip as COMMIT: the watchers of other instances wake up.
                for (app, appID) in writer.appIDs where writer.dirtyHeads.contains(appID) {
                    connection.sendOptional(
                        .notifyCommit,
                        [.text(notifier.channel), .text(notifier.payload(app: app, head: writer.heads[appID] ?? 0))])
                }
            }
            try connection.sync()
            // A COMMIT of a transaction an earlier failure aborted answers ROLLBACK, not an error.
            if let failure = connection.failure { throw failure.error }
        } catch {
            abandonWrite()
            throw error
        }
        if let appBanSets {
            let generation = appBanSets.generation
            for (appID, bans) in writer.appBanChanges {
                appBanSets.keep(bans, appID: appID, version: writer.appBansVersions[appID] ?? 0, generation: generation)
            }
        }
        let actions = batchActions
        resetTransactionState()
        return actions
    }

    /// Rolls back whatever is open and forgets the transaction's state (`connection.failure`
    /// stays, for the writer to read).
    func abandonWrite() {
        if !connection.isBroken {
            connection.settle()
            try? connection.send(.rollback, [])
            connection.flush()
            connection.settle()
        }
        resetTransactionState()
    }

    private func resetTransactionState() {
        writer = WriterState()
        cache.reset()
        prefetchedPasswordFailures.removeAll()
        missingGroups.removeAll()
        missingUsers.removeAll()
        prefetchedReplies.removeAll()
        batchActions.removeAll(keepingCapacity: true)
        actionRows.removeAll(keepingCapacity: true)
        actionsSent = 0
        savepoints.removeAll()
        locksHeld = false
        isDeferred = false
    }

    // MARK: Write isolation without savepoints

    /// Where the writer stands before a write runs: its in-memory state and how many writing
    /// statements the connection had sent.
    struct WriteMark {
        fileprivate let state: WriterState
        fileprivate let cacheMark: Int
        fileprivate let actionCount: Int
        fileprivate let actionsSent: Int
        fileprivate let writesSent: Int
    }

    /// Marks the start of write number `tag` of the batch (its statements carry the tag).
    func mark(tag: Int) -> WriteMark {
        connection.tag = tag
        isDeferred = false
        writer.focusGroup = nil
        return mark()
    }

    private func mark() -> WriteMark {
        WriteMark(
            state: writer, cacheMark: cache.mark, actionCount: batchActions.count, actionsSent: actionsSent,
            writesSent: connection.writesSent)
    }

    /// After a write failed: true when it sent no statement that changes rows and no statement
    /// failed, in which case the in-memory state is put back as it was and the batch goes on;
    /// false when the transaction must be rolled back.
    ///
    /// Nothing here trusts the store methods the write called: the connection counts what it
    /// sent. A lock the write took stays (only a rollback releases it); forgetting it here only
    /// means the next write that needs it asks again, and gets it at once.
    func restoreIfUnchanged(_ mark: WriteMark) -> Bool {
        guard connection.failure == nil, !connection.isBroken, connection.writesSent == mark.writesSent else {
            return false
        }
        restore(mark)
        return true
    }

    private func restore(_ mark: WriteMark) {
        writer = mark.state
        cache.rollback(to: mark.cacheMark)
        batchActions.removeSubrange(mark.actionCount...)
        actionRows.removeSubrange(mark.actionCount...)
        // Rows inserted since the mark are gone too: only a savepoint's rollback gets here
        // after sending any.
        actionsSent = mark.actionsSent
    }

    // MARK: Savepoints

    func savepoint<T>(_ body: () throws(ModerationError) -> T) throws(ModerationError) -> T {
        let name = "nested\(savepoints.count)"
        try connection.send(sql: "SAVEPOINT \(name)", [])
        savepoints.append(mark())
        do throws(ModerationError) {
            let value = try body()
            savepoints.removeLast()
            try connection.send(sql: "RELEASE SAVEPOINT \(name)", [])
            return value
        } catch {
            let saved = savepoints.removeLast()
            // Whether a statement of the body failed decides what its error means: find out
            // before rolling back (a failed statement makes the pipeline skip what follows).
            try connection.sync()
            if let failure = connection.failure { throw failure.error }
            try connection.send(sql: "ROLLBACK TO SAVEPOINT \(name)", [])
            try connection.send(sql: "RELEASE SAVEPOINT \(name)", [])
            // Locks taken inside the savepoint are released with it.
            restore(saved)
            throw error
        }
    }
}
