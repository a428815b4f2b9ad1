import CommandLineSupport
internal import Glibc
public import Moderation
import ModerationEvents
public import RPCCore
public import RPCPosix
public import ServerApp
public import StoreTestSupport
import Synchronization
public import TestSupport

/// The real moderation server in-process — built by `ModerationServer`, as `moderation-server`
/// builds it — on 127.0.0.1 (port chosen by the kernel) with a fresh data directory, `TestKeys`
/// as keys, a clock tests can move forward, and fast password hashing. Its store is SQLite in the
/// data directory, or, while a test runs on PostgreSQL (`TestBackend.current`), the PostgreSQL
/// store in a schema of its own.
///
/// `restart()` stops it and opens a new one on the same data (a clean restart); `tearDown()`
/// stops it and removes the data.
public final class ModerationTestServer: Sendable {
    public let directory: TemporaryDirectory
    public let clock: OffsetClock
    public let moderation: ModerationServer
    public let port: UInt16
    public let backend: TestBackend
    /// The PostgreSQL schema of its store (nil on SQLite).
    public let postgresSchema: String?
    private let tuning: ModerationServer.Tuning
    private let configureSettings: @Sendable (inout ServerSettings) -> Void
    private let connections = Mutex<[TestApp: ClientConnection]>([:])
    private let stopped = Atomic<Bool>(false)

    /// Starts a server.
    /// - Parameters:
    ///   - directory: the data directory (a new one by default; `restart` passes the old one).
    ///   - configure: changes to the tuning (retention, limits, workers) on top of the test defaults.
    ///   - settings: changes to the settings (caps, limits) on top of the test defaults; the
    ///     address and data directory are the server's own.
    public convenience init(
        directory: TemporaryDirectory = TemporaryDirectory(prefix: "moderation-e2e"),
        clock: OffsetClock = OffsetClock(),
        configure: (inout ModerationServer.Tuning) -> Void = { _ in },
        settings: @escaping @Sendable (inout ServerSettings) -> Void = { _ in }
    ) throws {
        var tuning = ModerationServer.Tuning()
        tuning.clock = clock.function
        tuning.passwordHasher = .fastForTests
        tuning.maintenanceIntervalMs = 0
        tuning.workers = 4
        configure(&tuning)
        let backend = TestBackend.current
        try self.init(
            directory: directory, clock: clock, tuning: tuning, configureSettings: settings, backend: backend,
            postgresSchema: backend.isPostgres ? try Self.schema(of: directory) : nil)
    }

    /// The PostgreSQL schema that goes with a data directory: made up and written into it the
    /// first time, read back by a server started again on the same directory, so "the same
    /// data" means the same on both stores.
    private static func schema(of directory: TemporaryDirectory) throws -> String {
        let file = directory.path + "/postgres-schema"
        if let fd = Optional(open(file, O_RDONLY)), fd >= 0 {
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: 128)
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count > 0 { return String(decoding: bytes[0..<count], as: UTF8.self) }
        }
        let schema = PostgresCluster.uniqueSchema("s")
        try directory.write(Array(schema.utf8), to: "postgres-schema")
        return schema
    }

    private init(
        directory: TemporaryDirectory, clock: OffsetClock, tuning: ModerationServer.Tuning,
        configureSettings: @escaping @Sendable (inout ServerSettings) -> Void, backend: TestBackend,
        postgresSchema: String?
    ) throws {
        var settings = ServerSettings()
        settings.threads = 2
        // The gRPC listener on a port of its own: its default, 7601, may be any other server's
        // on the machine (a developer's `tools/run`, another worktree's tests).
        settings.grpcListen = HostPort(host: "127.0.0.1", port: 0)
        configureSettings(&settings)
        settings.host = "127.0.0.1"
        settings.port = 0
        settings.dataDirectory = directory.path + "/data"
        if case .postgres(let url) = backend, let postgresSchema {
            settings.store = .postgres
            settings.postgresURL = url
            settings.postgresSchema = postgresSchema
            settings.postgresReaders = 8
        }
        self.directory = directory
        self.clock = clock
        self.tuning = tuning
        self.configureSettings = configureSettings
        self.backend = backend
        self.postgresSchema = postgresSchema
        moderation = try ModerationServer(
            settings: settings, authenticator: TestKeys(), logger: .disabled, tuning: tuning)
        port = try moderation.start()
    }

    /// The domain service behind the server (maintenance, hub statistics).
    public var service: ModerationService { moderation.service }

    /// The store's SQLite database file (SQLite only).
    public var databasePath: String { directory.path + "/data/moderation.sqlite3" }

    /// Subscriptions the event hub holds now (replaying or live).
    public var subscriptionCount: Int { moderation.hub.subscriptionCount }

    /// What clients make the server hold, by kind.
    public var memoryBudget: MemoryBudget { moderation.memoryBudget }

    /// Returns once the event hub's dispatcher has applied every subscription start and end
    /// queued so far.
    public func settleEvents() { moderation.hub.settle() }

    /// A new connection with `app`'s key.
    public func connect(_ app: TestApp = .one, acceptDeflate: Bool = true) throws(RPCError) -> ClientConnection {
        var options = ClientOptions(port: port, apiKey: app.apiKey)
        options.clientName = "service-tests"
        options.acceptDeflate = acceptDeflate
        return try ClientConnection.connect(options)
    }

    /// The connection of `app` that clients made by `client` share (opened on first use).
    public func sharedConnection(_ app: TestApp = .one) throws(RPCError) -> ClientConnection {
        if let existing = connections.withLock({ $0[app] }), existing.isUsable { return existing }
        let connection = try connect(app)
        connections.withLock { $0[app] = connection }
        return connection
    }

    /// A client acting as `uid` (nil: the app itself) on the app's shared connection.
    public func client(_ uid: String? = nil, app: TestApp = .one) throws(RPCError) -> ModerationWireClient {
        ModerationWireClient(connection: try sharedConnection(app), actor: uid ?? "")
    }

    /// A raw socket that has completed the handshake.
    public func rawOpen(_ app: TestApp = .one, acceptDeflate: Bool = false) throws -> RawConnection {
        let connection = try RawConnection(port: port)
        try connection.handshake(apiKey: app.apiKey, acceptDeflate: acceptDeflate)
        return connection
    }

    /// Runs the service's maintenance (expired bans and mutes, retention, idempotency window) and
    /// waits; returns how many bans and mutes expired and how many actions were pruned.
    @discardableResult
    public func runMaintenance() throws(ModerationError) -> (
        expiredBans: Int, expiredMutes: Int, prunedActions: Int, purgedInvites: Int
    ) {
        let report = try service.runMaintenanceAndWait()
        return (report.expiredBans, report.expiredMutes, report.prunedActions, report.purgedInvites)
    }

    /// Shuts the server down gracefully (idempotent); the directory stays.
    public func stop(gracePeriodMs: Int = 2_000) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        moderation.shutdown(gracePeriodMs: gracePeriodMs)
        for connection in connections.withLock({ Array($0.values) }) { connection.close() }
    }

    /// Stops this server and starts a new one on the same directory, clock and tuning.
    public func restart() throws -> ModerationTestServer {
        stop()
        return try ModerationTestServer(
            directory: directory, clock: clock, tuning: tuning, configureSettings: configureSettings, backend: backend,
            postgresSchema: postgresSchema)
    }

    /// Stops the server and removes its data (the directory, and the schema on PostgreSQL).
    public func tearDown() {
        stop()
        directory.remove()
        if case .postgres(let url) = backend, let postgresSchema {
            PostgresCluster.dropSchema(postgresSchema, url: url)
        }
    }
}
