/// Settings of the PostgreSQL store.
public struct PostgresStoreOptions: Sendable, Equatable {
    /// libpq's connection URL (`postgresql://USER@HOST:PORT/DB`) or key/value string. It may carry
    /// a password: the store never puts it in a message (`PostgresURL.redacted`).
    public var url: String
    /// The schema of the store's tables (created at start when missing). Several deployments,
    /// or the tests, can share a database with a schema each.
    public var schema: String
    /// Writer connections, each with its thread and its own batches. One app's writes all go to
    /// the same writer (they take the app's lock anyway); more writers let different apps
    /// commit side by side.
    public var writers: Int
    /// Reader connections kept open; a read waits for one when all are busy.
    public var readers: Int
    /// At most this many writes per transaction (group commit).
    public var maxBatchSize: Int
    /// How long opening a connection may take before the store reports it unavailable.
    public var connectTimeoutSeconds: Int
    /// `application_name` of the connections (shown in `pg_stat_activity`).
    public var applicationName: String
    /// How often, in milliseconds, the commit watcher reads every app's head to catch up with
    /// other instances' commits whose notification was lost: the longest an event stream can
    /// lag behind another instance's commit.
    public var pollIntervalMs: Int
    /// Whether the commit watcher `LISTEN`s for other instances' commit notifications. Without
    /// it, their actions reach this instance's subscribers by the poll alone (within
    /// `pollIntervalMs`): for a connection pooler that does not pass `LISTEN` through
    /// (transaction pooling), and for the tests of the poll path.
    public var listensForCommits: Bool
    /// The read cache's size (`ReadCache`): groups, memberships and first member pages, a page
    /// weighing one more per member it shows; 0 turns it off, and every read is a transaction.
    public var readCacheEntries: Int

    public init(
        url: String, schema: String = "public", writers: Int = 2, readers: Int = 16, maxBatchSize: Int = 512,
        connectTimeoutSeconds: Int = 5, applicationName: String = "moderation-server", pollIntervalMs: Int = 250,
        listensForCommits: Bool = true, readCacheEntries: Int = 200_000
    ) {
        self.url = url
        self.schema = schema
        self.writers = writers
        self.readers = readers
        self.maxBatchSize = maxBatchSize
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.applicationName = applicationName
        self.pollIntervalMs = pollIntervalMs
        self.listensForCommits = listensForCommits
        self.readCacheEntries = readCacheEntries
    }

    /// A schema name the store accepts: lowercase letters, digits and `_`, starting with a
    /// letter or `_`, at most 63 bytes (so it needs no quoting anywhere an operator types it).
    public static func isValidSchema(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 63 else { return false }
        let lower = UInt8(ascii: "a")...UInt8(ascii: "z")
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard lower.contains(first) || first == UInt8(ascii: "_") else { return false }
        return name.utf8.allSatisfy { lower.contains($0) || digits.contains($0) || $0 == UInt8(ascii: "_") }
    }

    var connectionOptions: PGConnection.Options {
        PGConnection.Options(
            url: url, schema: schema, applicationName: applicationName, connectTimeoutSeconds: connectTimeoutSeconds)
    }
}
