public import CommandLineSupport
public import ModerationSQLite
public import RPCCore

/// Everything the server can be told at start, from flags, `MODERATION_…` environment
/// variables or a config file (see `ServerSettingsParser` for which wins).
public struct ServerSettings: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port: UInt16 = 7600
    /// Where the data lives: the embedded SQLite file under `dataDirectory` (the default), or a
    /// PostgreSQL database that many instances share.
    public var store = StoreKind.sqlite
    /// The data directory: the SQLite store, and the default API key file with either store.
    public var dataDirectory = "./data"
    /// libpq's URL of the database for `--store postgres`; it may hold a password, which no log
    /// line or error repeats (`PostgresURL.redacted`).
    public var postgresURL: String?
    /// The schema of the store's tables in that database.
    public var postgresSchema = "public"
    /// Reader connections of the PostgreSQL store.
    public var postgresReaders = 16
    /// Writer connections of the PostgreSQL store (an app's writes all go to one).
    public var postgresWriters = 2
    /// How often, in milliseconds, the PostgreSQL store polls the apps' heads for other instances'
    /// commits (besides their notifications): the longest their events can be late here.
    public var postgresPollMs = 250
    /// The PostgreSQL store's read cache size in entries (`PostgresStoreOptions.readCacheEntries`);
    /// 0 turns it off.
    public var postgresReadCache = 200_000
    public var apiKeys: [APIKeyStore.Entry] = []
    public var apiKeysFile: String?
    /// Event loops; 0 means one per usable core.
    public var threads = 0
    public var maxMessageBytes = 4 * 1024 * 1024
    public var logLevel = Logger.Level.info
    public var logFormat = Logger.Format.text
    /// Seconds a SIGTERM drain may take before remaining streams and connections are cut.
    public var shutdownGraceSeconds = 10
    /// `.full`: no reply says OK before its commit is flushed to disk (the default); `.normal`:
    /// commits survive a crash of the process but the last ones may be lost on power loss.
    public var durability = SQLiteStoreOptions.Durability.full
    /// SQLite's page cache per connection, in MiB (the store has 17 connections: 16 readers and
    /// the writer; each fills its cache only as far as it meets new pages).
    public var sqliteCacheMiB = SQLiteStoreOptions.defaultCacheSizeKiB / 1024
    /// Hours the action log keeps actions (the event stream can resume that far back).
    public var retentionHours = 168
    /// Where Prometheus scrapes `/metrics`; nil for no metrics listener.
    public var metricsListen: HostPort?
    /// A second listener, kept for setups that route gRPC to a port of its own: it serves exactly
    /// what `--listen` serves (standard gRPC and our protocol, with the same TLS); nil for off
    /// (`--grpc-listen off`).
    public var grpcListen: HostPort? = HostPort(host: "127.0.0.1", port: 7601)
    /// A listener that serves without TLS while the others have it (`--tls-cert`): asked for
    /// explicitly, and warned about at start when client certificates are required, since it
    /// serves without them; nil for none.
    public var plaintextListen: HostPort?
    /// One info line per call (method, status, duration, app, acting user, request id).
    public var accessLog = true
    /// One successful call in this many gets an access-log line (per thread); failed calls always do.
    public var accessLogSample = 1
    /// Calls of the reflection and health services (what tools make to find their way) in the
    /// access log too.
    public var accessLogInternal = false
    /// Connections beyond this get GOAWAY `ERR_TOO_MANY_CONNECTIONS` and are closed at once.
    public var maxConnections = 100_000
    /// Connections one app may hold; one more gets GOAWAY `ERR_TOO_MANY_CONNECTIONS` at HELLO.
    public var maxConnectionsPerApp = 50_000
    /// What clients may make the server hold (unwritten output, partial frames, compression
    /// state, subscriptions) before new work is refused and slow consumers are cut.
    public var memoryBudget = MemoryBudgetSetting.automatic
    /// Once a frame has begun to arrive, the rest must arrive within this many milliseconds.
    public var frameTimeoutMs = 30_000
    /// Calls in flight per connection (advertised in HELLO_ACK).
    public var maxConcurrentCalls = 1024
    /// Event-stream subscriptions one app may have open at once (`ERR_TOO_MANY_SUBSCRIPTIONS` past it).
    public var maxSubscriptionsPerApp = 100_000
    /// Calls per second each app may make on average (0: no limit), and the burst above it.
    public var rateLimit = 0
    public var rateBurst = 0
    /// The config file read at start (`--config`), if any.
    public var configFile: String?
    /// Wrong passwords a user may try on one group in 15 minutes before its joins are refused.
    public var wrongPasswordLimit = 5
    /// TLS on the listener (`--tls-cert`, `--tls-key`, `--tls-client-ca`); nil speaks plaintext.
    public var tls: TLSSettings?
    /// `--webhook-allow-private`: webhooks may use http and loopback, private and link-local
    /// addresses (a receiver on the same host or network, in development and tests).
    public var webhookAllowPrivate = false
    /// `--webhook-ca-file`: CAs (PEM) trusted for webhook receivers besides the system's.
    public var webhookCAFile: String?

    public init() {}

    /// "HOST:PORT" as given to `--listen`.
    public var listenAddress: String { HostPort(host: host, port: port).description }
}

/// `--memory-budget`: a size, the default, or none.
public enum MemoryBudgetSetting: Sendable, Equatable {
    /// Half of the memory the process may use (the machine's, or its cgroup's limit if lower):
    /// the budget counts only what clients make the server hold, and the other half leaves room
    /// for the server's own fixed costs, the allocator's slack and the kernel's socket buffers.
    case automatic
    /// No limit (the counts are still kept for `/metrics`).
    case off
    case bytes(Int)

    /// The limit in bytes, nil for none; `available` is the memory the process may use.
    public func limit(available: Int) -> Int? {
        switch self {
        case .automatic: max(available / 2, 64 << 20)
        case .off: nil
        case .bytes(let bytes): bytes
        }
    }
}

/// Which store the server keeps its data in.
public enum StoreKind: String, Sendable, CaseIterable {
    /// One SQLite file under the data directory: one instance, nothing to run beside it.
    case sqlite
    /// A PostgreSQL database (`--postgres-url`), shared by any number of instances.
    case postgres
}

/// A setting that could not be used; the message names it.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// What the command line asks for.
public enum ServerCommand: Equatable {
    case run(ServerSettings)
    case help(String)
    case version(String)
}

/// The server's name and version, as HELLO_ACK and --version report them.
public enum ServerInfo {
    public static let name = "moderation-server"
    /// The release this build belongs to, as HELLO_ACK names the server.
    public static let version = "0.1.0"
    /// The build's version as `--version` and `moderation_build_info` say it: the release's
    /// number for a clean checkout of its tag (`v0.1.0`); `-dev` after it for any other build,
    /// `-dev+modified` when the sources had changes no commit has.
    public static let buildVersion =
        BuildRevision.isRelease ? version : version + (BuildRevision.modified ? "-dev+modified" : "-dev")
    /// The git commit the build comes from, embedded at build time ("unknown" outside a checkout).
    public static let revision = BuildRevision.commit

    /// The Swift compiler that built the server, major.minor (the language offers no string of
    /// it; `#if compiler` tells it apart release by release).
    public static let swiftVersion: String = {
        #if compiler(>=7.0)
            return "7.0 or later"
        #elseif compiler(>=6.6)
            return "6.6"
        #elseif compiler(>=6.5)
            return "6.5"
        #elseif compiler(>=6.4)
            return "6.4"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #elseif compiler(>=6.1)
            return "6.1"
        #else
            return "6.0"
        #endif
    }()
}
