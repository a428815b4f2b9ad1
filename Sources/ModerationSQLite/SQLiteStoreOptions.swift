/// Settings of the SQLite store.
public struct SQLiteStoreOptions: Sendable, Equatable {
    /// How hard a commit works to survive a power loss.
    public enum Durability: String, Sendable, CaseIterable {
        /// Every commit's WAL frames are flushed to disk (`fdatasync`) before any of its writes
        /// completes — the guarantee of `synchronous=FULL`, with the flush done off the writer
        /// thread (see `WALSync`). The default.
        case full
        /// `synchronous=NORMAL` alone: commits survive a crash of the process, but the last ones
        /// may be lost on power loss (the WAL is flushed only at checkpoints). For tests.
        case normal
    }

    /// The data directory; the store opens `<directory>/moderation.sqlite3`, creating both.
    public var directory: String
    public var durability: Durability
    /// At most this many writes per transaction (group commit).
    public var maxBatchSize: Int
    /// Read connections kept open (one per concurrently reading thread is ideal); when all are
    /// busy a read opens a temporary one rather than wait.
    public var readers: Int
    /// Page cache per connection, in KiB. Each connection keeps what it has filled until it
    /// closes, so the store's heap can grow to (readers + 1) × this; see `defaultCacheSizeKiB`.
    public var cacheSizeKiB: Int
    /// 2 MiB, SQLite's own default. Reads barely use it: pages of the database file come from
    /// the mapping (`mmapSize`), shared by every connection through the OS page cache, and a
    /// reader's cache is dropped whenever a commit changes the database. With 64 MiB the wire
    /// benchmarks were no faster and a steady soak's heap kept rising (docs/HARDENING.md).
    public static let defaultCacheSizeKiB = 2048
    /// Bytes of the database file each connection maps into memory.
    public var mmapSize: Int
    /// SQLite checkpoints the WAL into the database once it holds this many pages.
    public var walAutocheckpointPages: Int
    /// A search keyword that matches at most this many users (or groups) in the trigram index is
    /// answered from the index; above it, by scanning the list in order (see `SearchPlan`).
    public var searchCandidateLimit: Int
    /// (group, user) pairs whose CheckPost standing the readers keep in memory, by group version
    /// (`PostingCache`, about 150 bytes each); 0 turns it off.
    public var postingCacheEntries: Int

    public init(
        directory: String, durability: Durability = .full, maxBatchSize: Int = 1024, readers: Int = 16,
        cacheSizeKiB: Int = defaultCacheSizeKiB, mmapSize: Int = 1 << 30, walAutocheckpointPages: Int = 4000,
        searchCandidateLimit: Int = 1000, postingCacheEntries: Int = 65_536
    ) {
        self.directory = directory
        self.durability = durability
        self.maxBatchSize = maxBatchSize
        self.readers = readers
        self.cacheSizeKiB = cacheSizeKiB
        self.mmapSize = mmapSize
        self.walAutocheckpointPages = walAutocheckpointPages
        self.searchCandidateLimit = searchCandidateLimit
        self.postingCacheEntries = postingCacheEntries
    }

    /// The database file.
    public var databasePath: String { directory + "/moderation.sqlite3" }
}
