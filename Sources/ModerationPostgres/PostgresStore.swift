public import Moderation
internal import Synchronization

/// The moderation data in a PostgreSQL database, shared by any number of server instances.
///
/// - Writes: `writers` threads, each with its connection and queue, commit queued writes in
///   batches (group commit), each write atomic on its own (`WriterLoop.run`); an app's writes
///   go to one writer, and every write takes its app's row lock first, which orders an app's
///   commits across writers and instances (see `PostgresSession`). `synchronous_commit=on`: a
///   write is finished only after its COMMIT returned.
/// - Reads: `REPEATABLE READ READ ONLY` transactions on a pool of reader connections, so a read
///   sees one snapshot, never waits for writers, and sees every commit acknowledged before it
///   started (by this instance or any other).
/// - Schema: versioned migrations at open (`Migrations`), serialized between instances by an
///   advisory lock.
/// - Commit handler: called with every committed batch's actions, per app in seq order and
///   without gaps — actions other writers committed in between are read from the log first
///   (`CommitFeed`) — before the batch's writes are finished; and, once a handler is set, with
///   the actions other instances commit, which a `CommitWatcher` learns of (`NOTIFY` after each
///   commit, and a poll of the apps' heads) and the feed reads from the log by seq — for the
///   apps the handler follows only (`CommitHandler.follows`).
///
/// When PostgreSQL cannot be reached, calls fail at once with `ERR_STORE_UNAVAILABLE`; lost
/// connections are opened again by the next read or batch, so the store recovers by itself.
public final class PostgresStore: ModerationStore {
    public let options: PostgresStoreOptions
    private let writers: [PostgresWriter]
    let readers: ReaderPool
    private let readCache: ReadCache
    /// Each app's bans from the app, for the per-call check of writers and cached reads.
    private let appBanSets = AppBanSets()
    private let completer: Completer
    private let notifier: CommitNotifier
    private let watcher = Mutex<CommitWatcher?>(nil)
    private let recorder: PostgresStatisticsRecorder
    private let attempts: PostgresPasswordAttempts
    private let closed = Atomic<Bool>(false)
    private let nextWriter = Atomic<Int>(0)
    private let availability: StoreAvailability

    /// Connects, creates or migrates the schema, and starts the writers.
    /// - Throws: `ERR_STORE_UNAVAILABLE` when PostgreSQL cannot be reached; `ERR_INTERNAL` when
    ///   the schema is newer than this build or cannot be migrated.
    /// - Parameter availabilityChanged: told when PostgreSQL stops answering the store's
    ///   connections and when it answers again (the server logs it), on the thread that noticed.
    public init(
        options: PostgresStoreOptions,
        availabilityChanged: @escaping @Sendable (StoreAvailabilityChange) -> Void = { _ in }
    ) throws(ModerationError) {
        guard PostgresStoreOptions.isValidSchema(options.schema) else {
            throw .storage("the schema name '\(options.schema)' is not a lowercase SQL identifier")
        }
        self.options = options
        let recorder = PostgresStatisticsRecorder()
        self.recorder = recorder
        let migration = try PGConnection(options.connectionOptions, pipeline: false)
        try Migrations.migrate(migration, schema: options.schema)
        var heads: [String: UInt64] = [:]
        if let rows = try migration.exec("SELECT name, head_seq FROM apps") {
            for row in 0..<rows.rowCount { heads[rows.string(row, 0)] = rows.uint64(row, 1) }
        }
        let connectionOptions = options.connectionOptions
        let availability = StoreAvailability(observer: availabilityChanged)
        self.availability = availability
        let gate = ConnectionGate(availability: availability)
        let readCache = ReadCache(capacity: options.readCacheEntries)
        self.readCache = readCache
        let appBanSets = appBanSets
        let readers = ReaderPool(size: options.readers) { () throws(ModerationError) -> PostgresSession in
            PostgresSession(connection: try gate.connect(connectionOptions, pipeline: true), isWriter: false)
        } lost: {
            // The server went away: the next connection may reach another (a failover, a
            // restore), whose versions need not mean what the cached ones did.
            readCache.clear()
            appBanSets.clear()
        }
        self.readers = readers
        attempts = PostgresPasswordAttempts(readers: readers)
        let completer = Completer(heads: heads, statistics: recorder) {
            (app, after, through) throws(ModerationError) -> [ActionRecord] in
            try Self.read(readers) { (snapshot) throws(ModerationError) -> [ActionRecord] in
                guard let appID = try snapshot.appID(named: app) else { return [] }
                return try snapshot.actions(
                    appID: appID, query: ActionLogQuery(afterSeq: after, limit: 500, throughSeq: through))
            }
        }
        self.completer = completer
        let notifier = CommitNotifier(
            schema: options.schema, instance: String(UInt64.random(in: 1...UInt64.max), radix: 36))
        self.notifier = notifier
        writers = (0..<max(1, options.writers)).map { index in
            PostgresWriter(
                index: index, options: options, gate: gate, notifier: notifier, completer: completer,
                appBanSets: appBanSets, statistics: recorder)
        }
    }

    public func read<T>(_ body: (any StoreSnapshot) throws(ModerationError) -> T) throws(ModerationError) -> T {
        guard !closed.load(ordering: .acquiring) else { throw .storage("the store is closed") }
        return try Self.read(readers, body)
    }

