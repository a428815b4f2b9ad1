internal import Glibc
public import Moderation
internal import Synchronization

/// The moderation data in one SQLite database (`<directory>/moderation.sqlite3`, WAL mode).
///
/// - Writes: one writer thread owns the only write connection and commits queued writes in
///   batches, each write atomic on its own (`GroupCommitWriter`); with `Durability.full` (the
///   default) a write is finished only once its commit is on disk (`WALSync`).
/// - Reads: read-only connections from a lock-free pool (`ReaderPool`); a read runs in a read
///   transaction, so it sees one committed snapshot and never waits for the writer. A snapshot
///   is reused by the next read on the same connection only while no commit has been published
///   in between, so every read sees everything acknowledged before it started.
/// - Schema: versioned migrations run at open (`Schema`).
/// - One store per directory: the store holds `DataDirectoryLock` from before it opens the database
///   until it closes, so a second store on the same directory, in this process or another, is
///   refused at open instead of corrupting the first one's caches and seqs.
public final class SQLiteStore: ModerationStore {
    public let options: SQLiteStoreOptions
    /// Invariant: taken before the database is opened, released only after the writer has
    /// finished and the readers are closed.
    private let lock: DataDirectoryLock
    private let writer: GroupCommitWriter
    private let readers: ReaderPool
    private let closed = Atomic<Bool>(false)

    /// Opens (creating when needed) the database in `options.directory` and migrates it.
    /// - Throws: `ModerationError` (`ERR_INTERNAL`) when the directory or the database cannot be
    ///   opened, the schema is newer than this build, or another store has the directory open (the
    ///   message names its pid, also in `details[DataDirectoryLock.holderDetail]`).
    public init(options: SQLiteStoreOptions) throws(ModerationError) {
        self.options = options
        try Self.createDirectory(options.directory)
        lock = try DataDirectoryLock(directory: options.directory)
        let connection = try SQLiteConnection(path: options.databasePath, readOnly: false)
        try Self.configureWriter(connection, options)
        try Schema.migrate(connection)
        let postingCache = PostingCache(capacity: options.postingCacheEntries)
        // Read once here, then kept in step by the writer (see `AppBanMemory`).
        let loader = SQLiteSession(connection: connection, options: options, isWriter: true, appBans: AppBanMemory([:]))
        let appBans = AppBanMemory(try loader.allAppBans())
        readers = ReaderPool(size: options.readers) { () throws(ModerationError) -> SQLiteSession in
            let connection = try SQLiteConnection(path: options.databasePath, readOnly: true)
            try Self.configureReader(connection, options)
            return SQLiteSession(
                connection: connection, options: options, isWriter: false, appBans: appBans, postingCache: postingCache)
        }
        let sync =
            options.durability == .full
            ? try WALSync(databasePath: options.databasePath, directory: options.directory) : nil
        writer = GroupCommitWriter(
            session: SQLiteSession(connection: connection, options: options, isWriter: true, appBans: appBans),
            maxBatchSize: options.maxBatchSize, readers: readers, sync: sync)
    }

    /// Opens the store in `directory` with the default options.
    public convenience init(directory: String) throws(ModerationError) {
        try self.init(options: SQLiteStoreOptions(directory: directory))
    }

    public func read<T>(_ body: (any StoreSnapshot) throws(ModerationError) -> T) throws(ModerationError) -> T {
        guard !closed.load(ordering: .acquiring) else { throw .storage("the store is closed") }
        let lease = try readers.checkout()
        defer { readers.checkin(lease) }
        do {
            try lease.session.beginRead(generation: writer.shared.commits.load(ordering: .acquiring))
            return try body(lease.session)
        } catch {
            lease.session.endRead()
            throw error
        }
    }

    public func submit(_ write: any StoreWrite) {
        writer.submit(write)
    }

    public func setCommitHandler(_ handler: CommitHandler) {
        writer.shared.handler.withLock { $0 = handler }
    }

    public func setCompletionScope(_ scope: @escaping CompletionScope) {
        writer.shared.completionScope.withLock { $0 = GroupCommitWriter.Scope(run: scope) }
    }

    /// How many batches the writer has committed (or failed) since the store opened.
    public var commitCount: UInt64 { writer.shared.commits.load(ordering: .acquiring) }

    /// Commits, batch sizes and WAL flush latencies so far.
    public var statistics: StoreStatistics { writer.shared.statistics.snapshot }

    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        writer.close()
        readers.drain()
        lock.release()
    }

    deinit {
        close()
    }

    private static func configureWriter(_ connection: SQLiteConnection, _ options: SQLiteStoreOptions)
        throws(ModerationError)
    {
        // synchronous=NORMAL: commits do not fsync; `WALSync` flushes the WAL before writes are
        // reported (Durability.full). SQLite still syncs around checkpoints.
        try connection.exec(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = NORMAL;
            PRAGMA foreign_keys = ON;
            PRAGMA secure_delete = FAST;
            \(connectionPragmas(options))
            PRAGMA wal_autocheckpoint = \(options.walAutocheckpointPages);
            PRAGMA journal_size_limit = \(64 << 20);
            """)
        let mode = try connection.integer("SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'")
        guard mode == 1 else { throw .storage("\(options.databasePath) could not be switched to WAL mode") }
    }

    private static func configureReader(_ connection: SQLiteConnection, _ options: SQLiteStoreOptions)
        throws(ModerationError)
    {
        try connection.exec(
            """
            PRAGMA query_only = ON;
            \(connectionPragmas(options))
            """)
    }

    /// The settings the writer's connection and the readers' share.
    private static func connectionPragmas(_ options: SQLiteStoreOptions) -> String {
        """
        PRAGMA trusted_schema = OFF;
        PRAGMA temp_store = MEMORY;
        PRAGMA busy_timeout = 5000;
        PRAGMA cache_size = -\(options.cacheSizeKiB);
        PRAGMA mmap_size = \(options.mmapSize);
        """
    }

    /// `mkdir -p`.
    private static func createDirectory(_ path: String) throws(ModerationError) {
        guard !path.isEmpty else { throw .storage("the data directory is empty") }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw .storage("cannot create directory \(prefix): errno \(errno)")
            }
        }
    }
}
