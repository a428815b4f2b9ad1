/// Settings of the SQLite store.
public struct SQLiteStoreOptions: Sendable, Equatable {
    /// How hard a commit works to survive a power loss.
    public enum Durability: String, Sendable {
        /// `synchronous=FULL`: every commit is fsynced before any of its writes completes. The
        /// default.
        case full = "FULL"
        /// `synchronous=NORMAL`: commits survive a crash of the process but the last ones may be
        /// lost on power loss (the WAL is fsynced only at checkpoints). For tests and caches.
        case normal = "NORMAL"
    }

    /// The data directory; the store opens `<directory>/moderation.sqlite3`, creating both.
    public var directory: String
    public var durability: Durability
    /// At most this many writes per transaction (group commit).
    public var maxBatchSize: Int
    /// Read connections kept open when idle; more are opened under load (reads never wait).
    public var idleReaders: Int
    /// Page cache per connection, in KiB.
    public var cacheSizeKiB: Int
    /// Bytes of the database file each connection maps into memory.
    public var mmapSize: Int
    /// A WAL checkpoint runs when the WAL grows past this many pages.
    public var walAutocheckpointPages: Int
    /// A search keyword that matches at most this many users (or groups) in the trigram index is
    /// answered from the index; above it, by scanning the list in order (see `SearchPlan`).
    public var searchCandidateLimit: Int

    public init(
        directory: String, durability: Durability = .full, maxBatchSize: Int = 1024, idleReaders: Int = 8,
        cacheSizeKiB: Int = 65536, mmapSize: Int = 1 << 30, walAutocheckpointPages: Int = 4000, searchCandidateLimit: Int = 1000
    ) {
        self.directory = directory
        self.durability = durability
        self.maxBatchSize = maxBatchSize
        self.idleReaders = idleReaders
        self.cacheSizeKiB = cacheSizeKiB
        self.mmapSize = mmapSize
        self.walAutocheckpointPages = walAutocheckpointPages
        self.searchCandidateLimit = searchCandidateLimit
    }

    /// The database file.
    public var databasePath: String { directory + "/moderation.sqlite3" }
}