    /// A call's read, answered from the read cache where it can be (`CachedRead`); run again
    /// from the start after a conflict, and once more on a new connection when a pooled one
    /// turns out to have died while idle, as `read`.
    public func read<T>(arrivedAt instant: UInt64?, _ body: (any StoreSnapshot) throws(ModerationError) -> T)
        throws(ModerationError) -> T
    {
        guard readCache.isEnabled else { return try read(body) }
        guard !closed.load(ordering: .acquiring) else { throw .storage("the store is closed") }
        var retried = false
        while true {
            let snapshot = CachedRead(cache: readCache, appBanSets: appBanSets, readers: readers, arrivedAt: instant)
            defer { snapshot.close() }
            do {
                let value = try body(snapshot)
                guard snapshot.conflicted else { return value }
            } catch {
                if !snapshot.conflicted {
                    guard snapshot.sessionWasReused, snapshot.isBroken, !retried else { throw error }
                    retried = true
                    continue
                }
            }
            // Again at the transaction's version, which the read now keeps to.
            snapshot.restart()
            return try body(snapshot)
        }
    }

    /// A read on a pooled connection, run once more on a new connection when the pooled one
    /// turns out to have died while idle (PostgreSQL restarted since): a read changes nothing,
    /// so running it again is safe.
    private static func read<T>(_ readers: ReaderPool, _ body: (any StoreSnapshot) throws(ModerationError) -> T)
        throws(ModerationError) -> T
    {
        var retried = false
        while true {
            let (session, reused) = try readers.checkout()
            do {
                try session.beginRead()
                let value = try body(session)
                session.endRead()
                readers.checkin(session)
                return value
            } catch {
                session.endRead()
                readers.checkin(session)
                if reused && session.connection.isBroken && !retried {
                    retried = true
                    continue
                }
                throw error
            }
        }
    }

    /// Runs `body` on a pooled connection outside any transaction (each statement commits on its
    /// own), once more on a new connection when the pooled one turns out to have died while idle.
    /// For statements whose repetition is harmless or errs on the safe side (a statement that
    /// committed just before its connection died may run twice: a wrong password counted twice,
    /// rate tokens leased and lost).
    static func autocommit<T>(_ readers: ReaderPool, _ body: (PGConnection) throws(ModerationError) -> T)
        throws(ModerationError) -> T
    {
        var retried = false
        while true {
            let (session, reused) = try readers.checkout()
            session.connection.settle()
            session.connection.clearFailure()
            do {
                let value = try body(session.connection)
                readers.checkin(session)
                return value
            } catch {
                readers.checkin(session)
                if reused && session.connection.isBroken && !retried {
                    retried = true
                    continue
                }
                throw error
            }
        }
    }

    /// With the read cache on: one version check serves every read that arrived before it.
    public var readsShareChecks: Bool { readCache.isEnabled }

    /// The wrong-password limit's count, in the database: shared by every instance.
    public var passwordAttempts: (any PasswordAttemptLedger)? { attempts }

    public func submit(_ write: any StoreWrite) {
        let index: Int
        if let app = write.affinity {
            index = Int(Self.hash(app) % UInt64(writers.count))
        } else {
            index = nextWriter.wrappingAdd(1, ordering: .relaxed).oldValue % writers.count
        }
        if !writers[index].queue.push(write) { write.finish(.storage("the store is closed")) }
    }

    public func setCompletionScope(_ scope: @escaping CompletionScope) {
        completer.box.completionScope.withLock { $0 = Completer.Scope(run: scope) }
    }

    /// Sets the handler, and starts following other instances' commits for it (the watcher runs
    /// only for a store with a handler: without one there is nobody to deliver to).
    public func setCommitHandler(_ handler: CommitHandler) {
        completer.box.handler.withLock { $0 = handler }
        let completer = completer
        watcher.withLock { watcher in
            guard watcher == nil, !closed.load(ordering: .acquiring) else { return }
            watcher = CommitWatcher(
                options: options.connectionOptions, notifier: notifier, listens: options.listensForCommits,
                pollIntervalMs: options.pollIntervalMs,
                statistics: recorder, availability: availability,
                followedApps: {
                    // Without a handler nothing is delivered: no app's head is needed.
                    guard let handler = completer.box.handler.withLock({ $0 }) else { return [] }
                    return handler.followedApps()
                }
            ) { heads, retry in completer.report(heads: heads, retry: retry) }
        }
    }

    /// False while PostgreSQL does not answer the store's connections (from a failed attempt
    /// until one succeeds; see `StoreAvailabilityChange`).
    public var isAvailable: Bool { availability.isAvailable }

    /// Commits, batch sizes, commit latencies, deferrals, reconnections and the read cache so far.
    public var statistics: PostgresStoreStatistics {
        var statistics = recorder.snapshot
        let cache = readCache.statistics
        statistics.readCacheHits = cache.hits
        statistics.readCacheMisses = cache.misses
        statistics.readCacheChecks = cache.checks
        statistics.readCacheSharedChecks = cache.sharedChecks
        statistics.readCacheClears = cache.clears
        return statistics
    }

    /// How many batches the writers have committed since the store opened.
    public var commitCount: UInt64 { recorder.snapshot.commits }

    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for writer in writers { writer.close() }
        watcher.withLock { $0 }?.close()
        completer.close()
        attempts.close()
        readers.drain()
    }

    deinit {
        close()
    }

    /// FNV-1a of the app's name: which writer its writes go to.
    private static func hash(_ app: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in app.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
